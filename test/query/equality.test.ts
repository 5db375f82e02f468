// Tests for lib/query/equality.ts: the `eq` and `in` conditions a filter requires, and nothing it
// does not require.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseFilter } from '../../lib/filter/index.js';
import { equalityTerms } from '../../lib/query/equality.js';

function terms(filter: string): unknown {
  const parsed = parseFilter(filter);
  assert.ok(parsed.ok, filter);
  return equalityTerms(parsed.ast);
}

describe('equalityTerms', () => {
  it('should find a property compared with a literal, either way round, and `in` lists', () => {
    assert.deepEqual(terms("category eq 'c3'"), [{ path: ['category'], values: ['c3'] }]);
    assert.deepEqual(terms("'c3' eq category"), [{ path: ['category'], values: ['c3'] }]);
    assert.deepEqual(terms('address/zip eq 1234'), [{ path: ['address', 'zip'], values: [1234] }]);
    assert.deepEqual(terms('active eq true'), [{ path: ['active'], values: [true] }]);
    assert.deepEqual(terms("group in ('a', 'b', 3)"), [{ path: ['group'], values: ['a', 'b', 3] }]);
  });

  it('should take every term of an `and`, in the order written, and the terms inside parentheses of one', () => {
    assert.deepEqual(terms("a eq 1 and price gt 3 and (b eq 'x' and c in (true))"), [
      { path: ['a'], values: [1] },
      { path: ['b'], values: ['x'] },
      { path: ['c'], values: [true] },
    ]);
  });

  it('should take nothing that the filter does not require', () => {
    for (const filter of ["a eq 1 or b eq 2", "not (a eq 1)", 'a ne 1', 'a eq null', 'a eq 2024-01-31', "tags/any(t: t eq 'x')", 'a eq b', "a in ('x', null)", "contains(a, 'x')", 'a eq 1 add 1']) {
      assert.deepEqual(terms(filter), [], filter);
    }
  });

  it('should read a long `and` chain without recursion', () => {
    const filter = Array.from({ length: 250 }, (_, index) => `p${index} eq 1`).join(' and ');
    assert.equal((terms(filter) as unknown[]).length, 250);
  });
});
