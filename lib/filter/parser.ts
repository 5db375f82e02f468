// Stage 2 of `$filter`: tokens → syntax tree (CONVENTIONS.md#filter-grammar; OASIS OData 4.01 Part 2
// §5.1.1 and the ABNF `commonExpr` family). A precedence-climbing parser driven by one table.
//
// ABNF read here (BWS/RWS are handled by the lexer):
//   commonExpr  = ( primitiveLiteral / methodCallExpr / negateExpr / notExpr / parenExpr
//                 / firstMemberExpr ) [ addExpr / … ] [ eqExpr / … / inExpr ] [ andExpr / orExpr ]
//   parenExpr   = OPEN BWS commonExpr BWS CLOSE
//   inExpr      = RWS "in" RWS ( listExpr / commonExpr )
//   listExpr    = OPEN BWS primitiveLiteral BWS *( COMMA BWS primitiveLiteral BWS ) CLOSE
//                 (at least one literal: `x in ()` is a syntax error at the `)`)
//   memberExpr  = property *( "/" property ) [ "/" anyExpr / "/" allExpr / count ]
//   count       = '/$count' ; OData 4.01; its `( expandCountOption … )` options are not in this subset
//   anyExpr     = "any" OPEN BWS [ lambdaVariableExpr BWS COLON BWS lambdaPredicateExpr ] BWS CLOSE
//   allExpr     = "all" OPEN BWS   lambdaVariableExpr BWS COLON BWS lambdaPredicateExpr   BWS CLOSE
//   negateExpr  = "-" BWS commonExpr ;  notExpr = "not" RWS boolCommonExpr
// The ABNF alone is ambiguous; §5.1.1 "Operator Precedence" fixes the binding, so `not a eq b`
// is `(not a) eq b` (a type error when `a eq b` was meant: write `not (a eq b)`), and `in` is a
// Primary operator: `not x in (1, 2)` is `not (x in (1, 2))`, `a add b in (1)` is `a add (b in (1))`.
// Binary operators are left-associative.
//
// Words are keywords by position: in operand position `not` (any case) is the operator and
// `null`, and `true`, `false` in any case, are literals (literals.ts); other words are property paths, or functions
// when `(` follows (spaces before it are tolerated). Operator, function and lambda names are
// case-insensitive. Not in this subset: `has`, `divby`, `isof`, `cast`, `$it`, `$root`, aliases,
// JSON literals. A lambda variable may not shadow another one in scope. `$count` is only the last
// segment of a path (`tags/$count`, `l/items/$count`); anywhere else it is a syntax error at its offset.
// Recursion happens only for nesting, and each nesting construct (parentheses, calls, lambdas,
// `in` lists, `not`, unary minus) counts against `maxDepth`; operator chains are a loop.
import type {
  BinaryNode, BinaryOperator, CallNode, CountNode, DateNode, FilterNode, LambdaNode, LiteralNode, PathNode,
} from './ast.js';
import { filterError, quote, type FilterError } from './errors.js';
import { lookupFunction } from './functions.js';
import { describeToken, type Token } from './lexer.js';
import { isLiteralWord, literalNode } from './literals.js';
import { BOOLEAN, NUMBER, checkBinary, checkCall, expectComparable, expectType, isArithmetic } from './types.js';

export interface PropertyReference {
  /** Full path from the item, lambda variables replaced by their collection's path. */
  readonly path: readonly string[];
  readonly offset: number;
}

export type ParseOutcome =
  | { readonly ok: true; readonly ast: FilterNode; readonly references: readonly PropertyReference[] }
  | { readonly ok: false; readonly error: FilterError };

// §5.1.1 "Operator Precedence", highest first: Grouping ( ) · Primary / has in xxx() ·
// Unary - not cast() · Multiplicative mul div divby mod · Additive add sub ·
// Relational gt ge lt le isof · Equality eq ne · Conditional AND · Conditional OR.
const PRECEDENCE = {
  primary: 8, unary: 7, multiplicative: 6, additive: 5, relational: 4, equality: 3, and: 2, or: 1,
} as const;

type InfixOperator = BinaryOperator | 'in';
const INFIX: ReadonlyMap<string, { readonly operator: InfixOperator; readonly precedence: number }> = new Map(
  ([
    ['in', PRECEDENCE.primary],
    ['mul', PRECEDENCE.multiplicative], ['div', PRECEDENCE.multiplicative], ['mod', PRECEDENCE.multiplicative],
    ['add', PRECEDENCE.additive], ['sub', PRECEDENCE.additive],
    ['gt', PRECEDENCE.relational], ['ge', PRECEDENCE.relational],
    ['lt', PRECEDENCE.relational], ['le', PRECEDENCE.relational],
    ['eq', PRECEDENCE.equality], ['ne', PRECEDENCE.equality],
    ['and', PRECEDENCE.and], ['or', PRECEDENCE.or],
  ] as const).map(([operator, precedence]) => [operator, { operator, precedence }]),
);
const UNSUPPORTED_OPERATORS: ReadonlySet<string> = new Set(['has', 'divby', 'isof', 'cast']);

/** Parses a whole token list (as produced by `tokenize`) into one Boolean-typed expression. */
export function parseTokens(tokens: readonly Token[], maxDepth: number): ParseOutcome {
  const parser = new Parser(tokens, maxDepth);
  const ast = parser.parseFilter();
  if (ast !== null) return { ok: true, ast, references: parser.references };
  // Every path that yields no node records a failure first; the fallback only satisfies the types.
  return { ok: false, error: parser.failure ?? filterError('syntax', 'unparseable filter', 0) };
}

/** A lambda variable in scope and the full path of the collection it ranges over. */
type Scope = { readonly name: string; readonly path: readonly string[] };

class Parser {
  readonly references: PropertyReference[] = [];
  failure: FilterError | null = null;
  private readonly tokens: readonly Token[];
  private readonly maxDepth: number;
  private readonly end: Token;
  private readonly scopes: Scope[] = [];
  private position = 0;
  private depth = 0;

  constructor(tokens: readonly Token[], maxDepth: number) {
    this.tokens = tokens;
    this.maxDepth = maxDepth;
    this.end = tokens[tokens.length - 1] ?? { kind: 'end', offset: 0, text: '' };
  }

  parseFilter(): FilterNode | null {
    const root = this.parseExpression(0);
    if (root === null) return null;
    const next = this.peek();
    if (next.kind !== 'end') return this.unexpected(next, 'an operator or the end of the filter');
    return this.checked(root, expectType(root, BOOLEAN, 'the filter'));
  }

  private parseExpression(minPrecedence: number): FilterNode | null {
    let left = this.parseUnary();
    while (left !== null) {
      const token = this.peek();
      const infix = token.kind === 'word' ? INFIX.get(token.text.toLowerCase()) : undefined;
      if (infix === undefined || infix.precedence < minPrecedence) return left;
      this.advance();
      left = infix.operator === 'in'
        ? this.parseIn(left)
        : this.parseBinary(left, infix.operator, token, infix.precedence);
    }
    return null;
  }

  private parseBinary(left: FilterNode, operator: BinaryOperator, token: Token, precedence: number): FilterNode | null {
    const right = this.parseExpression(precedence + 1);
    if (right === null) return null;
    const type = isArithmetic(operator) ? 'number' : 'boolean';
    const node: BinaryNode = {
      kind: 'binary', offset: left.offset, type, operator, operatorOffset: token.offset, left, right,
    };
    return this.checked(node, checkBinary(node, token.text));
  }

  private parseUnary(): FilterNode | null {
    const token = this.peek();
    const isNot = token.kind === 'word' && token.text.toLowerCase() === 'not';
    if (token.kind !== 'minus' && !isNot) return this.parsePrimary();
    if (!this.enter(token)) return null;
    this.advance();
    const operand = this.parseExpression(PRECEDENCE.unary);
    this.depth -= 1;
    if (operand === null) return null;
    return isNot
      ? this.checked(
          { kind: 'not', offset: token.offset, type: 'boolean', operand },
          expectType(operand, BOOLEAN, "the operand of 'not'"),
        )
      : this.checked(
          { kind: 'negate', offset: token.offset, type: 'number', operand },
          expectType(operand, NUMBER, "the operand of '-'"),
        );
  }

  private parsePrimary(): FilterNode | null {
    const token = this.advance();
    switch (token.kind) {
      case 'open': {
        if (!this.enter(token)) return null;
        const inner = this.parseExpression(0);
        if (inner === null || !this.expect('close', "')'")) return null;
        this.depth -= 1;
        return inner;
      }
      case 'word':
        if (isLiteralWord(token.text)) return literalNode(token);
        return this.peek().kind === 'open' ? this.parseCall(token) : this.parsePath(token);
      case 'string': case 'number': case 'date':
        return literalNode(token);
      default:
        return this.unexpected(token, 'an expression');
    }
  }

  private parseCall(name: Token): FilterNode | null {
    const lower = name.text.toLowerCase();
    if (lower === 'any' || lower === 'all') {
      const detail = `${lower}() must follow a collection path, as in tags/${lower}(t: t eq 'x')`;
      return this.fail(filterError('syntax', detail, name.offset));
    }
    const spec = lookupFunction(lower);
    if (spec === undefined) {
      return this.fail(filterError('unknown-function', `unknown function ${quote(name.text)}`, name.offset));
    }
    if (!this.enter(this.advance())) return null;
    const args: FilterNode[] = [];
    if (this.peek().kind === 'close') this.advance();
    else {
      for (let separator: Token | null = null; separator?.kind !== 'close'; ) {
        const arg = this.parseExpression(0);
        if (arg === null) return null;
        args.push(arg);
        separator = this.advance();
        if (separator.kind !== 'comma' && separator.kind !== 'close') return this.unexpected(separator, "',' or ')'");
      }
    }
    this.depth -= 1;
    const node: CallNode = { kind: 'call', offset: name.offset, type: spec.result, name: spec.name, args };
    return this.checked(node, checkCall(spec, node));
  }

  private parsePath(first: Token): PathNode | LambdaNode | CountNode | null {
    const segments = [first.text];
    while (this.peek().kind === 'slash') {
      const slash = this.advance();
      const segment = this.advance();
      // memberExpr has no BWS: `address/ city` is rejected, `price / 2` gets a clear message.
      const adjacent = segment.offset === slash.offset + 1;
      if (segment.kind === 'count' && adjacent) return this.parseCount(this.path(first.offset, segments).node, segment);
      if (segment.kind !== 'word' || !adjacent) {
        return this.unexpected(segment, "a property name right after '/'");
      }
      if (this.peek().kind === 'open') {
        const lower = segment.text.toLowerCase();
        if (lower === 'any' || lower === 'all') return this.parseLambda(this.path(first.offset, segments), lower);
        return this.fail(filterError('unknown-function', `unknown function ${quote(segment.text)}`, segment.offset));
      }
      segments.push(segment.text);
    }
    return this.path(first.offset, segments).node;
  }

  /** `collection/$count`, which ends the path: nothing may follow it but an operator. */
  private parseCount(collection: PathNode, count: Token): CountNode | null {
    const next = this.peek().kind;
    if (next === 'slash' || next === 'open') {
      const detail = `${quote(count.text)} must end a collection path, as in tags/$count gt 2`;
      return this.fail(filterError('syntax', detail, count.offset));
    }
    return { kind: 'count', offset: collection.offset, type: 'number', collection };
  }

  private parseLambda(
    collection: { node: PathNode; full: readonly string[] },
    operator: 'any' | 'all',
  ): LambdaNode | null {
    const open = this.advance();
    if (!this.enter(open)) return null;
    let variable: string | null = null;
    let predicate: FilterNode | null = null;
    if (this.peek().kind !== 'close' || operator === 'all') {
      const name = this.advance();
      if (name.kind !== 'word') return this.unexpected(name, 'a lambda variable name');
      if (isLiteralWord(name.text) || this.scopes.some((scope) => scope.name === name.text)) {
        return this.fail(filterError('syntax', `${quote(name.text)} cannot name a lambda variable here`, name.offset));
      }
      if (!this.expect('colon', "':' after the lambda variable")) return null;
      this.scopes.push({ name: name.text, path: collection.full });
      predicate = this.parseExpression(0);
      this.scopes.pop();
      if (predicate === null) return null;
      const problem = expectType(predicate, BOOLEAN, `the predicate of ${operator}()`);
      if (problem !== null) return this.fail(problem);
      variable = name.text;
    }
    if (!this.expect('close', "')'")) return null;
    this.depth -= 1;
    return {
      kind: 'lambda',
      offset: collection.node.offset,
      type: 'boolean',
      operator,
      collection: collection.node,
      variable,
      predicate,
    };
  }

  private parseIn(operand: FilterNode): FilterNode | null {
    const next = this.advance();
    if (next.kind === 'word' && !isLiteralWord(next.text) && this.peek().kind !== 'open') {
      const collection = this.parsePath(next);
      if (collection === null) return null;
      if (collection.kind !== 'path') {
        const detail = "the right operand of 'in' must be a list or a collection path";
        return this.fail(filterError('type', detail, collection.offset));
      }
      return { kind: 'in-path', offset: operand.offset, type: 'boolean', operand, collection };
    }
    if (next.kind !== 'open') return this.unexpected(next, "'(' or a collection path after 'in'");
    if (!this.enter(next)) return null;
    const items: (LiteralNode | DateNode)[] = [];
    for (let separator: Token | null = null; separator?.kind !== 'close'; ) {
      const token = this.advance();
      const item = literalNode(token);
      if (item === null) return this.unexpected(token, "a literal in the 'in' list");
      const problem = expectComparable(operand.type, item.type, 'in', item.offset);
      if (problem !== null) return this.fail(problem);
      items.push(item);
      separator = this.advance();
      if (separator.kind !== 'comma' && separator.kind !== 'close') return this.unexpected(separator, "',' or ')'");
    }
    this.depth -= 1;
    return { kind: 'in-list', offset: operand.offset, type: 'boolean', operand, items };
  }

  /** A path node; records the property it reads unless it is a bare lambda variable. */
  private path(offset: number, segments: readonly string[]): { node: PathNode; full: readonly string[] } {
    const [head = '', ...rest] = segments;
    const scope = this.scopes.find((candidate) => candidate.name === head);
    const node: PathNode = scope === undefined
      ? { kind: 'path', offset, type: 'unknown', variable: null, segments }
      : { kind: 'path', offset, type: 'unknown', variable: head, segments: rest };
    const full = scope === undefined ? segments : [...scope.path, ...rest];
    if (scope === undefined || rest.length > 0) this.references.push({ path: full, offset });
    return { node, full };
  }

  private peek(): Token {
    return this.tokens[this.position] ?? this.end;
  }

  private advance(): Token {
    const token = this.peek();
    if (token.kind !== 'end') this.position += 1;
    return token;
  }

  private expect(kind: Token['kind'], what: string): boolean {
    const token = this.advance();
    if (token.kind === kind) return true;
    this.unexpected(token, what);
    return false;
  }

  /** Opens one level of nesting at `token`; false (with a too-deep error) past the limit. */
  private enter(token: Token): boolean {
    this.depth += 1;
    if (this.depth <= this.maxDepth) return true;
    this.fail(filterError('too-deep', `nesting deeper than ${this.maxDepth} levels`, token.offset));
    return false;
  }

  private checked<T extends FilterNode>(node: T, problem: FilterError | null): T | null {
    return problem === null ? node : this.fail(problem);
  }

  private unexpected(token: Token, expected: string): null {
    const lower = token.text.toLowerCase();
    if (token.kind === 'word' && UNSUPPORTED_OPERATORS.has(lower)) {
      return this.fail(filterError('syntax', `operator ${quote(lower)} is not supported`, token.offset));
    }
    return this.fail(filterError('syntax', `unexpected ${describeToken(token)}, expected ${expected}`, token.offset));
  }

  private fail(error: FilterError): null {
    this.failure ??= error;
    return null;
  }
}
