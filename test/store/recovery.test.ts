// Recovery (lib/store/recovery.ts): a torn last record is dropped and logged, at every byte offset
// it can be cut at; damage anywhere else refuses to start, naming the file and offset, and changes
// nothing; leftover temp files are removed; a large store reports progress; journals in the first
// record form still open, and the compact form brings back every kind of mutation.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFile, readdir, rm, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FileStore, FileStoreOptions, OpenResult } from '../../lib/store/file.js';
import { openFileStore } from '../../lib/store/file.js';
import { Crc32c, encodeFrame, FRAME_HEADER_BYTES } from '../../lib/store/codec.js';
import type { JsonObject } from '../../lib/json.js';
import type { Mutation } from '../../lib/store/types.js';
import { readable } from '../support/store.js';
import { withTempDir } from '../support/temp-dir.js';

const JOURNAL = 'journal-0000000000000001.log';

interface Logged {
  readonly level: string;
  readonly message: string;
  readonly fields: Readonly<Record<string, unknown>>;
}

async function open(dir: string, logged: Logged[] = [], extra: Partial<FileStoreOptions> = {}): Promise<OpenResult> {
  return openFileStore({ dir, log: (level, message, fields = {}) => logged.push({ level, message, fields }), progress: () => {}, ...extra });
}

async function openOk(dir: string, logged: Logged[] = [], extra: Partial<FileStoreOptions> = {}): Promise<FileStore> {
  const opened = await open(dir, logged, extra);
  assert.ok(opened.ok, opened.ok ? '' : opened.message);
  return opened.store;
}

/** Writes `count` two-row batches one after another, so each is a group of its own. */
async function writeBatches(dir: string, count: number, extra: Partial<FileStoreOptions> = {}): Promise<void> {
  const store = await openOk(dir, [], extra);
  for (let n = 0; n < count; n++) {
    const result = await store.commit({ mutations: [{ kind: 'put', collection: 'items', id: `k${n}`, doc: { n } }, { kind: 'put', collection: '$outbox', id: `e${n}`, doc: { n } }] });
    assert.ok(result.ok);
  }
  await store.close();
}

/** The pid of a process that has exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await new Promise((resolve) => child.on('exit', resolve));
  return child.pid as number;
}

function frameOffsets(bytes: Buffer): number[] {
  const offsets: number[] = [];
  for (let at = 0; at < bytes.length; at += FRAME_HEADER_BYTES + bytes.readUInt32LE(at + 4)) offsets.push(at);
  return offsets;
}

describe('FileStore recovery', () => {
  it('should drop a torn last record cut at any byte offset, and log it', () =>
    withTempDir('recovery', async (dir) => {
      await writeBatches(dir, 4);
      const whole = await readFile(join(dir, JOURNAL));
      const offsets = frameOffsets(whole);
      const last = offsets[3] as number;
      for (let cut = last; cut < whole.length; cut++) {
        await writeFile(join(dir, JOURNAL), whole.subarray(0, cut));
        const logged: Logged[] = [];
        const store = await openOk(dir, logged);
        try {
          assert.deepEqual(store.scan('items').map((record) => record.id), ['k0', 'k1', 'k2'], `cut at ${cut}`);
          assert.equal(store.get('$outbox', 'e3'), undefined);
          const torn = logged.filter((entry) => entry.level === 'warn' && /torn/.test(entry.message));
          assert.deepEqual(torn.map((entry) => entry.fields.offset), cut === last ? [] : [last], `cut at ${cut}`);
          // The torn bytes are gone, so the next write lands right after the last good record.
          assert.equal((await readFile(join(dir, JOURNAL))).length, last);
        } finally {
          await store.close();
        }
      }
    }));

  it('should drop a torn last group whose later frames reached the disk before an earlier one', () =>
    withTempDir('recovery', async (dir) => {
      await writeBatches(dir, 2);
      const store = await openOk(dir);
      const results = await Promise.all([5, 6, 7].map((n) => store.commit({ mutations: [{ kind: 'put', collection: 'items', id: `g${n}`, doc: { n } }] })));
      assert.deepEqual(results.map((result) => result.ok && result.commit.seq), [3, 4, 5]);
      await store.close();
      const bytes = await readFile(join(dir, JOURNAL));
      const offsets = frameOffsets(bytes);
      bytes.fill(0, offsets[3] as number, offsets[4] as number); // the group's middle page never landed
      await writeFile(join(dir, JOURNAL), bytes);
      const reopened = await openOk(dir);
      assert.deepEqual(reopened.scan('items').map((record) => record.id), ['g5', 'k0', 'k1']);
      await reopened.close();
    }));

  it('should refuse to start on a damaged record in the middle, naming file and offset', () =>
    withTempDir('recovery', async (dir) => {
      await writeBatches(dir, 5);
      const path = join(dir, JOURNAL);
      const offsets = frameOffsets(await readFile(path));
      for (const damage of ['payload', 'length'] as const) {
        const bytes = await readFile(path);
        const original = Buffer.from(bytes);
        const at = offsets[2] as number;
        if (damage === 'payload') bytes[at + FRAME_HEADER_BYTES + 3] = (bytes[at + FRAME_HEADER_BYTES + 3] as number) ^ 0x20;
        else bytes.writeUInt32LE(bytes.length, at + 4);
        await writeFile(path, bytes);
        const opened = await open(dir);
        assert.equal(opened.ok, false);
        assert.equal(!opened.ok && opened.kind, 'corrupt');
        assert.match(!opened.ok ? opened.message : '', new RegExp(`${JOURNAL} is corrupt at offset ${at}\\b`));
        assert.deepEqual(await readFile(path), bytes, 'the damaged file must be left as it was');
        assert.deepEqual(await readdir(dir), [JOURNAL], 'the lock must be released');
        await writeFile(path, original);
      }
    }));

  it('should refuse to start on a damaged or truncated snapshot', () =>
    withTempDir('recovery', async (dir) => {
      await writeBatches(dir, 40, { snapshotThresholdBytes: 1024 });
      const path = join(dir, 'snapshot.dat');
      const bytes = await readFile(path);
      const flipped = Buffer.from(bytes);
      flipped[FRAME_HEADER_BYTES + 5] = (flipped[FRAME_HEADER_BYTES + 5] as number) ^ 1;
      await writeFile(path, flipped);
      const damaged = await open(dir);
      assert.match(!damaged.ok && damaged.kind === 'corrupt' ? damaged.message : '', /snapshot .*snapshot\.dat is corrupt at offset 0 /);
      await writeFile(path, bytes);
      await truncate(path, bytes.length - 3);
      const short = await open(dir);
      assert.match(!short.ok && short.kind === 'corrupt' ? short.message : '', /snapshot\.dat is corrupt at offset \d+/);
    }));

  it('should refuse to start when a journal is missing between the snapshot and the next one', () =>
    withTempDir('recovery', async (dir) => {
      await writeBatches(dir, 40, { snapshotThresholdBytes: 1024 });
      await rm(join(dir, 'snapshot.dat'));
      const opened = await open(dir);
      assert.equal(!opened.ok && opened.kind, 'corrupt');
      assert.match(!opened.ok ? opened.message : '', /records 1 to \d+ are missing/);
    }));

  it('should remove leftover temp files and say so', () =>
    withTempDir('recovery', async (dir) => {
      await writeBatches(dir, 2);
      const leftovers = ['snapshot.dat.tmp-123-abcdef', 'probe.tmp-9-00', `lock.tmp-${await deadPid()}-ff`];
      for (const name of leftovers) await writeFile(join(dir, name), 'partial');
      const logged: Logged[] = [];
      const store = await openOk(dir, logged);
      assert.deepEqual((await readdir(dir)).filter((name) => name.includes('.tmp-')), []);
      const removed = logged.filter((entry) => /temp file/.test(entry.message)).map((entry) => String(entry.fields.path));
      assert.deepEqual(removed.sort(), leftovers.map((name) => join(dir, name)).sort());
      assert.equal(store.count('items'), 2);
      await store.close();
    }));

  it('should report progress while recovering a large journal', () =>
    withTempDir('recovery', async (dir) => {
      const store = await openOk(dir);
      const pad = 'x'.repeat(1 << 20);
      for (let n = 0; n < 10; n++) assert.ok((await store.commit({ mutations: [{ kind: 'put', collection: 'big', id: `b${n}`, doc: { pad } }] })).ok);
      await store.close();
      const lines: string[] = [];
      const reopened = await openOk(dir, [], { progress: (line) => lines.push(line) });
      assert.equal(reopened.count('big'), 10);
      await reopened.close();
      assert.ok(lines.length >= 2, lines.join('\n'));
      assert.match(lines[lines.length - 1] ?? '', /recovering store: journal-0000000000000001\.log 100% of 10 MiB/);
    }));
});

describe('journal record forms', () => {
  it('should open a journal written in the first record form, and append to it in the compact one', () =>
    withTempDir('forms', async (dir) => {
      const crc = new Crc32c();
      const T0 = 1_700_000_000_000;
      const FAR = Date.now() + 9e9;
      const first = (seq: number, group: number, mutations: readonly JsonObject[]): Buffer =>
        encodeFrame(crc, JSON.stringify({ seq, group, at: T0 + seq, batch: { mutations } }));
      await writeFile(join(dir, JOURNAL), Buffer.concat([
        first(1, 1, [
          { kind: 'put', collection: 'items', id: 'a', doc: { id: 'a', n: 1 }, expect: { absent: true } },
          { kind: 'put', collection: '$jobs', id: 'j', doc: { status: 'accepted' }, expiresAt: FAR, dueAt: T0 },
        ]),
        first(2, 1, [{ kind: 'put', collection: 'items', id: 'b', doc: { id: 'b' } }]),
        first(3, 3, [{ kind: 'patch', collection: '$jobs', id: 'j', set: { status: 'done' }, dueAt: null, expect: { version: 1 } }]),
        first(4, 4, [{ kind: 'delete', collection: 'items', id: 'b', retainUntil: FAR, expect: { version: 2 } }]),
      ]));
      const store = await openOk(dir);
      assert.deepEqual(store.scan('items').map((record) => [record.id, record.version, record.modifiedAt]), [['a', 1, T0 + 1]]);
      assert.deepEqual(store.get('$jobs', 'j')?.doc, { status: 'done' });
      assert.equal(store.get('$jobs', 'j')?.dueAt, undefined);
      assert.equal(store.get('$jobs', 'j')?.expiresAt, FAR);
      assert.equal(store.getTombstone('items', 'b')?.version, 4);
      const restored = await store.commit({ mutations: [{ kind: 'restore', collection: 'items', id: 'b' }] });
      assert.ok(restored.ok);
      await store.close();
      const reopened = await openOk(dir);
      assert.deepEqual(reopened.scan('items').map((record) => [record.id, record.version]), [['a', 1], ['b', 5]]);
      await reopened.close();
    }));

  it('should bring back every kind of mutation from the compact form, with its id stored once', () =>
    withTempDir('forms', async (dir) => {
      const T0 = Date.now();
      const store = await openOk(dir);
      const mutations: Mutation[] = [
        { kind: 'put', collection: 'items', id: 'a', doc: { id: 'a', n: 1 }, expect: { absent: true } },
        { kind: 'put', collection: 'items', id: 'other', doc: { id: 'not the key' } },
        { kind: 'put', collection: '$x', id: 'e', doc: { v: 1 }, expiresAt: T0 + 9e9 },
        { kind: 'put', collection: '$x', id: 'd', doc: { v: 2 }, dueAt: T0 + 5 },
        { kind: 'put', collection: '$x', id: 'ed', doc: { v: 3 }, expiresAt: T0 + 9e9, dueAt: T0 + 6 },
        { kind: 'put', collection: 'items', id: '"quoted"\u2028', doc: { id: '"quoted"\u2028', ['__proto__']: 1 } },
      ];
      assert.ok((await store.commit({ mutations })).ok);
      const patch: Mutation = { kind: 'patch', collection: '$x', id: 'ed', set: { v: 4 }, unset: ['w'], dueAt: null, expect: { version: 1 } };
      assert.ok((await store.commit({ mutations: [patch, { kind: 'delete', collection: '$x', id: 'e' }] })).ok);
      const before = ['items', '$x'].map((name) => store.scan(name).map(readable));
      await store.close();
      const text = (await readFile(join(dir, JOURNAL))).toString('utf8');
      assert.equal(text.split('"a"').length - 1, 1, 'the id a document carries is written once');
      assert.doesNotMatch(text, /expect/);
      const reopened = await openOk(dir);
      assert.deepEqual(['items', '$x'].map((name) => reopened.scan(name).map(readable)), before);
      await reopened.close();
    }));
});
