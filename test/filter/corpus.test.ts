// Runs the whole `$filter` corpus (corpus.ts) through both implementations of the semantics: the
// compiled predicate that serves requests and the tree-walking interpreter. Every valid case must
// select exactly its ids in both; every invalid case must fail with its kind and offset.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { JsonObject } from '../../lib/json.js';
import { compileFilter, interpretFilter, type FilterResult } from '../../lib/filter/index.js';
import { FIXTURE, INVALID, VALID, knownProperty } from './corpus.js';

const label = (filter: string): string => {
  const quoted = JSON.stringify(filter);
  return quoted.length > 80 ? `${quoted.slice(0, 77)}…"` : quoted;
};

const idsOf = (select: (doc: JsonObject) => boolean): string[] =>
  FIXTURE.filter(select).map((item) => String(item.id)).sort();

function compiled(filter: string): Extract<FilterResult, { ok: true }> {
  const result = compileFilter(filter, { knownProperty });
  if (!result.ok) assert.fail(`${label(filter)}: ${result.error.message}`);
  return result;
}

describe('filter corpus', () => {
  it('should hold at least 150 cases, each filter once, ids sorted', () => {
    assert.ok(VALID.length + INVALID.length >= 150, `only ${VALID.length + INVALID.length} cases`);
    const filters = [...VALID, ...INVALID].map((c) => c.filter);
    assert.equal(new Set(filters).size, filters.length, 'a filter appears twice');
    for (const { filter, ids } of VALID) assert.deepEqual([...ids].sort(), ids, filter);
  });

  describe('compiled predicate', () => {
    for (const { filter, ids } of VALID) {
      it(`should select [${ids.join(' ')}] for ${label(filter)}`, () => {
        assert.deepEqual(idsOf(compiled(filter).predicate), ids);
      });
    }
  });

  describe('interpreter', () => {
    for (const { filter, ids } of VALID) {
      it(`should select [${ids.join(' ')}] for ${label(filter)}`, () => {
        const { ast } = compiled(filter);
        assert.deepEqual(idsOf((doc) => interpretFilter(ast, doc)), ids);
      });
    }
  });

  describe('invalid filters', () => {
    for (const { filter, kind, offset } of INVALID) {
      it(`should reject ${label(filter)} as ${kind}${offset === undefined ? '' : ` at ${offset}`}`, () => {
        const result = compileFilter(filter, { knownProperty });
        if (result.ok) assert.fail(`${label(filter)} compiled`);
        assert.equal(result.error.kind, kind, result.error.message);
        if (offset !== undefined) {
          assert.equal(result.error.offset, offset, result.error.message);
          assert.ok(result.error.message.endsWith(`at offset ${offset}`), result.error.message);
        }
      });
    }
  });
});
