import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { FunctionName } from '../../lib/filter/ast.js';
import { FilterDate } from '../../lib/filter/dates.js';
import { functionSpec, lookupFunction } from '../../lib/filter/functions.js';
import type { Value } from '../../lib/filter/values.js';

const call = (name: FunctionName, ...args: Value[]): Value => functionSpec(name).apply(args);

describe('lookupFunction', () => {
  it('should find canonical functions in any case and nothing else', () => {
    assert.equal(lookupFunction('ConTains')?.name, 'contains');
    assert.equal(lookupFunction('round'), undefined);
    assert.equal(lookupFunction('constructor'), undefined);
    assert.equal(lookupFunction('toString'), undefined);
  });
});

describe('canonical functions', () => {
  it('should return null for a null or mistyped argument', () => {
    assert.deepEqual([call('contains', null, 'a'), call('startswith', 'a', 1), call('tolower', 5), call('length', 5),
      call('concat', 'a', null), call('indexof', ['a'], 'a'), call('year', 2024)], [null, null, null, null, null, null, null]);
  });

  it('should match case-sensitively and measure in UTF-16 code units', () => {
    assert.deepEqual([call('contains', 'Alpha', 'al'), call('endswith', 'Alpha', 'ha'), call('indexof', '😀x', 'x'),
      call('length', '😀')], [false, true, 2, 2]);
  });

  it('should cut substrings as OData 4.01 describes', () => {
    assert.deepEqual([call('substring', 'abcdef', 2), call('substring', 'abcdef', 2, 3), call('substring', 'abc', 5),
      call('substring', 'abc', 1, 10), call('substring', 'abcdef', -2), call('substring', 'abc', -10)],
    ['cdef', 'cde', '', 'bc', 'ef', 'abc']);
    assert.deepEqual([call('substring', 'abc', 1, -1), call('substring', 'abc', 1.5), call('substring', 'abc', 0, 0.5)],
      [null, null, null]);
    assert.equal(call('substring', 'abc', 1, null), null);
  });

  it('should count the elements of an array with length', () => {
    assert.deepEqual([call('length', [1, 2, 3]), call('length', [])], [3, 0]);
  });

  it('should read date parts from date literals and date strings as written', () => {
    const date = new FilterDate(2024, 2, 29, Date.UTC(2024, 1, 29));
    assert.deepEqual([call('year', date), call('month', date), call('day', date)], [2024, 2, 29]);
    assert.deepEqual([call('year', '2023-12-31T23:00:00-05:00'), call('day', '2023-12-31T23:00:00-05:00'),
      call('month', 'not a date')], [2023, 31, null]);
  });

  it('should trim Unicode whitespace and change case by Unicode rules', () => {
    assert.deepEqual([call('trim', '\u00a0 x \t'), call('toupper', 'straße'), call('tolower', 'ΔX')], ['x', 'STRASSE', 'δx']);
  });
});
