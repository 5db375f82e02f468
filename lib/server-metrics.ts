// What the server counts as it works, for GET /$metrics (lib/resources/metrics-scrape.ts; README,
// Performance): requests by route, method and status, their latency by route (route names come
// from the route table, never from a path), each group commit's fdatasync time, size in writes
// and bytes, which the store reports as the StoreObserver it is given, and the webhook subscriptions
// the server disabled (CONVENTIONS.md#auto-disable), by cause.
import { Counter, Histogram, type CounterSeries, type HistogramSeries } from './prometheus.js';
import type { StoreObserver } from './store/types.js';
import type { DisableCause } from './webhooks/auto-disable.js';

const LATENCY_SECONDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const SYNC_SECONDS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];
const GROUP_BATCHES = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512];
/** A route's series: its latency, and its answers by method and status. */
interface RouteSeries {
  readonly latency: HistogramSeries;
  readonly answered: Map<string, Map<number, CounterSeries>>;
  /** The method and status of its last answer and their series: a route's answers mostly repeat the last. */
  lastMethod: string;
  lastStatus: number;
  last: CounterSeries | undefined;
}

/** The counters and histograms a server fills as it works; the rest is read at each scrape. */
export class ServerMetrics implements StoreObserver {
  readonly requests = new Counter('resapi_http_requests_total', 'Requests answered, by route, method and status.');
  readonly latency = new Histogram(
    'resapi_http_request_duration_seconds',
    'Time from a request reaching its route to its answer handed to the socket, by route.',
    LATENCY_SECONDS,
  );
  readonly sync = new Histogram(
    'resapi_store_sync_duration_seconds',
    'Time to write and fdatasync one group commit of the journal.',
    SYNC_SECONDS,
  );
  readonly groups = new Histogram(
    'resapi_store_group_batches',
    'Atomic writes per group commit: how many shared one fdatasync.',
    GROUP_BATCHES,
  );
  readonly groupBytes = new Counter('resapi_store_written_bytes_total', 'Bytes appended to the journal.');
  readonly disabled = new Counter(
    'resapi_subscriptions_disabled_total',
    'Webhook subscriptions the server disabled, by cause: gone (the receiver answered 410) or failing ' +
      '(every delivery failed for outbox.disableAfterS).',
  );

  constructor() {
    // Both causes from the start, so a rate over them needs no series to appear first.
    for (const cause of ['gone', 'failing'] satisfies DisableCause[]) this.disabled.add({ cause }, 0);
  }

  /** Each route's series, found by method and status without a label key built per request. */
  private readonly routes = new Map<string, RouteSeries>();

  request(route: string, method: string, status: number, ms: number): void {
    let series = this.routes.get(route);
    if (series === undefined) {
      const latency = this.latency.seriesOf({ route });
      series = { latency, answered: new Map(), lastMethod: '', lastStatus: 0, last: undefined };
      this.routes.set(route, series);
    }
    let answered = series.last;
    if (answered === undefined || series.lastStatus !== status || series.lastMethod !== method) {
      let byStatus = series.answered.get(method);
      if (byStatus === undefined) series.answered.set(method, (byStatus = new Map()));
      answered = byStatus.get(status);
      if (answered === undefined) {
        answered = this.requests.series({ route, method, status: String(status) });
        byStatus.set(status, answered);
      }
      series.last = answered;
      series.lastMethod = method;
      series.lastStatus = status;
    }
    answered.add();
    series.latency.observe(ms / 1000);
  }

  subscriptionDisabled(cause: DisableCause): void {
    this.disabled.add({ cause });
  }

  groupCommitted(batches: number, bytes: number, syncMs: number): void {
    this.sync.observe({}, syncMs / 1000);
    this.groups.observe({}, batches);
    this.groupBytes.add({}, bytes);
  }
}
