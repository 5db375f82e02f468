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
// (a receiver moves by a PUT of its subscription), so a 3xx is dead too. Every attempt that is not a
// 2xx counts in its subscription's failure streak, and one that has failed long and often enough
// disables it (auto-disable.ts, CONVENTIONS.md#auto-disable); a disabled subscription's deliveries
// wait (parked: not sent, not lost) and go, in their order, once it is active again. With
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
// A subscription has at most `outbox.inFlight` (K) deliveries in flight at once, started in the order
// they come due, and `outbox.workers` (W) receivers are served at once: the runner gets W × K workers
// and a room of K per subscription, so a slow or dead receiver holds K workers while other receivers
// are served, and W × K requests are in flight in all, at most. With K > 1 a receiver may see them out
// of order (`data.sequence` tells it which is newer). A worker takes the next delivery while an outcome
// is written (deliveries are at least once). The outcome of a failed attempt, or of a 2xx that ends a
// failure streak, is written before the next delivery of its subscription starts; the attempts already
// in flight meanwhile count on the streak as it was last decided (auto-disable.ts).
//
// Each attempt adds its entry to the delivery's attempt log in the write of its outcome
// (attempt-log.ts, CONVENTIONS.md#attempt-log). A subscription's `rateLimit` spaces the starts of its
// deliveries (the runner's pace, lib/jobs/runner.ts; CONVENTIONS.md#rate-limits-and-timeouts). A ping
// goes through the same poster, stored nowhere (ping.ts, CONVENTIONS.md#ping).
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
import type { Store, StoredRecord } from '../store/types.js';
import type { Writer } from '../writes/writer.js';
import { AutoDisable, type DisableCause } from './auto-disable.js';
import { ATTEMPT_LOG, attemptEntry, FirstAttempts, withAttempt } from './attempt-log.js';
import { EventBodies } from './event-bodies.js';
import { OUTBOX_SPACES } from './events.js';
import { FORWARD_SUBSCRIPTION, forwardRequest } from './forward.js';
import { sendPing, type PingResult } from './ping.js';
import type { FailureClass, Poster, PostRequest } from './post.js';
import { ThreadPoster } from './post-thread.js';
import { signingSecrets, SigningKeys } from './secrets.js';
import { SECRET_SPACE, SUBSCRIPTION_SPACE, subscriptionOf } from './subscriptions.js';
import { TimeTexts } from './time-texts.js';

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
  /** Counts each subscription the server disables, by cause (lib/server-metrics.ts). */
  readonly countDisabled?: (cause: DisableCause) => void;
  /** Where accepted events are forwarded (`webhooks.forward`); undefined: forwarding is off. */
  readonly forward?: string | undefined;
}

export class Outbox {
  /** The lifecycle component: the queue that sends the deliveries. */
  readonly queue: JobQueue;

  private readonly policy: OutboxPolicy;

  constructor(options: OutboxOptions) {
    this.policy = new OutboxPolicy(options, () => this.queue.resume());
    this.queue = new JobQueue(this.policy, options);
  }

  /** POST /$subscriptions/{id}/$ping: one signed ping now, through the deliveries' poster (ping.ts). */
  ping(subscriptionId: string): Promise<PingResult> {
    return this.policy.ping(subscriptionId);
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
  readonly releaseWhileRecording = 'worker';
  /** A delivery sent again from its first attempt keeps its last status and error until it has new ones. */
  readonly forgetOnRestart = [];
  private readonly poster: Poster;
  /**
   * Attempts' `at` and deliveries' `deliveredAt`: one text per millisecond each, shared by the
   * deliveries kept for 30 days instead of one string each (time-texts.ts).
   */
  private readonly attemptTimes = new TimeTexts();
  private readonly deliveredTimes = new TimeTexts();
  /** First attempts' logs, shared by the deliveries answered alike (attempt-log.ts). */
  private readonly firstAttempts = new FirstAttempts();
  private readonly detail: ErrorDetail;
  private readonly autoDisable: AutoDisable;
  /** Stops the pings in flight when the queue closes. */
  private readonly pings = new AbortController();
  /** The signing secrets' keys, each made once (secrets.ts). */
  private readonly keys = new SigningKeys();
  /** The fields that sign an attempt or a ping, under the keys made once. */
  private readonly sign = (
    eventId: string,
    body: string,
    secrets: readonly string[],
    now: number,
    fields?: Record<string, string>,
  ): Record<string, string> => signatureFields(this.keys, eventId, body, secrets, now, fields);

  constructor(
    private readonly options: OutboxOptions,
    resume: () => void,
  ) {
    this.backoff = withSchedule(OUTBOX_BACKOFF, options.config.retry);
    const { workers, inFlight } = options.config;
    this.workers = workers * inFlight;
    this.perGroup = inFlight;
    this.poster = new ThreadPoster(options.clock);
    this.sharedBodies = new EventBodies({ ...options, done: this.words.done });
    this.detail = options.config.errorDetail;
    const { disableAfterS } = options.config;
    this.autoDisable = new AutoDisable({ ...options, disableAfterS, resume });
  }

  groupOf(record: StoredRecord): string {
    return String(record.doc['subscription']);
  }

  close(): void {
    this.pings.abort();
    this.poster.close();
    this.autoDisable.close();
  }

  /** A parked delivery goes once its subscription is active again, or deleted (then it is dead). */
  runnable(record: StoredRecord): boolean {
    const subscription = this.options.store.get(SUBSCRIPTION_SPACE, String(record.doc['subscription']));
    return subscription === undefined || subscription.doc['status'] === 'active';
  }

  /** A ping (ping.ts): this poster, these signing fields, this timeout, these address checks. */
  ping(subscriptionId: string): Promise<PingResult> {
    const { store, clock, random, config, userAgent } = this.options;
    const { timeoutMs, refusePrivateAddresses } = config;
    const options = { store, clock, random, timeoutMs, refusePrivateAddresses, userAgent, errorDetail: this.detail };
    const sending = { poster: this.poster, sign: this.sign, shutdown: this.pings.signal };
    return sendPing({ ...options, ...sending }, subscriptionId);
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

  /** A subscription's `rateLimit`: the least time between the starts of its deliveries, ping aside. */
  spacingMs(record: StoredRecord): number {
    const rate = this.options.store.get(SUBSCRIPTION_SPACE, String(record.doc['subscription']))?.doc['rateLimit'];
    return typeof rate === 'number' && rate > 0 ? 1000 / rate : 0;
  }

  /**
   * One attempt, and its entry in the attempt log, written with its outcome (CONVENTIONS.md#attempt-log).
   * The entry goes into the outcome's `set`, which every outcome below makes afresh for its attempt:
   * added there, not spread into a copy (a spread followed by a computed member takes V8's slow path).
   */
  async run(record: StoredRecord, body: string | undefined, _attempt: number, stop: AbortSignal): Promise<RunOutcome> {
    const { clock } = this.options;
    const at = clock.now();
    const started = clock.monotonic();
    const outcome = await this.attempt(record, body, stop);
    if (outcome.kind === 'park' || outcome.kind === 'stopped') return outcome;
    const status = outcome.set['lastStatus'];
    // The receiver's status when it answered, else what went wrong (lastError's words, without "gave up").
    const error = outcome.kind === 'done' ? '' : outcome.error ?? '';
    const time = this.attemptTimes.at(at);
    const took = clock.monotonic() - started;
    const log = record.doc[ATTEMPT_LOG];
    if (log === undefined && typeof status === 'number') {
      outcome.set[ATTEMPT_LOG] = this.firstAttempts.log(time, took, status);
      return outcome;
    }
    const result = typeof status === 'number' ? { status } : { error };
    outcome.set[ATTEMPT_LOG] = withAttempt(log, attemptEntry(time, took, result));
    return outcome;
  }

  /** One POST of the delivery; never throws. */
  private attempt(record: StoredRecord, body: string | undefined, stop: AbortSignal): Promise<RunOutcome> {
    const { store, clock, config } = this.options;
    const subscriptionId = String(record.doc['subscription']);
    if (subscriptionId === FORWARD_SUBSCRIPTION) return this.forward(record, stop);
    const stored = store.get(SUBSCRIPTION_SPACE, subscriptionId);
    const subscription = stored === undefined ? undefined : subscriptionOf(stored.doc);
    if (stored === undefined || subscription === undefined) {
      return Promise.resolve(dead(null, 'the subscription was deleted'));
    }
    // Not sent and not lost: it waits until the subscription is active again (CONVENTIONS.md#auto-disable).
    if (!subscription.active) return Promise.resolve({ kind: 'park' });
    const now = clock.now();
    const secrets = signingSecrets(store.get(SECRET_SPACE, subscriptionId)?.doc, now);
    if (secrets.length === 0 || body === undefined) {
      return Promise.resolve(dead(null, 'the delivery has lost its secret or body'));
    }
    const eventId = record.doc['eventId'];
    // The text as it is: both signatures and the request read its UTF-8 bytes, sent with the head.
    const headers = this.sign(typeof eventId === 'string' ? eventId : record.id, body, secrets, now, {
      'Content-Type': 'application/json',
      'User-Agent': this.options.userAgent,
    });
    return this.send(subscription.url, body, headers, config.refusePrivateAddresses, stored, stop);
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
    return this.send(request.url, request.body, headers, false, undefined, stop);
  }

  /** Sends one attempt and classifies what came of it; `stored` (the subscription) is undefined for a forward. */
  private async send(
    url: string,
    body: string | Buffer,
    headers: Readonly<Record<string, string>>,
    refusePrivateAddresses: boolean,
    stored: StoredRecord | undefined,
    stop: AbortSignal,
  ): Promise<RunOutcome> {
    const { config } = this.options;
    const { timeoutMs } = config;
    const request: PostRequest = { url, body, headers, refusePrivateAddresses, timeoutMs, shutdown: stop };
    const sent = await this.poster.post(request);
    switch (sent.kind) {
      case 'answered':
        return this.classify(sent.status, sent.retryAfter, stored);
      case 'timeout': {
        const error = this.told('timeout', `no answer within ${config.timeoutMs} ms`);
        return this.failed(stored, { kind: 'retry', set: { lastStatus: null }, error }, error);
      }
      case 'failed': {
        const error = this.told(sent.failure, sent.error);
        return this.failed(stored, { kind: 'retry', set: { lastStatus: null }, error }, error);
      }
      case 'not-allowed':
        return this.failed(stored, dead(null, NOT_ALLOWED), NOT_ALLOWED);
      case 'stopped':
        return { kind: 'stopped' };
    }
  }

  private classify(status: number, retryAfter: string | undefined, subscription: StoredRecord | undefined): RunOutcome {
    const now = this.options.clock.now();
    if (status >= 200 && status < 300) {
      const set = { lastStatus: status, deliveredAt: this.deliveredTimes.at(now) };
      const also = subscription === undefined ? [] : this.autoDisable.delivered(subscription);
      return also.length === 0 ? { kind: 'done', set } : { kind: 'done', set, also, recordFirst: true };
    }
    if (status >= 500 || RETRIED_STATUSES.has(status)) {
      const wait = retryAfterMs(retryAfter, now);
      const later = wait === undefined ? {} : { retryAfterMs: wait };
      const retry: RetryOutcome = { kind: 'retry', set: { lastStatus: status }, ...later };
      return this.failed(subscription, retry, this.told(`HTTP ${status}`, `the receiver answered ${status}`));
    }
    // A forward has no subscription to disable: its 410 is dead like any other 4xx.
    if (status === GONE && subscription !== undefined) {
      const error = this.told(`HTTP ${status}`, 'the receiver answered 410 Gone: the subscription is disabled');
      return { ...dead(status, error), also: this.autoDisable.gone(subscription), recordFirst: true };
    }
    const error = this.told(`HTTP ${status}`, `the receiver answered ${status}, which a retry would not change`);
    return this.failed(subscription, dead(status, error), error);
  }

  /**
   * A failed attempt, counted in its subscription's failure streak (auto-disable.ts), which may
   * disable it: written before the subscription's next delivery starts, so that one reads the streak.
   */
  private failed<T extends RetryOutcome | DeadOutcome>(
    subscription: StoredRecord | undefined,
    outcome: T,
    error: string,
  ): T {
    // A forward has no subscription, so no failure streak.
    if (subscription === undefined) return outcome;
    return { ...outcome, also: this.autoDisable.failed(subscription, error), recordFirst: true };
  }

  /** A `lastError` as `outbox.errorDetail` allows: the whole of it, or only its class. */
  private told(failureClass: FailureClass | `HTTP ${string}`, full: string): string {
    return this.detail === 'class' ? failureClass : full;
  }
}

/**
 * The fields that sign one attempt, stamped with its time: resapi's own (X-Signature under the current
 * secret; CONVENTIONS.md#deliveries) and Standard Webhooks' (one `v1,` entry per signing secret, the
 * current first; CONVENTIONS.md#signing-secrets-and-rotation), the two timestamps the same second.
 */
function signatureFields(
  keys: SigningKeys,
  eventId: string,
  body: Uint8Array | string,
  secrets: readonly string[],
  now: number,
  fields: Record<string, string> = {},
): Record<string, string> {
  // Added to the fields given (the request's others), not spread into a new object: one object a request.
  const timestamp = String(Math.floor(now / 1000));
  const current = keys.of(secrets[0] as string);
  const previous = secrets[1] === undefined ? undefined : keys.of(secrets[1]);
  fields['X-Signature'] = webhookSignature(body, current.plain);
  fields['X-Timestamp'] = timestamp;
  fields['webhook-id'] = eventId;
  fields['webhook-timestamp'] = timestamp;
  const standard = previous === undefined ? [current.standard] : [current.standard, previous.standard];
  fields['webhook-signature'] = standardSignature(eventId, timestamp, body, standard);
  return fields;
}

/** Dead at once: a retry would not change the answer. */
function dead(status: number | null, error: string): DeadOutcome {
  return { kind: 'dead', set: { lastStatus: status }, error };
}
