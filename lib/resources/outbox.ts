// Sent events as a read-only collection (CONVENTIONS.md#routes `GET /$outbox`,
// `PUT /$outbox/{deliveryId}/$retry`; CONVENTIONS.md#outbox for the item shape): one item per
// delivery, `{ "id", "eventId", "subscription", "event",
// "status": "pending" | "delivered" | "failed" | "dead", "attempts", "createdAt", "deliveredAt"?,
// "nextAttemptAt"?, "lastStatus"?, "lastError"? }`, and `"source"` for a forward of a received event
// (`"subscription": "$forward"`, CONVENTIONS.md#forwarding). The body sent and the secret are never shown.
// The item also holds its `attemptLog` (CONVENTIONS.md#attempt-log), which pages leave out and its
// HTML page shows as a table.
import type { ItemTable } from '../html/views.js';
import { problemReply, type Reply } from '../http/respond.js';
import { isJsonObject, type JsonObject } from '../json.js';
import { problem } from '../protocol/problem.js';
import { OUTBOX_SPACE } from '../webhooks/events.js';
import { ATTEMPT_LOG } from '../webhooks/attempt-log.js';
import { OUTBOX_FIELDS } from '../webhooks/outbox.js';
import type { App, RequestContext } from './context.js';
import { shown } from './common.js';
import { actionReply, listedItemReply, listingReply, type Listing } from './listing.js';
import type { Paging } from './paging.js';
import type { ItemReading } from './replies.js';

const OUTBOX: Listing = {
  space: OUTBOX_SPACE,
  path: '/$outbox',
  fields: OUTBOX_FIELDS,
  itemOnly: [ATTEMPT_LOG],
  tables: (doc) => [attemptTable(doc)],
};

export function getOutbox(app: Paging, rq: RequestContext): Reply | Promise<Reply> {
  return listingReply(app, rq, OUTBOX);
}

export function getDelivery(app: ItemReading & Pick<App, 'store'>, rq: RequestContext): Reply {
  const id = rq.params.get('deliveryId');
  return listedItemReply(app, rq, OUTBOX, app.store.get(OUTBOX_SPACE, id), `No delivery has the id ${shown(id)}.`);
}

/** Why a delivery that is neither failed nor dead is not queued again, by what it is. */
const NOT_RETRIED: Readonly<Record<string, string>> = {
  running: 'the receiver has not answered it yet, and a delivery is never sent twice at once',
  pending: 'it waits for its first attempt',
  delivered: 'it is not sent again',
};

/**
 * PUT /$outbox/{deliveryId}/$retry: 202, queued again (a failed one goes now, a dead one from its
 * first attempt); 409 naming what it is otherwise (pending, running, delivered), so a delivery in
 * flight is never sent twice; 503 with Retry-After when the delivery kept changing under the
 * re-queue (CONVENTIONS.md#delivery-retries).
 */
export async function retryDelivery(
  app: Pick<App, 'outbox' | 'representations' | 'policy' | 'baseUrl'>,
  rq: RequestContext,
): Promise<Reply> {
  const id = rq.params.get('deliveryId');
  const outcome = await app.outbox.requeue(id);
  switch (outcome.result) {
    case 'missing':
      return problemReply(problem('not-found', `No delivery has the id ${shown(id)}.`));
    case 'refused': {
      const why = NOT_RETRIED[outcome.status];
      const detail = `The delivery ${shown(id)} is ${outcome.status}${why === undefined ? '' : `: ${why}`}. `;
      return problemReply(problem('conflict', `${detail}Only a failed or dead delivery is queued again.`));
    }
    case 'unavailable':
      return problemReply(problem('unavailable', ''), { 'Retry-After': '1' });
    case 'queued':
      return actionReply(app, 202, outcome.record, OUTBOX);
  }
}

/** A delivery's attempt log as its HTML page's table (CONVENTIONS.md#html-pages): a row per attempt, oldest first. */
function attemptTable(delivery: JsonObject): ItemTable {
  const log = delivery[ATTEMPT_LOG];
  const rows = Array.isArray(log) ? log.filter(isJsonObject) : [];
  return { id: 'attempts', heading: 'Attempt log', columns: ['at', 'status', 'error', 'durationMs'], rows };
}
