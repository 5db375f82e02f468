// The inbox of received webhook events (CONVENTIONS.md#durable-acceptance, CONVENTIONS.md#inbox): the
// inbox's policy of the one job queue (lib/jobs/queue.ts). Each accepted event is a job, one record:
// its item in `$inbox`, put only while its id is absent, expiring after `webhooks.dedupDays`, the
// item's id being what deduplicates (CONVENTIONS.md#deduplication). The item also keeps the raw body
// (`body`) and the provider's header fields (`headers`), so a retry, and a run after a restart, see
// them; the queue keeps them there because the policy says so (`itemBodies`, lib/jobs/policy.ts), and
// the outcome that says `processed` unsets them in its own write. No reader of /$inbox sees them: reads
// go through `view`, which leaves them out, and a query names only INBOX_FIELDS. A store written
// before kept the body in a record of `$inbox-bodies` (earlier `$inbox-payloads`, moved at start):
// an item without `body` is run with that record's, which its `processed` deletes.
//
// Sources (CONVENTIONS.md#receiving-sources): an item's id is the event id for the default source
// (`webhooks`) and `<name>:<eventId>` for a named one, so dedup is per (source, event id). A named
// source's item stores `source` and `eventId`; the default source's item is stored as it was before
// sources existed, and is read (`view`) as `"source": "webhooks"`, `"eventId": <its id>`, so a store
// written before reads the same as one written now, with nothing to rewrite.
//
// One run is one call of the handler for the event's kind, else the `*` handler
// (CONVENTIONS.md#webhook-handlers). An event with no handler is parked (`accepted`, not due) until one
// is registered, so an event that arrives before the library's `webhooks.on()` call is not lost; it
// is stored parked when accepted (`acceptance`), so it costs no run and no second write meanwhile. A
// handler that throws, rejects or passes `webhooks.handlerTimeoutMs` is retried on the inbox's
// backoff (1 s × 2^n, 5 min cap, 8 attempts, full jitter; lib/retry.ts INBOX_BACKOFF); after the last
// attempt the event is `dead`, keeps its body, and has a line in `dead-letter.jsonl`
// (CONVENTIONS.md#inbox-retries-and-dead-letters). PUT /$inbox/{id}/$retry queues a failed or dead
// event again, never one whose handler is running.
//
// One kind holds at most a quarter of the workers (at least one), so handlers of one kind that hang
// until their timeout leave the other kinds served.
//
// Processed at most once: the outcome of a run is written after the handler returns, and the worker
// is held until it is, so a handler completes at most once per event id, except one that was running
// when the process died (at most `webhooks.workers` of them), or one that timed out and finished later
// anyway (its late result is ignored, and the event has been retried meanwhile): handlers should be
// idempotent for those. The kind's room is given back as soon as the handler returns (lib/jobs/runner.ts),
// so the kind's next event runs, on another worker, while that outcome is written, and the outcomes of
// a busy kind share a commit instead of taking one each.
//
// What that bound costs under sustained load: a worker takes its next event only once the outcome of
// its last is durable, and the journal's next write is under way before a group's outcomes are
// answered, so each worker finishes about one event per two journal writes. Measured (32 connections
// sending signed events, a no-op handler, the bench's disk, a loaded machine): with the default 4
// workers 600-1,500 events a second were processed while 6,000-9,000 were accepted, so the accepted
// events queued up (durably) and were processed after the load, 2-4 outcomes a write; with 32
// workers at most a few thousand were waiting at the load's end, gone within a second. A receiver
// that must keep up with such a rate raises `webhooks.workers` (CONVENTIONS.md#webhook-handlers).
import type { Clock, Random, Timer } from '../clock.js';
import type { WebhooksConfig } from '../config.js';
import type { ItemBodies, JobPolicy, JobSpaces, JobWords } from '../jobs/policy.js';
import type { Requeue, RetryOutcome, RunOutcome } from '../jobs/policy.js';
import { JobQueue, jobItem } from '../jobs/queue.js';
import { isJsonObject, type JsonObject } from '../json.js';
import { limitedLogger, type Logger } from '../log.js';
import { INBOX_BACKOFF, withSchedule, type Backoff } from '../retry.js';
import type { RecordSource } from '../query/execute.js';
import type { Mutation, ScanOptions, Store, StoredRecord } from '../store/types.js';
import type { Writer, WriteResult } from '../writes/writer.js';
import { DEFAULT_SOURCE } from './sources.js';
import { TimeTexts } from './time-texts.js';

export const INBOX_SPACE = '$inbox';
const INBOX_BODY_SPACE = '$inbox-bodies';
const INBOX_SPACES: JobSpaces = { space: INBOX_SPACE, bodySpace: INBOX_BODY_SPACE };
/**
 * The item's members that hold the event's body and the provider's header fields until it is
 * processed (`acceptance` writes them by these names); never read through `view`.
 */
const ITEM_BODIES: ItemBodies = { text: 'body', beside: ['headers'] };
const HIDDEN_FIELDS: readonly string[] = [ITEM_BODIES.text, ...ITEM_BODIES.beside];
/** The inbox's body space before the two queues shared one name scheme: a store written so still opens. */
const FORMER_INBOX_BODY_SPACE = '$inbox-payloads';
/** The side log `dead-letter.jsonl` (CONVENTIONS.md#inbox-retries-and-dead-letters). */
const INBOX_DEAD_LETTER = 'dead-letter';
/** The fields of an inbox item (CONVENTIONS.md#inbox), the only properties a query on /$inbox may name. */
export const INBOX_FIELDS: ReadonlySet<string> = new Set([
  'id', 'source', 'eventId', 'event', 'status', 'attempts', 'receivedAt', 'processedAt', 'nextAttemptAt', 'lastError',
]);

export interface HandlerContext {
  /** 1 for the first run of this event, then 2, 3, ... */
  readonly attempt: number;
  /** When the event was accepted (ISO 8601). */
  readonly receivedAt: string;
  /** Aborts when the handler passes its timeout or the server shuts down. */
  readonly signal: AbortSignal;
  /** The provider's event id (the item's id for the default source; `<source>:<id>` names a named one's item). */
  readonly id: string;
  /** The event's kind: what chose this handler. */
  readonly kind: string;
  /** The source it came through: `webhooks`, or `<name>` of `/webhooks/<name>`. */
  readonly source: string;
  /** The provider's header fields as received (lower-case names), its signature fields removed. */
  readonly headers: Readonly<Record<string, string>>;
}

/** A verified event as the receiver hands it to the inbox. */
export interface AcceptedEvent {
  readonly source: string;
  readonly eventId: string;
  readonly kind: string;
  /** The JSON text of the event, kept as received. */
  readonly text: string;
  readonly headers: Readonly<Record<string, string>>;
}

/** What one handler call came to. */
type CallResult = 'done' | 'stopped' | { readonly error: string };

/** Processes one event; a throw or a rejection counts as a failure, and the event is retried. */
export type WebhookHandler = (event: JsonObject, context: HandlerContext) => unknown;

/** Who handles which kind of event: `server.webhooks.on(kind, handler)` (CONVENTIONS.md#webhook-handlers). */
export interface WebhookHandlers {
  on(kind: string, handler: WebhookHandler): void;
}

const DAY_MS = 86_400_000;
/** One kind holds at most 1/KIND_SHARE of the handler workers (at least one). */
const KIND_SHARE = 4;
const MAX_ERROR_TEXT = 500;
/** Event kinds held as one shared string each, at most, and their longest; any other is stored as it came. */
const KINDS_KEPT = 1024;
const KIND_KEPT_LENGTH = 200;
/** Log lines a second, at most, saying a handler failed (lib/log.ts limitedLogger). */
const FAILURE_LINES_PER_SECOND = 10;

export interface InboxOptions {
  readonly store: Store;
  readonly writer: Writer;
  readonly clock: Clock;
  readonly random: Random;
  readonly config: WebhooksConfig;
  readonly log: Logger;
  readonly drainTimeoutMs: number;
}

export class Inbox implements WebhookHandlers {
  /** The lifecycle component: the queue that runs the handlers. */
  readonly queue: JobQueue;
  private readonly handlers = new Map<string, WebhookHandler>();
  /** Read views of items stored without `source` (`view`), by record: a new version is a new record. */
  private readonly views = new WeakMap<StoredRecord, StoredRecord>();
  /** Each event kind as one string (`kindOf`), at most KINDS_KEPT of them. */
  private readonly kinds = new Map<string, string>();
  /** The provider's fields of the last event stored (`fieldsOf`). */
  private lastFields: Readonly<Record<string, string>> = {};
  /** The `receivedAt` of the last millisecond an event was accepted in. */
  private readonly receivedTimes = new TimeTexts();

  constructor(private readonly options: InboxOptions) {
    this.queue = new JobQueue(new InboxPolicy(options, this.handlers), options);
  }

  /**
   * Records an accepted event durably, with `also` (a forward, CONVENTIONS.md#forwarding) in the same
   * write. An event that no handler takes is written parked (`acceptance`); a handler registered while
   * that write was under way looked for parked events before this one was stored, so the write looks
   * again once it is, and the event is not left parked until the next start.
   */
  async accept(event: AcceptedEvent, also: readonly Mutation[]): Promise<WriteResult> {
    const item = this.acceptance(event);
    const written = await this.options.writer.write([item, ...also]);
    const parked = item.kind === 'put' && item.dueAt === undefined;
    if (written.ok && parked && handlerOf(this.handlers, event.kind) !== undefined) this.queue.resume();
    return written;
  }

  /**
   * The mutation that records an accepted event: its item, holding its body and the provider's fields,
   * due now when a handler takes its kind, else parked until one is registered
   * (CONVENTIONS.md#webhook-handlers): an event no handler can run then costs no run and no second
   * write, as it would if it were stored due.
   */
  acceptance(event: AcceptedEvent): Mutation {
    const now = this.options.clock.now();
    const id = inboxItemId(event.source, event.eventId);
    const receivedAt = this.receivedTimes.at(now);
    const kind = this.kindOf(event.kind);
    // Two literals rather than a spread of the named source's members: a spread followed by more
    // members takes V8's slow path, on every accept. The members keep one order either way; the
    // hidden ones (ITEM_BODIES) come last.
    const { source, eventId, text } = event;
    const headers = this.fieldsOf(event.headers);
    const item: JsonObject = source === DEFAULT_SOURCE
      ? { id, event: kind, status: 'accepted', attempts: 0, receivedAt, body: text, headers }
      : { id, source, eventId, event: kind, status: 'accepted', attempts: 0, receivedAt, body: text, headers };
    const expiresAt = now + this.options.config.dedupDays * DAY_MS;
    const dueAt = handlerOf(this.handlers, kind) === undefined ? undefined : now;
    return jobItem(INBOX_SPACES, id, item, dueAt, expiresAt);
  }

  /**
   * The kind as the string the inbox already holds for it: an item is kept for the whole dedup window,
   * and a kind parsed from each body would otherwise be one more string per item.
   */
  private kindOf(kind: string): string {
    const known = this.kinds.get(kind);
    if (known !== undefined) return known;
    if (this.kinds.size < KINDS_KEPT && kind.length <= KIND_KEPT_LENGTH) this.kinds.set(kind, kind);
    return kind;
  }

  /**
   * The provider's fields as stored: the previous event's object when they are the same (a provider
   * sends the same fields with every delivery), else a copy. Each event's item keeps them for the
   * whole dedup window when no handler takes it, so one object per event would add up; stored
   * documents are never changed in place, so sharing one is safe.
   */
  private fieldsOf(headers: Readonly<Record<string, string>>): JsonObject {
    const last = this.lastFields;
    const names = Object.keys(headers);
    let same = names.length === Object.keys(last).length;
    for (let index = 0; same && index < names.length; index++) {
      const name = names[index] as string;
      same = Object.hasOwn(last, name) && last[name] === headers[name];
    }
    if (!same) this.lastFields = { ...headers };
    return this.lastFields;
  }

  /**
   * An item as it is read: with `source` and `eventId` also when it was stored without them (the
   * default source's items), and never with the body and header fields it holds until processed
   * (ITEM_BODIES). The same view object for the same record, so its representation is cached.
   */
  view(record: StoredRecord): StoredRecord {
    const stored = record.doc;
    const named = typeof stored['source'] === 'string';
    if (named && !HIDDEN_FIELDS.some((field) => Object.hasOwn(stored, field))) return record;
    let viewed = this.views.get(record);
    if (viewed === undefined) {
      const doc: JsonObject = named ? {} : { id: record.id, source: DEFAULT_SOURCE, eventId: record.id };
      for (const [field, value] of Object.entries(stored)) {
        if (HIDDEN_FIELDS.includes(field) || (!named && field === 'id')) continue;
        doc[field] = value;
      }
      viewed = { ...readableRecord(record), doc };
      this.views.set(record, viewed);
    }
    return viewed;
  }

  /** The inbox's records as read (`view`), for the pages of /$inbox. */
  get records(): RecordSource {
    return {
      scan: (space: string, options?: ScanOptions) =>
        this.options.store.scan(space, options).map((record) => this.view(record)),
      get: (space: string, id: string) => {
        const record = this.options.store.get(space, id);
        return record === undefined ? undefined : this.view(record);
      },
    };
  }

  on(kind: string, handler: WebhookHandler): void {
    if (typeof kind !== 'string' || kind === '') throw new TypeError('webhooks.on: kind must be an event kind or "*"');
    if (typeof handler !== 'function') throw new TypeError('webhooks.on: handler must be a function');
    this.handlers.set(kind, handler);
    this.queue.resume();
  }

  /** PUT /$inbox/{id}/$retry: `refused` names what the event is when it is neither failed nor dead. */
  requeue(id: string): Promise<Requeue> {
    return this.queue.requeue(id);
  }
}

/** One run is one handler call under its timeout; its words are the inbox's. */
class InboxPolicy implements JobPolicy {
  readonly words: JobWords = {
    name: 'webhook handlers',
    job: 'event',
    path: '/$inbox',
    waiting: 'accepted',
    done: 'processed',
  };
  readonly spaces = INBOX_SPACES;
  readonly itemBodies = ITEM_BODIES;
  readonly formerBodySpaces = [FORMER_INBOX_BODY_SPACE];
  readonly deadLetterLog = INBOX_DEAD_LETTER;
  readonly backoff: Backoff;
  readonly workers: number;
  /** Workers one kind may hold: a quarter (at least one), CONVENTIONS.md#webhook-handlers. */
  readonly perGroup: number;
  readonly releaseWhileRecording = 'room';
  readonly forgetOnRestart = ['lastError'];
  /**
   * The calls still running, in the order they started: every call has the same timeout, so that is
   * also the order of their deadlines, and one timer, set for the earliest, times them all out
   * (`timeOutDue`) instead of a timer set and cancelled per call.
   */
  private readonly calls = new Set<RunningCall>();
  private timer: Timer | undefined;
  /** The signal that stops every call still running (`watch`). */
  private watched: AbortSignal | undefined;
  /** Where a failed run is said, one line each, bounded (CONVENTIONS.md#webhook-handlers). */
  private readonly failureLog: Logger;
  private readonly processedTimes = new TimeTexts();

  constructor(
    private readonly options: InboxOptions,
    private readonly handlers: ReadonlyMap<string, WebhookHandler>,
  ) {
    this.backoff = withSchedule(INBOX_BACKOFF, options.config.retry);
    this.workers = options.config.workers;
    this.perGroup = Math.max(1, Math.floor(options.config.workers / KIND_SHARE));
    this.failureLog = limitedLogger(options.log, () => options.clock.now(), FAILURE_LINES_PER_SECOND);
  }

  /** Events are grouped by kind for the workers' shares. */
  groupOf(record: StoredRecord): string {
    return typeof record.doc['event'] === 'string' ? record.doc['event'] : '';
  }

  runnable(record: StoredRecord): boolean {
    return this.handlerFor(record) !== undefined;
  }

  async run(record: StoredRecord, body: string | undefined, attempt: number, stop: AbortSignal): Promise<RunOutcome> {
    const handler = this.handlerFor(record);
    // Parked until a handler for its kind is registered, rather than processed by nobody.
    if (handler === undefined) return { kind: 'park' };
    const ran = await this.call(handler, record, body, attempt, stop);
    if (ran === 'stopped') return { kind: 'stopped' };
    if (ran === 'done') return { kind: 'done', set: { processedAt: this.processedTimes.at(this.options.clock.now()) } };
    const said = { id: record.id, event: this.groupOf(record), attempt, error: ran.error };
    this.failureLog('warn', 'webhook handlers: a handler failed', said);
    return { kind: 'retry', set: {}, error: ran.error };
  }

  gaveUp(outcome: RetryOutcome): string {
    return outcome.error ?? 'the handler failed';
  }

  deadLetterHead(record: StoredRecord): JsonObject {
    const kind = record.doc['event'];
    const { source, eventId } = sourceOf(record);
    const event = typeof kind === 'string' ? kind : '';
    return { id: record.id, source, eventId, event, receivedAt: record.doc['receivedAt'] ?? null };
  }

  private handlerFor(record: StoredRecord): WebhookHandler | undefined {
    return handlerOf(this.handlers, typeof record.doc['event'] === 'string' ? record.doc['event'] : '');
  }

  /**
   * Calls the handler under its timeout: 'done', the failure, or 'stopped' when the server is shutting
   * down. One promise per call, settled by whichever comes first: the handler, its deadline
   * (`timeOutDue`), or the drain giving up (`watch`), rather than a race of three promises.
   */
  private call(
    handler: WebhookHandler,
    record: StoredRecord,
    body: string | undefined,
    attempt: number,
    shutdown: AbortSignal,
  ): Promise<CallResult> {
    let event: unknown;
    try {
      event = body === undefined ? undefined : JSON.parse(body);
    } catch {
      event = undefined;
    }
    if (!isJsonObject(event)) {
      return Promise.resolve({ error: 'the stored body of this event is missing or unreadable' });
    }
    // A drain that gave up before the call: the handler is not started, and the event stays due.
    if (shutdown.aborted) return Promise.resolve('stopped');
    const { clock, config } = this.options;
    const timeoutMs = config.handlerTimeoutMs;
    const signal: CallSignal = { controller: undefined, timedOut: false, shutdown };
    // The item as the run took it holds them; one stored before, its body record as it is now.
    const kept = record.doc['headers'] ?? this.options.store.get(INBOX_BODY_SPACE, record.id)?.doc['headers'];
    const receivedAt = typeof record.doc['receivedAt'] === 'string' ? record.doc['receivedAt'] : '';
    const { source, eventId } = sourceOf(record);
    const kind = typeof record.doc['event'] === 'string' ? record.doc['event'] : '';
    const context = new CallContext(attempt, receivedAt, eventId, kind, source, kept, signal);
    this.watch(shutdown);
    return new Promise<CallResult>((resolve) => {
      const running: RunningCall = {
        deadline: clock.monotonic() + timeoutMs,
        stop: () => {
          signal.controller?.abort();
          finish('stopped');
        },
        timeOut: () => {
          signal.timedOut = true;
          signal.controller?.abort();
          finish({ error: `the handler did not finish within ${timeoutMs} ms` });
        },
      };
      const finish = (result: CallResult): void => {
        if (this.calls.delete(running)) resolve(result);
      };
      this.calls.add(running);
      this.timer ??= clock.setTimer(timeoutMs, () => this.timeOutDue());
      // Called at once, not a turn later: the call is set up, and one promise less per event. A
      // handler that returns no promise is done now; one that does, once it settles (a thenable is
      // adopted by Promise.resolve, so a `then` that throws is a failure, never a rejection here).
      let returned: unknown;
      try {
        returned = handler(event as JsonObject, context);
        if (!isThenable(returned)) {
          finish('done');
          return;
        }
      } catch (error) {
        finish({ error: errorText(error) });
        return;
      }
      Promise.resolve(returned).then(
        () => finish('done'),
        (error: unknown) => finish(shutdown.aborted ? 'stopped' : { error: errorText(error) }),
      );
    });
  }

  /**
   * The timer's turn: the calls whose deadline has come time out, and the timer is set again for the
   * earliest of the rest (a call that ended left its deadline behind: the timer then finds nothing due).
   */
  private timeOutDue(): void {
    this.timer = undefined;
    const { clock } = this.options;
    const now = clock.monotonic();
    for (const running of this.calls) {
      if (running.deadline > now) {
        this.timer = clock.setTimer(running.deadline - now, () => this.timeOutDue());
        return;
      }
      running.timeOut();
    }
  }

  close(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }

  /** Calls still running are stopped when `shutdown` aborts: one listener for the queue, not one per call. */
  private watch(shutdown: AbortSignal): void {
    if (this.watched === shutdown) return;
    this.watched = shutdown;
    shutdown.addEventListener('abort', () => {
      for (const running of [...this.calls]) running.stop();
    }, { once: true });
  }
}

/** The AbortSignal of one call: made only if its handler asks (`CallContext.signal`). */
interface CallSignal {
  controller: AbortController | undefined;
  timedOut: boolean;
  readonly shutdown: AbortSignal;
}

/**
 * A handler's `ctx` (CONVENTIONS.md#webhook-handlers). A class rather than an object literal with
 * getters: a literal makes its getters afresh for every call, a third of the call's own time
 * (measured), a class once. `headers` and `signal` are made only when the handler reads them (most
 * never do: one AbortController per event is a measurable share of the receiver's work), so they are
 * read by name; what the call keeps for them is private.
 */
class CallContext implements HandlerContext {
  readonly #kept: unknown;
  readonly #signal: CallSignal;
  #headers: Readonly<Record<string, string>> | undefined;

  constructor(
    readonly attempt: number,
    readonly receivedAt: string,
    readonly id: string,
    readonly kind: string,
    readonly source: string,
    kept: unknown,
    signal: CallSignal,
  ) {
    this.#kept = kept;
    this.#signal = signal;
  }

  /** Copied from the stored fields on first read. */
  get headers(): Readonly<Record<string, string>> {
    this.#headers ??= providerFields(this.#kept);
    return this.#headers;
  }

  get signal(): AbortSignal {
    const call = this.#signal;
    call.controller ??= new AbortController();
    if (call.timedOut || call.shutdown.aborted) call.controller.abort();
    return call.controller.signal;
  }
}

/** A handler call still running: when it times out, and how it is ended either way. */
interface RunningCall {
  /** `clock.monotonic()` when it times out. */
  readonly deadline: number;
  readonly stop: () => void;
  readonly timeOut: () => void;
}

/** The handler of `kind`, else the `*` handler (CONVENTIONS.md#webhook-handlers). */
function handlerOf(handlers: ReadonlyMap<string, WebhookHandler>, kind: string): WebhookHandler | undefined {
  return handlers.get(kind) ?? handlers.get('*');
}

/** Does `value` have a `then` method (a promise, or any thenable an async handler may return)? */
function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

/** The provider's header fields kept with the event's body (none for an event stored before they were). */
function providerFields(kept: unknown): Readonly<Record<string, string>> {
  if (!isJsonObject(kept)) return Object.freeze({});
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(kept)) {
    if (typeof value === 'string') Object.defineProperty(headers, name, { value, enumerable: true });
  }
  return Object.freeze(headers);
}

/** The id of the inbox item of an event: the event id for the default source, `<source>:<eventId>` otherwise. */
export function inboxItemId(source: string, eventId: string): string {
  return source === DEFAULT_SOURCE ? eventId : `${source}:${eventId}`;
}

/** The source and event id of an item; one stored without them is the default source's, its id the event id. */
export function sourceOf(record: StoredRecord): { source: string; eventId: string } {
  const { source, eventId } = record.doc;
  if (typeof source === 'string' && typeof eventId === 'string') return { source, eventId };
  return { source: DEFAULT_SOURCE, eventId: record.id };
}

/** A record's fields other than its document (the document of a record may be read lazily). */
function readableRecord(record: StoredRecord): Omit<StoredRecord, 'doc'> {
  const { collection, id, version, modifiedAt, expiresAt, dueAt } = record;
  return {
    collection, id, version, modifiedAt,
    ...(expiresAt === undefined ? {} : { expiresAt }),
    ...(dueAt === undefined ? {} : { dueAt }),
  };
}

/** What a handler's failure says, kept short: a stack trace does not belong in an API response. */
function errorText(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : `thrown: ${String(error)}`;
  return text.length > MAX_ERROR_TEXT ? `${text.slice(0, MAX_ERROR_TEXT)}…` : text;
}
