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

describe('StoreState.check within a batch', () => {
  const put = (collection: string, id: string, expect?: { absent: true } | { present: true }) =>
    ({ kind: 'put' as const, collection, id, doc: { id }, ...(expect === undefined ? {} : { expect }) });
  const others = (count: number) => Array.from({ length: count }, (_, n) => put('other', `o${n}`));

  it('should let a mutation see an earlier one of the same record, in a short batch and a long one', () => {
    const state = new StoreState(() => 0);
    for (const filler of [0, 3, 20]) {
      const id = `a${filler}`;
      const batch = { mutations: [put('items', id), ...others(filler), put('items', id, { present: true })] };
      assert.deepEqual(state.check(batch), { ok: true });
      const clash = { mutations: [put('items', id), ...others(filler), put('items', id, { absent: true })] };
      const verdict = state.check(clash);
      assert.deepEqual(verdict.ok ? verdict : { ok: verdict.ok, index: verdict.index }, { ok: false, index: filler + 1 });
    }
  });

  it('should not take the same id in another collection for the same record', () => {
    const state = new StoreState(() => 0);
    for (const filler of [0, 20]) {
      const batch = { mutations: [put('$inbox-bodies', 'e'), ...others(filler), put('$inbox', 'e', { absent: true })] };
      assert.deepEqual(state.check(batch), { ok: true });
    }
  });
});
