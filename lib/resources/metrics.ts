// GET /$metrics (CONTRACT §2: "Prometheus text"; README, Performance): what the server has done and
// holds, in the text exposition format 0.0.4 (lib/metrics.ts). Requests by route, method and status
// and their latency by route (route names come from the route table, never from a path); each group
// commit's fdatasync time and how many writes shared it; received events and deliveries by status
// (`dead` is what the dead-letter files hold); live records; bytes on disk; resident memory.
import { nextTurn } from '../clock.js';
import type { Reply } from '../http/respond.js';
import { Counter, EXPOSITION_TYPE, Gauge, Histogram, exposition, type Labels } from '../metrics.js';
import { noStoreCacheControl } from '../http/cache-policy.js';
import type { Store, StoreObserver } from '../store/types.js';
import { INBOX_SPACE } from '../webhooks/inbox.js';
import { OUTBOX_SPACE } from '../webhooks/events.js';
import type { App, RequestContext } from './context.js';

const LATENCY_SECONDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const SYNC_SECONDS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];
const GROUP_BATCHES = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512];
const INBOX_STATUSES = ['accepted', 'processed', 'failed', 'dead'];
const OUTBOX_STATUSES = ['pending', 'delivered', 'failed', 'dead'];
/** Records read per turn while counting statuses, so a scrape of a large inbox never holds up requests. */
const COUNT_CHUNK = 4096;

/** The counters and histograms a server fills as it works; the rest is read at each scrape. */
export class ServerMetrics implements StoreObserver {
  readonly requests = new Counter('resapi_http_requests_total', 'Requests answered, by route, method and status.');
  readonly latency = new Histogram('resapi_http_request_duration_seconds', 'Time from a request reaching its route to its answer handed to the socket, by route.', LATENCY_SECONDS);
  readonly sync = new Histogram('resapi_store_sync_duration_seconds', 'Time to write and fdatasync one group commit of the journal.', SYNC_SECONDS);
  readonly groups = new Histogram('resapi_store_group_batches', 'Atomic writes per group commit: how many shared one fdatasync.', GROUP_BATCHES);
  readonly groupBytes = new Counter('resapi_store_written_bytes_total', 'Bytes appended to the journal.');

  request(route: string, method: string, status: number, ms: number): void {
    const labels: Labels = { route, method, status: String(status) };
    this.requests.add(labels);
    this.latency.observe({ route }, ms / 1000);
  }

  groupCommitted(batches: number, bytes: number, syncMs: number): void {
    this.sync.observe({}, syncMs / 1000);
    this.groups.observe({}, batches);
    this.groupBytes.add({}, bytes);
  }
}

export async function getMetrics(app: App, _rq: RequestContext): Promise<Reply> {
  const store = app.store;
  const inbox = await countByStatus(store, INBOX_SPACE, INBOX_STATUSES);
  const outbox = await countByStatus(store, OUTBOX_SPACE, OUTBOX_STATUSES);
  const diskBytes = await store.diskBytes();
  const records = store.collections().reduce((total, collection) => total + store.count(collection), 0);
  const m = app.metrics;
  const text = exposition([
    m.requests,
    m.latency,
    m.sync,
    m.groups,
    m.groupBytes,
    new Gauge('resapi_inbox_events', 'Received webhook events by status (dead ones are in dead-letter.jsonl).', () => inbox),
    new Gauge('resapi_outbox_deliveries', 'Webhook deliveries by status (dead ones are in outbox-dead-letter.jsonl).', () => outbox),
    new Gauge('resapi_store_records', 'Live records in the store, system spaces included.', () => [{ labels: {}, value: records }]),
    new Gauge('resapi_store_disk_bytes', 'Bytes of the data dir: journals, snapshot, side logs (0 with --memory).', () => [{ labels: {}, value: diskBytes }]),
    new Gauge('resapi_process_resident_memory_bytes', 'Resident memory of the process.', () => [{ labels: {}, value: process.memoryUsage.rss() }]),
  ]);
  return { status: 200, headers: { 'Content-Type': EXPOSITION_TYPE, 'Cache-Control': noStoreCacheControl(app.policy) }, body: Buffer.from(text) };
}

async function countByStatus(store: Store, space: string, statuses: readonly string[]): Promise<{ labels: Labels; value: number }[]> {
  const counts = new Map(statuses.map((status) => [status, 0]));
  let after: string | undefined;
  for (;;) {
    const chunk = store.scan(space, after === undefined ? { limit: COUNT_CHUNK } : { after, limit: COUNT_CHUNK });
    for (const record of chunk) {
      const status = record.doc['status'];
      if (typeof status === 'string' && counts.has(status)) counts.set(status, (counts.get(status) as number) + 1);
    }
    if (chunk.length < COUNT_CHUNK) break;
    after = chunk[chunk.length - 1]?.id;
    await nextTurn();
  }
  return [...counts].map(([status, value]) => ({ labels: { status }, value }));
}
