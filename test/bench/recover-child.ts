// Child of the recovery benchmark: opens a data dir in a fresh process and prints how long the open
// took, the resident memory afterwards, and how many records it holds.
import { openFileStore } from '../../lib/store/file.js';
import { silentLogger } from '../../lib/log.js';

const dir = process.argv[2];
if (dir === undefined) throw new TypeError('usage: recover-child.js DATA_DIR');
const started = process.hrtime.bigint();
const opened = await openFileStore({ dir, log: silentLogger, progress: () => {} });
if (!opened.ok) throw new Error(opened.message);
const ms = Number(process.hrtime.bigint() - started) / 1e6;
const count = opened.store.count('items');
const rss = process.memoryUsage().rss;
await opened.store.close();
process.stdout.write(JSON.stringify({ ms, rss, count }));
