// The scenarios of `npm run bench` (README, Performance): what a client of resapi does most, each as a
// list of raw requests the load generator sends in turn, built against the running server (the
// ETags it serves, the links it writes). Reads come before writes, so a write scenario cannot change
// what a read scenario measures; the write with a subscription comes last, because its deliveries
// outlive it. A read is measured against the same-bytes server, a write against the ideal durable
// server (ceilings/); `target` is the ratio to that ceiling the issue tracker set for it, if any.
// `extra` scenarios run only when asked for by name (BENCH_ONLY), to keep the default run short.
import { webhookSignature } from '../../lib/protocol/signature.js';
import type { UnavoidableKind } from './ceilings/unavoidable.js';
import { rawRequest, sendRaw } from './load.js';
import { benchItem, itemId } from './servers.js';

export const WEBHOOK_SECRET = 'bench-secret';

export interface ScenarioContext {
  readonly url: URL;
  /** Items in the collection `items`. */
  readonly size: number;
  /** A receiver that answers every webhook 200 at once. */
  readonly receiver: URL;
  /** Which round of the scenario this is: requests that must not repeat (keys, event ids) differ per round. */
  readonly round: number;
}

export interface Scenario {
  readonly key: string;
  readonly label: string;
  readonly kind: 'read' | 'write';
  readonly target?: number;
  /** The server that does only this scenario's unavoidable work (`--unavoidable`, ceilings/unavoidable.ts). */
  readonly unavoidable?: UnavoidableKind;
  readonly extra?: boolean;
  requests(context: ScenarioContext): Promise<Buffer[]>;
}

const JSON_HEADERS = { Accept: 'application/json' } as const;
const TEN_PERCENT = `/items?$filter=${encodeURIComponent("category eq 'c3'")}`;
const ONE_IN_A_THOUSAND = `/items?$filter=${encodeURIComponent("group eq 'g0007'")}`;
/** Items a scenario spreads its requests over. */
const SPREAD = 256;
/**
 * Unique requests prepared for scenarios whose requests must not repeat (keys, event ids): more than a
 * measured load sends (3 s at the 60,000 a second the limits reach here). A load that runs out starts
 * the list again, and a repeat is a duplicate resapi answers without a write: with 60,000, a third of
 * the webhook accepts of a 32,000-a-second load were.
 */
const UNIQUE = 200_000;

/** `count` item numbers spread evenly over the collection. */
function spread(size: number, count: number): number[] {
  return Array.from({ length: Math.min(size, count) }, (_, index) => Math.floor((index * size) / Math.min(size, count)));
}

async function get(context: ScenarioContext, path: string, headers: Readonly<Record<string, string>> = JSON_HEADERS): Promise<{ status: number; etag: string; body: Record<string, unknown> }> {
  const answer = await sendRaw(context.url, rawRequest('GET', context.url, path, headers));
  if (answer.status !== 200) throw new Error(`GET ${path} answered ${answer.status}`);
  return { status: answer.status, etag: answer.headers.get('etag') ?? '', body: JSON.parse(answer.body.toString('utf8')) as Record<string, unknown> };
}

function put(context: ScenarioContext, n: number, headers: Readonly<Record<string, string>>): Buffer {
  const doc = { ...benchItem(n), price: (n % 997) + 1 };
  return rawRequest('PUT', context.url, `/items/${itemId(n)}`, { ...JSON_HEADERS, 'Content-Type': 'application/json', ...headers }, JSON.stringify(doc));
}

export const SCENARIOS: readonly Scenario[] = [
  {
    key: 'get-item',
    label: 'GET one item (200)',
    kind: 'read',
    target: 0.85,
    requests: async (c) => spread(c.size, SPREAD).map((n) => rawRequest('GET', c.url, `/items/${itemId(n)}`, JSON_HEADERS)),
  },
  {
    key: 'get-item-304',
    label: 'GET one item, If-None-Match (304)',
    kind: 'read',
    target: 0.9,
    requests: async (c) => {
      const requests: Buffer[] = [];
      for (const n of spread(c.size, SPREAD)) {
        const { etag } = await get(c, `/items/${itemId(n)}`);
        requests.push(rawRequest('GET', c.url, `/items/${itemId(n)}`, { ...JSON_HEADERS, 'If-None-Match': etag }));
      }
      return requests;
    },
  },
  {
    key: 'filter-10',
    label: "first page of 50, category eq 'c3' (10%)",
    kind: 'read',
    target: 0.85,
    requests: async (c) => [rawRequest('GET', c.url, TEN_PERCENT, JSON_HEADERS)],
  },
  {
    key: 'filter-0.1',
    label: "first page of 50, group eq 'g0007' (0.1%)",
    kind: 'read',
    target: 0.85,
    extra: true,
    requests: async (c) => [rawRequest('GET', c.url, ONE_IN_A_THOUSAND, JSON_HEADERS)],
  },
  {
    key: 'next-pages',
    label: "pages 2-21 by @nextLink, category eq 'c3'",
    kind: 'read',
    target: 0.6,
    requests: async (c) => {
      const requests: Buffer[] = [];
      let page = await get(c, TEN_PERCENT);
      while (typeof page.body['@nextLink'] === 'string' && requests.length < 20) {
        const link = new URL(page.body['@nextLink'], c.url);
        const path = `${link.pathname}${link.search}`;
        requests.push(rawRequest('GET', c.url, path, JSON_HEADERS));
        page = await get(c, path);
      }
      if (requests.length === 0) throw new Error('the filtered collection has one page only');
      return requests;
    },
  },
  {
    key: 'page-304',
    label: "first page, If-None-Match (304), category eq 'c3'",
    kind: 'read',
    target: 0.9,
    requests: async (c) => {
      const { etag } = await get(c, TEN_PERCENT);
      return [rawRequest('GET', c.url, TEN_PERCENT, { ...JSON_HEADERS, 'If-None-Match': etag })];
    },
  },
  {
    key: 'put',
    label: 'durable PUT, If-Match',
    kind: 'write',
    target: 0.6,
    requests: async (c) => spread(c.size, SPREAD).map((n) => put(c, n, { 'If-Match': '*' })),
  },
  {
    key: 'post',
    label: 'durable POST, Idempotency-Key',
    kind: 'write',
    extra: true,
    requests: async (c) => {
      const body = JSON.stringify({ name: 'posted', category: 'c-posted', price: 1, note: 'x'.repeat(120) });
      return Array.from({ length: UNIQUE }, (_, index) => rawRequest('POST', c.url, '/items', { ...JSON_HEADERS, 'Content-Type': 'application/json', 'Idempotency-Key': `bench-${c.round}-${index}` }, body));
    },
  },
  {
    key: 'webhook',
    label: 'signed webhook, accepted durably',
    kind: 'write',
    target: 0.6,
    unavoidable: 'webhook',
    requests: async (c) =>
      Array.from({ length: UNIQUE }, (_, index) => {
        const body = JSON.stringify({ id: `evt-${c.round}-${index}`, event: 'order.created', data: { order: index, total: 42.5, lines: ['a', 'b'] } });
        return rawRequest('POST', c.url, '/webhooks', { 'Content-Type': 'application/json', 'X-Signature': webhookSignature(body, WEBHOOK_SECRET) }, body);
      }),
  },
  {
    key: 'bulk',
    label: 'bulk CSV of 1,000 rows',
    kind: 'write',
    extra: true,
    requests: async (c) => {
      // Two files that undo each other: each applies all its rows when it follows the other, and skips them when it follows itself.
      const rows = spread(c.size, 1000);
      const file = (from: number, to: number): string => `id,currentPrice,newPrice\n${rows.map((n) => `${itemId(n)},${(n % 997) + from},${(n % 997) + to}`).join('\n')}\n`;
      const headers = { ...JSON_HEADERS, 'Content-Type': 'text/csv' };
      return [rawRequest('PUT', c.url, '/items/$bulk', headers, file(0, 1)), rawRequest('PUT', c.url, '/items/$bulk', headers, file(1, 0))];
    },
  },
  {
    key: 'subscribed-put',
    label: 'durable PUT, If-Match, one subscription',
    kind: 'write',
    target: 0.3,
    unavoidable: 'delivery',
    requests: async (c) => {
      const subscription = JSON.stringify({ url: new URL('/hook', c.receiver).href, events: ['items.*'], secret: 'bench-subscription-secret' });
      const made = await sendRaw(c.url, rawRequest('PUT', c.url, '/$subscriptions/bench', { 'Content-Type': 'application/json', 'If-None-Match': '*' }, subscription));
      // 412: an earlier round made it.
      if (made.status !== 201 && made.status !== 412) throw new Error(`the subscription was answered ${made.status}`);
      return spread(c.size, SPREAD).map((n) => put(c, n, { 'If-Match': '*' }));
    },
  },
];
