// GET /$metrics (CONVENTIONS.md#metrics): what the server has done and
// holds, in the text exposition format 0.0.4 (lib/prometheus.ts). What it counted as it worked
// (lib/server-metrics.ts: requests, latency, group commits, subscriptions disabled), then what is
// read at the scrape: received events and deliveries by status now, as their queues keep them
// (lib/jobs/status-counts.ts: no scan per scrape) (`dead`: those dead now, which a
// `$retry` or their expiry takes out; the dead-letter files keep a line for each time one went dead); live
// records; bytes on disk; resident memory; response bytes queued to sockets and responses abandoned
// (lib/http/send-queue.ts); expensive filters running (lib/query/expensive.ts).
import type { Reply } from '../http/respond.js';
import { Counter, EXPOSITION_TYPE, Gauge, exposition, type Labels } from '../prometheus.js';
import { noStoreCacheControl } from '../http/cache-policy.js';
import type { JobQueue } from '../jobs/queue.js';
import type { App, RequestContext } from './context.js';

const INBOX_STATUSES = ['accepted', 'processed', 'failed', 'dead'];
const OUTBOX_STATUSES = ['pending', 'delivered', 'failed', 'dead'];

export async function getMetrics(
  app: Pick<App, 'store' | 'metrics' | 'policy' | 'sendQueue' | 'filterSlots' | 'inbox' | 'outbox'>,
  _rq: RequestContext,
): Promise<Reply> {
  const store = app.store;
  const inbox = await countByStatus(app.inbox.queue, INBOX_STATUSES);
  const outbox = await countByStatus(app.outbox.queue, OUTBOX_STATUSES);
  const diskBytes = await store.diskBytes();
  const records = store.collections().reduce((total, collection) => total + store.count(collection), 0);
  const m = app.metrics;
  const abandoned = new Counter(
    'resapi_http_responses_abandoned_total',
    'Responses abandoned (their connection reset) after no progress for limits.responseStallMs.',
  );
  abandoned.add({}, app.sendQueue.abandoned);
  const text = exposition([
    m.requests,
    m.latency,
    m.sync,
    m.groups,
    m.groupBytes,
    m.disabled,
    new Gauge(
      'resapi_inbox_events',
      'Received webhook events in /$inbox now, by status (dead: dead now; $retry takes one out).',
      () => inbox,
    ),
    new Gauge(
      'resapi_outbox_deliveries',
      'Webhook deliveries in /$outbox now, by status (dead: dead now; $retry takes one out).',
      () => outbox,
    ),
    new Gauge(
      'resapi_store_records',
      'Live records in the store, system spaces included.',
      () => [{ labels: {}, value: records }],
    ),
    new Gauge(
      'resapi_store_disk_bytes',
      'Bytes of the data dir: journals, snapshot, side logs (0 with --memory).',
      () => [{ labels: {}, value: diskBytes }],
    ),
    new Gauge(
      'resapi_process_resident_memory_bytes',
      'Resident memory of the process.',
      () => [{ labels: {}, value: process.memoryUsage.rss() }],
    ),
    new Gauge(
      'resapi_http_queued_response_bytes',
      'Bytes of response bodies handed to sockets and not yet taken by the kernel (limits.maxQueuedResponseBytes).',
      () => [{ labels: {}, value: app.sendQueue.queuedBytes }],
    ),
    abandoned,
    new Gauge(
      'resapi_filters_expensive_running',
      'Requests whose filter passed the expensive line and holds a slot (limits.expensiveFilters).',
      () => [{ labels: {}, value: app.filterSlots.taken }],
    ),
  ]);
  return {
    status: 200,
    headers: { 'Content-Type': EXPOSITION_TYPE, 'Cache-Control': noStoreCacheControl(app.policy) },
    body: Buffer.from(text),
  };
}

/** The queue's jobs by status, as gauge samples (the queue keeps the counts: lib/jobs/status-counts.ts). */
async function countByStatus(
  queue: JobQueue,
  statuses: readonly string[],
): Promise<{ labels: Labels; value: number }[]> {
  const counts = await queue.countByStatus(statuses);
  return counts.map(({ status, count }) => ({ labels: { status }, value: count }));
}
