// Benchmark (README, Performance): time to recover 100k and 1M records of about
// 200 bytes, and the resident memory of a process holding 1M records. The store is written through
// FileStore commits (so snapshots and journal rotation happen as in production), closed, then
// opened by a fresh child process that reports how long the open took and its RSS.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { openFileStore } from '../../lib/store/file.js';
import { silentLogger } from '../../lib/log.js';
import { withTempDir } from '../support/temp-dir.js';
import type { Mutation } from '../../lib/store/types.js';
import type { Report } from './measure.js';

const CHILD = fileURLToPath(new URL('./recover-child.js', import.meta.url));
const BATCH = 1000;

export async function benchRecovery(report: Report, sizes: readonly number[]): Promise<void> {
  for (const size of sizes) {
    await withTempDir('recovery', async (dir) => {
      const opened = await openFileStore({ dir, log: silentLogger, progress: () => {} });
      if (!opened.ok) throw new Error(opened.message);
      for (let start = 0; start < size; start += BATCH) {
        const mutations: Mutation[] = [];
        for (let n = start; n < Math.min(size, start + BATCH); n++) {
          const id = `r${String(n).padStart(8, '0')}`;
          mutations.push({ kind: 'put', collection: 'items', id, doc: { id, name: `Record ${n}`, price: n % 1000, tags: ['a', 'b'], note: 'x'.repeat(110) } });
        }
        const result = await opened.store.commit({ mutations });
        if (!result.ok) throw new Error(result.reason);
      }
      await opened.store.close();
      const measured = JSON.parse(execFileSync(process.execPath, ['--max-old-space-size=4096', CHILD, dir], { encoding: 'utf8' })) as { ms: number; rss: number; count: number };
      if (measured.count !== size) throw new Error(`recovered ${measured.count} of ${size} records`);
      report.row('recovery', `${size.toLocaleString('en')} records of ~200 bytes`, {
        'recovery s': (measured.ms / 1000).toFixed(2),
        'resident MiB': (measured.rss / 1048576).toFixed(0),
      });
    });
  }
}
