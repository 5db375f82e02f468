// The total order of JSON values and the (keys, id) sort keys behind keyset paging
// (lib/query/order.ts; CONVENTIONS.md#select-and-orderby: id is the final tiebreaker; OData 4.01 Part 2
// §5.1.5 on null placement).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { JsonObject, JsonValue } from '../../lib/json.js';
import { compareKeys, compareValues, isSortValue, keyOf, MAX_SORT_TEXT, sortValueOf, type OrderKey, type SortValue } from '../../lib/query/order.js';

/** Values in strictly ascending order, one or more per rank. */
const ASCENDING: readonly JsonValue[] = [
  null,
  false,
  true,
  -1e308,
  -1,
  0,
  0.5,
  1,
  2,
  10,
  1e308,
  '',
  '0',
  'A',
  'B',
  'Z',
  'a',
  'b',
  'é',
  '\u{1F600}',
  '\uFFFF',
  // Structured values compare by JSON text: "[1]" < "[]" because '1' < ']'.
  [1],
  [],
  { a: 1 },
];

describe('compareValues', () => {
  it('should order every pair of the reference list as listed', () => {
    for (let i = 0; i < ASCENDING.length; i++) {
      for (let j = 0; j < ASCENDING.length; j++) {
        const a = ASCENDING[i] as JsonValue;
        const b = ASCENDING[j] as JsonValue;
        const sign = Math.sign(compareValues(a, b));
        assert.equal(sign, Math.sign(i - j), `compareValues(${JSON.stringify(a)}, ${JSON.stringify(b)})`);
      }
    }
  });

  it('should order by type first: null < false < true < numbers < strings < structured', () => {
    assert.ok(compareValues(null, false) < 0);
    assert.ok(compareValues(true, -1e308) < 0);
    assert.ok(compareValues(1e308, '') < 0);
    assert.ok(compareValues('\uFFFF', []) < 0);
    assert.ok(compareValues('\uFFFF', {}) < 0);
  });

  it('should compare numbers numerically, not as text', () => {
    assert.ok(compareValues(9, 10) < 0);
    assert.ok(compareValues(-2, -10) > 0);
    assert.equal(compareValues(0, -0), 0);
  });

  it('should compare strings by UTF-16 code unit, case-sensitively', () => {
    assert.ok(compareValues('Z', 'a') < 0);
    // An astral character is a surrogate pair starting 0xD83D, below 0xFFFF.
    assert.ok(compareValues('\u{1F600}', '\uFFFF') < 0);
    assert.ok(compareValues('ab', 'abc') < 0);
    assert.equal(compareValues('x', 'x'), 0);
  });

  it('should treat equal structured values as equal and be antisymmetric on them', () => {
    assert.equal(compareValues({ a: [1, 2] }, { a: [1, 2] }), 0);
    const a: JsonValue = [1, 'x'];
    const b: JsonValue = { k: null };
    assert.equal(Math.sign(compareValues(a, b)), -Math.sign(compareValues(b, a)));
    assert.notEqual(compareValues(a, b), 0);
  });

  it('should compare null with null as equal', () => {
    assert.equal(compareValues(null, null), 0);
  });
});

describe('keyOf', () => {
  it('should list the order-by values then the id', () => {
    const order: OrderKey[] = [{ path: ['price'], descending: true }, { path: ['origin', 'country'], descending: false }];
    assert.deepEqual(keyOf({ price: 3, origin: { country: 'DE' } }, 'p1', order), [3, 'DE', 'p1']);
  });

  it('should put null for missing values', () => {
    assert.deepEqual(keyOf({}, 'p1', [{ path: ['price'], descending: false }]), [null, 'p1']);
  });

  it('should be the id alone without $orderby', () => {
    assert.deepEqual(keyOf({ price: 3 }, 'p1', []), ['p1']);
  });

  it('should read a __proto__ key as own data', () => {
    const doc = JSON.parse('{"__proto__": 5}') as JsonObject;
    assert.deepEqual(keyOf(doc, 'x', [{ path: ['__proto__'], descending: false }]), [5, 'x']);
    assert.deepEqual(keyOf({}, 'x', [{ path: ['__proto__'], descending: false }]), [null, 'x']);
  });
});

describe('compareKeys', () => {
  const priceAsc: OrderKey[] = [{ path: ['price'], descending: false }];
  const priceDesc: OrderKey[] = [{ path: ['price'], descending: true }];

  it('should order by the first key, then the next', () => {
    const order: OrderKey[] = [{ path: ['a'], descending: false }, { path: ['b'], descending: false }];
    assert.ok(compareKeys([1, 9, 'z'], [2, 0, 'a'], order) < 0);
    assert.ok(compareKeys([1, 0, 'z'], [1, 9, 'a'], order) < 0);
  });

  it('should reverse a descending key', () => {
    assert.ok(compareKeys([5, 'a'], [3, 'b'], priceDesc) < 0);
    assert.ok(compareKeys([5, 'a'], [3, 'b'], priceAsc) > 0);
  });

  it('should mix ascending and descending keys', () => {
    const order: OrderKey[] = [{ path: ['price'], descending: true }, { path: ['name'], descending: false }];
    const keys: SortValue[][] = [
      [3, 'a', 'id9'],
      [3, 'b', 'id1'],
      [1, 'a', 'id2'],
    ];
    const shuffled = [keys[2], keys[0], keys[1]] as SortValue[][];
    assert.deepEqual(shuffled.sort((x, y) => compareKeys(x, y, order)), keys);
  });

  it('should put nulls first ascending and last descending (OData §5.1.5)', () => {
    assert.ok(compareKeys([null, 'a'], [0, 'b'], priceAsc) < 0);
    assert.ok(compareKeys([null, 'a'], [0, 'b'], priceDesc) > 0);
  });

  it('should break ties by id, ascending even when the key is descending', () => {
    assert.ok(compareKeys([3, 'a'], [3, 'b'], priceAsc) < 0);
    assert.ok(compareKeys([3, 'a'], [3, 'b'], priceDesc) < 0);
    assert.ok(compareKeys(['a'], ['b'], []) < 0);
  });

  it('should be zero only for the same key', () => {
    assert.equal(compareKeys([3, 'a'], [3, 'a'], priceDesc), 0);
    assert.notEqual(compareKeys([3, 'a'], [3, 'a0'], priceDesc), 0);
  });

  it('should give distinct (keys, id) a strict total order usable for sorting', () => {
    const order: OrderKey[] = [{ path: ['v'], descending: true }];
    const values: SortValue[] = [null, true, false, 2, 1, 'b', 'a', sortValueOf([1]), sortValueOf({ z: 1 })];
    const keys = values.flatMap((value, index) => [[value, `id${index}`], [value, `id${index}x`]] as SortValue[][]);
    const sorted = [...keys].sort((x, y) => compareKeys(x, y, order));
    for (let i = 1; i < sorted.length; i++) {
      assert.ok(compareKeys(sorted[i - 1] as SortValue[], sorted[i] as SortValue[], order) < 0);
    }
    assert.deepEqual(sorted.slice(0, 4).map((key) => key[0]), [sortValueOf({ z: 1 }), sortValueOf({ z: 1 }), sortValueOf([1]), sortValueOf([1])]);
    assert.deepEqual(sorted.slice(-2).map((key) => key[0]), [null, null]);
  });

  it('should survive a JSON round trip of the key (as in a page token)', () => {
    const order: OrderKey[] = [{ path: ['v'], descending: false }];
    const key = keyOf({ v: { a: [1, 'x'] } }, 'id1', order);
    const revived = JSON.parse(JSON.stringify(key)) as SortValue[];
    assert.equal(compareKeys(key, revived, order), 0);
    assert.ok(revived.every(isSortValue));
  });

  it('should keep a key bounded: long text orders by its first MAX_SORT_TEXT code units, then by id', () => {
    const order: OrderKey[] = [{ path: ['name'], descending: false }];
    const long = 'x'.repeat(20_000);
    const [value] = keyOf({ name: `${long}b` }, 'id1', order);
    assert.equal(value, 'x'.repeat(MAX_SORT_TEXT));
    assert.equal(JSON.stringify(keyOf({ tags: [long] }, 'id1', [{ path: ['tags'], descending: false }])).length < 2 * MAX_SORT_TEXT, true);
    // Two values that differ only after the prefix tie, so the id decides.
    assert.ok(compareKeys(keyOf({ name: `${long}b` }, 'a', order), keyOf({ name: `${long}a` }, 'b', order), order) < 0);
    assert.ok(compareKeys(keyOf({ name: 'x'.repeat(MAX_SORT_TEXT - 1) }, 'z', order), keyOf({ name: long }, 'a', order), order) < 0);
  });
});
