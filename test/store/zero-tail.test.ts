// Zeros prepared ahead of the journal (lib/store/journal.ts, CONVENTIONS.md#durability): the journal file
// is extended with durable zeros beside the group writes, so they overwrite allocated blocks; its size
// counts frames only; a closed journal is cut back to its frames; and recovery reads an all-zero tail
// after the last frame as a clean end, on a real file, while a torn or damaged frame followed by zeros
// is still treated as before (dropped and logged when torn, refused when in the middle).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { appendFile, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FileStore, FileStoreOptions, OpenResult } from '../../lib/store/file.js';
import { openFileStore } from '../../lib/store/file.js';
import { Crc32c, FRAME_HEADER_BYTES } from '../../lib/store/codec.js';
import type { FileIO } from '../../lib/store/fs-io.js';
import { journalName } from '../../lib/store/journal.js';
import { nodeFileIO } from '../../lib/store/fs-io.js';
import { withTempDir } from '../support/temp-dir.js';
import { recordFrame } from '../support/frames.js';

const JOURNAL = journalName(1);

interface Logged {
  readonly level: string;
  readonly message: string;
  readonly fields: Readonly<Record<string, unknown>>;
}

function open(dir: string, logged: Logged[] = [], extra: Partial<FileStoreOptions> = {}): Promise<OpenResult> {
  return openFileStore({ dir, log: (level, message, fields = {}) => logged.push({ level, message, fields }), progress: () => {}, ...extra });
}

async function openOk(dir: string, logged: Logged[] = [], extra: Partial<FileStoreOptions> = {}): Promise<FileStore> {
  const opened = await open(dir, logged, extra);
  assert.ok(opened.ok, opened.ok ? '' : opened.message);
  return opened.store;
}

async function put(store: FileStore, n: number): Promise<void> {
  const result = await store.commit({ mutations: [{ kind: 'put', collection: 'items', id: `k${n}`, doc: { n } }] });
  assert.ok(result.ok);
}

/** Writes `count` batches one after another (a group each), and closes the store. */
async function writeBatches(dir: string, count: number): Promise<void> {
  const store = await openOk(dir);
  for (let n = 0; n < count; n++) await put(store, n);
  await store.close();
}

/** The offsets of the frames at the start of `bytes`, up to the first byte that starts none. */
function frameOffsets(bytes: Buffer): number[] {
  const offsets: number[] = [];
  for (let at = 0; at + FRAME_HEADER_BYTES <= bytes.length && bytes.readUInt32LE(at) !== 0; ) {
    offsets.push(at);
    at += FRAME_HEADER_BYTES + bytes.readUInt32LE(at + 4);
  }
  return offsets;
}

const ids = (store: FileStore): string[] => store.scan('items').map((record) => record.id);
const torn = (logged: readonly Logged[]): Logged[] => logged.filter((entry) => /torn/.test(entry.message));

/** Resolves once `condition` holds, looking again every 5 ms for up to 10 s (the disk may be slow). */
async function until(condition: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await condition()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
  assert.ok(await condition(), 'the condition never held');
}

describe('journal zeros prepared ahead', () => {
  it('should write zeros past the last frame while open, and cut them off on close', () =>
    withTempDir('zeros', async (dir) => {
      const store = await openOk(dir);
      for (let n = 0; n < 20; n++) await put(store, n);
      const path = join(dir, JOURNAL);
      await until(async () => (await stat(path)).size > 64 << 10);
      const open = await readFile(path);
      const offsets = frameOffsets(open);
      assert.equal(offsets.length, 20);
      const last = offsets[19] as number;
      const frames = last + FRAME_HEADER_BYTES + open.readUInt32LE(last + 4);
      assert.ok(open.subarray(frames).every((byte) => byte === 0), 'past the frames there are only zeros');
      await store.close();
      assert.equal((await stat(path)).size, frames, 'a closed journal holds its frames alone');
      const reopened = await openOk(dir);
      assert.equal(ids(reopened).length, 20);
      await reopened.close();
    }));

  it('should read an all-zero tail of any length after the last frame as a clean end, and log nothing torn', () =>
    withTempDir('zeros', async (dir) => {
      await writeBatches(dir, 4);
      const path = join(dir, JOURNAL);
      const frames = await readFile(path);
      for (const zeros of [1, 11, FRAME_HEADER_BYTES, 4099, (1 << 20) + 7, (3 << 20) + 5]) {
        await writeFile(path, Buffer.concat([frames, Buffer.alloc(zeros)]));
        const logged: Logged[] = [];
        const store = await openOk(dir, logged);
        assert.deepEqual(ids(store), ['k0', 'k1', 'k2', 'k3'], `${zeros} zeros`);
        assert.deepEqual(torn(logged), [], `${zeros} zeros`);
        await store.close();
        // The zeros are gone: the journal is exactly its frames again.
        assert.deepEqual(await readFile(path), frames, `${zeros} zeros`);
      }
      // And the next write lands right after the last frame.
      await appendFile(path, Buffer.alloc(5000));
      const store = await openOk(dir);
      await put(store, 4);
      await store.close();
      const after = await readFile(path);
      assert.deepEqual(after.subarray(0, frames.length), frames);
      assert.equal(frameOffsets(after).length, 5);
      const reopened = await openOk(dir);
      assert.deepEqual(ids(reopened), ['k0', 'k1', 'k2', 'k3', 'k4']);
      await reopened.close();
    }));

  it('should still drop and log a torn last frame that zeros follow', () =>
    withTempDir('zeros', async (dir) => {
      await writeBatches(dir, 4);
      const path = join(dir, JOURNAL);
      const whole = await readFile(path);
      const last = frameOffsets(whole)[3] as number;
      for (const cut of [last + 1, last + FRAME_HEADER_BYTES + 2, whole.length - 1]) {
        await writeFile(path, Buffer.concat([whole.subarray(0, cut), Buffer.alloc(8192)]));
        const logged: Logged[] = [];
        const store = await openOk(dir, logged);
        assert.deepEqual(ids(store), ['k0', 'k1', 'k2'], `cut at ${cut}`);
        assert.deepEqual(torn(logged).map((entry) => entry.fields.offset), [last], `cut at ${cut}`);
        await store.close();
        assert.equal((await stat(path)).size, last);
        await writeFile(path, whole);
      }
    }));

  it('should still refuse to start on a damaged frame in the middle when zeros end the journal', () =>
    withTempDir('zeros', async (dir) => {
      await writeBatches(dir, 5);
      const path = join(dir, JOURNAL);
      const bytes = await readFile(path);
      const at = frameOffsets(bytes)[2] as number;
      bytes[at + FRAME_HEADER_BYTES + 3] = (bytes[at + FRAME_HEADER_BYTES + 3] as number) ^ 0x20;
      await writeFile(path, Buffer.concat([bytes, Buffer.alloc(1 << 16)]));
      const opened = await open(dir);
      assert.equal(opened.ok, false);
      assert.equal(!opened.ok && opened.kind, 'corrupt');
      assert.match(!opened.ok ? opened.message : '', new RegExp(`${JOURNAL} is corrupt at offset ${at}\\b`));
    }));

  it('should read zeros at the end of a journal that is not the last as its end (a rotation cut short)', () =>
    withTempDir('zeros', async (dir) => {
      const crc = new Crc32c();
      const frame = (seq: number): Buffer =>
        recordFrame(crc, { seq, group: seq, at: 1_700_000_000_000, batch: { mutations: [{ kind: 'put', collection: 'items', id: `k${seq}`, doc: { seq } }] } });
      await writeFile(join(dir, journalName(1)), Buffer.concat([frame(1), frame(2), Buffer.alloc(20_000)]));
      await writeFile(join(dir, journalName(3)), frame(3));
      const logged: Logged[] = [];
      const store = await openOk(dir, logged);
      assert.deepEqual(ids(store), ['k1', 'k2', 'k3']);
      assert.deepEqual(torn(logged), []);
      await put(store, 4);
      await store.close();
      const reopened = await openOk(dir);
      assert.deepEqual(ids(reopened), ['k1', 'k2', 'k3', 'k4']);
      await reopened.close();
    }));

  it('should keep committing, and lose nothing, when the zeros cannot be written', () =>
    withTempDir('zeros', async (dir) => {
      const real = nodeFileIO();
      let attempts = 0;
      // Writes half of the zeros and then fails, as a disk that fills up would.
      const io: FileIO = {
        ...real,
        open: async (path, mode, options) => {
          const handle = await real.open(path, mode, options);
          const writeZeros = handle.writeZeros;
          if (writeZeros === undefined) return handle;
          return {
            ...handle,
            writeZeros: async (position, length) => {
              attempts++;
              await writeZeros(position, Math.ceil(length / 2));
              throw Object.assign(new Error('injected ENOSPC on writeZeros'), { code: 'ENOSPC' });
            },
          };
        },
      };
      const logged: Logged[] = [];
      const store = await openOk(dir, logged, { io, snapshotThresholdBytes: 1 << 20 });
      for (let n = 0; n < 300; n++) await put(store, n);
      assert.ok(attempts >= 1);
      assert.ok(logged.some((entry) => entry.level === 'warn' && /cannot prepare the journal/.test(entry.message)));
      assert.deepEqual(logged.filter((entry) => entry.level === 'error'), []);
      await store.close();
      const frames = await readFile(join(dir, JOURNAL));
      assert.equal(frameOffsets(frames).length, 300, 'a closed journal holds its frames alone');
      const reopened = await openOk(dir);
      assert.equal(ids(reopened).length, 300);
      await reopened.close();
    }));
});
