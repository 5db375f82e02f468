// `POST /$subscriptions/{id}/$ping` (CONVENTIONS.md#ping): one signed `ping` event sent to the
// subscription's URL at once, through the poster and the signing of deliveries (resapi's fields and
// Standard Webhooks', under every secret that signs a delivery now), so it tells whether
// the deliveries would get through: the same address checks (`outbox.refusePrivateAddresses`), the
// same timeout, the same words for what went wrong (`outbox.errorDetail`). Nothing is stored: no
// event, no delivery, no attempt; it is not retried and waits for no rate limit (a person is
// waiting for its answer).
//
// Its body is `{ "id", "event": "ping", "type": "ping", "occurredAt", "data": { "subscription" } }`,
// a fresh id each time, so a receiver that deduplicates by id lets every ping through.
import type { Clock, Random } from '../clock.js';
import type { ErrorDetail } from '../config.js';
import { newId } from '../ids.js';
import type { JsonObject } from '../json.js';
import type { Store } from '../store/types.js';
import type { Poster } from './post.js';
import { signingSecrets } from './secrets.js';
import { SECRET_SPACE, SUBSCRIPTION_SPACE, subscriptionOf } from './subscriptions.js';

export const PING_EVENT = 'ping';
/** What a ping's answer says of a receiver `outbox.refusePrivateAddresses` keeps deliveries from. */
const NOT_ALLOWED = 'address not allowed';

export interface PingOptions {
  readonly store: Store;
  readonly clock: Clock;
  readonly random: Random;
  readonly poster: Poster;
  readonly timeoutMs: number;
  readonly refusePrivateAddresses: boolean;
  readonly errorDetail: ErrorDetail;
  readonly userAgent: string;
  /** The fields that sign a delivery (outbox.ts), so a ping is signed exactly as a delivery is. */
  readonly sign: (eventId: string, body: string, secrets: readonly string[], now: number) => Record<string, string>;
  /** Aborts a ping in flight (the server is closing). */
  readonly shutdown: AbortSignal;
}

/**
 * What a ping came to: `sent` with the answer to give (`{ "status", "error"?, "durationMs" }`: the
 * receiver's status, or null and what went wrong), or why none was sent.
 */
export type PingResult =
  | { readonly kind: 'sent'; readonly answer: JsonObject }
  | { readonly kind: 'missing' | 'disabled' | 'no-secret' | 'stopped' };

/** Sends one ping to the subscription `id`; never throws. */
export async function sendPing(options: PingOptions, id: string): Promise<PingResult> {
  const { store, clock, random } = options;
  const stored = store.get(SUBSCRIPTION_SPACE, id);
  const subscription = stored === undefined ? undefined : subscriptionOf(stored.doc);
  if (subscription === undefined) return { kind: 'missing' };
  if (!subscription.active) return { kind: 'disabled' };
  const now = clock.now();
  const secrets = signingSecrets(store.get(SECRET_SPACE, id)?.doc, now);
  if (secrets.length === 0) return { kind: 'no-secret' };
  const pingId = newId(now, (size) => random.bytes(size));
  const body = JSON.stringify({
    id: pingId,
    event: PING_EVENT,
    type: PING_EVENT,
    occurredAt: new Date(now).toISOString(),
    data: { subscription: id },
  });
  const started = clock.monotonic();
  const sent = await options.poster.post({
    url: subscription.url,
    body,
    timeoutMs: options.timeoutMs,
    refusePrivateAddresses: options.refusePrivateAddresses,
    shutdown: options.shutdown,
    // The fields of a delivery (CONVENTIONS.md#deliveries), `webhook-id` the ping's own id.
    headers: {
      'Content-Type': 'application/json',
      'User-Agent': options.userAgent,
      ...options.sign(pingId, body, secrets, now),
    },
  });
  const durationMs = Math.max(0, Math.round(clock.monotonic() - started));
  const full = options.errorDetail === 'full';
  switch (sent.kind) {
    case 'answered':
      return { kind: 'sent', answer: { status: sent.status, durationMs } };
    case 'timeout': {
      const error = full ? `no answer within ${options.timeoutMs} ms` : 'timeout';
      return { kind: 'sent', answer: { status: null, error, durationMs } };
    }
    case 'failed':
      return { kind: 'sent', answer: { status: null, error: full ? sent.error : sent.failure, durationMs } };
    case 'not-allowed':
      return { kind: 'sent', answer: { status: null, error: NOT_ALLOWED, durationMs } };
    case 'stopped':
      return { kind: 'stopped' };
  }
}
