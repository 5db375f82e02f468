// The received events as a read-only collection (CONVENTIONS.md#routes `GET /$inbox`,
// `GET /$inbox/{eventId}`, `PUT /$inbox/{eventId}/$retry`; CONVENTIONS.md#inbox for the item shape). An
// event id is any 1-255 characters, so the path takes it percent-encoded. An item never holds the
// event's body or anything secret.
import { problemReply, type Reply } from '../http/respond.js';
import { problem } from '../protocol/problem.js';
import { INBOX_FIELDS, INBOX_SPACE } from '../webhooks/inbox.js';
import type { App, RequestContext } from './context.js';
import { actionReply, listedItemReply, listingReply, type Listing } from './listing.js';
import type { Paging } from './paging.js';
import type { ItemReading } from './replies.js';
import { shown } from './common.js';

const INBOX: Listing = { space: INBOX_SPACE, path: '/$inbox', fields: INBOX_FIELDS };

export function getInbox(app: Paging, rq: RequestContext): Promise<Reply> {
  return listingReply(app, rq, INBOX);
}

export function getInboxEvent(app: ItemReading & Pick<App, 'store'>, rq: RequestContext): Reply {
  const id = rq.params.get('eventId');
  const missing = `No received event has the id ${shown(id)}.`;
  return listedItemReply(app, rq, INBOX, app.store.get(INBOX_SPACE, id), missing);
}

/**
 * PUT /$inbox/{eventId}/$retry: 202, the event queued again; 409 once it was processed; 404; 503 with
 * Retry-After when the event kept changing under the re-queue (CONVENTIONS.md#inbox-retries-and-dead-letters).
 */
export async function retryInboxEvent(
  app: Pick<App, 'inbox' | 'representations' | 'policy' | 'baseUrl'>,
  rq: RequestContext,
): Promise<Reply> {
  const id = rq.params.get('eventId');
  const outcome = await app.inbox.requeue(id);
  switch (outcome.result) {
    case 'missing':
      return problemReply(problem('not-found', `No received event has the id ${shown(id)}.`));
    case 'done':
      return problemReply(problem('conflict', `The event ${shown(id)} was processed already; it is not run again.`));
    case 'unavailable':
      return problemReply(problem('unavailable', ''), { 'Retry-After': '1' });
    case 'queued':
      return actionReply(app, 202, outcome.record, INBOX);
  }
}
