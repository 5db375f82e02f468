// The sender's deliveries (CONVENTIONS.md#deliveries, CONVENTIONS.md#outbox): the outbox's policy of
// the one job queue (lib/jobs/queue.ts). Each delivery is a job: its item in `$outbox`, written with
// the change it announces (lib/webhooks/events.ts, CONVENTIONS.md#transactional-outbox); the event's
// exact bytes are stored once for all its deliveries (event-bodies.ts). One run is one `POST url` of
// those bytes (the same bytes and id on every attempt), `X-Signature` under the subscription's current
// secret, `X-Timestamp` stamped at each attempt (so a late retry is not stale at the receiver),
// `Content-Type: application/json`, and the same delivery as Standard Webhooks signs it: `webhook-id`
// (the event id), `webhook-timestamp` (= X-Timestamp) and `webhook-signature` under the current secret
// and, during a rotation's overlap, the previous one (CONVENTIONS.md#signing-secrets-and-rotation).
//
// Outcomes (CONVENTIONS.md#delivery-retries): a 2xx delivers; a network error, a timeout
// (`outbox.timeoutMs`), a 5xx, 408 or 429 is retried on the outbox's backoff (1 s × 3^n, 6 h cap, 15
// attempts, about a day, equal jitter; lib/retry.ts OUTBOX_BACKOFF), so a receiver down for hours
// loses nothing, a Retry-After taking the place of the backoff, clamped to the schedule's cap; any
// other status is dead at once, and a 410 also disables the subscription. A dead delivery keeps its
// body, says so in /$outbox, and gets a line in `outbox-dead-letter.jsonl`. Redirects are not followed
// (a receiver moves by a PUT of its subscription), so a 3xx is dead too. With
// `outbox.refusePrivateAddresses`, a receiver at a loopback, private, link-local, unique-local or
// unspecified address (after DNS, post.ts) is dead at once with "address not allowed", nothing more.
// Forwards of received events (forward.ts, CONVENTIONS.md#forwarding) are deliveries too, of the
// pseudo subscription `$forward`: the provider's bytes and fields, sent to `webhooks.forward`.
//
// What `lastError` tells (`outbox.errorDetail`, CONVENTIONS.md#outbox): "full" names the network
// error or the answer; "class" only its class (timeout, refused, unreachable) or `HTTP <status>`, so
// whoever reads /$outbox cannot tell an unresolved name from a route that is down, and subscriptions
// do not make a port scanner of the server.
//
// A worker takes the next delivery while an outcome is written (deliveries are at least once), and
// one worker at most serves a subscription, so slow or dead receivers hold one worker each while
// other receivers are served.
import type { Clock, Random } from '../clock.js';
import type { ErrorDetail, OutboxConfig } from '../config.js';
import type { DeadOutcome, JobPolicy, JobWords, Requeue, RetryOutcome, RunOutcome } from '../jobs/policy.js';
import { JobQueue } from '../jobs/queue.js';
import type { JsonObject } from '../json.js';
import type { Logger } from '../log.js';
import { retryAfterMs } from '../protocol/retry-after.js';
import { webhookSignature } from '../protocol/signature.js';
import { standardSignature } from '../protocol/standard-signature.js';
import { OUTBOX_BACKOFF, withSchedule, type Backoff } from '../retry.js';
import type { Mutation, Store, StoredRecord } from '../store/types.js';
import type { Writer } from '../writes/writer.js';
import { EventBodies } from './event-bodies.js';
import { OUTBOX_SPACES } from './events.js';
import { FORWARD_SUBSCRIPTION, forwardRequest } from './forward.js';
import { WebhookPoster, type FailureClass, type PostRequest } from './post.js';
import { signingSecrets } from './secrets.js';
import { SECRET_SPACE, SUBSCRIPTION_SPACE, subscriptionOf } from './subscriptions.js';

/** The side log `outbox-dead-letter.jsonl` (CONVENTIONS.md#delivery-retries). */
const OUTBOX_DEAD_LETTER = 'outbox-dead-letter';
/** The fields of a delivery (CONVENTIONS.md#outbox), the only properties a query on /$outbox may name. */
export const OUTBOX_FIELDS: ReadonlySet<string> = new Set([
  'id', 'eventId', 'subscription', 'event', 'status', 'attempts', 'createdAt', 'deliveredAt', 'nextAttemptAt',
  'lastStatus', 'lastError', 'source',
]);

/** Statuses retried besides 5xx and network failures (CONVENTIONS.md#delivery-retries). */
const RETRIED_STATUSES = new Set([408, 429]);
const GONE = 410;
/** The whole `lastError` of a delivery `outbox.refusePrivateAddresses` refused: nothing of the address. */
const NOT_ALLOWED = 'address not allowed';

export interface OutboxOptions {
  readonly store: Store;
  readonly writer: Writer;
  readonly clock: Clock;
  readonly random: Random;
  readonly config: OutboxConfig;
  readonly log: Logger;
  readonly drainTimeoutMs: number;
  /** The User-Agent deliveries carry. */
  readonly userAgent: string;
  /** Where accepted events are forwarded (`webhooks.forward`); undefined: forwarding is off. */
  readonly forward?: string | undefined;
}

/** One attempt as the run prepares it; the poster adds the timeout and the shutdown signal. */
type Attempt = Pick<PostRequest, 'url' | 'body' | 'headers' | 'refusePrivateAddresses'>;

export class Outbox {
  /** The lifecycle component: the queue that sends the deliveries. */
  readonly queue: JobQueue;

  constructor(options: OutboxOptions) {
    this.queue = new JobQueue(new OutboxPolicy(options), options);
  }

  /** PUT /$outbox/{id}/$retry: `refused` names what the delivery is when it is neither failed nor dead. */
  requeue(id: string): Promise<Requeue> {
    return this.queue.requeue(id);
  }
}

/** One run is one POST; its words are the outbox's. */
class OutboxPolicy implements JobPolicy {
  readonly words: JobWords = {
    name: 'webhook deliveries',
    job: 'delivery',
    path: '/$outbox',
    waiting: 'pending',
    done: 'delivered',
  };
  readonly spaces = OUTBOX_SPACES;
  readonly sharedBodies: EventBodies;
  readonly deadLetterLog = OUTBOX_DEAD_LETTER;
  readonly backoff: Backoff;
  readonly workers: number;
  readonly perGroup: number;
  readonly releaseBeforeRecording = true;
  /** A delivery sent again from its first attempt keeps its last status and error until it has new ones. */
  readonly forgetOnRestart = [];
  private readonly poster: WebhookPoster;
  private readonly detail: ErrorDetail;

  constructor(private readonly options: OutboxOptions) {
    this.backoff = withSchedule(OUTBOX_BACKOFF, options.config.retry);
    this.workers = options.config.workers;
    this.perGroup = 1;
    this.poster = new WebhookPoster(options.clock);
    this.sharedBodies = new EventBodies({ ...options, done: this.words.done });
    this.detail = options.config.errorDetail;
  }

  groupOf(record: StoredRecord): string {
    return String(record.doc['subscription']);
  }

  close(): void {
    this.poster.close();
  }

  gaveUp(outcome: RetryOutcome, attempts: number): string {
    const status = String(outcome.set['lastStatus']);
    const last = outcome.error ?? this.told(`HTTP ${status}`, `status ${status}`);
    return this.detail === 'class' ? last : `gave up after ${attempts} attempts: ${last}`;
  }

  deadLetterHead(record: StoredRecord): JsonObject {
    const { eventId, subscription, event } = record.doc;
    return { id: record.id, eventId: eventId ?? null, subscription: subscription ?? null, event: event ?? null };
  }

  /** One POST of the delivery; never throws. */
  async run(record: StoredRecord, body: string | undefined, _attempt: number, stop: AbortSignal): Promise<RunOutcome> {
    const { store, clock, config } = this.options;
    const subscriptionId = String(record.doc['subscription']);
    if (subscriptionId === FORWARD_SUBSCRIPTION) return this.forward(record, stop);
    const stored = store.get(SUBSCRIPTION_SPACE, subscriptionId);
    const subscription = stored === undefined ? undefined : subscriptionOf(stored.doc);
    if (subscription === undefined) return dead(null, 'the subscription was deleted');
    if (!subscription.active) return dead(null, 'the subscription is disabled');
    const now = clock.now();
    const secrets = signingSecrets(store.get(SECRET_SPACE, subscriptionId)?.doc, now);
    if (secrets.length === 0 || body === undefined) return dead(null, 'the delivery has lost its secret or body');
    const eventId = record.doc['eventId'];
    const request = {
      url: subscription.url,
      body,
      refusePrivateAddresses: config.refusePrivateAddresses,
      headers: {
        'Content-Type': 'application/json',
        'User-Agent': this.options.userAgent,
        ...signatureFields(typeof eventId === 'string' ? eventId : record.id, body, secrets, now),
      },
    };
    return this.send(request, subscriptionId, stop);
  }

  /**
   * A forward (forward.ts, CONVENTIONS.md#forwarding): the provider's bytes and fields to the URL
   * configured now, signed by nobody but the provider; exempt from `refusePrivateAddresses`, because
   * the operator, not an API client, chose the URL (it is normally on loopback).
   */
  private forward(record: StoredRecord, stop: AbortSignal): Promise<RunOutcome> {
    const request = forwardRequest(this.options.store, record, this.options.forward);
    if (!request.ok) return Promise.resolve(dead(null, request.reason));
    const headers = { ...request.headers, 'User-Agent': this.options.userAgent };
    const attempt = { url: request.url, body: request.body, refusePrivateAddresses: false, headers };
    return this.send(attempt, FORWARD_SUBSCRIPTION, stop);
  }

  /** Sends one attempt and classifies what came of it. */
  private async send(request: Attempt, subscriptionId: string, stop: AbortSignal): Promise<RunOutcome> {
    const { config } = this.options;
    const sent = await this.poster.post({ ...request, timeoutMs: config.timeoutMs, shutdown: stop });
    switch (sent.kind) {
      case 'answered':
        return this.classify(sent.status, sent.retryAfter, subscriptionId);
      case 'timeout': {
        const error = this.told('timeout', `no answer within ${config.timeoutMs} ms`);
        return { kind: 'retry', set: { lastStatus: null }, error };
      }
      case 'failed':
        return { kind: 'retry', set: { lastStatus: null }, error: this.told(sent.failure, sent.error) };
      case 'not-allowed':
        return dead(null, NOT_ALLOWED);
      case 'stopped':
        return { kind: 'stopped' };
    }
  }

  private classify(status: number, retryAfter: string | undefined, subscriptionId: string): RunOutcome {
    const now = this.options.clock.now();
    if (status >= 200 && status < 300) {
      return { kind: 'done', set: { lastStatus: status, deliveredAt: new Date(now).toISOString() } };
    }
    if (status >= 500 || RETRIED_STATUSES.has(status)) {
      const wait = retryAfterMs(retryAfter, now);
      return { kind: 'retry', set: { lastStatus: status }, ...(wait === undefined ? {} : { retryAfterMs: wait }) };
    }
    // A forward has no subscription to disable: its 410 is dead like any other 4xx.
    if (status === GONE && subscriptionId !== FORWARD_SUBSCRIPTION) {
      const error = this.told(`HTTP ${status}`, 'the receiver answered 410 Gone: the subscription is disabled');
      return { ...dead(status, error), also: this.disabling(subscriptionId) };
    }
    return dead(status, this.told(`HTTP ${status}`, `the receiver answered ${status}, which a retry would not change`));
  }

  /** A `lastError` as `outbox.errorDetail` allows: the whole of it, or only its class. */
  private told(failureClass: FailureClass | `HTTP ${string}`, full: string): string {
    return this.detail === 'class' ? failureClass : full;
  }

  /** The mutation that disables a subscription (its receiver said 410 Gone). */
  private disabling(subscriptionId: string): Mutation[] {
    const stored = this.options.store.get(SUBSCRIPTION_SPACE, subscriptionId);
    if (stored === undefined || stored.doc['status'] === 'disabled') return [];
    return [{ kind: 'patch', collection: SUBSCRIPTION_SPACE, id: subscriptionId, set: { status: 'disabled' } }];
  }
}

/**
 * The fields that sign one attempt, stamped with its time: resapi's own (X-Signature under the current
 * secret; CONVENTIONS.md#deliveries) and Standard Webhooks' (one `v1,` entry per signing secret, the
 * current first; CONVENTIONS.md#signing-secrets-and-rotation), the two timestamps the same second.
 */
function signatureFields(
  eventId: string,
  body: string,
  secrets: readonly string[],
  now: number,
): Record<string, string> {
  const timestamp = String(Math.floor(now / 1000));
  return {
    'X-Signature': webhookSignature(body, secrets[0] as string),
    'X-Timestamp': timestamp,
    'webhook-id': eventId,
    'webhook-timestamp': timestamp,
    'webhook-signature': standardSignature(eventId, timestamp, body, secrets),
  };
}

/** Dead at once: a retry would not change the answer. */
function dead(status: number | null, error: string): DeadOutcome {
  return { kind: 'dead', set: { lastStatus: status }, error };
}
