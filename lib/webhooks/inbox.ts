// The inbox of received webhook events (seed, Events: "Durably record or enqueue the event", "Process
// the event afterward, out of band"; CONTRACT §7). Each accepted event is two records written in one
// atomic batch: its item in `$inbox` (what `GET /$inbox` lists: id, event, status, attempts, times,
// last error) and its raw body in `$inbox-payloads`, so status changes never rewrite the body and the
// body of a processed event can be dropped while its id stays for deduplication. Both expire after
// `webhooks.dedupDays`.
//
// Processing runs on a JobRunner over `$inbox` (lib/jobs/runner.ts): an event is a job while it has a
// dueAt. A handler is chosen by event kind, else the `*` handler; an event with no handler stays
// `accepted` and parked (no dueAt) until one is registered, so an event that arrives before the
// library's `webhooks.on()` call is not lost. A handler that throws, rejects or passes
// `webhooks.handlerTimeoutMs` is retried with exponential backoff and full jitter
// (`webhooks.retry`; lib/retry.ts); after the last attempt the event is `dead`, its body stays, and
// a line goes to the side log `dead-letter.jsonl`. PUT /$inbox/{id}/$retry queues it again.
//
// "Processed at most once": the outcome of a run is written after the handler returns, so a handler
// completes at most once per event id, except one that was running when the process died (at most
// `webhooks.workers` of them), or one that timed out and finished later anyway (its late result is
// ignored, and the event has been retried meanwhile): handlers should be idempotent for those.
import type { Clock, Random, Timer } from '../clock.js';
import type { WebhooksConfig } from '../config.js';
import { OutcomeWriter } from '../jobs/outcomes.js';
import { JobRunner } from '../jobs/runner.js';
import { isJsonObject, type JsonObject } from '../json.js';
import type { Logger } from '../log.js';
import { INBOX_BACKOFF, mayRetry, retryDelay, withSchedule } from '../retry.js';
import type { Mutation, Store, StoredRecord } from '../store/types.js';
import type { Writer } from '../writes/writer.js';

export const INBOX_SPACE = '$inbox';
export const PAYLOAD_SPACE = '$inbox-payloads';
export const DEAD_LETTER_LOG = 'dead-letter';
/** The fields of an inbox item (CONTRACT §7), the only properties `$filter` and `$orderby` may name on /$inbox. */
export const INBOX_FIELDS: ReadonlySet<string> = new Set(['id', 'event', 'status', 'attempts', 'receivedAt', 'processedAt', 'nextAttemptAt', 'lastError']);

export type InboxStatus = 'accepted' | 'processed' | 'failed' | 'dead';

export interface HandlerContext {
  /** 1 for the first run of this event, then 2, 3, ... */
  readonly attempt: number;
  /** When the event was accepted (ISO 8601). */
  readonly receivedAt: string;
  /** Aborts when the handler passes its timeout or the server shuts down. */
  readonly signal: AbortSignal;
}

/** Processes one event; a throw or a rejection counts as a failure, and the event is retried. */
export type WebhookHandler = (event: JsonObject, context: HandlerContext) => unknown;

/** Who handles which kind of event: `server.webhooks.on(kind, handler)` (CONTRACT §7). */
export interface WebhookHandlers {
  on(kind: string, handler: WebhookHandler): void;
}

const DAY_MS = 86_400_000;
const MAX_ERROR_TEXT = 500;
/** How long a job waits before it is tried again when the store could not record its outcome. */

export interface InboxOptions {
  readonly store: Store;
  readonly writer: Writer;
  readonly clock: Clock;
  readonly random: Random;
  readonly config: WebhooksConfig;
  readonly log: Logger;
  readonly drainTimeoutMs: number;
}

export type InboxRequeue = { readonly result: 'queued'; readonly record: StoredRecord } | { readonly result: 'processed' | 'missing' | 'unavailable' };

export class Inbox implements WebhookHandlers {
  readonly runner: JobRunner;
  private readonly outcomes: OutcomeWriter;
  private readonly handlers = new Map<string, WebhookHandler>();
  private stopping: Promise<'stopped'> | undefined;

  constructor(private readonly options: InboxOptions) {
    this.outcomes = new OutcomeWriter('webhook handlers', options.writer, options.clock, options.log);
    this.runner = new JobRunner({
      name: 'webhook handlers',
      store: options.store,
      clock: options.clock,
      space: INBOX_SPACE,
      workers: options.config.workers,
      work: (record, signal) => this.process(record, signal),
      drainTimeoutMs: options.drainTimeoutMs,
      log: options.log,
    });
  }

  /** The mutations that record an accepted event: its item, due now, and its body; both expire together. */
  acceptance(id: string, event: string, body: string): Mutation[] {
    const now = this.options.clock.now();
    const expiresAt = now + this.options.config.dedupDays * DAY_MS;
    const item: JsonObject = { id, event, status: 'accepted', attempts: 0, receivedAt: new Date(now).toISOString() };
    return [
      { kind: 'put', collection: INBOX_SPACE, id, doc: item, expect: { absent: true }, expiresAt, dueAt: now },
      { kind: 'put', collection: PAYLOAD_SPACE, id, doc: { body }, expiresAt },
    ];
  }

  on(kind: string, handler: WebhookHandler): void {
    if (typeof kind !== 'string' || kind === '') throw new TypeError('webhooks.on: kind must be an event kind or "*"');
    if (typeof handler !== 'function') throw new TypeError('webhooks.on: handler must be a function');
    this.handlers.set(kind, handler);
    void this.unpark(kind);
  }

  /** Queues an event again now (PUT /$inbox/{id}/$retry): a dead one from its first attempt. */
  async requeue(id: string): Promise<InboxRequeue> {
    const record = this.options.store.get(INBOX_SPACE, id);
    if (record === undefined) return { result: 'missing' };
    if (record.doc['status'] === 'processed') return { result: 'processed' };
    const change: Mutation =
      record.doc['status'] === 'dead'
        ? { kind: 'patch', collection: INBOX_SPACE, id, set: { status: 'accepted', attempts: 0 }, unset: ['lastError', 'nextAttemptAt'], dueAt: this.options.clock.now(), expect: { version: record.version } }
        : { kind: 'patch', collection: INBOX_SPACE, id, set: {}, unset: ['nextAttemptAt'], dueAt: this.options.clock.now(), expect: { version: record.version } };
    const written = await this.options.writer.write([change]);
    if (!written.ok) return written.reason === 'conflict' ? this.requeue(id) : { result: 'unavailable' };
    return { result: 'queued', record: written.records[0] as StoredRecord };
  }

  /** One run of one event: its handler, then its next state. */
  private async process(record: StoredRecord, shutdown: AbortSignal): Promise<void> {
    const kind = typeof record.doc['event'] === 'string' ? record.doc['event'] : '';
    const handler = this.handlers.get(kind) ?? this.handlers.get('*');
    if (handler === undefined) {
      // Parked until a handler for its kind is registered (unpark), rather than processed by nobody.
      await this.outcomes.write([{ kind: 'patch', collection: INBOX_SPACE, id: record.id, set: {}, dueAt: null, expect: { version: record.version } }]);
      return;
    }
    const attempt = Number(record.doc['attempts'] ?? 0) + 1;
    const outcome = await this.run(handler, record, attempt, shutdown);
    // Stopped by a shutdown: the event stays due, and the next start runs this attempt again.
    if (outcome === 'stopped') return;
    const now = this.options.clock.now();
    if (outcome === 'done') {
      await this.outcomes.write([
        { kind: 'patch', collection: INBOX_SPACE, id: record.id, set: { status: 'processed', attempts: attempt, processedAt: new Date(now).toISOString() }, unset: ['nextAttemptAt', 'lastError'], dueAt: null, expect: { version: record.version } },
        { kind: 'delete', collection: PAYLOAD_SPACE, id: record.id },
      ]);
      return;
    }
    const lastError = outcome.error;
    const retry = withSchedule(INBOX_BACKOFF, this.options.config.retry);
    if (mayRetry(retry, attempt)) {
      const next = now + retryDelay(retry, attempt, this.options.random);
      await this.outcomes.write([{ kind: 'patch', collection: INBOX_SPACE, id: record.id, set: { status: 'failed', attempts: attempt, nextAttemptAt: new Date(next).toISOString(), lastError }, dueAt: next, expect: { version: record.version } }]);
      return;
    }
    // The dead letter first: whoever sees the status `dead` finds its line (a crash in between costs a
    // second run and a second line, never a dead event without one).
    const body = this.options.store.get(PAYLOAD_SPACE, record.id)?.doc['body'];
    const line: JsonObject = { id: record.id, event: kind, receivedAt: record.doc['receivedAt'] ?? null, deadAt: new Date(now).toISOString(), attempts: attempt, lastError, body: typeof body === 'string' ? body : null };
    const logged = await this.options.store.appendSideLog(DEAD_LETTER_LOG, line);
    if (!logged.ok) this.options.log('error', 'cannot write the dead-letter line; the event is dead in /$inbox all the same', { id: record.id, detail: logged.detail });
    await this.outcomes.write([{ kind: 'patch', collection: INBOX_SPACE, id: record.id, set: { status: 'dead', attempts: attempt, lastError }, unset: ['nextAttemptAt'], dueAt: null, expect: { version: record.version } }]);
  }

  /** Runs the handler under its timeout; the outcome, or 'stopped' when the server is shutting down. */
  private async run(handler: WebhookHandler, record: StoredRecord, attempt: number, shutdown: AbortSignal): Promise<'done' | 'stopped' | { error: string }> {
    const payload = this.options.store.get(PAYLOAD_SPACE, record.id)?.doc['body'];
    let event: unknown;
    try {
      event = typeof payload === 'string' ? JSON.parse(payload) : undefined;
    } catch {
      event = undefined;
    }
    if (!isJsonObject(event)) return { error: 'the stored body of this event is missing or unreadable' };
    const timeoutMs = this.options.config.handlerTimeoutMs;
    // The handler's AbortSignal is made only if the handler asks for it: most never do, and one
    // AbortController per event is a measurable share of the receiver's work.
    let controller: AbortController | undefined;
    let timedOut = false;
    const receivedAt = typeof record.doc['receivedAt'] === 'string' ? record.doc['receivedAt'] : '';
    const context: HandlerContext = {
      attempt,
      receivedAt,
      get signal(): AbortSignal {
        controller ??= new AbortController();
        if (timedOut || shutdown.aborted) controller.abort();
        return controller.signal;
      },
    };
    let timer: Timer | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = this.options.clock.setTimer(timeoutMs, () => {
        timedOut = true;
        controller?.abort();
        resolve('timeout');
      });
    });
    try {
      const result = await Promise.race([Promise.resolve().then(() => handler(event as JsonObject, context)), timeout, this.stopped(shutdown)]);
      if (result === 'timeout') return { error: `the handler did not finish within ${timeoutMs} ms` };
      if (result === 'stopped') {
        controller?.abort();
        return 'stopped';
      }
      return 'done';
    } catch (error) {
      if (shutdown.aborted) return 'stopped';
      return { error: errorText(error) };
    } finally {
      timer?.cancel();
    }
  }

  /** One promise for the whole runner, settled when a drain gives up waiting (one listener, not one per event). */
  private stopped(shutdown: AbortSignal): Promise<'stopped'> {
    this.stopping ??= new Promise((resolve) => {
      if (shutdown.aborted) resolve('stopped');
      else shutdown.addEventListener('abort', () => resolve('stopped'), { once: true });
    });
    return this.stopping;
  }

  /** Writes a job's next state; false (and a pause, so a failing disk is not hammered) when it cannot. */
  /** Events parked for want of a handler, made due again now that `kind` has one. */
  private async unpark(kind: string): Promise<void> {
    const now = this.options.clock.now();
    const changes: Mutation[] = [];
    for (const record of this.options.store.scan(INBOX_SPACE)) {
      if (record.dueAt !== undefined || record.doc['status'] !== 'accepted') continue;
      if (kind !== '*' && record.doc['event'] !== kind) continue;
      changes.push({ kind: 'patch', collection: INBOX_SPACE, id: record.id, set: {}, dueAt: now, expect: { version: record.version } });
    }
    if (changes.length === 0) return;
    const written = await this.options.writer.write(changes);
    // A conflict means one of them changed meanwhile; try again with what the store holds now.
    if (!written.ok && written.reason === 'conflict') await this.unpark(kind);
    else if (!written.ok) this.options.log('error', 'cannot queue parked webhook events for their new handler', { kind, reason: written.reason });
  }
}

/** What a handler's failure says, kept short: a stack trace does not belong in an API response. */
function errorText(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : `thrown: ${String(error)}`;
  return text.length > MAX_ERROR_TEXT ? `${text.slice(0, MAX_ERROR_TEXT)}…` : text;
}
