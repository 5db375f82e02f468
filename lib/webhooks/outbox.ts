// The sender's dispatcher (seed, "Sending side": "Push attempts through a queue with a worker pool.
// Retry with exponential backoff and jitter, with a retry cap, and a dead-letter queue for deliveries
// that never succeed. Sign every payload"; CONTRACT §8). A JobRunner over `$outbox` (lib/jobs/runner.ts)
// delivers each pending delivery: `POST url` with the event's stored bytes (the same bytes and id on
// every attempt), `X-Signature` under the subscription's current secret, `X-Timestamp` stamped at each
// attempt (so a late retry is not stale at the receiver), and `Content-Type: application/json`.
//
// Outcomes (CONTRACT §8): a 2xx delivers; a network error, a timeout (`outbox.timeoutMs`), a 5xx, 408
// or 429 is retried with exponential backoff and equal jitter (the wait before attempt n+1 is
// d/2 + random(d/2), d = min(6 h, 1 s × 3^n), 15 attempts: about a day, so a receiver down for hours
// loses nothing), a Retry-After taking the place of the backoff, clamped to the schedule's cap; any
// other status is dead at once, and a 410 also disables the subscription. A dead delivery keeps its
// body, says so in /$outbox, and gets a line in `outbox-dead-letter.jsonl`. Redirects are not followed
// (a receiver moves by a PUT of its subscription), so a 3xx is dead too.
//
// At most half the workers (rounded up) serve one subscription at a time, so a slow or dead receiver
// cannot hold every worker while other receivers wait.
import type { Clock, Random } from '../clock.js';
import type { OutboxConfig } from '../config.js';
import { OutcomeWriter } from '../jobs/outcomes.js';
import { JobRunner } from '../jobs/runner.js';
import type { Component } from '../lifecycle.js';
import type { JsonObject } from '../json.js';
import type { Logger } from '../log.js';
import { retryAfterMs } from '../protocol/retry-after.js';
import { webhookSignature } from '../protocol/signature.js';
import { OUTBOX_BACKOFF, mayRetry, retryDelay, withSchedule } from '../retry.js';
import type { Mutation, Store, StoredRecord } from '../store/types.js';
import type { Writer } from '../writes/writer.js';
import { BODY_SPACE, OUTBOX_SPACE } from './events.js';
import { WebhookPoster } from './post.js';
import { SECRET_SPACE, SUBSCRIPTION_SPACE, secretOf, subscriptionOf } from './subscriptions.js';

export const OUTBOX_DEAD_LETTER = 'outbox-dead-letter';
/** The fields of a delivery (CONTRACT §8), the only properties a query on /$outbox may name. */
export const OUTBOX_FIELDS: ReadonlySet<string> = new Set(['id', 'eventId', 'subscription', 'event', 'status', 'attempts', 'createdAt', 'deliveredAt', 'nextAttemptAt', 'lastStatus', 'lastError']);

/** Statuses retried besides 5xx and network failures (CONTRACT §8). */
const RETRIED_STATUSES = new Set([408, 429]);
const GONE = 410;

/** An attempt's outcome, before it becomes the delivery's next state. */
type Attempt =
  | { readonly kind: 'delivered'; readonly status: number }
  | { readonly kind: 'retry'; readonly status: number | null; readonly error?: string; readonly retryAfterMs?: number }
  | { readonly kind: 'dead'; readonly status: number | null; readonly error: string; readonly disable?: boolean }
  | { readonly kind: 'stopped' };

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
}

export type OutboxRequeue = { readonly result: 'queued'; readonly record: StoredRecord } | { readonly result: 'delivered' | 'missing' | 'unavailable' };

export class Outbox implements Component {
  readonly name = 'webhook sender';
  readonly runner: JobRunner;
  private readonly poster: WebhookPoster;
  private readonly outcomes: OutcomeWriter;

  constructor(private readonly options: OutboxOptions) {
    this.poster = new WebhookPoster(options.clock);
    this.outcomes = new OutcomeWriter('webhook deliveries', options.writer, options.clock, options.log);
    this.runner = new JobRunner({
      name: 'webhook deliveries',
      store: options.store,
      clock: options.clock,
      space: OUTBOX_SPACE,
      workers: options.config.workers,
      groupOf: (record) => String(record.doc['subscription']),
      perGroup: Math.ceil(options.config.workers / 2),
      work: (record, signal, release) => this.deliver(record, signal, release),
      drainTimeoutMs: options.drainTimeoutMs,
      log: options.log,
    });
  }

  start(): Promise<void> {
    return this.runner.start();
  }

  drain(): Promise<void> {
    return this.runner.drain();
  }

  async close(): Promise<void> {
    await this.runner.close();
    this.poster.close();
  }

  /** Queues a delivery again now (PUT /$outbox/{id}/$retry): a dead one from its first attempt. */
  async requeue(id: string): Promise<OutboxRequeue> {
    const record = this.options.store.get(OUTBOX_SPACE, id);
    if (record === undefined) return { result: 'missing' };
    if (record.doc['status'] === 'delivered') return { result: 'delivered' };
    const now = this.options.clock.now();
    const set: JsonObject = record.doc['status'] === 'dead' ? { status: 'pending', attempts: 0 } : {};
    const written = await this.options.writer.write([{ kind: 'patch', collection: OUTBOX_SPACE, id, set, unset: ['nextAttemptAt'], dueAt: now, expect: { version: record.version } }]);
    if (!written.ok) return written.reason === 'conflict' ? this.requeue(id) : { result: 'unavailable' };
    return { result: 'queued', record: written.records[0] as StoredRecord };
  }

  private async deliver(record: StoredRecord, shutdown: AbortSignal, release: () => void): Promise<void> {
    const attempt = Number(record.doc['attempts'] ?? 0) + 1;
    const outcome = await this.attempt(record, shutdown);
    // The receiver has answered (or not): the worker may take the next delivery while this outcome is written.
    release();
    if (outcome.kind === 'stopped') return;
    const now = this.options.clock.now();
    const base = { kind: 'patch' as const, collection: OUTBOX_SPACE, id: record.id, expect: { version: record.version } };
    if (outcome.kind === 'delivered') {
      const delivered: Mutation = { ...base, set: { status: 'delivered', attempts: attempt, lastStatus: outcome.status, deliveredAt: new Date(now).toISOString() }, unset: ['nextAttemptAt', 'lastError'], dueAt: null };
      await this.outcomes.write([delivered, { kind: 'delete', collection: BODY_SPACE, id: record.id }]);
      return;
    }
    const retry = withSchedule(OUTBOX_BACKOFF, this.options.config.retry);
    if (outcome.kind === 'retry' && mayRetry(retry, attempt)) {
      const wait = outcome.retryAfterMs === undefined ? retryDelay(retry, attempt, this.options.random) : Math.min(outcome.retryAfterMs, retry.schedule.capMs);
      const next = now + wait;
      const set: JsonObject = { status: 'failed', attempts: attempt, lastStatus: outcome.status, nextAttemptAt: new Date(next).toISOString() };
      if (outcome.error !== undefined) set['lastError'] = outcome.error;
      await this.outcomes.write([{ ...base, set, ...(outcome.error === undefined ? { unset: ['lastError'] } : {}), dueAt: next }]);
      return;
    }
    const error = outcome.kind === 'dead' ? outcome.error : `gave up after ${attempt} attempts: ${outcome.error ?? `status ${String(outcome.status)}`}`;
    const line: JsonObject = {
      id: record.id,
      eventId: record.doc['eventId'] ?? null,
      subscription: record.doc['subscription'] ?? null,
      event: record.doc['event'] ?? null,
      deadAt: new Date(now).toISOString(),
      attempts: attempt,
      lastStatus: outcome.status,
      lastError: error,
      body: bodyOf(this.options.store, record.id) ?? null,
    };
    // The dead letter first: whoever sees `dead` in /$outbox finds its line.
    const logged = await this.options.store.appendSideLog(OUTBOX_DEAD_LETTER, line);
    if (!logged.ok) this.options.log('error', 'cannot write the outbox dead-letter line; the delivery is dead in /$outbox all the same', { id: record.id, detail: logged.detail });
    const dead: Mutation = { ...base, set: { status: 'dead', attempts: attempt, lastStatus: outcome.status, lastError: error }, unset: ['nextAttemptAt'], dueAt: null };
    const disable: Mutation[] = outcome.kind === 'dead' && outcome.disable === true ? this.disabling(String(record.doc['subscription'])) : [];
    await this.outcomes.write([dead, ...disable]);
  }

  /** One POST of the delivery; never throws. */
  private async attempt(record: StoredRecord, shutdown: AbortSignal): Promise<Attempt> {
    const { store, clock, config } = this.options;
    const subscriptionId = String(record.doc['subscription']);
    const stored = store.get(SUBSCRIPTION_SPACE, subscriptionId);
    const subscription = stored === undefined ? undefined : subscriptionOf(stored.doc);
    if (subscription === undefined) return { kind: 'dead', status: null, error: 'the subscription was deleted' };
    if (!subscription.active) return { kind: 'dead', status: null, error: 'the subscription is disabled' };
    const secret = secretOf(store.get(SECRET_SPACE, subscriptionId)?.doc);
    const body = bodyOf(store, record.id);
    if (secret === undefined || body === undefined) return { kind: 'dead', status: null, error: 'the delivery has lost its secret or body' };
    const sent = await this.poster.post({
      url: subscription.url,
      body,
      timeoutMs: config.timeoutMs,
      shutdown,
      headers: {
        'Content-Type': 'application/json',
        'User-Agent': this.options.userAgent,
        'X-Signature': webhookSignature(body, secret),
        'X-Timestamp': String(Math.floor(clock.now() / 1000)),
      },
    });
    switch (sent.kind) {
      case 'answered':
        return this.classify(sent.status, sent.retryAfter);
      case 'timeout':
        return { kind: 'retry', status: null, error: `no answer within ${config.timeoutMs} ms` };
      case 'failed':
        return { kind: 'retry', status: null, error: sent.error };
      case 'stopped':
        return { kind: 'stopped' };
    }
  }

  private classify(status: number, retryAfter: string | undefined): Attempt {
    if (status >= 200 && status < 300) return { kind: 'delivered', status };
    if (status >= 500 || RETRIED_STATUSES.has(status)) {
      const wait = retryAfterMs(retryAfter, this.options.clock.now());
      return wait === undefined ? { kind: 'retry', status } : { kind: 'retry', status, retryAfterMs: wait };
    }
    if (status === GONE) return { kind: 'dead', status, error: 'the receiver answered 410 Gone: the subscription is disabled', disable: true };
    return { kind: 'dead', status, error: `the receiver answered ${status}, which a retry would not change` };
  }

  /** The mutation that disables a subscription (its receiver said 410 Gone). */
  private disabling(subscriptionId: string): Mutation[] {
    const stored = this.options.store.get(SUBSCRIPTION_SPACE, subscriptionId);
    if (stored === undefined || stored.doc['status'] === 'disabled') return [];
    return [{ kind: 'patch', collection: SUBSCRIPTION_SPACE, id: subscriptionId, set: { status: 'disabled' } }];
  }
}

function bodyOf(store: Store, id: string): string | undefined {
  const body = store.get(BODY_SPACE, id)?.doc['body'];
  return typeof body === 'string' ? body : undefined;
}
