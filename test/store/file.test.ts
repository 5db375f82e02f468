// FileStore (lib/store/file.ts): the shared conformance suite, then what only a durable store
// promises: everything acknowledged is there after a reopen, through journal replay and snapshots.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { appendFile, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { JsonObject } from '../../lib/json.js';
import type { FileStore, FileStoreOptions } from '../../lib/store/file.js';
import { openFileStore } from '../../lib/store/file.js';
import type { CommitResult, Mutation, Store } from '../../lib/store/types.js';
import { storeConformance } from './conformance.js';
import { clockAt } from '../support/clock.js';
import { readable } from '../support/store.js';
import { withTempDir } from '../support/temp-dir.js';

const T0 = 1_700_000_000_000;

async function openOk(options: FileStoreOptions): Promise<FileStore> {
  const opened = await openFileStore({ log: () => {}, progress: () => {}, ...options });
  assert.ok(opened.ok, opened.ok ? '' : opened.message);
  return opened.store;
}

async function commitOk(store: Store, ...mutations: Mutation[]): Promise<number> {
  const result: CommitResult = await store.commit({ mutations });
  assert.ok(result.ok, JSON.stringify(result));
  return result.commit.seq;
}

/**
 * Bytes of the frames in every journal of `dir`: up to the last byte that is not zero, since an open
 * journal is prepared ahead with zeros (lib/store/journal.ts) and a frame never ends in one.
 */
async function journalBytes(dir: string): Promise<number> {
  let total = 0;
  for (const name of await readdir(dir)) {
    if (!name.startsWith('journal-')) continue;
    const bytes = await readFile(join(dir, name));
    let end = bytes.length;
    while (end > 0 && bytes[end - 1] === 0) end--;
    total += end;
  }
  return total;
}

/** Everything a reader can observe, for comparing a store before and after a reopen. */
function observe(store: Store, collections: readonly string[]): unknown {
  return collections.map((name) => ({
    name,
    records: store.scan(name).map(readable),
    count: store.count(name),
    lastModified: store.lastModified(name),
  }));
}

storeConformance('FileStore', (options, run) =>
  withTempDir('file', async (dir) => {
    const store = await openOk({ dir, ...options });
    try {
      await run(store);
    } finally {
      await store.close();
    }
  }),
);

describe('FileStore durability', () => {
  it('should bring back records, tombstones, versions and times after a reopen', async () => {
    await withTempDir('file', async (dir) => {
      let time = T0;
      const now = (): number => time;
      const first = await openOk({ dir, clock: clockAt(now) });
      assert.equal(first.durable, true);
      await commitOk(first, { kind: 'put', collection: 'items', id: 'a', doc: { n: 1 } }, { kind: 'put', collection: '$idem', id: 'k', doc: { s: 201 }, expiresAt: T0 + 10_000 });
      time += 5;
      await commitOk(first, { kind: 'put', collection: 'items', id: 'b', doc: { n: 2 } });
      await commitOk(first, { kind: 'delete', collection: 'items', id: 'a', retainUntil: T0 + 9000 });
      time += 5;
      await commitOk(first, { kind: 'put', collection: 'gone', id: 'x', doc: {} });
      await commitOk(first, { kind: 'delete', collection: 'gone', id: 'x' });
      await commitOk(first, { kind: 'put', collection: 'items', id: 'c', doc: { n: 3 } });
      await commitOk(first, { kind: 'delete', collection: 'items', id: 'c', retainUntil: T0 + 9000 });
      await commitOk(first, { kind: 'restore', collection: 'items', id: 'c' });
      const names = ['items', '$idem', 'gone'];
      const before = { view: observe(first, names), a: first.getTombstone('items', 'a'), c: first.getTombstone('items', 'c'), collections: first.collections() };
      await first.close();

      const second = await openOk({ dir, clock: clockAt(now) });
      assert.deepEqual({ view: observe(second, names), a: second.getTombstone('items', 'a'), c: second.getTombstone('items', 'c'), collections: second.collections() }, before);
      assert.equal(await commitOk(second, { kind: 'put', collection: 'items', id: 'd', doc: {} }), 9);
      await second.close();
    });
  });

  it('should keep __proto__ keys as data after replay and after a snapshot', async () => {
    await withTempDir('file', async (dir) => {
      const doc = JSON.parse('{"__proto__":{"polluted":true},"n":1}') as JsonObject;
      const first = await openOk({ dir, snapshotThresholdBytes: 1 });
      await commitOk(first, { kind: 'put', collection: 'items', id: '__proto__', doc });
      await first.close();
      const second = await openOk({ dir });
      const record = second.get('items', '__proto__');
      assert.equal(Object.getPrototypeOf(record?.doc), Object.prototype);
      assert.deepEqual(Object.getOwnPropertyDescriptor(record?.doc, '__proto__')?.value, { polluted: true });
      await second.close();
    });
  });

  it('should snapshot past the threshold, delete old journals and recover the same state', async () => {
    await withTempDir('file', async (dir) => {
      let time = T0;
      const now = (): number => time;
      const logged: string[] = [];
      const first = await openOk({ dir, clock: clockAt(now), snapshotThresholdBytes: 4096, log: (_level, message) => logged.push(message) });
      for (let round = 0; round < 30; round++) {
        time += 1;
        await Promise.all(Array.from({ length: 8 }, (_, n) => commitOk(first, { kind: 'put', collection: 'items', id: `r${n}`, doc: { round, pad: 'x'.repeat(40) } })));
        await commitOk(first, { kind: 'put', collection: 'gone', id: `g${round}`, doc: {} });
        await commitOk(first, { kind: 'delete', collection: 'gone', id: `g${round}`, retainUntil: T0 + 5 });
      }
      await commitOk(first, { kind: 'put', collection: '$tmp', id: 'expired', doc: {}, expiresAt: T0 + 1 });
      const before = { view: observe(first, ['items', 'gone', '$tmp']), tombstone: first.getTombstone('gone', 'g29') };
      await first.close();
      assert.ok(logged.includes('snapshot written'), logged.join(', '));
      const files = await readdir(dir);
      assert.ok(files.includes('snapshot.dat'));
      // close() abandons a snapshot still being written; its journals stay, and recovery replays them.
      const lastSnapshot = logged.filter((message) => message.startsWith('snapshot ')).at(-1);
      const abandoned = lastSnapshot?.startsWith('snapshot abandoned') === true ? 1 : 0;
      assert.equal(files.filter((name) => name.startsWith('journal-')).length, 1 + abandoned, `${files.join(', ')} / ${logged.join(', ')}`);
      assert.deepEqual(files.filter((name) => name.includes('.tmp-')), []);

      const second = await openOk({ dir, clock: clockAt(now) });
      assert.deepEqual({ view: observe(second, ['items', 'gone', '$tmp']), tombstone: second.getTombstone('gone', 'g29') }, before);
      assert.equal(second.lastModified('gone'), T0 + 30);
      await second.close();
    });
  });

  it('should bring back patches and due times through replay and through a snapshot, journaling only the patch', async () => {
    for (const snapshotThresholdBytes of [64 << 20, 1]) {
      await withTempDir('file', async (dir) => {
        const first = await openOk({ dir, clock: clockAt(() => T0), snapshotThresholdBytes });
        const body = 'b'.repeat(100_000);
        await commitOk(first, { kind: 'put', collection: '$inbox', id: 'e1', doc: { body, status: 'accepted' }, dueAt: T0 });
        await commitOk(first, { kind: 'put', collection: '$inbox', id: 'e2', doc: { body: 'small', status: 'accepted' }, dueAt: T0 });
        const journalBefore = await journalBytes(dir);
        for (let attempt = 1; attempt <= 5; attempt++) {
          await commitOk(first, { kind: 'patch', collection: '$inbox', id: 'e1', set: { status: 'failed', attempts: attempt }, dueAt: T0 + attempt * 1000 });
        }
        await commitOk(first, { kind: 'patch', collection: '$inbox', id: 'e2', set: { status: 'processed' }, unset: ['body'], dueAt: null });
        if (snapshotThresholdBytes > 1) assert.ok((await journalBytes(dir)) - journalBefore < 5_000, 'five status changes of a 100 kB record must not rewrite its body');
        const before = { view: observe(first, ['$inbox']), due: first.due('$inbox', T0 + 10_000, 10).map((record) => record.id), next: first.nextDue('$inbox') };
        await first.close();
        const second = await openOk({ dir, clock: clockAt(() => T0) });
        assert.deepEqual({ view: observe(second, ['$inbox']), due: second.due('$inbox', T0 + 10_000, 10).map((record) => record.id), next: second.nextDue('$inbox') }, before);
        assert.deepEqual(second.get('$inbox', 'e1')?.doc, { body, status: 'failed', attempts: 5 });
        assert.equal(second.get('$inbox', 'e1')?.dueAt, T0 + 5000);
        assert.equal(second.get('$inbox', 'e2')?.dueAt, undefined);
        await second.close();
      });
    }
  });

  it('should write side logs as <name>.jsonl lines and cut a line torn by a crash before appending', async () => {
    await withTempDir('file', async (dir) => {
      const first = await openOk({ dir });
      await first.appendSideLog('dead-letter', { id: 'e1' });
      await first.close();
      assert.equal(await readFile(join(dir, 'dead-letter.jsonl'), 'utf8'), '{"id":"e1"}\n');
      // A crash in the middle of an append leaves a line without its newline.
      await appendFile(join(dir, 'dead-letter.jsonl'), '{"id":"e2","err');
      const second = await openOk({ dir });
      assert.deepEqual(await second.readSideLog('dead-letter'), [{ id: 'e1' }]);
      await second.appendSideLog('dead-letter', { id: 'e3' });
      await second.close();
      assert.equal(await readFile(join(dir, 'dead-letter.jsonl'), 'utf8'), '{"id":"e1"}\n{"id":"e3"}\n');
    });
  });

  it('should answer commits queued before close and release the directory', async () => {
    await withTempDir('file', async (dir) => {
      const first = await openOk({ dir });
      const pending = Array.from({ length: 10 }, (_, n) => first.commit({ mutations: [{ kind: 'put', collection: 'items', id: `k${n}`, doc: {} }] }));
      await first.close();
      assert.ok((await Promise.all(pending)).every((result) => result.ok));
      assert.equal((await readdir(dir)).includes('lock'), false);
      const second = await openOk({ dir });
      assert.equal(second.count('items'), 10);
      await second.close();
    });
  });
});
