// The server's own records as read-only collections: /$inbox (CONVENTIONS.md#inbox), /$outbox
// (#outbox) and /$subscriptions (#subscriptions) page, filter, order and revalidate through the same
// paging flow as a collection (CONVENTIONS.md#paging); the properties a query may name are the fields
// of their items (a fixed set, unlike a collection's).
import { jsonReply, problemReply, type Reply } from '../http/respond.js';
import { noStoreCacheControl, readCacheControl } from '../http/cache-policy.js';
import { pathSegment } from '../names.js';
import { problem } from '../protocol/problem.js';
import type { ItemTable } from '../html/views.js';
import type { JsonObject } from '../json.js';
import type { RecordSource } from '../query/execute.js';
import type { StoredRecord } from '../store/types.js';
import type { CollectionQuery } from '../query/options.js';
import { planQuery, type PlanContext, type PlanResult } from '../query/plan.js';
import type { App, RequestContext } from './context.js';
import { link } from './common.js';
import { pagedReply, queryOptions, type Paging, type Walk } from './paging.js';
import { itemReadReply, type ItemReading } from './replies.js';

export interface Listing {
  /** The store space. */
  readonly space: string;
  /** The path the listing is served at (`/$inbox`). */
  readonly path: string;
  /** The fields of an item. */
  readonly fields: ReadonlySet<string>;
  /**
   * Fields only the item itself shows (a delivery's attempt log): pages leave them out, so a page of
   * many items stays small, and no query names them.
   */
  readonly itemOnly?: readonly string[];
  /** The tables an item's HTML page shows after its JSON. */
  readonly tables?: (doc: JsonObject) => readonly ItemTable[];
  /**
   * How a stored record is read, when items are read with fields they were not stored with (the
   * inbox's `source`, CONVENTIONS.md#inbox): its pages read `records`, and an item is shown `view`ed.
   * The equality indexes know only what is stored, so a filter's terms on `derived` fields scan.
   */
  readonly read?: {
    readonly records: RecordSource;
    readonly view: (record: StoredRecord) => StoredRecord;
    readonly derived: ReadonlySet<string>;
  };
  /** The id that makes the longest paging token, when ids may be longer than resource ids. */
  readonly longestId?: string;
}

export function listingReply(app: Paging, rq: RequestContext, listing: Listing): Reply | Promise<Reply> {
  return pagedReply(app, rq, listingWalk(app, listing));
}

/** A listing pages like a collection, but its properties are its items' fixed fields, also on later pages. */
function listingWalk(app: Pick<App, 'baseUrl' | 'store'>, listing: Listing): Walk<CollectionQuery> {
  const { space, path, fields, itemOnly } = listing;
  const context: PlanContext = {
    known: (property) => property.length === 1 && fields.has(property[0] as string),
    itemLink: (id) => link(app, listedPath(listing, id)),
  };
  const read = listing.read?.records ?? app.store;
  const records = itemOnly === undefined ? read : withoutFields(read, itemOnly);
  const derived = listing.read?.derived;
  const indexed = (planned: PlanResult): PlanResult => {
    if (!planned.ok || derived === undefined) return planned;
    const equalities = planned.plan.equalities.filter((term) => !derived.has(term.path[0] as string));
    return { ok: true, plan: { ...planned.plan, equalities } };
  };
  return {
    collection: space,
    scope: space,
    path,
    itemLink: context.itemLink,
    // Its records expire without a commit, which is what the page cache watches.
    cacheable: false,
    options: queryOptions,
    begin: (query) => {
      const planned = indexed(planQuery(query, context));
      return planned.ok ? { ok: true, plan: planned.plan, carry: { query }, sortKeys: query.orderby.length } : planned;
    },
    resume: (position) => (position.query === undefined ? undefined : indexed(planQuery(position.query, context))),
    ...(records === app.store ? {} : { records }),
    ...(listing.longestId === undefined ? {} : { longestId: listing.longestId }),
  };
}

/** The store as a page reads it: records without the fields only their item shows. */
function withoutFields(store: RecordSource, omitted: readonly string[]): RecordSource {
  const strip = (record: StoredRecord): StoredRecord => {
    const { doc } = record;
    if (!omitted.some((field) => Object.hasOwn(doc, field))) return record;
    const kept: JsonObject = {};
    for (const [field, value] of Object.entries(doc)) if (!omitted.includes(field)) kept[field] = value;
    // Spelled out: a stored record's `doc` is an accessor, which a spread would not copy.
    const { collection, id, version, modifiedAt, expiresAt, dueAt } = record;
    const times = { ...(expiresAt === undefined ? {} : { expiresAt }), ...(dueAt === undefined ? {} : { dueAt }) };
    return { collection, id, version, modifiedAt, ...times, doc: kept };
  };
  return {
    scan: (collection, options) => store.scan(collection, options).map(strip),
    get: (collection, id) => {
      const record = store.get(collection, id);
      return record === undefined ? undefined : strip(record);
    },
  };
}

/**
 * GET of one item of a listing: its JSON (or its HTML page) with ETag and Last-Modified, 304 on revalidation,
 * or 404.
 */
export function listedItemReply(
  app: ItemReading,
  rq: RequestContext,
  listing: Listing,
  record: StoredRecord | undefined,
  missing: string,
): Reply {
  if (record === undefined) return problemReply(problem('not-found', missing));
  const shown = listing.read === undefined ? record : listing.read.view(record);
  return itemReadReply(app, rq, shown, {
    path: listedPath(listing, record.id),
    listPath: listing.path,
    cacheControl: readCacheControl(app.policy),
    ...(listing.tables === undefined ? {} : { tables: listing.tables }),
  });
}

/** The answer to an action on an item ($retry): the item as it now is, where it lives, never cached. */
export function actionReply(
  app: Pick<App, 'representations' | 'policy' | 'baseUrl'>,
  status: number,
  record: StoredRecord,
  listing: Listing,
): Reply {
  const shown = listing.read === undefined ? record : listing.read.view(record);
  const representation = app.representations.itemJson(shown);
  return jsonReply(status, representation.bytes, {
    'Cache-Control': noStoreCacheControl(app.policy),
    'Content-Location': link(app, listedPath(listing, record.id)),
  });
}

/** Where an item of a listing lives: its id percent-encoded, since an event id may hold any character. */
function listedPath(listing: Listing, id: string): string {
  return `${listing.path}/${pathSegment(id)}`;
}
