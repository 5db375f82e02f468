// The server's own records as read-only collections: /$inbox (CONTRACT §7), /$outbox (§8) and
// /$subscriptions (§8) page, filter, order and revalidate exactly as a collection does (§5), and the
// properties a query may name are the fields of their items (a fixed set, unlike a collection's).
import { jsonReply, problemReply, type Reply } from '../http/respond.js';
import { noStoreCacheControl, readCacheControl } from '../http/cache-policy.js';
import { problem } from '../protocol/problem.js';
import type { StoredRecord } from '../store/types.js';
import { parseQueryString } from '../query/options.js';
import { planQuery, type PlanContext } from '../query/plan.js';
import { verifyToken } from '../query/token.js';
import type { App, RequestContext } from './context.js';
import { link } from './common.js';
import { applied, pageSizeOf } from './collections.js';
import { invalidTokenProblem, linkProblem, pageReply } from './pages.js';
import { itemReadReply } from './replies.js';

export interface Listing {
  /** The store space. */
  readonly space: string;
  /** The path the listing is served at (`/$inbox`). */
  readonly path: string;
  /** The fields of an item. */
  readonly fields: ReadonlySet<string>;
}

export async function listingReply(app: App, rq: RequestContext, listing: Listing): Promise<Reply> {
  const { space, path, fields } = listing;
  const parsed = parseQueryString(rq.query);
  if (!parsed.ok) return problemReply(parsed.problem);
  const size = pageSizeOf(app, rq);
  const context: PlanContext = {
    known: (property) => property.length === 1 && fields.has(property[0] as string),
    itemLink: (id) => link(app, listedPath(listing, id)),
  };
  if (parsed.skiptoken !== undefined) {
    const position = verifyToken(app.pagingKey, parsed.skiptoken, space);
    if (position?.query === undefined) return problemReply(invalidTokenProblem());
    const planned = planQuery(position.query, context);
    if (!planned.ok) return problemReply(planned.problem);
    const start = { scope: space, query: position.query, pageSize: position.pageSize };
    return pageReply(app, rq, { collection: space, plan: planned.plan, path, itemLink: context.itemLink, start, after: position.after, returned: position.returned, ...applied(size.preference, position.pageSize) });
  }
  const planned = planQuery(parsed.query, context);
  if (!planned.ok) return problemReply(planned.problem);
  const start = { scope: space, query: parsed.query, pageSize: size.pageSize };
  const tooLong = linkProblem(app, path, start, parsed.query.orderby.length);
  if (tooLong !== undefined) return problemReply(tooLong);
  return pageReply(app, rq, { collection: space, plan: planned.plan, path, itemLink: context.itemLink, start, returned: 0, ...applied(size.preference, size.pageSize) });
}

/** GET of one item of a listing: its JSON (or its HTML page) with ETag and Last-Modified, 304 on revalidation, or 404. */
export function listedItemReply(app: App, rq: RequestContext, listing: Listing, record: StoredRecord | undefined, missing: string): Reply {
  if (record === undefined) return problemReply(problem('not-found', missing));
  return itemReadReply(app, rq, record, { path: listedPath(listing, record.id), listPath: listing.path, cacheControl: readCacheControl(app.policy) });
}

/** The answer to an action on an item ($retry): the item as it now is, where it lives, never cached. */
export function actionReply(app: App, status: number, record: StoredRecord, listing: Listing): Reply {
  const representation = app.representations.itemJson(record);
  return jsonReply(status, representation.bytes, { 'Cache-Control': noStoreCacheControl(app.policy), 'Content-Location': link(app, listedPath(listing, record.id)) });
}

/** Where an item of a listing lives: its id percent-encoded, since an event id may hold any character. */
function listedPath(listing: Listing, id: string): string {
  return `${listing.path}/${encodeURIComponent(id)}`;
}
