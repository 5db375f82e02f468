// Snapshots (lib/store/snapshot.ts): every field of every record and tombstone comes back from a
// snapshot, including documents that are still the text they were loaded as when the next snapshot is
// written; a format-1 snapshot (documents inline) still opens; a records frame whose lengths do not
// add up refuses the start, even though its checksum holds; and the next snapshot waits for journals
// of a quarter of the last snapshot's size when that is more than the threshold (lib/store/file.ts);
// and a large snapshot is flushed to the disk as it is written, not all by its last fsync.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join, sep } from 'node:path';
import type { JsonObject } from '../../lib/json.js';
import { Crc32c, encodeFrame, FRAME_HEADER_BYTES } from '../../lib/store/codec.js';
import type { FileStore, OpenResult } from '../../lib/store/file.js';
import { openFileStore } from '../../lib/store/file.js';
import type { FileHandleIO, FileIO } from '../../lib/store/fs-io.js';
import { nodeFileIO } from '../../lib/store/fs-io.js';
import { loadedFrame, peekDocument } from '../../lib/store/state.js';
import type { Mutation, Store, StoredRecord } from '../../lib/store/types.js';
import { clockAt } from '../support/clock.js';
import { readable } from '../support/store.js';
import { withTempDir } from '../support/temp-dir.js';

const T0 = 1_700_000_000_000;
const FAR = T0 + 86_400_000;

interface Opened {
  readonly store: FileStore;
  /** Resolves once the store logs that a snapshot was written (the event, not a wait). */
  readonly snapshotWritten: Promise<void>;
  /** The messages the store logged as warnings. */
  readonly warnings: readonly string[];
}

async function open(
  dir: string,
  snapshotThresholdBytes = 64 << 20,
  now: () => number = () => T0,
  io: FileIO = nodeFileIO(),
): Promise<Opened> {
  let written: () => void = () => {};
  const snapshotWritten = new Promise<void>((resolve) => {
    written = resolve;
  });
  const warnings: string[] = [];
  const opened = await openFileStore({
    dir,
    io,
    clock: clockAt(now),
    snapshotThresholdBytes,
    progress: () => {},
    log: (level, message) => {
      if (level === 'warn') warnings.push(message);
      if (message === 'snapshot written') written();
    },
  });
  assert.ok(opened.ok, opened.ok ? '' : opened.message);
  return { store: opened.store, snapshotWritten, warnings };
}

/** The real file I/O, with the handles of the files `which` picks wrapped by `wrap` (to count what the store does). */
function wrappingIO(which: (path: string) => boolean, wrap: (handle: FileHandleIO) => FileHandleIO): FileIO {
  const real = nodeFileIO();
  return {
    ...real,
    open: async (path, mode, options) => {
      const handle = await real.open(path, mode, options);
      return which(path) ? wrap(handle) : handle;
    },
  };
}

async function openResult(dir: string): Promise<OpenResult> {
  return openFileStore({ dir, clock: clockAt(() => T0), progress: () => {}, log: () => {} });
}

async function commitOk(store: Store, ...mutations: Mutation[]): Promise<void> {
  const result = await store.commit({ mutations });
  assert.ok(result.ok, JSON.stringify(result));
}

/**
 * Every record (plain fields, `doc` read, and its JSON text: key order makes the representation's
 * bytes and so its ETag) and tombstone of `collections`.
 */
function view(store: Store, collections: readonly string[]): unknown {
  return collections.map((name) => ({
    name,
    records: store.scan(name).map((record) => ({ ...readable(record), text: JSON.stringify(record.doc) })),
    tombstones: ['gone', 'back'].map((id) => store.getTombstone(name, id)),
    lastModified: store.lastModified(name),
  }));
}

const COLLECTIONS = ['items', '$inbox', '$tmp'];

/** Documents and ids whose text a decoder or a length count could get wrong. */
const WRITES: Mutation[] = [
  { kind: 'put', collection: 'items', id: 'ascii', doc: { name: 'plain', n: 1, nested: { list: [1, { x: null }], empty: {} } } },
  { kind: 'put', collection: 'items', id: 'order', doc: { b: 1, a: 2, '10': 3, '2': 4, big: 1e21, small: 5e-324, neg: -0.5 } },
  { kind: 'put', collection: 'items', id: 'ключ', doc: { text: 'café ☕ 😀', separators: '\u2028\u2029', lone: '\ud800', quote: '"}{' } },
  { kind: 'put', collection: 'items', id: 'line\nbreak {"id"}', doc: { id: 'line\nbreak {"id"}' } },
  { kind: 'put', collection: 'items', id: '__proto__', doc: JSON.parse('{"__proto__":{"polluted":true},"n":2}') as JsonObject },
  { kind: 'put', collection: 'items', id: 'gone', doc: { n: 3 } },
  { kind: 'put', collection: 'items', id: 'back', doc: { n: 4 } },
  { kind: 'put', collection: '$inbox', id: 'due', doc: { status: 'accepted' }, dueAt: T0 + 5 },
  { kind: 'put', collection: '$inbox', id: 'plain', doc: { status: 'processed' } },
  { kind: 'put', collection: '$tmp', id: 'expiring', doc: { n: 5 }, expiresAt: FAR },
  { kind: 'put', collection: '$tmp', id: 'both', doc: { n: 6 }, expiresAt: FAR, dueAt: T0 + 7 },
];

/** Each frame of a file (header and payload) as it is on disk. */
function frames(file: Buffer): Buffer[] {
  const found: Buffer[] = [];
  for (let offset = 0; offset < file.length;) {
    const end = offset + FRAME_HEADER_BYTES + file.readUInt32LE(offset + 4);
    found.push(file.subarray(offset, end));
    offset = end;
  }
  return found;
}

describe('snapshots', () => {
  it('should bring back every field, and write documents not read since the last start unchanged', () =>
    withTempDir('snapshot', async (dir) => {
      const first = await open(dir);
      for (const mutation of WRITES) await commitOk(first.store, mutation);
      await commitOk(first.store, { kind: 'delete', collection: 'items', id: 'gone', retainUntil: FAR });
      await commitOk(first.store, { kind: 'delete', collection: 'items', id: 'back', retainUntil: FAR });
      await commitOk(first.store, { kind: 'restore', collection: 'items', id: 'back' });
      const expected = view(first.store, COLLECTIONS);
      await first.store.close();

      // Reopened over the threshold: recovery replays the journal, then snapshots it.
      const second = await open(dir, 1);
      await second.snapshotWritten;
      await second.store.close();
      assert.deepEqual((await readdir(dir)).filter((name) => name.startsWith('journal-')).length, 1);

      // Loaded from the snapshot alone, documents unread: the next snapshot writes them from their text.
      // (Its trigger is a quarter of the snapshot's size at the least: a journal larger than the snapshot.)
      const third = await open(dir, 1);
      const snapshotBytes = (await stat(join(dir, 'snapshot.dat'))).size;
      await commitOk(third.store, { kind: 'put', collection: 'other', id: 'trigger', doc: { pad: 'x'.repeat(snapshotBytes) } });
      await third.snapshotWritten;
      await third.store.close();

      const fourth = await open(dir);
      assert.deepEqual(view(fourth.store, COLLECTIONS), expected);
      const proto = fourth.store.get('items', '__proto__')?.doc;
      assert.equal(Object.getPrototypeOf(proto), Object.prototype);
      assert.deepEqual(Object.getOwnPropertyDescriptor(proto, '__proto__')?.value, { polluted: true });
      assert.deepEqual(fourth.store.due('$inbox', T0 + 10, 10).map((record) => record.id), ['due']);
      assert.equal(fourth.store.nextDue('$tmp'), T0 + 7);
      assert.deepEqual(JSON.parse(JSON.stringify(fourth.store.get('$tmp', 'both'))), {
        collection: '$tmp', id: 'both', version: 11, modifiedAt: T0, doc: { n: 6 }, expiresAt: FAR, dueAt: T0 + 7,
      });
      await fourth.store.close();
    }));

  it('should keep an all-ASCII frame as its bytes, and give back short and long ids and their documents', () =>
    withTempDir('snapshot-bytes', async (dir) => {
      // Ids of 1 to 40 characters: V8 copies a short slice of a string and keeps a long one as a view.
      const ids = Array.from({ length: 40 }, (_, n) => `${'k'.repeat(n)}${n}`);
      const first = await open(dir, 1);
      const puts = ids.map((id, n): Mutation => ({ kind: 'put', collection: 'ascii', id, doc: { n } }));
      await commitOk(first.store, ...puts, { kind: 'put', collection: 'wide', id: 'long-id-with-é', doc: { text: 'café' } });
      await first.snapshotWritten;
      await first.store.close();

      const second = await open(dir, 1);
      const ascii = loadedFrame(second.store.get('ascii', ids[0] as string) as StoredRecord);
      assert.ok(ascii?.payload instanceof Buffer, 'an all-ASCII frame is kept as bytes');
      const wide = loadedFrame(second.store.get('wide', 'long-id-with-é') as StoredRecord);
      assert.equal(typeof wide?.payload, 'string', 'any other frame is kept as its text');
      for (const [n, id] of ids.entries()) {
        const record = second.store.get('ascii', id);
        assert.equal(record?.id, id);
        assert.deepEqual(record === undefined ? undefined : peekDocument(record), { n });
      }
      // The next snapshot writes the ASCII frame back as its bytes; everything comes back once more.
      const size = (await stat(join(dir, 'snapshot.dat'))).size;
      await commitOk(second.store, { kind: 'put', collection: 'other', id: 'trigger', doc: { pad: 'x'.repeat(size) } });
      await second.snapshotWritten;
      await second.store.close();
      const third = await open(dir);
      const back = third.store.scan('ascii').map((record) => [record.id, record.doc]);
      assert.deepEqual(back, ids.map((id, n) => [id, { n }]).sort());
      assert.deepEqual(third.store.get('wide', 'long-id-with-é')?.doc, { text: 'café' });
      await third.store.close();
    }));

  it('should let a walk read a document loaded as text without keeping its parse (peekDocument)', () =>
    withTempDir('snapshot-peek', async (dir) => {
      const first = await open(dir, 1);
      await commitOk(first.store, { kind: 'put', collection: 'items', id: 'a', doc: { name: 'a', n: 1 } });
      await first.snapshotWritten;
      await first.store.close();

      const second = await open(dir);
      const loaded = second.store.get('items', 'a');
      assert.ok(loaded !== undefined);
      const peeked = peekDocument(loaded);
      assert.deepEqual(peeked, { name: 'a', n: 1 });
      assert.notEqual(peekDocument(loaded), peeked, 'a peek parses again: nothing was kept');
      const read = loaded.doc;
      assert.equal(loaded.doc, read, 'a read keeps its parse');
      assert.equal(peekDocument(loaded), read, 'a peek after a read hands the kept document');
      await second.store.close();
    }));

  it('should write a frame whose records are all as loaded as the bytes it was read from, and the rest anew', () =>
    withTempDir('snapshot-reuse', async (dir) => {
      let now = T0;
      const openAt = (threshold: number): Promise<Opened> => open(dir, threshold, () => now);
      // 'kept' spans several frames and is left alone; in 'changed' one record is replaced and one read;
      // in '$tmp' one record expires before the next snapshot.
      const first = await openAt(1);
      const seed: Mutation[] = [];
      for (let n = 0; n < 600; n++) seed.push({ kind: 'put', collection: 'kept', id: `k${n}`, doc: { n, pad: 'x'.repeat(300) } });
      for (let n = 0; n < 20; n++) seed.push({ kind: 'put', collection: 'changed', id: `c${n}`, doc: { n, text: 'café' } });
      seed.push({ kind: 'put', collection: '$tmp', id: 'soon', doc: { n: 1 }, expiresAt: T0 + 1000 });
      seed.push({ kind: 'put', collection: '$tmp', id: 'later', doc: { n: 2 }, expiresAt: FAR });
      await commitOk(first.store, ...seed);
      await first.snapshotWritten;
      await first.store.close();
      const before = frames(await readFile(join(dir, 'snapshot.dat')));
      const keptFrames = before.filter((frame) => frame.includes('"collection":"kept"'));
      assert.ok(keptFrames.length >= 3, `'kept' spans ${keptFrames.length} frames`);

      const second = await openAt(1);
      assert.equal(second.store.get('changed', 'c3')?.doc.n, 3, 'a read parses a record');
      await commitOk(second.store, { kind: 'put', collection: 'changed', id: 'c7', doc: { n: 70 } });
      now = T0 + 2000;
      const snapshotBytes = (await stat(join(dir, 'snapshot.dat'))).size;
      await commitOk(second.store, { kind: 'put', collection: 'other', id: 'trigger', doc: { pad: 'x'.repeat(snapshotBytes) } });
      await second.snapshotWritten;
      await second.store.close();
      const after = await readFile(join(dir, 'snapshot.dat'));
      for (const frame of keptFrames) assert.ok(after.includes(frame), 'a frame of \'kept\' is written as it was');
      assert.ok(!after.includes('"soon"') && !after.includes('soon{'), 'an expired record is not written');

      const third = await openAt(64 << 20);
      assert.equal(third.store.count('kept'), 600);
      for (let n = 0; n < 600; n++) assert.deepEqual(third.store.get('kept', `k${n}`)?.doc, { n, pad: 'x'.repeat(300) });
      const changed = third.store.scan('changed').map((record) => [record.id, record.doc]);
      const expected = Array.from({ length: 20 }, (_, n) => [`c${n}`, n === 7 ? { n: 70 } : { n, text: 'café' }]);
      assert.deepEqual(changed, expected.sort((a, b) => String(a[0]).localeCompare(String(b[0]))));
      assert.deepEqual(third.store.scan('$tmp').map((record) => record.id), ['later']);
      await third.store.close();
    }));

  it('should copy the frames of unchanged records from the last snapshot, and write anew what reads back wrong', () =>
    withTempDir('snapshot-copy', async (dir) => {
      // The real file I/O, counting the bytes read from the snapshot in place.
      let snapshotReads = 0;
      const io = wrappingIO((path) => path.endsWith(`${sep}snapshot.dat`), (handle) => ({
        ...handle,
        read: async (buffer, offset, length, position) => {
          const read = await handle.read(buffer, offset, length, position);
          snapshotReads += read;
          return read;
        },
      }));
      const warnings: string[] = [];
      let written = 0;
      let waiting: (() => void) | undefined;
      const opened = await openFileStore({
        dir,
        io,
        clock: clockAt(() => T0),
        snapshotThresholdBytes: 1,
        progress: () => {},
        log: (level, message) => {
          if (level === 'warn') warnings.push(message);
          if (message !== 'snapshot written') return;
          written++;
          waiting?.();
        },
      });
      assert.ok(opened.ok, opened.ok ? '' : opened.message);
      const { store } = opened;
      let last = Buffer.alloc(0);
      /** Commits a record larger than the last snapshot (the trigger is a quarter of it) and waits for the next. */
      const snapshotAgain = async (name: string): Promise<Buffer> => {
        const before = written;
        const done = new Promise<void>((resolve) => (waiting = resolve));
        await commitOk(store, { kind: 'put', collection: 'other', id: name, doc: { pad: 'x'.repeat(last.length) } });
        await done;
        assert.equal(written, before + 1);
        last = await readFile(join(dir, 'snapshot.dat'));
        return last;
      };
      const first = new Promise<void>((resolve) => (waiting = resolve));
      // 'kept' comes second, so its frames' places in the capture are not the store's first records'.
      const seed: Mutation[] = [];
      for (let n = 0; n < 20; n++) seed.push({ kind: 'put', collection: 'changed', id: `c${n}`, doc: { n } });
      for (let n = 0; n < 600; n++) seed.push({ kind: 'put', collection: 'kept', id: `k${n}`, doc: { n, pad: 'x'.repeat(300) } });
      await commitOk(store, ...seed);
      await first;
      last = await readFile(join(dir, 'snapshot.dat'));

      // Written since the store opened, unchanged since the last snapshot: copied, not encoded again.
      snapshotReads = 0;
      await commitOk(store, { kind: 'put', collection: 'changed', id: 'c7', doc: { n: 70 } });
      assert.equal(store.get('kept', 'k5')?.doc.n, 5, 'a read changes nothing');
      const second = await snapshotAgain('trigger-1');
      const keptBytes = frames(second).filter((frame) => frame.includes('"collection":"kept"'));
      assert.ok(keptBytes.length >= 3, `'kept' spans ${keptBytes.length} frames`);
      const keptTotal = keptBytes.reduce((sum, frame) => sum + frame.length, 0);
      assert.ok(snapshotReads >= keptTotal, `${snapshotReads} bytes read back, 'kept' has ${keptTotal}`);

      // A copied frame whose bytes changed on disk fails its checksum: its records are written from memory.
      const damaged = Buffer.from(second);
      const at = damaged.indexOf('k300{');
      damaged[at + 20] = 'y'.charCodeAt(0);
      await writeFile(join(dir, 'snapshot.dat'), damaged);
      await snapshotAgain('trigger-2');
      assert.ok(last.includes(second.subarray(at - 200, at + 200)), 'the damaged frame is written as it was before');
      assert.deepEqual(warnings, ['a frame of the last snapshot read back damaged; its records are written anew']);

      // A file that is not the snapshot last written is not copied from at all.
      await writeFile(join(dir, 'snapshot.dat'), 'not a snapshot');
      await snapshotAgain('trigger-3');
      assert.equal(warnings[1], 'the last snapshot is not the one written; every record is written anew');

      // A removed record shortens its frame's run, a replaced one is newer: both frames are encoded again.
      await commitOk(store, { kind: 'delete', collection: 'kept', id: 'k100' });
      await commitOk(store, { kind: 'put', collection: 'kept', id: 'k450', doc: { n: 4500 } });
      snapshotReads = 0;
      await snapshotAgain('trigger-4');
      assert.ok(snapshotReads > 0, 'the frames in between are copied');
      assert.equal(warnings.length, 2);
      await store.close();

      const reopened = await open(dir);
      assert.equal(reopened.store.count('kept'), 599);
      for (let n = 0; n < 600; n++) {
        const expected = n === 100 ? undefined : n === 450 ? { n: 4500 } : { n, pad: 'x'.repeat(300) };
        assert.deepEqual(reopened.store.get('kept', `k${n}`)?.doc, expected);
      }
      const changed = reopened.store.scan('changed').map((record) => record.doc.n).sort((a, b) => Number(a) - Number(b));
      assert.deepEqual(changed, [0, 1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 70]);
      await reopened.store.close();
    }));

  it('should check a frame loaded at start by its checksum when it is first copied, and write anew one that reads back wrong', () =>
    withTempDir('snapshot-loaded-copy', async (dir) => {
      const seeded = await open(dir, 1);
      const seed: Mutation[] = [];
      for (let n = 0; n < 600; n++) seed.push({ kind: 'put', collection: 'kept', id: `k${n}`, doc: { n, pad: 'x'.repeat(300) } });
      await commitOk(seeded.store, ...seed);
      await seeded.snapshotWritten;
      await seeded.store.close();

      const opened = await open(dir, 1);
      // Damaged on disk after the start read it: its frames are known by their place and checksum alone.
      const file = await readFile(join(dir, 'snapshot.dat'));
      const at = file.indexOf('k300{');
      file[at + 20] = 'y'.charCodeAt(0);
      await writeFile(join(dir, 'snapshot.dat'), file);
      await commitOk(opened.store, { kind: 'put', collection: 'other', id: 'trigger', doc: { pad: 'x'.repeat(file.length) } });
      await opened.snapshotWritten;
      await opened.store.close();
      assert.deepEqual(opened.warnings, ['a frame of the last snapshot read back damaged; its records are written anew']);

      const reopened = await open(dir);
      for (let n = 0; n < 600; n++) assert.deepEqual(reopened.store.get('kept', `k${n}`)?.doc, { n, pad: 'x'.repeat(300) });
      await reopened.store.close();
    }));

  it('should open a format-1 snapshot, whose rows carry their documents inline', () =>
    withTempDir('snapshot', async (dir) => {
      const crc = new Crc32c();
      const frames = [
        { type: 'header', format: 1, seq: 9, at: T0, lastModified: [['items', T0 - 1]] },
        {
          type: 'chunk',
          collection: 'items',
          records: [['a', 3, T0 - 3, { name: 'café' }], ['b', 4, T0 - 2, { n: 1 }, null, T0 + 1], ['c', 5, T0 - 1, { n: 2 }, FAR]],
          tombstones: [['gone', 6, T0 - 1, FAR, { n: 0 }]],
        },
        { type: 'end', records: 3, tombstones: 1 },
      ];
      await writeFile(join(dir, 'snapshot.dat'), Buffer.concat(frames.map((frame) => encodeFrame(crc, JSON.stringify(frame)))));
      const { store } = await open(dir);
      assert.deepEqual(store.scan('items').map(readable), [
        { collection: 'items', id: 'a', version: 3, modifiedAt: T0 - 3, doc: { name: 'café' } },
        { collection: 'items', id: 'b', version: 4, modifiedAt: T0 - 2, doc: { n: 1 }, dueAt: T0 + 1 },
        { collection: 'items', id: 'c', version: 5, modifiedAt: T0 - 1, doc: { n: 2 }, expiresAt: FAR },
      ]);
      assert.deepEqual(store.getTombstone('items', 'gone')?.doc, { n: 0 });
      await commitOk(store, { kind: 'put', collection: 'items', id: 'd', doc: {} });
      assert.equal(store.get('items', 'd')?.version, 10, 'the sequence goes on after the snapshot');
      await store.close();
    }));

  it('should wait for journals of a quarter of the last snapshot before the next, and recover everything', () =>
    withTempDir('snapshot', async (dir) => {
      const floor = 1024;
      const written: Array<{ seq: number; bytes: number }> = [];
      let firstWritten: () => void = () => {};
      const firstSnapshot = new Promise<void>((resolve) => (firstWritten = resolve));
      /** Bytes of each group written, in seq order: commits are made one at a time, one group each. */
      const groups: number[] = [];
      const opened = await openFileStore({
        dir,
        clock: clockAt(() => T0),
        snapshotThresholdBytes: floor,
        progress: () => {},
        log: (_level, message, fields) => {
          if (message !== 'snapshot written') return;
          written.push({ seq: Number(fields?.seq), bytes: Number(fields?.bytes) });
          firstWritten();
        },
        observer: { groupCommitted: (_batches, bytes) => void groups.push(bytes) },
      });
      assert.ok(opened.ok);
      const { store } = opened;
      const doc = (n: number): JsonObject => ({ n, text: 'x'.repeat(1000) });
      // One batch of 64 records of ~1 kB: a journal well over the floor, so a snapshot of seq 1.
      const seed: Mutation[] = [];
      for (let n = 0; n < 64; n++) seed.push({ kind: 'put', collection: 'items', id: `r${n}`, doc: doc(n) });
      await commitOk(store, ...seed);
      await firstSnapshot;
      const first = written[0] as { seq: number; bytes: number };
      assert.equal(first.seq, 1);
      const trigger = Math.floor(first.bytes / 4);
      assert.ok(trigger > 8 * floor, `a snapshot of ${first.bytes} bytes is well over the floor`);
      // Commits of ~1 kB until the journal since that snapshot is a few past the trigger; close()
      // waits for a snapshot that is being written.
      let n = 64;
      const journalBytes = (): number => groups.slice(1).reduce((sum, bytes) => sum + bytes, 0);
      while (journalBytes() < trigger + 4 * 1024) {
        await commitOk(store, { kind: 'put', collection: 'items', id: `r${n}`, doc: doc(n) });
        n++;
      }
      await store.close();
      assert.equal(written.length, 2, JSON.stringify(written));
      // The second snapshot is of the first seq whose journal (seqs 2 and on) reached the trigger.
      let crossing = 1;
      for (let sum = 0; sum < trigger; crossing++) sum += groups[crossing] as number;
      assert.equal((written[1] as { seq: number }).seq, crossing);

      const reopened = await open(dir);
      assert.equal(reopened.store.count('items'), n);
      for (let k = 0; k < n; k++) assert.deepEqual(reopened.store.get('items', `r${k}`)?.doc, doc(k));
      await reopened.store.close();
    }));

  it('should flush a large snapshot to the disk as it is written, leaving its last fsync little to do', () =>
    withTempDir('snapshot', async (dir) => {
      // ~40 MiB of records in the journal, below the default threshold: no snapshot yet.
      const seeding = await open(dir);
      const text = 'x'.repeat(1000);
      for (let batch = 0; batch < 40; batch++) {
        const mutations: Mutation[] = [];
        for (let n = 0; n < 1000; n++) mutations.push({ kind: 'put', collection: 'items', id: `r${batch}-${n}`, doc: { n, text } });
        await commitOk(seeding.store, ...mutations);
      }
      await seeding.store.close();
      // Reopened with a threshold the journal passes: a snapshot of ~40 MiB right after recovery,
      // through a file I/O that counts the bytes of the snapshot's temp file not yet flushed.
      const flushes: number[] = [];
      let lastSync: number | undefined;
      const io = wrappingIO((path) => path.includes('snapshot.dat.tmp'), (handle) => {
        let unflushed = 0;
        return {
          ...handle,
          write: async (buffer, offset, length, position) => {
            const wrote = await handle.write(buffer, offset, length, position);
            unflushed += wrote;
            return wrote;
          },
          datasync: async () => {
            flushes.push(unflushed);
            unflushed = 0;
            await handle.datasync();
          },
          sync: async () => {
            lastSync = unflushed;
            unflushed = 0;
            await handle.sync();
          },
        };
      });
      const opened = await open(dir, 1, () => T0, io);
      await opened.snapshotWritten;
      await opened.store.close();
      const { size: bytes } = await stat(join(dir, 'snapshot.dat'));
      assert.ok(bytes > 40_000_000, `a snapshot of ${bytes} bytes`);
      const MIB = 1 << 20;
      assert.ok(flushes.length >= 2, `flushed ${flushes.length} times as it went`);
      for (const unflushed of flushes) assert.ok(unflushed <= 18 * MIB, `${unflushed} bytes flushed at once`);
      assert.ok(lastSync !== undefined && lastSync <= 18 * MIB, `${String(lastSync)} bytes left for the last fsync`);
      const reopened = await open(dir);
      assert.equal(reopened.store.count('items'), 40_000);
      await reopened.store.close();
    }));

  describe('a records frame that does not add up refuses the start', () => {
    const header = { type: 'header', format: 2, seq: 2, at: T0, lastModified: [] };
    const columns = { type: 'records', collection: 'items', versions: [1, 2], modifiedAt: [T0, T0], idLengths: [1, 1] };
    const cases: ReadonlyArray<readonly [string, string, RegExp]> = [
      ['a document longer than the text', `${JSON.stringify({ ...columns, docLengths: [2, 9] })}\na{}b{}`, /bad record document/],
      ['text left after the last document', `${JSON.stringify({ ...columns, docLengths: [2, 2] })}\na{}b{}c`, /record text left over/],
      ['a document that is not an object', `${JSON.stringify({ ...columns, docLengths: [2, 2] })}\na{}b[]`, /bad record document/],
      ['a column shorter than the others', `${JSON.stringify({ ...columns, docLengths: [2] })}\na{}b{}`, /bad records frame/],
      ['a records frame without its documents', JSON.stringify({ ...columns, docLengths: [2, 2] }), /unknown frame type/],
    ];
    for (const [name, records, reason] of cases) {
      it(`should refuse ${name}`, () =>
        withTempDir('snapshot', async (dir) => {
          const crc = new Crc32c();
          const payloads = [JSON.stringify(header), records, JSON.stringify({ type: 'end', records: 2, tombstones: 0 })];
          await writeFile(join(dir, 'snapshot.dat'), Buffer.concat(payloads.map((payload) => encodeFrame(crc, payload))));
          const opened = await openResult(dir);
          assert.equal(!opened.ok && opened.kind, 'corrupt');
          assert.match(!opened.ok ? opened.message : '', /snapshot\.dat is corrupt at offset \d+ \(/);
          assert.match(!opened.ok ? opened.message : '', reason);
        }));
    }
  });
});
