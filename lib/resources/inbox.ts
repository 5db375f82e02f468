// The received events as a read-only collection (CONVENTIONS.md#routes `GET /$inbox`,
// `GET /$inbox/{eventId}`, `PUT /$inbox/{eventId}/$retry`; CONVENTIONS.md#inbox for the item shape). An
// item's id is the event id (any 1-255 characters), or `<source>:<eventId>` for a named receiving
// source, so the path takes it percent-encoded. Items are read through the inbox's view, which gives
// the default source's items their `source` and `eventId` and leaves out the body and the provider's
// header fields a stored item keeps until processed (lib/webhooks/inbox.ts): an item as read never
// shows them or anything secret.
import { problemReply, type Reply } from '../http/respond.js';
import { MAX_INBOX_ITEM_ID } from '../names.js';
import { problem } from '../protocol/problem.js';
import { INBOX_FIELDS, INBOX_SPACE, type Inbox } from '../webhooks/inbox.js';
import type { App, RequestContext } from './context.js';
import { actionReply, listedItemReply, listingReply, type Listing } from './listing.js';
import type { Paging } from './paging.js';
import type { ItemReading } from './replies.js';
import { shown } from './common.js';

/** Fields an item is read with but a default-source item is not stored with: no index knows them. */
const DERIVED_FIELDS: ReadonlySet<string> = new Set(['source', 'eventId']);
/** The id of the longest paging token: the longest item id, of characters JSON escapes to six bytes. */
const LONGEST_ITEM_ID = '\u0000'.repeat(MAX_INBOX_ITEM_ID);

function inboxListing(inbox: Inbox): Listing {
  return {
    space: INBOX_SPACE,
    path: '/$inbox',
    fields: INBOX_FIELDS,
    read: { records: inbox.records, view: (record) => inbox.view(record), derived: DERIVED_FIELDS },
    longestId: LONGEST_ITEM_ID,
  };
}

export function getInbox(app: Paging & Pick<App, 'inbox'>, rq: RequestContext): Reply | Promise<Reply> {
  return listingReply(app, rq, inboxListing(app.inbox));
}

export function getInboxEvent(app: ItemReading & Pick<App, 'store' | 'inbox'>, rq: RequestContext): Reply {
  const id = rq.params.get('eventId');
  const missing = `No received event has the id ${shown(id)}.`;
  return listedItemReply(app, rq, inboxListing(app.inbox), app.store.get(INBOX_SPACE, id), missing);
}

/** Why an event that is neither failed nor dead is not queued again, by what it is. */
const NOT_RETRIED: Readonly<Record<string, string>> = {
  running: 'its handler is in progress, and an event never runs twice at once',
  accepted: 'it waits for its first run',
  processed: 'it is not run again',
};

/**
 * PUT /$inbox/{eventId}/$retry: 202, the event queued again (a failed one runs now, a dead one starts
 * from its first attempt); 409 naming what it is otherwise (accepted, running, processed), so an event
 * in flight never runs twice; 404; 503 with Retry-After when the event kept changing under the
 * re-queue (CONVENTIONS.md#inbox-retries-and-dead-letters).
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
    case 'refused': {
      const why = NOT_RETRIED[outcome.status];
      const detail = `The event ${shown(id)} is ${outcome.status}${why === undefined ? '' : `: ${why}`}. `;
      return problemReply(problem('conflict', `${detail}Only a failed or dead event is queued again.`));
    }
    case 'unavailable':
      return problemReply(problem('unavailable', ''), { 'Retry-After': '1' });
    case 'queued':
      return actionReply(app, 202, outcome.record, inboxListing(app.inbox));
  }
}
