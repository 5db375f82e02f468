// Tests for lib/jobs/status-counts.ts: the jobs of a space by status, kept as the store commits. A
// read counts what commits did since the last; a record the store drops when it expires (no commit)
// is caught by the live count and the space is counted again; commits that land while a recount
// reads the space, behind or ahead of where it has read, are counted once. Each read is checked
// against a scan of the space.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { StatusCounts } from '../../lib/jobs/status-counts.js';
import { MemoryStore } from '../../lib/store/memory.js';
import type { Mutation } from '../../lib/store/types.js';
import { ManualClock } from '../support/clock.js';

const SPACE = '$jobs';
const STATUSES = ['pending', 'done', 'failed'];

function scanned(store: MemoryStore): { status: string; count: number }[] {
  const records = store.scan(SPACE);
  return STATUSES.map((status) => ({ status, count: records.filter((record) => record.doc['status'] === status).length }));
}

async function commit(store: MemoryStore, mutations: Mutation[]): Promise<void> {
  const result = await store.commit({ mutations });
  assert.ok(result.ok);
}

function put(id: string, status: string, expiresAt?: number): Mutation {
  return { kind: 'put', collection: SPACE, id, doc: { status }, ...(expiresAt === undefined ? {} : { expiresAt }) };
}

describe('StatusCounts', () => {
  it('should count each status, then follow puts, patches and deletes as they are committed', async () => {
    const store = new MemoryStore({ clock: new ManualClock() });
    await commit(store, [put('a', 'pending'), put('b', 'pending'), put('c', 'done')]);
    const counts = new StatusCounts(store, SPACE);
    assert.deepEqual(await counts.read(STATUSES), scanned(store));
    await commit(store, [
      { kind: 'patch', collection: SPACE, id: 'a', set: { status: 'done' } },
      { kind: 'delete', collection: SPACE, id: 'c' },
      put('d', 'failed'),
      put('other', 'pending'),
    ]);
    await commit(store, [{ kind: 'put', collection: 'elsewhere', id: 'x', doc: { status: 'pending' } }]);
    assert.deepEqual(await counts.read(STATUSES), [
      { status: 'pending', count: 2 },
      { status: 'done', count: 1 },
      { status: 'failed', count: 1 },
    ]);
    assert.deepEqual(await counts.read(STATUSES), scanned(store));
    counts.close();
  });

  it('should count the space again once a record expired without a commit', async () => {
    const clock = new ManualClock();
    const store = new MemoryStore({ clock });
    await commit(store, [put('a', 'done', clock.now() + 1000), put('b', 'done')]);
    const counts = new StatusCounts(store, SPACE);
    assert.deepEqual(await counts.read(STATUSES), scanned(store));
    clock.advance(1000);
    assert.deepEqual(await counts.read(STATUSES), [
      { status: 'pending', count: 0 },
      { status: 'done', count: 1 },
      { status: 'failed', count: 0 },
    ]);
    counts.close();
  });

  it('should count commits that land while a recount reads the space, behind and ahead of it, once', async () => {
    const store = new MemoryStore({ clock: new ManualClock() });
    const ids = Array.from({ length: 10_000 }, (_, n) => `j${String(n).padStart(5, '0')}`);
    await commit(store, ids.map((id) => put(id, 'pending')));
    const counts = new StatusCounts(store, SPACE);
    const reading = counts.read(STATUSES);
    // The first chunk is read; these land before the next one is.
    await commit(store, [
      { kind: 'patch', collection: SPACE, id: 'j00001', set: { status: 'done' } },
      { kind: 'patch', collection: SPACE, id: 'j09999', set: { status: 'failed' } },
      { kind: 'delete', collection: SPACE, id: 'j00002' },
      { kind: 'delete', collection: SPACE, id: 'j09998' },
      put('a-first', 'done'),
      put('z-last', 'failed'),
    ]);
    assert.deepEqual(await reading, scanned(store));
    assert.deepEqual(await counts.read(STATUSES), scanned(store));
    counts.close();
  });
});
