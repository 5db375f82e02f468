// The record versions of the shared state (lib/store/state.ts): a record keeps its modification and
// expiry times as two small integers each (no boxed number per record), which must give back exactly
// the time written, whatever it is: past 2^31 and 2^53 ms, before the epoch, and not an integer.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { makeRecord, StoreState } from '../../lib/store/state.js';

const TIMES = [
  0,
  1,
  2 ** 30 - 1,
  2 ** 30,
  2 ** 31 + 7,
  1_700_000_000_123,
  Number.MAX_SAFE_INTEGER,
  -1,
  -(2 ** 30),
  -1_700_000_000_123,
  Number.MIN_SAFE_INTEGER,
  0.5,
  1_700_000_000_000.25,
  2 ** 60,
];

describe('StoreState record versions', () => {
  it('should give back modifiedAt exactly as it was written', () => {
    for (const at of TIMES) {
      const record = makeRecord('items', 'a', 1, at, { id: 'a' }, undefined, undefined);
      assert.equal(record.modifiedAt, at, `modifiedAt ${at}`);
      assert.equal((JSON.parse(JSON.stringify(record)) as { modifiedAt: unknown }).modifiedAt, at);
    }
  });

  it('should keep the commit time of an applied put as the record modifiedAt', () => {
    const state = new StoreState(() => 0);
    for (const [index, at] of TIMES.entries()) {
      const put = { kind: 'put' as const, collection: 'items', id: `r${index}`, doc: { n: index } };
      state.apply({ mutations: [put] }, index + 1, at);
      assert.equal(state.get('items', `r${index}`)?.modifiedAt, at);
    }
  });

  it('should give back expiresAt exactly as it was written, and undefined when there is none', () => {
    for (const at of TIMES) {
      const record = makeRecord('$idem', 'a', 1, 5, {}, at, undefined);
      assert.equal(record.expiresAt, at, `expiresAt ${at}`);
      assert.equal((JSON.parse(JSON.stringify(record)) as { expiresAt: unknown }).expiresAt, at);
    }
    const forever = makeRecord('$idem', 'a', 1, 5, {}, undefined, undefined);
    assert.equal(forever.expiresAt, undefined);
    assert.equal(Object.hasOwn(JSON.parse(JSON.stringify(forever)) as object, 'expiresAt'), false);
  });

  it('should read -0 as a time of 0', () => {
    assert.equal(makeRecord('items', 'a', 1, -0, {}, undefined, undefined).modifiedAt, 0);
  });
});
