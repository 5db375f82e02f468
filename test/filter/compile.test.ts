import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { JsonObject } from '../../lib/json.js';
import { compileFilter, interpretFilter, type FilterResult } from '../../lib/filter/index.js';
import { compilePredicate } from '../../lib/filter/compile.js';

const anyProperty = (): boolean => true;

function predicate(text: string): (doc: JsonObject) => boolean {
  const result = compileFilter(text, { knownProperty: anyProperty });
  assert.ok(result.ok, result.ok ? '' : result.error.message);
  return result.predicate;
}

function unknownProperty(result: FilterResult): string {
  assert.equal(result.ok, false);
  return result.ok ? '' : `${result.error.kind}: ${result.error.message}`;
}

describe('compileFilter property validation', () => {
  it('should ask knownProperty about every path read, lambda paths prefixed with their collection', () => {
    const asked: string[] = [];
    const result = compileFilter("tags/any(t: t eq 'x') and items/all(i: i/qty gt min) and 'a' in labels", {
      knownProperty: (path) => {
        asked.push(path.join('/'));
        return true;
      },
    });
    assert.ok(result.ok);
    assert.deepEqual(asked, ['tags', 'items', 'items/qty', 'min', 'labels']);
  });

  it('should report the first unknown path by name and offset', () => {
    const result = compileFilter("name eq 'x' and address/zip eq 1 and colour eq 2", {
      knownProperty: (path) => path[0] !== 'address' && path[0] !== 'colour',
    });
    assert.equal(unknownProperty(result), "unknown-property: unknown property 'address/zip' at offset 16");
  });

  it('should name a lambda path with its collection prefix', () => {
    const result = compileFilter('lines/any(l: l/price gt 1)', { knownProperty: (path) => path.length === 1 });
    assert.equal(unknownProperty(result), "unknown-property: unknown property 'lines/price' at offset 13");
  });

  it('should ask about the collection of a $count path, never about $count itself', () => {
    const asked: string[] = [];
    const result = compileFilter('tags/$count gt 2 or lines/any(l: l/items/$count eq 0)', {
      knownProperty: (path) => {
        asked.push(path.join('/'));
        return true;
      },
    });
    assert.ok(result.ok);
    assert.deepEqual(asked, ['tags', 'lines', 'lines/items']);
  });

  it('should report syntax before asking about properties', () => {
    let asked = 0;
    const result = compileFilter('colour eq', { knownProperty: () => { asked += 1; return false; } });
    assert.equal(result.ok ? '' : result.error.kind, 'syntax');
    assert.equal(asked, 0);
  });

  it('should throw TypeError when knownProperty is missing', () => {
    assert.throws(() => compileFilter('a', {} as unknown as { knownProperty: () => boolean }), {
      name: 'TypeError', message: /knownProperty must be a function/,
    });
  });
});

describe('compiled predicate semantics', () => {
  it('should treat a missing property as null, never as a prototype member', () => {
    const hasConstructor = predicate('constructor eq null');
    assert.equal(hasConstructor({}), true);
    assert.equal(predicate('toString ne null')({}), false);
    assert.equal(predicate('a/__proto__ eq null')({ a: {} }), true);
  });

  it('should read a path through null or a scalar as null', () => {
    const cityIsNull = predicate('address/city eq null');
    assert.equal(cityIsNull({ address: null }), true);
    assert.equal(cityIsNull({ address: 'Paris' }), true);
    assert.equal(cityIsNull({ address: { city: 'Paris' } }), false);
  });

  it('should use three-valued logic and select only true', () => {
    const flag = predicate('flag');
    const notFlag = predicate('not flag');
    assert.deepEqual([flag({ flag: true }), flag({ flag: false }), flag({}), flag({ flag: 'yes' })], [true, false, false, false]);
    assert.deepEqual([notFlag({ flag: true }), notFlag({ flag: false }), notFlag({}), notFlag({ flag: 1 })], [false, true, false, false]);
    assert.equal(predicate('flag or true')({}), true);
    assert.equal(predicate('not (flag and false)')({}), true);
    assert.equal(predicate('not (flag and true)')({}), false);
  });

  it('should not evaluate the right side of and/or once the left decides', () => {
    let reads = 0;
    const doc: JsonObject = {};
    Object.defineProperty(doc, 'y', { enumerable: true, get: () => { reads += 1; return true; } });
    assert.equal(predicate('false and y')(doc), false);
    assert.equal(predicate('true or y')(doc), true);
    assert.equal(reads, 0);
    assert.equal(predicate('true and y')(doc), true);
    assert.equal(reads, 1);
  });

  it('should compare strings by UTF-16 code unit, not by locale', () => {
    const before = predicate("s lt 'é'");
    assert.equal(before({ s: 'z' }), true);
    assert.equal(before({ s: 'é' }), false);
    assert.equal(predicate("s gt '\uFFFF'")({ s: '😀' }), false);
    assert.equal(predicate("s lt 'a'")({ s: 'B' }), true);
  });

  it('should compare structured values by structure', () => {
    const same = predicate('a eq b');
    assert.equal(same({ a: { x: [1, { y: 2 }] }, b: { x: [1, { y: 2 }] } }), true);
    assert.equal(same({ a: { x: [1, { y: 2 }] }, b: { x: [1, { y: 3 }] } }), false);
    assert.equal(same({ a: { x: 1 }, b: { x: 1, y: null } }), false);
    assert.equal(same({ a: [1, 2], b: [2, 1] }), false);
    assert.equal(same({ a: [], b: {} }), false);
    assert.equal(predicate('a gt b')({ a: [2], b: [1] }), false);
  });

  it('should compare deeply nested stored values without recursion', () => {
    const chain = (leaf: number): JsonObject => {
      let value: JsonObject = { leaf };
      for (let level = 0; level < 20_000; level += 1) value = { next: value };
      return value;
    };
    assert.equal(predicate('a eq b')({ a: chain(1), b: chain(1) }), true);
    assert.equal(predicate('a eq b')({ a: chain(1), b: chain(2) }), false);
  });

  it('should compare a date literal with stored strings by instant', () => {
    const after = predicate('at gt 2024-01-01');
    assert.equal(after({ at: '2024-01-01T00:00:01+00:00' }), true);
    assert.equal(after({ at: '2024-01-01T00:30:00+01:00' }), false);
    assert.equal(after({ at: '2024-01-02T00:00:00' }), true);
    assert.equal(after({ at: 'soon' }), false);
    assert.equal(after({ at: 20240102 }), false);
  });

  it('should make division and modulo by zero null rather than fail', () => {
    assert.equal(predicate('x div 0 eq null and x mod 0 eq null')({ x: 5 }), true);
    assert.equal(predicate('x div 2 eq 2.5')({ x: 5 }), true);
    assert.equal(predicate('x mod 3 eq -2')({ x: -5 }), true);
  });

  it('should match in lists with the same semantics as eq', () => {
    const member = predicate("x in ('1', 1, true)");
    assert.deepEqual([member({ x: '1' }), member({ x: 1 }), member({ x: true }), member({ x: [1] }), member({})], [true, true, true, false, false]);
    const withNull = predicate('x in (null, 2)');
    assert.deepEqual([withNull({}), withNull({ x: 2 }), withNull({ x: 3 })], [true, true, false]);
  });

  it('should count the elements of a collection with $count, null for anything but an array', () => {
    const count = predicate('tags/$count eq 2');
    assert.deepEqual([count({ tags: ['a', 'b'] }), count({ tags: ['a'] }), count({ tags: 'ab' }), count({ tags: { length: 2 } })],
      [true, false, false, false]);
    const missing = predicate('tags/$count eq null');
    assert.deepEqual([missing({}), missing({ tags: null }), missing({ tags: 'ab' }), missing({ tags: [] })], [true, true, true, false]);
    const nested = compileFilter('lines/any(l: l/items/$count gt 1)', { knownProperty: anyProperty });
    assert.ok(nested.ok);
    const docs: JsonObject[] = [
      { lines: [{ items: [1] }, { items: [1, 2] }] },
      { lines: [{ items: [1] }, { items: 'xy' }, {}] },
    ];
    assert.deepEqual(docs.map(nested.predicate), [true, false]);
    assert.deepEqual(docs.map((doc) => interpretFilter(nested.ast, doc)), [true, false]);
  });

  it('should build the predicate once and reuse it across documents', () => {
    const result = compileFilter("items/any(i: i/tags/any(t: t eq x))", { knownProperty: anyProperty });
    assert.ok(result.ok);
    const docs: JsonObject[] = [
      { x: 'a', items: [{ tags: ['b'] }, { tags: ['a'] }] },
      { x: 'c', items: [{ tags: ['b'] }] },
      { x: 'b', items: [{ tags: ['b'] }] },
    ];
    assert.deepEqual(docs.map(result.predicate), [true, false, true]);
    assert.deepEqual(docs.map((doc) => interpretFilter(result.ast, doc)), [true, false, true]);
  });
});

describe('compilePredicate', () => {
  it('should accept a tree built by hand', () => {
    const compiled = compilePredicate({
      kind: 'binary', offset: 0, type: 'boolean', operator: 'gt', operatorOffset: 2,
      left: { kind: 'path', offset: 0, type: 'unknown', variable: null, segments: ['n'] },
      right: { kind: 'literal', offset: 5, type: 'number', value: 1 },
    });
    assert.deepEqual([compiled({ n: 2 }), compiled({ n: 1 }), compiled({})], [true, false, false]);
  });
});
