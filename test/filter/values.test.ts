import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FilterDate } from '../../lib/filter/dates.js';
import {
  and3, arithmetic, comparison, equals, foldLambda, isElement, isMember, negate, not3, or3, order, readPath,
  truth, type Truth,
} from '../../lib/filter/values.js';

const TRUTHS: readonly Truth[] = [true, false, null];

describe('three-valued logic (OData 4.01 Part 2 §5.1.1.1.7–9)', () => {
  it('should follow the and table: false wins, then null', () => {
    const table = TRUTHS.flatMap((a) => TRUTHS.map((b) => and3(a, b)));
    assert.deepEqual(table, [true, false, null, false, false, false, null, false, null]);
  });

  it('should follow the or table: true wins, then null', () => {
    const table = TRUTHS.flatMap((a) => TRUTHS.map((b) => or3(a, b)));
    assert.deepEqual(table, [true, true, true, true, false, null, true, null, null]);
  });

  it('should keep not null null and read non-Booleans as null', () => {
    assert.deepEqual(TRUTHS.map(not3), [false, true, null]);
    assert.deepEqual([truth(true), truth(0), truth('true'), truth(null)], [true, null, null, null]);
  });
});

describe('equals and order', () => {
  const date = new FilterDate(2024, 1, 31, Date.UTC(2024, 0, 31));

  it('should equate null only with null and never coerce', () => {
    assert.deepEqual([equals(null, null), equals(null, 0), equals(0, ''), equals('1', 1), equals(false, 0)],
      [true, false, false, false, false]);
  });

  it('should equate a date with a string holding the same instant', () => {
    assert.deepEqual([equals(date, '2024-01-31'), equals('2024-01-31T01:00:00+01:00', date), equals(date, 'x'), equals(date, 5)],
      [true, true, false, false]);
  });

  it('should order numbers, strings by code unit, booleans and dates; nothing else', () => {
    assert.deepEqual([order(1, 2), order('b', 'a'), order('a', 'a'), order(false, true), order(date, '2024-02-01')],
      [-1, 1, 0, -1, -1]);
    assert.deepEqual([order(null, 1), order(1, '1'), order([1], [1]), order({}, {}), order(date, 'later')],
      [null, null, null, null, null]);
  });

  it('should make every ordering comparison false when there is no order', () => {
    for (const operator of ['gt', 'ge', 'lt', 'le'] as const) {
      assert.equal(comparison(operator)(null, null), false, operator);
      assert.equal(comparison(operator)('1', 1), false, operator);
    }
    assert.deepEqual([comparison('ge')(2, 2), comparison('le')(2, 2), comparison('ne')(null, 1)], [true, true, true]);
  });
});

describe('arithmetic', () => {
  it('should compute on numbers only and give null otherwise', () => {
    assert.deepEqual([arithmetic('add')(1, 2), arithmetic('sub')(1, 2), arithmetic('mul')(3, 2), arithmetic('div')(7, 2),
      arithmetic('mod')(-7, 3)], [3, -1, 6, 3.5, -1]);
    assert.deepEqual([arithmetic('add')('1', 2), arithmetic('add')(null, 2), arithmetic('mul')(true, 2)], [null, null, null]);
  });

  it('should give null for a zero divisor and for results that are not finite', () => {
    assert.deepEqual([arithmetic('div')(1, 0), arithmetic('mod')(1, 0), arithmetic('mul')(1e308, 10)], [null, null, null]);
    assert.deepEqual([negate(2), negate('2'), negate(null)], [-2, null, null]);
  });
});

describe('paths, membership and lambdas', () => {
  it('should read own members only', () => {
    assert.deepEqual([readPath({ a: 1 }, ['a']), readPath({}, ['constructor']), readPath([1], ['length']), readPath('s', ['length'])],
      [1, null, null, null]);
    assert.deepEqual([readPath({ a: { b: [1] } }, ['a', 'b']), readPath({ a: null }, ['a', 'b']), readPath({ a: 1 }, [])],
      [[1], null, { a: 1 }]);
  });

  it('should test membership with eq', () => {
    assert.deepEqual([isMember(null, [null]), isMember(1, ['1']), isElement('a', ['a']), isElement('a', 'a'), isElement(null, null)],
      [true, false, true, false, false]);
  });

  it('should fold any as or and all as and, an absent collection being empty', () => {
    const same = (value: unknown): Truth => (value === 1 ? true : value === 0 ? false : null);
    assert.deepEqual([foldLambda('any', [0, 1], same), foldLambda('any', [0, 2], same), foldLambda('any', [0], same),
      foldLambda('any', [], same), foldLambda('any', null, same), foldLambda('any', 'x', same)], [true, null, false, false, false, null]);
    assert.deepEqual([foldLambda('all', [1, 1], same), foldLambda('all', [1, 2], same), foldLambda('all', [2, 0], same),
      foldLambda('all', [], same), foldLambda('all', null, same), foldLambda('all', {}, same)], [true, null, false, true, true, null]);
  });
});
