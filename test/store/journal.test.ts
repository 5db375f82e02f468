// What the journal costs (lib/store/journal.ts, through FileStore): concurrent commits share fsyncs
// (group commit), and disk use stays within about twice the live data plus the journal threshold
// however many times the same records are rewritten (CONVENTIONS.md#durability).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { constants } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Crc32c, decodeRecord, FRAME_HEADER_BYTES, FrameBuffer } from '../../lib/store/codec.js';
import { openFileStore } from '../../lib/store/file.js';
import type { Mutation } from '../../lib/store/types.js';
import type { FileHandleIO, FileIO } from '../../lib/store/fs-io.js';
import { nodeFileIO } from '../../lib/store/fs-io.js';
import { withTempDir } from '../support/temp-dir.js';
import { recordFrame } from '../support/frames.js';

/** The real file I/O, counting fdatasync calls on journal files. */
function countingIO(): { io: FileIO; syncs: () => number } {
  const real = nodeFileIO();
  let syncs = 0;
  const io: FileIO = {
    ...real,
    open: async (path, mode) => {
      const handle: FileHandleIO = await real.open(path, mode);
      if (!path.includes('journal-')) return handle;
      return {
        ...handle,
        read: handle.read.bind(handle),
        write: handle.write.bind(handle),
        sync: handle.sync.bind(handle),
        truncate: handle.truncate.bind(handle),
        size: handle.size.bind(handle),
        close: handle.close.bind(handle),
        datasync: async () => {
          syncs++;
          await handle.datasync();
        },
      };
    },
  };
  return { io, syncs: () => syncs };
}

/** Bytes in the dir now; a snapshot in progress may rename or delete a file while we look. */
async function dirSize(dir: string): Promise<number> {
  let total = 0;
  for (const name of await readdir(dir)) total += await stat(join(dir, name)).then((info) => info.size, () => 0);
  return total;
}

describe('journal group commit', () => {
  it('should acknowledge 200 concurrent commits with far fewer fsyncs than commits', async () => {
    await withTempDir('group', async (dir) => {
      const { io, syncs } = countingIO();
      const opened = await openFileStore({ dir, io, log: () => {}, progress: () => {} });
      assert.ok(opened.ok);
      try {
        const before = syncs();
        const results = await Promise.all(
          Array.from({ length: 200 }, (_, n) => opened.store.commit({ mutations: [{ kind: 'put', collection: 'g', id: `k${n}`, doc: { n } }] })),
        );
        assert.ok(results.every((result) => result.ok));
        const used = syncs() - before;
        assert.ok(used >= 1 && used <= 20, `${used} fsyncs for 200 commits`);
        assert.equal(opened.store.count('g'), 200);
      } finally {
        await opened.store.close();
      }
    });
  });
});

/**
 * The real file I/O, with each journal write held until the test lets it go, and that write failing
 * when the test says so; `events` records the order of write starts and of what the test notes.
 */
function gatedIO(): { io: FileIO; writes: () => number; release: (fail?: string) => void; events: string[] } {
  const real = nodeFileIO();
  const held: ((fail?: string) => void)[] = [];
  const events: string[] = [];
  let writes = 0;
  const io: FileIO = {
    ...real,
    open: async (path, mode) => {
      const handle: FileHandleIO = await real.open(path, mode);
      if (!path.includes('journal-')) return handle;
      return {
        read: handle.read.bind(handle),
        datasync: handle.datasync.bind(handle),
        sync: handle.sync.bind(handle),
        truncate: handle.truncate.bind(handle),
        size: handle.size.bind(handle),
        close: handle.close.bind(handle),
        write: async (buffer, offset, length, position) => {
          writes++;
          events.push(`write ${writes}`);
          const fail = await new Promise<string | undefined>((resolve) => held.push(resolve));
          if (fail !== undefined) throw Object.assign(new Error(`injected ${fail}`), { code: fail });
          return handle.write(buffer, offset, length, position);
        },
      };
    },
  };
  const release = (fail?: string): void => {
    const next = held.shift();
    assert.ok(next !== undefined, 'no journal write is waiting');
    next(fail);
  };
  return { io, writes: () => writes, release, events };
}

/** Resolves once `condition` holds, looking again every millisecond for up to 10 s (the disk may be slow). */
async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 1));
  assert.ok(condition(), 'the condition never held');
}

describe('journal durable writes', () => {
  it('should open the journal for writes durable on return where the platform has O_DSYNC, and not fdatasync then', async () => {
    await withTempDir('dsync', async (dir) => {
      const real = nodeFileIO();
      const durable: boolean[] = [];
      let syncs = 0;
      const io: FileIO = {
        ...real,
        open: async (path, mode, options) => {
          const handle = await real.open(path, mode, options);
          if (!path.includes('journal-')) return handle;
          durable.push(handle.writesAreDurable === true);
          return {
            ...handle,
            read: handle.read.bind(handle),
            write: handle.write.bind(handle),
            sync: handle.sync.bind(handle),
            truncate: handle.truncate.bind(handle),
            size: handle.size.bind(handle),
            close: handle.close.bind(handle),
            datasync: async () => {
              syncs++;
              await handle.datasync();
            },
          };
        },
      };
      const opened = await openFileStore({ dir, io, log: () => {}, progress: () => {} });
      assert.ok(opened.ok);
      for (let n = 0; n < 5; n++) {
        const result = await opened.store.commit({ mutations: [{ kind: 'put', collection: 'g', id: `k${n}`, doc: { n } }] });
        assert.ok(result.ok);
      }
      const hasDsync = constants.O_DSYNC !== undefined;
      assert.deepEqual(durable, [hasDsync]);
      assert.equal(syncs, hasDsync ? 0 : 5);
      await opened.store.close();
    });
  });
});

describe('journal group commit pipeline', () => {
  it('should start the next group\'s write before it answers the group whose sync returned', async () => {
    await withTempDir('pipeline', async (dir) => {
      const gate = gatedIO();
      const opened = await openFileStore({ dir, io: gate.io, log: () => {}, progress: () => {} });
      assert.ok(opened.ok);
      const { store } = opened;
      const put = (id: string) => store.commit({ mutations: [{ kind: 'put', collection: 'p', id, doc: { id } }] });
      const first = put('a').then((result) => {
        gate.events.push('a answered');
        return result;
      });
      await until(() => gate.writes() === 1);
      // These arrive while the first group is being written: they form the next group.
      const next = [put('b'), put('c')];
      gate.release();
      await until(() => gate.writes() === 2);
      assert.deepEqual(gate.events, ['write 1', 'write 2', 'a answered']);
      gate.release();
      const results = await Promise.all([first, ...next]);
      assert.deepEqual(results.map((result) => result.ok && result.commit.seq), [1, 2, 3]);
      await store.close();
    });
  });

  it('should give a failed group\'s seqs to the group that formed behind it, and keep it', async () => {
    await withTempDir('pipeline', async (dir) => {
      const gate = gatedIO();
      const opened = await openFileStore({ dir, io: gate.io, log: () => {}, progress: () => {} });
      assert.ok(opened.ok);
      const { store } = opened;
      const put = (id: string) => store.commit({ mutations: [{ kind: 'put', collection: 'p', id, doc: { id } }] });
      const failed = put('lost');
      await until(() => gate.writes() === 1);
      const kept = put('kept');
      gate.release('EIO');
      const lost = await failed;
      assert.equal(!lost.ok && lost.reason, 'unavailable');
      await until(() => gate.writes() === 2);
      gate.release();
      const result = await kept;
      assert.ok(result.ok);
      assert.equal(result.commit.seq, 1, 'the failed group used up no seq');
      await store.close();
      const reopened = await openFileStore({ dir, log: () => {}, progress: () => {} });
      assert.ok(reopened.ok);
      assert.deepEqual(reopened.store.scan('p').map((record) => [record.id, record.version]), [['kept', 1]]);
      await reopened.store.close();
    });
  });

  it('should check a batch that touches a record being written only once that write is applied', async () => {
    await withTempDir('pipeline', async (dir) => {
      const gate = gatedIO();
      const opened = await openFileStore({ dir, io: gate.io, log: () => {}, progress: () => {} });
      assert.ok(opened.ok);
      const { store } = opened;
      const create = (id: string) =>
        store.commit({ mutations: [{ kind: 'put', collection: 'p', id, doc: { id }, expect: { absent: true } }] });
      const first = create('k');
      await until(() => gate.writes() === 1);
      // Both expect `k` absent: the second can only be decided once the first is applied. The batch
      // behind it, on another key, keeps its place in line.
      const second = create('k');
      const behind = create('other');
      gate.release();
      await until(() => gate.writes() === 2);
      gate.release();
      const results = await Promise.all([first, second, behind]);
      assert.equal(results[0]?.ok && results[0].commit.seq, 1);
      assert.equal(!results[1]?.ok && results[1]?.reason, 'conflict');
      assert.equal(results[2]?.ok && results[2].commit.seq, 2);
      await store.close();
    });
  });
});

describe('journal disk use', () => {
  it('should stay within about twice the live data plus the threshold while records are rewritten', async () => {
    await withTempDir('disk', async (dir) => {
      const threshold = 64 * 1024;
      const opened = await openFileStore({ dir, snapshotThresholdBytes: threshold, log: () => {}, progress: () => {} });
      assert.ok(opened.ok);
      try {
        let largest = 0;
        // Each commit rewrites a fifth of the records, so a snapshot that lags a few commits behind
        // (commits go on while it is written) stays small next to the threshold.
        for (let round = 0; round < 200; round++) {
          const mutations = Array.from({ length: 10 }, (_, n) => ({ kind: 'put' as const, collection: 'd', id: `r${(round % 5) * 10 + n}`, doc: { round, text: 'y'.repeat(150) } }));
          const result = await opened.store.commit({ mutations });
          assert.ok(result.ok);
          largest = Math.max(largest, await dirSize(dir));
        }
        const live = 50 * 200;
        // 200 rounds wrote about 400 KiB; without snapshots and journal rotation the dir would hold all of it.
        assert.ok(largest <= 2 * live + 2 * threshold, `the data dir reached ${largest} bytes for ${live} bytes of live data`);
      } finally {
        await opened.store.close();
      }
    });
  });
});

describe('journal frames', () => {
  it('should write a put that carries its JSON bytes exactly as one whose document it serializes', () => {
    const crc = new Crc32c();
    const doc = { id: 'a', name: 'é', tags: ['x'], n: 1.5 };
    const plain: Mutation = { kind: 'put', collection: 'c', id: 'a', doc, expiresAt: 5, dueAt: 7 };
    const carried: Mutation = { ...plain, json: Buffer.from(JSON.stringify(doc), 'utf8') };
    const other: Mutation = { kind: 'delete', collection: 'c', id: 'b', expect: { version: 3 } };
    const frame = (put: Mutation): Buffer =>
      recordFrame(crc, { seq: 9, group: 8, at: 1000, batch: { mutations: [put, other, put] } });
    assert.deepEqual(frame(carried), frame(plain));
    const decoded = decodeRecord(frame(carried).subarray(FRAME_HEADER_BYTES));
    assert.ok(decoded.ok);
    assert.deepEqual(decoded.value.batch.mutations[0], { kind: 'put', collection: 'c', id: 'a', doc, expiresAt: 5, dueAt: 7 });
  });

  it('should append frames into one buffer exactly as each is framed alone, growing past its capacity', () => {
    const crc = new Crc32c();
    const big = { id: 'big', text: 'ü€😀'.repeat(3000) };
    const records = [
      { seq: 5, group: 5, at: 10, batch: { mutations: [{ kind: 'put', collection: 'c', id: 'a', doc: { id: 'a' } }] } },
      { seq: 6, group: 5, at: 11, batch: { mutations: [{ kind: 'put', collection: 'c', id: 'big', doc: big }] } },
      { seq: 7, group: 5, at: 12, batch: { mutations: [{ kind: 'delete', collection: 'c', id: 'a' }] } },
    ] as const;
    const frames = new FrameBuffer(64);
    for (const record of records) frames.appendRecord(crc, record);
    assert.deepEqual(frames.contents(), Buffer.concat(records.map((record) => recordFrame(crc, record))));
    const second = recordFrame(crc, records[1]).subarray(FRAME_HEADER_BYTES);
    assert.deepEqual(decodeRecord(second), { ok: true, value: records[1] });
  });

  it('should add nothing when a record cannot be encoded', () => {
    const crc = new Crc32c();
    const frames = new FrameBuffer(64);
    const gone: Mutation = { kind: 'delete', collection: 'c', id: 'a' };
    const good = { seq: 1, group: 1, at: 10, batch: { mutations: [gone] } };
    frames.appendRecord(crc, good);
    const before = Buffer.from(frames.contents());
    const doc = { id: 'b', n: 1n } as unknown as Record<string, never>;
    const put: Mutation = { kind: 'put', collection: 'c', id: 'b', doc };
    const bad = { seq: 2, group: 1, at: 11, batch: { mutations: [put] } };
    assert.throws(() => frames.appendRecord(crc, bad), /BigInt/);
    assert.deepEqual(frames.contents(), before);
    frames.appendRecord(crc, { ...good, seq: 2 });
    assert.deepEqual(frames.contents(), Buffer.concat([before, recordFrame(crc, { ...good, seq: 2 })]));
  });
});
