// Subscriptions of the webhook sender (CONVENTIONS.md#routes `PUT|GET|DELETE /$subscriptions/{id}`,
// CONVENTIONS.md#subscriptions): a resource like any other (CONVENTIONS.md#conditional-create,
// CONVENTIONS.md#conditional-replace, CONVENTIONS.md#precondition-required: If-None-Match: * creates,
// If-Match replaces, neither → 428; DELETE 204), except that its secret is write-only (stored apart
// and never in a response; a replace may leave it out to keep the current one) and that a URL
// pointing at this server is refused (400), so a delivery can never loop back into the changes that
// cause deliveries.
import type { Reply } from '../http/respond.js';
import { problem } from '../protocol/problem.js';
import type { Mutation, StoredRecord } from '../store/types.js';
import { checkSubscription, pointsAtSelf, SECRET_SPACE, SUBSCRIPTION_SPACE } from '../webhooks/subscriptions.js';
import type { App, RequestContext } from './context.js';
import { link } from './common.js';
import { conditionalDelete, conditionalPut, type ConditionalWriting } from './conditional-writes.js';
import { shown } from './common.js';
import { listedItemReply, listingReply, type Listing } from './listing.js';
import { storedReply, type ItemReading } from './replies.js';
import type { Paging } from './paging.js';

const SUBSCRIPTIONS: Listing = {
  space: SUBSCRIPTION_SPACE,
  path: '/$subscriptions',
  fields: new Set(['id', 'url', 'events', 'status']),
};

export function getSubscriptions(app: Paging, rq: RequestContext): Promise<Reply> {
  return listingReply(app, rq, SUBSCRIPTIONS);
}

export function getSubscription(app: ItemReading & Pick<App, 'store'>, rq: RequestContext): Reply {
  const id = rq.params.get('id');
  const missing = `There is no subscription ${shown(id)}.`;
  return listedItemReply(app, rq, SUBSCRIPTIONS, app.store.get(SUBSCRIPTION_SPACE, id), missing);
}

export function putSubscription(
  app: ConditionalWriting & Pick<App, 'self' | 'policy' | 'baseUrl'>,
  rq: RequestContext,
): Promise<Reply> {
  const id = rq.params.get('id');
  return conditionalPut(app, rq, {
    collection: SUBSCRIPTION_SPACE,
    id,
    document: async (body) => {
      const checked = checkSubscription(id, body, app.store.get(SUBSCRIPTION_SPACE, id) === undefined);
      if (!checked.ok) return checked;
      if (await pointsAtSelf(checked.doc['url'] as string, app.self())) {
        const detail =
          'The url points at this server itself: a delivery would cause the change it announces, without end.';
        const errors = [{ pointer: '/url', detail: 'points at this server' }];
        return { ok: false, problem: problem('invalid-body', detail, { errors }) };
      }
      const { secret } = checked;
      const extra: Mutation[] = [];
      if (secret !== undefined) extra.push({ kind: 'put', collection: SECRET_SPACE, id, doc: { secret } });
      return { ok: true, doc: checked.doc, extra };
    },
    reply: (status, record) => subscriptionReply(app, status, record),
  });
}

export function deleteSubscription(app: ConditionalWriting, rq: RequestContext): Promise<Reply> {
  const id = rq.params.get('id');
  const dropSecret: Mutation = { kind: 'delete', collection: SECRET_SPACE, id };
  return conditionalDelete(app, rq, SUBSCRIPTION_SPACE, id, undefined, [dropSecret]);
}

function subscriptionReply(
  app: Pick<App, 'representations' | 'policy' | 'baseUrl'>,
  status: 200 | 201,
  record: StoredRecord,
): Reply {
  const location = link(app, `/$subscriptions/${encodeURIComponent(record.id)}`);
  return storedReply(app, status, record, location, location);
}
