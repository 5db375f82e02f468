import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { FilterNode } from '../../lib/filter/ast.js';
import { parseFilter } from '../../lib/filter/index.js';
import { tokenize } from '../../lib/filter/lexer.js';
import { parseTokens } from '../../lib/filter/parser.js';

/** The tree as a compact S-expression, so precedence reads at a glance. */
function render(node: FilterNode): string {
  switch (node.kind) {
    case 'literal': return typeof node.value === 'string' ? `'${node.value}'` : String(node.value);
    case 'date': return node.text;
    case 'path': return [node.variable === null ? [] : [`$${node.variable}`], node.segments].flat().join('/');
    case 'not': return `(not ${render(node.operand)})`;
    case 'negate': return `(- ${render(node.operand)})`;
    case 'binary': return `(${node.operator} ${render(node.left)} ${render(node.right)})`;
    case 'in-list': return `(in ${render(node.operand)} [${node.items.map(render).join(' ')}])`;
    case 'in-path': return `(in ${render(node.operand)} ${render(node.collection)})`;
    case 'count': return `${render(node.collection)}/$count`;
    case 'call': return `${node.name}(${node.args.map(render).join(' ')})`;
    case 'lambda': {
      const body = node.predicate === null ? '' : `${node.variable ?? ''}: ${render(node.predicate)}`;
      return `${render(node.collection)}/${node.operator}(${body})`;
    }
  }
}

function tree(text: string): string {
  const result = parseFilter(text);
  assert.ok(result.ok, result.ok ? '' : result.error.message);
  return render(result.ast);
}

function failure(text: string, options?: { maxDepth?: number; maxLength?: number }): [string, number] {
  const result = parseFilter(text, options);
  assert.equal(result.ok, false, `${text.slice(0, 40)} parsed`);
  return result.ok ? ['', -1] : [result.error.kind, result.error.offset];
}

describe('parseFilter precedence (OData 4.01 Part 2 §5.1.1 "Operator Precedence")', () => {
  it('should bind and tighter than or', () => {
    assert.equal(tree('a or b and c'), '(or a (and b c))');
    assert.equal(tree('a and b or c'), '(or (and a b) c)');
  });

  it('should bind comparisons tighter than and, relational tighter than equality', () => {
    assert.equal(tree('a eq 1 and b gt 2'), '(and (eq a 1) (gt b 2))');
    assert.equal(tree('a gt 1 eq true'), '(eq (gt a 1) true)');
  });

  it('should bind multiplicative over additive over relational', () => {
    assert.equal(tree('a add b mul c gt d sub e div f'), '(gt (add a (mul b c)) (sub d (div e f)))');
  });

  it('should make binary operators left-associative', () => {
    assert.equal(tree('a sub b sub c eq 0'), '(eq (sub (sub a b) c) 0)');
    assert.equal(tree('a or b or c'), '(or (or a b) c)');
    assert.equal(tree('a div b mod c eq 0'), '(eq (mod (div a b) c) 0)');
  });

  it('should bind not and unary minus tighter than binary operators', () => {
    assert.equal(tree('not a and b'), '(and (not a) b)');
    assert.equal(tree('not a eq true'), '(eq (not a) true)');
    assert.equal(tree('- a add b eq 0'), '(eq (add (- a) b) 0)');
    assert.equal(tree('not not a'), '(not (not a))');
  });

  it('should treat in as a Primary operator', () => {
    assert.equal(tree('not a in (1, 2)'), '(not (in a [1 2]))');
    assert.equal(tree("x eq 1 or 'v' in tags"), "(or (eq x 1) (in 'v' tags))");
    assert.equal(tree('a in (1) eq true'), '(eq (in a [1]) true)');
  });

  it('should let parentheses override everything', () => {
    assert.equal(tree('(a or b) and c'), '(and (or a b) c)');
    assert.equal(tree('not (a eq 1)'), '(not (eq a 1))');
    assert.equal(tree('(a add b) mul c eq 0'), '(eq (mul (add a b) c) 0)');
  });
});

describe('parseFilter names and literals', () => {
  it('should accept operator, function and lambda names in any case', () => {
    assert.equal(tree('a EQ 1 And NOT b Or c In (1)'), '(or (and (eq a 1) (not b)) (in c [1]))');
    assert.equal(tree("ToLower(a) eq 'x'"), "(eq tolower(a) 'x')");
    assert.equal(tree('tags/ALL(t: t)'), 'tags/all(t: $t)');
  });

  it('should keep null case-sensitive and read true and false in any case', () => {
    assert.equal(tree('a eq null or b eq true or c eq false'), '(or (or (eq a null) (eq b true)) (eq c false))');
    assert.equal(tree('a eq NULL or b eq Null'), '(or (eq a NULL) (eq b Null))');
    assert.equal(tree('a eq TRUE or b eq False or c eq tRUE'), '(or (or (eq a true) (eq b false)) (eq c true))');
    assert.deepEqual(failure('tags/any(True: True)'), ['syntax', 9]);
  });

  it('should read words as property names wherever an operand is expected', () => {
    assert.equal(tree('eq eq and'), '(eq eq and)');
    assert.equal(tree('address/city/name eq 1'), '(eq address/city/name 1)');
  });

  it('should parse literals of every kind, negative numbers included', () => {
    assert.equal(tree("a in ('x', -1.5, 2e3, null, true, 2024-01-31, 2024-01-31T10:00:00Z)"),
      "(in a ['x' -1.5 2000 null true 2024-01-31 2024-01-31T10:00:00Z])");
  });

  it('should refuse an empty in list, naming the offset of its closing parenthesis', () => {
    assert.deepEqual(failure('a in ()'), ['syntax', 6]);
    const result = parseFilter('a in ( )');
    assert.equal(result.ok ? '' : result.error.message, "unexpected ')', expected a literal in the 'in' list at offset 7");
  });

  it('should allow calls with spaces before the parenthesis', () => {
    assert.equal(tree("contains (a, 'b')"), "contains(a 'b')");
  });
});

describe('parseFilter lambdas and paths', () => {
  it('should resolve lambda variables and leave other paths on the item', () => {
    assert.equal(tree('items/any(i: i/qty gt qty)'), 'items/any(i: (gt $i/qty qty))');
    assert.equal(tree('tags/any()'), 'tags/any()');
  });

  it('should let the lambda variable win over a property of the same name', () => {
    assert.equal(tree("tags/any(name: name eq 'x')"), "tags/any(name: (eq $name 'x'))");
  });

  it('should resolve nested lambdas through the outer variable', () => {
    assert.equal(tree('a/any(x: x/b/all(y: y eq x/c))'), 'a/any(x: $x/b/all(y: (eq $y $x/c)))');
  });

  it('should report every property path read, with lambda variables expanded', () => {
    const lexed = tokenize("a/any(x: x/b/all(y: y/c eq z)) and x eq 1 and 'v' in tags");
    assert.ok(lexed.ok);
    const parsed = parseTokens(lexed.tokens, 64);
    assert.ok(parsed.ok);
    assert.deepEqual(parsed.references.map((reference) => `${reference.path.join('/')}@${reference.offset}`),
      ['a@0', 'a/b@9', 'a/b/c@20', 'z@27', 'x@35', 'tags@53']);
  });

  it('should reject reusing a lambda variable in scope but allow it in sibling lambdas', () => {
    assert.deepEqual(failure('a/any(x: b/any(x: x))'), ['syntax', 15]);
    assert.equal(tree('a/any(x: x) and b/any(x: x)'), '(and a/any(x: $x) b/any(x: $x))');
  });
});

describe('parseFilter $count (OData 4.01 ABNF collectionPathExpr)', () => {
  it('should read path/$count as a number-typed count of the collection', () => {
    assert.equal(tree('tags/$count gt 2'), '(gt tags/$count 2)');
    assert.equal(tree('a/b/$count add 1 eq c/$count'), '(eq (add a/b/$count 1) c/$count)');
    assert.equal(tree('lines/any(l: l/items/$count eq 0 and l/$count gt 1)'), 'lines/any(l: (and (eq $l/items/$count 0) (gt $l/$count 1)))');
    const parsed = parseFilter('tags/$count');
    assert.equal(parsed.ok ? '' : parsed.error.message, "the filter must be a boolean, not a number at offset 0");
  });

  it('should ask about the collection path, never about a $count segment', () => {
    const lexed = tokenize('tags/$count gt 2 and lines/any(l: l/items/$count eq l/$count)');
    assert.ok(lexed.ok);
    const parsed = parseTokens(lexed.tokens, 64);
    assert.ok(parsed.ok);
    assert.deepEqual(parsed.references.map((reference) => `${reference.path.join('/')}@${reference.offset}`),
      ['tags@0', 'lines@21', 'lines/items@34']);
  });

  it('should refuse $count anywhere but at the end of a path, naming its offset', () => {
    assert.deepEqual(failure('$count eq 1'), ['syntax', 0]);
    assert.deepEqual(failure('a/$count/b eq 1'), ['syntax', 2]);
    assert.deepEqual(failure('a/$count(x) eq 1'), ['syntax', 2]);
    assert.deepEqual(failure('a/ $count eq 1'), ['syntax', 3]);
    assert.deepEqual(failure('a/$Count eq 1'), ['syntax', 2]);
    assert.deepEqual(failure('a/$counter eq 1'), ['syntax', 2]);
    assert.deepEqual(failure('a/any($count: true)'), ['syntax', 6]);
    assert.deepEqual(failure('1 in a/$count'), ['type', 5]);
  });
});

describe('parseFilter errors', () => {
  it('should put the offset in the message and the property', () => {
    const result = parseFilter('price eq 10)');
    assert.equal(result.ok, false);
    if (!result.ok) {
      assert.deepEqual(result.error, {
        kind: 'syntax', offset: 11, message: "unexpected ')', expected an operator or the end of the filter at offset 11",
      });
    }
  });

  it('should classify unknown functions apart from syntax errors', () => {
    assert.deepEqual(failure("a eq floor(b)"), ['unknown-function', 5]);
    assert.deepEqual(failure("a eq b/floor(c)"), ['unknown-function', 7]);
  });

  it('should check arity against the function table', () => {
    assert.deepEqual(failure('contains(a) eq true'), ['syntax', 0]);
    assert.deepEqual(failure("a eq substring('x', 1, 2, 3)"), ['syntax', 5]);
    assert.equal(tree("substring('x', 1) eq 'x'"), "(eq substring('x' 1) 'x')");
  });

  it('should point the too-deep error at the construct past the limit', () => {
    assert.deepEqual(failure('((a))', { maxDepth: 1 }), ['too-deep', 1]);
    assert.equal(tree('(a)'), 'a');
    assert.deepEqual(failure('not not a', { maxDepth: 1 }), ['too-deep', 4]);
    assert.deepEqual(failure('tags/any(t: tags/any(u: u))', { maxDepth: 1 }), ['too-deep', 20]);
    assert.deepEqual(failure('(a in (1))', { maxDepth: 1 }), ['too-deep', 6]);
  });

  it('should count nesting, not length: a long flat chain is fine', () => {
    assert.ok(parseFilter(`a${' or a'.repeat(800)}`).ok);
  });

  it('should reject input over maxLength before reading it', () => {
    assert.deepEqual(failure('a eq 1', { maxLength: 5 }), ['too-long', 5]);
    assert.ok(parseFilter('a eq 1', { maxLength: 6 }).ok);
  });

  it('should throw TypeError for programmer errors only', () => {
    assert.throws(() => parseFilter(42 as unknown as string), { name: 'TypeError', message: /text must be a string/ });
    assert.throws(() => parseFilter('a', { maxDepth: 0 }), { name: 'TypeError', message: /maxDepth/ });
    assert.throws(() => parseFilter('a', { maxDepth: 1.5 }), { name: 'TypeError', message: /maxDepth/ });
    assert.throws(() => parseFilter('a', { maxLength: 1e9 }), { name: 'TypeError', message: /maxLength/ });
  });
});
