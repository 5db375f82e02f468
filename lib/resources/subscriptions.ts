// Subscriptions of the webhook sender (CONVENTIONS.md#routes `PUT|GET|DELETE /$subscriptions/{id}`,
// CONVENTIONS.md#subscriptions): a resource like any other (CONVENTIONS.md#conditional-create,
// CONVENTIONS.md#conditional-replace, CONVENTIONS.md#precondition-required: If-None-Match: * creates,
// If-Match replaces, neither → 428; DELETE 204), except that its secret is stored apart and shown by
// `GET /$subscriptions/{id}/$secret` alone (generated when a create leaves it out, kept when a
// replace does, the replaced one kept for the overlap: CONVENTIONS.md#signing-secrets-and-rotation,
// lib/webhooks/secrets.ts), and that a URL
// pointing at this server is refused (400), so a delivery can never loop back into the changes that
// cause deliveries, and that a create past `limits.maxSubscriptions` is refused with 409
// (CONVENTIONS.md#limits): every change fans out to every subscription that wants it, so their
// number bounds what one write costs. Creates take turns through one guard record: the count is
// read and the guard's version expected in the same write, so concurrent creates cannot pass the
// limit together (the loser decides again, and finds the limit reached).
import { noStoreCacheControl } from '../http/cache-policy.js';
import { jsonReply, problemReply, type Reply } from '../http/respond.js';
import { problem } from '../protocol/problem.js';
import type { Mutation, Store, StoredRecord } from '../store/types.js';
import { generatedSecret, secretWrites } from '../webhooks/secrets.js';
import {
  checkSubscription, pointsAtSelf, SECRET_SPACE, secretOf, SUBSCRIPTION_SPACE,
} from '../webhooks/subscriptions.js';
import { STREAK_SPACE } from '../webhooks/auto-disable.js';
import type { App, RequestContext } from './context.js';
import { link } from './common.js';
import { conditionalDelete, conditionalPut, type Admission, type ConditionalWriting } from './conditional-writes.js';
import { shown } from './common.js';
import { listedItemReply, listingReply, type Listing } from './listing.js';
import { storedReply, type ItemReading } from './replies.js';
import type { Paging } from './paging.js';

/** The record every create writes, expecting the version it read (see the header). */
const GUARD_SPACE = '$subscription-guard';
const GUARD_ID = 'creates';

const SUBSCRIPTIONS: Listing = {
  space: SUBSCRIPTION_SPACE,
  path: '/$subscriptions',
  fields: new Set(['id', 'url', 'events', 'status', 'disabledReason', 'disabledAt']),
};

export function getSubscriptions(app: Paging, rq: RequestContext): Reply | Promise<Reply> {
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
  // What the body says of the secret, for the write's decision against the secret record as it is then.
  let given: string | undefined;
  let overlapS = 0;
  return conditionalPut(app, rq, {
    collection: SUBSCRIPTION_SPACE,
    id,
    document: async (body) => {
      const checked = checkSubscription(id, body);
      if (!checked.ok) return checked;
      if (await pointsAtSelf(checked.doc['url'] as string, app.self())) {
        const detail =
          'The url points at this server itself: a delivery would cause the change it announces, without end.';
        const errors = [{ pointer: '/url', detail: 'points at this server' }];
        return { ok: false, problem: problem('invalid-body', detail, { errors }) };
      }
      given = checked.secret;
      overlapS = checked.doc['secretOverlapS'] as number;
      return { ok: true, doc: checked.doc };
    },
    admit: (current) => {
      const room = current === undefined ? roomForOneMore(app.store, app.config.limits.maxSubscriptions) : KEEP;
      if (!room.ok) return room;
      const secret = secretWrites(app.store.get(SECRET_SPACE, id), {
        id,
        creating: current === undefined,
        given,
        overlapS,
        now: app.clock.now(),
        generate: () => generatedSecret(app.random),
      });
      return { ok: true, extra: [...room.extra, ...secret] };
    },
    reply: (status, record) => subscriptionReply(app, status, record),
  });
}

/**
 * GET /$subscriptions/{id}/$secret: the one answer that holds a secret (the current one). Made for
 * this request alone (never from a cache), `no-store`, and without validators: nothing about a secret
 * is to be kept or compared (CONVENTIONS.md#signing-secrets-and-rotation).
 */
export function getSubscriptionSecret(app: Pick<App, 'store' | 'policy'>, rq: RequestContext): Reply {
  const id = rq.params.get('id');
  const exists = app.store.get(SUBSCRIPTION_SPACE, id) !== undefined;
  const secret = exists ? secretOf(app.store.get(SECRET_SPACE, id)?.doc) : undefined;
  if (secret === undefined) return problemReply(problem('not-found', `There is no subscription ${shown(id)}.`));
  return jsonReply(200, Buffer.from(JSON.stringify({ secret })), { 'Cache-Control': noStoreCacheControl(app.policy) });
}

/** A replace changes no count. */
const KEEP: Admission = { ok: true, extra: [] };

/** Below the limit: the create may go ahead, with the guard record. At it or past it: 409 naming the limit. */
function roomForOneMore(store: Store, limit: number): Admission {
  const count = store.count(SUBSCRIPTION_SPACE);
  if (count >= limit) {
    const detail =
      `This server holds ${count} subscriptions, and limits.maxSubscriptions (${limit}) allows no more: ` +
      'delete one (or raise the limit in the configuration) before creating another.';
    return { ok: false, problem: problem('conflict', detail) };
  }
  const guard = store.get(GUARD_SPACE, GUARD_ID);
  const expect = guard === undefined ? { absent: true as const } : { version: guard.version };
  return { ok: true, extra: [{ kind: 'put', collection: GUARD_SPACE, id: GUARD_ID, doc: {}, expect }] };
}

export function deleteSubscription(app: ConditionalWriting, rq: RequestContext): Promise<Reply> {
  const id = rq.params.get('id');
  const dropSecret: Mutation = { kind: 'delete', collection: SECRET_SPACE, id };
  // Its failure streak goes with it (CONVENTIONS.md#auto-disable).
  const dropStreak: Mutation = { kind: 'delete', collection: STREAK_SPACE, id };
  return conditionalDelete(app, rq, SUBSCRIPTION_SPACE, id, undefined, [dropSecret, dropStreak]);
}

function subscriptionReply(
  app: Pick<App, 'representations' | 'policy' | 'baseUrl'>,
  status: 200 | 201,
  record: StoredRecord,
): Reply {
  const location = link(app, `/$subscriptions/${encodeURIComponent(record.id)}`);
  return storedReply(app, status, record, location, location);
}
