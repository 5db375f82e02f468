// What the journal costs (lib/store/journal.ts, through FileStore): concurrent commits share fsyncs
// (group commit), and disk use stays within about twice the live data plus the journal threshold
// however many times the same records are rewritten (CONVENTIONS.md#durability).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { openFileStore } from '../../lib/store/file.js';
import type { FileHandleIO, FileIO } from '../../lib/store/fs-io.js';
import { nodeFileIO } from '../../lib/store/fs-io.js';
import { withTempDir } from '../support/temp-dir.js';

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
