// Benchmark (README, Performance): how fast the webhook sender (CONVENTIONS.md#deliveries,
// CONVENTIONS.md#outbox) empties its outbox. ITEMS PUT-creates from CLIENTS keep-alive clients on a
// server with one subscription to a receiver that reads each delivery and answers 200 at once,
// timed from the first write until /$outbox lists nothing left to deliver, at the default
// `outbox.workers` (4) and at 16 (one subscription gets one delivery at a time either way). The receiver counts what
// it got, so the table also shows that nothing was lost or sent twice. Figures are printed, never
// asserted.
import { writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { join } from 'node:path';
import { eventually } from '../support/eventually.js';
import { withTempDir } from '../support/temp-dir.js';
import type { Report } from './measure.js';
import { send, spawnCountingReceiver, spawnResapi } from './servers.js';

const CLIENTS = 32;
const ITEMS = 5_000;
const WORKERS = [4, 16] as const;
const LIMIT_MS = 180_000;
const BODY = JSON.stringify({ name: 'benchmark item', price: 12.5, currency: 'EUR', tags: ['a', 'b'], note: 'x'.repeat(120) });
const UNDELIVERED = `/$outbox?$filter=${encodeURIComponent("status ne 'delivered'")}&$top=1`;

export async function benchDeliveries(report: Report): Promise<void> {
  await withTempDir('bench-deliveries', async (folder) => {
    const receiver = await spawnCountingReceiver();
    const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
    try {
      for (const workers of WORKERS) {
        const before = Number(await send(agent, receiver, 'GET', '/count'));
        const config = join(folder, `config-${workers}.json`);
        writeFileSync(config, JSON.stringify({ outbox: { workers } }));
        const server = await spawnResapi(['--data-dir', join(folder, `data-${workers}`), '--config', config]);
        try {
          const subscription = JSON.stringify({ url: new URL('/hook', receiver.url).href, events: ['bench.*'], secret: 'bench-secret' });
          await send(agent, server, 'PUT', '/$subscriptions/bench', subscription, 201);
          const started = process.hrtime.bigint();
          let next = 0;
          await Promise.all(Array.from({ length: CLIENTS }, async () => {
            while (next < ITEMS) await send(agent, server, 'PUT', `/bench/d${next++}`, BODY, 201);
          }));
          const writes = seconds(started);
          await eventually(
            `/$outbox to list no delivery left (outbox.workers ${workers})`,
            async () => (JSON.parse(await send(agent, server, 'GET', UNDELIVERED)) as { value: unknown[] }).value.length === 0,
            { deadlineMs: LIMIT_MS },
          );
          const delivered = seconds(started);
          const received = Number(await send(agent, receiver, 'GET', '/count')) - before;
          report.row('deliveries', `${ITEMS.toLocaleString('en')} creates, ${CLIENTS} clients, outbox.workers ${workers}`, {
            'writes done s': writes.toFixed(2),
            'all delivered s': delivered.toFixed(2),
            'deliveries /s': (ITEMS / delivered).toFixed(0),
            'received twice': received - ITEMS,
          });
        } finally {
          await server.stop();
        }
      }
    } finally {
      agent.destroy();
      await receiver.stop();
    }
  });
}


function seconds(since: bigint): number {
  return Number(process.hrtime.bigint() - since) / 1e9;
}
