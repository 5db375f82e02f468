// Benchmark (README, Performance): a page of wide items in every representation
// (CONVENTIONS.md#page-byte-budget). ITEMS items of KEYS properties each, no two items sharing a
// property, asked with `Prefer: maxpagesize=1000`: a CSV or HTML table has a column per property of
// any item on the page, so without a byte budget that measures the columns the page would be
// ITEMS × ITEMS × KEYS cells. For JSON, CSV and HTML: the first page's bytes and time, the whole
// walk's pages and largest page, the server's resident memory after, and the slowest `/$health`
// answered while the first page was built (asked every few milliseconds meanwhile). Figures are
// printed, never asserted.
import { readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { openFileStore } from '../../lib/store/file.js';
import { silentLogger } from '../../lib/log.js';
import type { JsonObject } from '../../lib/json.js';
import type { Mutation } from '../../lib/store/types.js';
import { withTempDir } from '../support/temp-dir.js';
import type { Report } from './measure.js';
import { spawnResapi, type Child } from './servers.js';

const KEYS = 520;
const BATCH = 100;
const HEALTH_EVERY_MS = 5;
/** A walk that passes this many pages stops: the section must end whatever the server answers. */
const MAX_PAGES = 10_000;
const MEDIA = ['application/json', 'text/csv', 'text/html'] as const;

export async function benchPageBudget(report: Report, items: number): Promise<void> {
  await withTempDir('bench-page-budget', async (folder) => {
    const data = join(folder, 'data');
    await seedWide(data, items);
    const config = join(folder, 'config.json');
    // Every property name is new: the collection's cap on distinct names is raised to hold them all.
    writeFileSync(config, JSON.stringify({ limits: { maxPropertyNames: { collection: 1_000_000, document: KEYS + 1 } } }));
    const server = await spawnResapi(['--data-dir', data, '--config', config]);
    try {
      for (const media of MEDIA) {
        const slowestHealth = { ms: 0 };
        let building = true;
        const polling = (async () => {
          while (building) {
            const started = process.hrtime.bigint();
            await get(server, '/$health', 'application/json');
            slowestHealth.ms = Math.max(slowestHealth.ms, Number(process.hrtime.bigint() - started) / 1e6);
            await new Promise((resolve) => setTimeout(resolve, HEALTH_EVERY_MS));
          }
        })();
        const started = process.hrtime.bigint();
        const first = await get(server, '/wide', media);
        const firstMs = Number(process.hrtime.bigint() - started) / 1e6;
        building = false;
        await polling;
        let pages = 1;
        let largest = first.bytes;
        for (let next = first.next; next !== undefined && pages < MAX_PAGES; pages++) {
          const page = await get(server, next, media);
          largest = Math.max(largest, page.bytes);
          next = page.next;
        }
        report.row('page budget', `${items.toLocaleString('en')} items × ${KEYS} distinct keys, ${media}`, {
          'first page status': first.status,
          'first page MB': (first.bytes / 1e6).toFixed(2),
          'first page ms': firstMs.toFixed(0),
          'slowest /$health ms': slowestHealth.ms.toFixed(0),
          pages,
          'largest page MB': (largest / 1e6).toFixed(2),
          'server RSS MiB': residentMiB(server),
        });
      }
    } finally {
      await server.stop();
    }
  });
}

/** Items `w0000…` of KEYS properties each, named after the item, written through the store directly. */
async function seedWide(dir: string, items: number): Promise<void> {
  const opened = await openFileStore({ dir, log: silentLogger, progress: () => {} });
  if (!opened.ok) throw new Error(opened.message);
  for (let start = 0; start < items; start += BATCH) {
    const mutations: Mutation[] = [];
    for (let n = start; n < Math.min(items, start + BATCH); n++) {
      const id = `w${String(n).padStart(4, '0')}`;
      const doc: JsonObject = { id };
      for (let key = 0; key < KEYS; key++) doc[`item${n}_field${key}`] = key;
      mutations.push({ kind: 'put', collection: 'wide', id, doc });
    }
    const result = await opened.store.commit({ mutations });
    if (!result.ok) throw new Error(`seeding failed: ${result.reason}`);
  }
  await opened.store.close();
}

interface Answer {
  readonly status: number;
  readonly bytes: number;
  readonly next: string | undefined;
}

/** A GET read to its end, counting its bytes without keeping them; the next page from Link. */
function get(to: Child, path: string, accept: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers = { Accept: accept, Prefer: 'maxpagesize=1000' };
    const outgoing = request({ host: to.url.hostname, port: to.url.port, path, headers, agent: false }, (answer) => {
      let bytes = 0;
      answer.on('data', (chunk: Buffer) => (bytes += chunk.length));
      answer.on('end', () => {
        const next = answer.statusCode === 200 ? /<([^>]+)>; rel="next"/.exec(String(answer.headers.link ?? ''))?.[1] : undefined;
        resolve({ status: answer.statusCode ?? 0, bytes, next });
      });
      answer.on('error', reject);
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

/** The child's resident memory from /proc (Linux), or a dash elsewhere. */
function residentMiB(child: Child): string {
  try {
    const status = readFileSync(`/proc/${String(child.process.pid)}/status`, 'utf8');
    const kib = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
    return kib === undefined ? '-' : (Number(kib) / 1024).toFixed(0);
  } catch {
    return '-';
  }
}
