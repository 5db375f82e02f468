// Benchmark (README, Performance): what a write costs as its subscriptions grow
// (CONVENTIONS.md#transactional-outbox: an event's body is stored once, however many deliveries it
// has; CONVENTIONS.md#subscriptions: at most limits.maxSubscriptions of them). For 0, 1, 10 and 100
// subscriptions (100 is the default limit), WRITES PUT-creates of a 50 KB item on `resapi serve`
// with a data dir; each write's bytes on disk (`resapi_store_disk_bytes` of /$metrics before and
// after it) and its time, medians, beside the same write with no subscription. The receiver reads
// each delivery and never answers (with a long `outbox.timeoutMs`), so no delivery's outcome is
// written while the writes are measured: the bytes are the writes' own. Figures are printed, never
// asserted (the end-to-end test test/e2e/outbox-bodies.test.ts asserts the bound on bytes).
import { writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { join } from 'node:path';
import { withTempDir } from '../support/temp-dir.js';
import type { Report } from './measure.js';
import { send, spawnResapi, spawnScript, type Child } from './servers.js';

const SUBSCRIPTIONS = [0, 1, 10, 100] as const;
const WRITES = 7;
/** About 50 KB: 500 properties of 90 characters. */
const BODY = JSON.stringify(Object.fromEntries(Array.from({ length: 500 }, (_, n) => [`field${n}`, `value ${n} `.padEnd(90, 'abcdefghij')])));

const SILENT_RECEIVER = `
const http = require('node:http');
const server = http.createServer((req) => req.resume());
server.listen(0, '127.0.0.1', () => console.log('listening on http://127.0.0.1:' + server.address().port));
process.on('SIGTERM', () => { server.closeAllConnections(); server.close(() => process.exit(0)); });
`;

export async function benchSubscriptions(report: Report): Promise<void> {
  await withTempDir('bench-subscriptions', async (folder) => {
    const agent = new Agent({ keepAlive: true });
    const config = join(folder, 'config.json');
    writeFileSync(config, JSON.stringify({ outbox: { timeoutMs: 600_000 } }));
    let unsubscribed = 0;
    try {
      for (const count of SUBSCRIPTIONS) {
        const receiver = await spawnScript(SILENT_RECEIVER);
        const server = await spawnResapi(['--data-dir', join(folder, `data-${count}`), '--config', config]);
        try {
          for (let n = 0; n < count; n++) {
            const subscription = JSON.stringify({ url: new URL('/hook', receiver.url).href, events: ['bench.*'], secret: 'bench-secret-0123' });
            await send(agent, server, 'PUT', `/$subscriptions/s${n}`, subscription, 201);
          }
          const bytes: number[] = [];
          const times: number[] = [];
          for (let n = 0; n < WRITES; n++) {
            const before = await diskBytes(agent, server);
            const started = process.hrtime.bigint();
            await send(agent, server, 'PUT', `/bench/w${n}`, BODY, 201);
            times.push(Number(process.hrtime.bigint() - started) / 1e6);
            bytes.push((await diskBytes(agent, server)) - before);
          }
          const written = median(bytes);
          if (count === 0) unsubscribed = written;
          report.row('subscriptions', `a ${Math.round(BODY.length / 1000)} KB PUT, ${count} subscriptions`, {
            'bytes on disk': written,
            '× unsubscribed': (written / unsubscribed).toFixed(2),
            'PUT ms': median(times).toFixed(1),
          });
        } finally {
          // The receiver first: the deliveries it holds then fail at once, and the drain has nothing to wait for.
          await receiver.stop();
          await server.stop();
        }
      }
    } finally {
      agent.destroy();
    }
  });
}

async function diskBytes(agent: Agent, server: Child): Promise<number> {
  const text = await send(agent, server, 'GET', '/$metrics');
  const match = /^resapi_store_disk_bytes (\d+)$/m.exec(text);
  if (match === null) throw new Error('/$metrics has no resapi_store_disk_bytes');
  return Number(match[1]);
}

function median(values: readonly number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
}
