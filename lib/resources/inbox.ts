// The received events as a read-only collection (CONTRACT §2 `GET /$inbox`, `GET /$inbox/{eventId}`,
// `PUT /$inbox/{eventId}/$retry`; §7 for the item shape). /$inbox pages, filters, orders and answers
// 304 like any collection; the properties a query may name are the fields of an inbox item. An event
// id is any 1-255 characters, so the path takes it percent-encoded. The item never holds the event's
// body or anything secret.
import { readCacheControl } from '../http/cache-policy.js';
import { jsonReply, problemReply, type Reply } from '../http/respond.js';
import { noStoreCacheControl } from '../http/cache-policy.js';
import { problem } from '../protocol/problem.js';
import { parseQueryString } from '../query/options.js';
import { planQuery, type PlanContext } from '../query/plan.js';
import { verifyToken } from '../query/token.js';
import type { StoredRecord } from '../store/types.js';
import { INBOX_FIELDS, INBOX_SPACE } from '../webhooks/inbox.js';
import type { App, RequestContext } from './context.js';
import { link } from './common.js';
import { applied, pageSizeOf } from './collections.js';
import { invalidTokenProblem, linkProblem, pageReply } from './pages.js';
import { readReply } from './replies.js';

const PATH = '/$inbox';

export async function getInbox(app: App, rq: RequestContext): Promise<Reply> {
  const parsed = parseQueryString(rq.query);
  if (!parsed.ok) return problemReply(parsed.problem);
  const size = pageSizeOf(app, rq);
  const context: PlanContext = { known: (path) => path.length === 1 && INBOX_FIELDS.has(path[0] as string), itemLink: (id) => link(app, itemPath(id)) };
  if (parsed.skiptoken !== undefined) {
    const position = verifyToken(app.pagingKey, parsed.skiptoken, INBOX_SPACE);
    if (position?.query === undefined) return problemReply(invalidTokenProblem());
    const planned = planQuery(position.query, context);
    if (!planned.ok) return problemReply(planned.problem);
    const start = { scope: INBOX_SPACE, query: position.query, pageSize: position.pageSize };
    return pageReply(app, rq, { collection: INBOX_SPACE, plan: planned.plan, path: PATH, start, after: position.after, returned: position.returned, ...applied(size.preference, position.pageSize) });
  }
  const planned = planQuery(parsed.query, context);
  if (!planned.ok) return problemReply(planned.problem);
  const start = { scope: INBOX_SPACE, query: parsed.query, pageSize: size.pageSize };
  const tooLong = linkProblem(app, PATH, start, parsed.query.orderby.length);
  if (tooLong !== undefined) return problemReply(tooLong);
  return pageReply(app, rq, { collection: INBOX_SPACE, plan: planned.plan, path: PATH, start, returned: 0, ...applied(size.preference, size.pageSize) });
}

export function getInboxEvent(app: App, rq: RequestContext): Reply {
  const id = rq.params.get('eventId');
  const record = app.store.get(INBOX_SPACE, id);
  if (record === undefined) return notFound(id);
  return readReply(app, rq, app.representations.itemJson(record), { cacheControl: readCacheControl(app.policy), negotiated: ['Accept'], lastModified: record.modifiedAt });
}

/** PUT /$inbox/{eventId}/$retry: 202, the event queued again; 409 once it was processed; 404. */
export async function retryInboxEvent(app: App, rq: RequestContext): Promise<Reply> {
  const id = rq.params.get('eventId');
  const outcome = await app.inbox.requeue(id);
  switch (outcome.result) {
    case 'missing':
      return notFound(id);
    case 'processed':
      return problemReply(problem('conflict', `The event ${JSON.stringify(id)} was processed already; it is not run again.`));
    case 'unavailable':
      return problemReply(problem('unavailable', ''), { 'Retry-After': '1' });
    case 'queued':
      return itemReply(app, 202, outcome.record as StoredRecord);
  }
}

function itemReply(app: App, status: number, record: StoredRecord): Reply {
  const representation = app.representations.itemJson(record);
  return jsonReply(status, representation.bytes, { 'Cache-Control': noStoreCacheControl(app.policy), 'Content-Location': link(app, itemPath(record.id)) });
}

function itemPath(id: string): string {
  return `${PATH}/${encodeURIComponent(id)}`;
}

function notFound(id: string): Reply {
  return problemReply(problem('not-found', `No received event has the id ${JSON.stringify(id.length > 80 ? `${id.slice(0, 80)}…` : id)}.`));
}
