// The service document (CONVENTIONS.md#service-document: GET / lists the collections) and the health check
// (GET /$health: 200, or 503 when the store cannot write).
//
// The service document is a listing like any other: its entries `{ "name", "url" }` page through the
// one paging flow (lib/resources/paging.ts), with the page size, the byte budget, `@nextLink` and the
// query options of a collection, so ten thousand collections cost a page each, not one document. Its
// items are not records of a store space but the collection names, read a page at a time from the
// sorted list by the same keyset scan (`records` below), so a walk through them is exactly once like
// any walk by id.
import { problem } from '../protocol/problem.js';
import { jsonReply, problemReply, type Reply } from '../http/respond.js';
import { noStoreCacheControl } from '../http/cache-policy.js';
import { isCollectionName } from '../names.js';
import type { RecordSource } from '../query/execute.js';
import type { CollectionQuery } from '../query/options.js';
import { planQuery, type PlanContext, type PlanResult } from '../query/plan.js';
import type { ScanOptions, StoredRecord } from '../store/types.js';
import type { App, RequestContext } from './context.js';
import { link } from './common.js';
import { pagedReply, queryOptions, type Paging, type Walk } from './paging.js';

/**
 * The read-only listings of the server's own records (CONVENTIONS.md#routes), linked from the HTML home
 * page.
 */
const SYSTEM_LISTINGS = ['$inbox', '$outbox', '$subscriptions'];
/** The fields of an entry: what a query over the service document may name. */
const FIELDS = new Set(['name', 'url']);
/**
 * What its tokens are bound to, and the space its page answers name: neither is a collection name nor
 * a system space, so no other walk's token is accepted here and no store space's state leaks in.
 */
const SCOPE = '/';
const SPACE = '';

export function getServiceDocument(app: Paging, rq: RequestContext): Reply | Promise<Reply> {
  return pagedReply(app, rq, serviceWalk(app));
}

/** The walk over the collection names, as of this request. */
function serviceWalk(app: Pick<App, 'store' | 'config' | 'baseUrl'>): Walk<CollectionQuery> {
  // User collections only: `$` spaces are the server's own bookkeeping. Configured collections are
  // listed even while empty, so a client can discover where to write.
  const names = [
    ...new Set([...app.store.collections().filter(isCollectionName), ...Object.keys(app.config.collections)]),
  ].sort();
  const itemLink = (name: string): string => link(app, `/${name}`);
  const context: PlanContext = {
    known: (property) => property.length === 1 && FIELDS.has(property[0] as string),
    itemLink,
  };
  return {
    collection: SPACE,
    scope: SCOPE,
    path: '/',
    itemLink,
    // A new collection is a commit to its own space, which the page cache does not watch here.
    cacheable: false,
    options: queryOptions,
    begin: (query) => {
      const planned = scanned(planQuery(query, context));
      return planned.ok ? { ok: true, plan: planned.plan, carry: { query }, sortKeys: query.orderby.length } : planned;
    },
    resume: (position) => (position.query === undefined ? undefined : scanned(planQuery(position.query, context))),
    records: nameRecords(names, itemLink),
    home: {
      title: 'resapi',
      // The server's own listings too, so a person can find received and sent events from Home.
      related: SYSTEM_LISTINGS.map((name) => ({ href: link(app, `/${name}`), label: name })),
    },
  };
}

/** A plan that reads every name: the equality indexes know store spaces only. */
function scanned(planned: PlanResult): PlanResult {
  return planned.ok ? { ok: true, plan: { ...planned.plan, equalities: [] } } : planned;
}

/** The names as records `{ "name", "url" }` by id, in id order like a store space's scan. */
function nameRecords(names: readonly string[], url: (name: string) => string): RecordSource {
  const record = (name: string): StoredRecord => ({
    collection: SPACE, id: name, version: 0, modifiedAt: 0, doc: { name, url: url(name) },
  });
  return {
    scan: (_space: string, options: ScanOptions = {}): StoredRecord[] => {
      const from = options.after === undefined ? 0 : firstAfter(names, options.after);
      const to = options.limit === undefined ? names.length : Math.min(names.length, from + options.limit);
      return names.slice(from, to).map(record);
    },
    get: (_space: string, id: string): StoredRecord | undefined => {
      const at = firstAfter(names, id) - 1;
      return names[at] === id ? record(id) : undefined;
    },
  };
}

/** The index of the first name greater than `after` in code-unit order (the order of a store's scan). */
function firstAfter(names: readonly string[], after: string): number {
  let low = 0;
  let high = names.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((names[middle] as string) <= after) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** GET /$health: the store's answer now, a failed disk checked again before it is reported (CONVENTIONS.md#health). */
export async function getHealth(app: Pick<App, 'store' | 'log' | 'policy'>, rq: RequestContext): Promise<Reply> {
  const health = await app.store.health();
  if (!health.writable) {
    app.log('warn', 'health check: store not writable', { requestId: rq.requestId, detail: health.detail });
    return problemReply(problem('unavailable', 'store not writable'), { 'Retry-After': '5' });
  }
  return jsonReply(200, Buffer.from(JSON.stringify({ status: 'ok', durable: app.store.durable })), {
    'Cache-Control': noStoreCacheControl(app.policy),
  });
}
