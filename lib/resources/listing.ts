// The server's own records as read-only collections: /$inbox (CONVENTIONS.md#inbox), /$outbox
// (#outbox) and /$subscriptions (#subscriptions) page, filter, order and revalidate through the same
// paging flow as a collection (CONVENTIONS.md#paging); the properties a query may name are the fields
// of their items (a fixed set, unlike a collection's).
import { jsonReply, problemReply, type Reply } from '../http/respond.js';
import { noStoreCacheControl, readCacheControl } from '../http/cache-policy.js';
import { pathSegment } from '../names.js';
import { problem } from '../protocol/problem.js';
import type { StoredRecord } from '../store/types.js';
import type { CollectionQuery } from '../query/options.js';
import { planQuery, type PlanContext } from '../query/plan.js';
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
}

export function listingReply(app: Paging, rq: RequestContext, listing: Listing): Reply | Promise<Reply> {
  return pagedReply(app, rq, listingWalk(app, listing));
}

/** A listing pages like a collection, but its properties are its items' fixed fields, also on later pages. */
function listingWalk(app: Pick<App, 'baseUrl'>, listing: Listing): Walk<CollectionQuery> {
  const { space, path, fields } = listing;
  const context: PlanContext = {
    known: (property) => property.length === 1 && fields.has(property[0] as string),
    itemLink: (id) => link(app, listedPath(listing, id)),
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
      const planned = planQuery(query, context);
      return planned.ok ? { ok: true, plan: planned.plan, carry: { query }, sortKeys: query.orderby.length } : planned;
    },
    resume: (position) => (position.query === undefined ? undefined : planQuery(position.query, context)),
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
  return itemReadReply(app, rq, record, {
    path: listedPath(listing, record.id),
    listPath: listing.path,
    cacheControl: readCacheControl(app.policy),
  });
}

/** The answer to an action on an item ($retry): the item as it now is, where it lives, never cached. */
export function actionReply(
  app: Pick<App, 'representations' | 'policy' | 'baseUrl'>,
  status: number,
  record: StoredRecord,
  listing: Listing,
): Reply {
  const representation = app.representations.itemJson(record);
  return jsonReply(status, representation.bytes, {
    'Cache-Control': noStoreCacheControl(app.policy),
    'Content-Location': link(app, listedPath(listing, record.id)),
  });
}

/** Where an item of a listing lives: its id percent-encoded, since an event id may hold any character. */
function listedPath(listing: Listing, id: string): string {
  return `${listing.path}/${pathSegment(id)}`;
}
