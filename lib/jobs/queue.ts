// The one durable job queue: what the webhook inbox (CONVENTIONS.md#inbox) and the sender's outbox
// (CONVENTIONS.md#outbox) share. A job is its item in `space` (what /$inbox or /$outbox lists: status,
// attempts, times, last error) and its exact bytes, kept where the policy says (policy.ts): in members
// of the item no reader sees (`itemBodies`: one record, one put per job), in a record of `bodySpace`,
// or shared by several jobs (`sharedBodies`). A status change is a patch, which journals only what
// changes, never the body; a finished job drops its body while its item stays listed. The item is
// due (lib/store/types.ts `dueAt`) while the job waits to run; the runner (runner.ts) takes due jobs,
// and each run's next state is written in shared batches (outcomes.ts):
//   done    the item says so (`words.done`), its body is dropped in the same write;
//   retry   `failed`, due again after the policy's backoff (lib/retry.ts) or a Retry-After clamped to
//           its cap; once the attempts are spent, dead (CONVENTIONS.md#retry-schedules);
//   dead    first a line in the dead-letter side log (`dead-letter.jsonl`, `outbox-dead-letter.jsonl`),
//           then `dead` in the item, so whoever sees `dead` finds its line (a crash in between costs a
//           second run and a second line, never a dead job without one);
//   park    not due until the policy can run it (`resume`: a handler registered for its kind, a
//           subscription active again), keeping its status, without a next attempt;
//   stopped a drain stopped it: it stays due and the next start runs it again.
// A policy (policy.ts; lib/webhooks/inbox.ts, outbox.ts) says what one run is, how its outcome is
// classified, and which words a user sees. `$retry` (`requeue`) takes only a `failed` or `dead` job,
// never one that runs (CONVENTIONS.md#inbox-retries-and-dead-letters), and is one bounded
// compare-and-swap (lib/compare-and-swap.ts): a job that keeps changing under it answers
// `unavailable` (a 503 with Retry-After) instead of trying for ever. `$recover` (`requeueWindow`,
// CONVENTIONS.md#recovering-after-an-outage) does the same for every failed or dead job of a time
// window, at most WINDOW_LIMIT of them, earliest first, in atomic batches: each due at its own time,
// so the runner takes them in their original order.
//
// The queue is a lifecycle component, and nothing it owns writes outside start() … drain(): bodies
// kept under a former name move at start, parked jobs are resumed from start on, and a drain waits
// for the outcomes being written.
import { nextTurn, type Clock, type Random } from '../clock.js';
import { compareAndSwap, type CasStep } from '../compare-and-swap.js';
import type { JsonObject } from '../json.js';
import type { Component } from '../lifecycle.js';
import { limitedLogger, type Logger } from '../log.js';
import { mayRetry, retryDelay } from '../retry.js';
import type { Mutation, Store, StoredRecord } from '../store/types.js';
import type { Writer } from '../writes/writer.js';
import { OutcomeWriter } from './outcomes.js';
import { RUNNING } from './policy.js';
import type { DeadOutcome, JobPolicy, JobSpaces, Requeue, RetryOutcome } from './policy.js';
import { JobRunner } from './runner.js';
import { StatusCounts } from './status-counts.js';

export interface JobQueueOptions {
  readonly store: Store;
  readonly writer: Writer;
  readonly clock: Clock;
  readonly random: Random;
  readonly log: Logger;
  readonly drainTimeoutMs: number;
}

/** The statuses a `$retry` queues again; the rest are the policy's words (policy.ts JobWords). */
const FAILED = 'failed';
const DEAD = 'dead';
/** Jobs one `requeueWindow` queues again at most, the earliest of its window; a repeat takes the next. */
export const WINDOW_LIMIT = 10_000;
/** Jobs queued again per atomic write of a `requeueWindow`. */
export const WINDOW_BATCH = 500;
/** Items read per look while a `requeueWindow` searches its window; other work runs between looks. */
const WINDOW_SCAN = 1000;
/** Bodies moved from a former space per batch, at most (and a budget of their characters). */
const MOVE_RECORDS = 1000;
const MOVE_CHARACTERS = 8 * 1024 * 1024;
/** What an outcome removes from the job's item: a done one its next attempt and last error, and so on. */
const DONE_UNSET = ['nextAttemptAt', 'lastError'];
const PARK_UNSET = ['nextAttemptAt'];
const RETRY_UNSET = ['lastError'];
/** Log lines a second, at most, saying a job is dead: a flood of them is counted, not written (log.ts). */
const DEAD_LINES_PER_SECOND = 10;

/**
 * The mutation that adds a job's item alone, due at `dueAt`, or parked from the start when it is
 * undefined (a job the policy cannot run yet: see `park` above): its body shared, or in the item
 * (policy.ts).
 */
export function jobItem(
  spaces: JobSpaces,
  id: string,
  item: JsonObject,
  dueAt: number | undefined,
  expiresAt: number,
): Mutation {
  // Two literals rather than a spread: every delivery and every event is made here.
  const { space } = spaces;
  return dueAt === undefined
    ? { kind: 'put', collection: space, id, doc: item, expect: { absent: true }, expiresAt }
    : { kind: 'put', collection: space, id, doc: item, expect: { absent: true }, expiresAt, dueAt };
}

/** The jobs a `requeueWindow` takes: failed or dead, their time within [since, until], chosen by `where`. */
export interface JobWindow {
  /** The item's member that holds the job's time, an RFC 3339 text: `createdAt`, `receivedAt`. */
  readonly field: string;
  /** Milliseconds since the epoch, both bounds included. */
  readonly since: number;
  readonly until: number;
  /** Which of them: one subscription's deliveries, one source's events. */
  readonly where: (doc: JsonObject) => boolean;
}

/**
 * What `requeueWindow` came to: how many jobs it queued again, and how many of the window's it left
 * for a repeat (past WINDOW_LIMIT); `unavailable` (a 503) when the store could not write a batch or
 * its jobs kept changing, the batches before it being written all the same.
 */
export type WindowRequeue =
  | { readonly result: 'queued'; readonly requeued: number; readonly remaining: number }
  | { readonly result: 'unavailable'; readonly requeued: number };

/** A job a window takes: its id and its time, which orders it. */
interface WindowJob {
  readonly id: string;
  readonly at: number;
}

export class JobQueue implements Component {
  readonly name: string;
  private readonly runner: JobRunner;
  private readonly outcomes: OutcomeWriter;
  private readonly statuses: StatusCounts;
  /** Where a dead job is said: one line each (CONVENTIONS.md#metrics), bounded. */
  private readonly deadLog: Logger;
  private running = false;
  /** What a done outcome unsets from the item, when held: DONE_UNSET, and a body kept in the item. */
  private readonly doneUnset: readonly string[];

  constructor(
    private readonly policy: JobPolicy,
    private readonly options: JobQueueOptions,
  ) {
    this.name = policy.words.name;
    const inItem = policy.itemBodies;
    this.doneUnset = inItem === undefined ? DONE_UNSET : [...DONE_UNSET, inItem.text, ...inItem.beside];
    this.outcomes = new OutcomeWriter(this.name, options.writer, options.clock, options.log);
    this.statuses = new StatusCounts(options.store, policy.spaces.space);
    this.deadLog = limitedLogger(options.log, () => options.clock.now(), DEAD_LINES_PER_SECOND);
    this.runner = new JobRunner({
      name: this.name,
      store: options.store,
      clock: options.clock,
      space: policy.spaces.space,
      workers: policy.workers,
      ...(policy.groupOf === undefined ? {} : { groupOf: policy.groupOf.bind(policy) }),
      ...(policy.perGroup === undefined ? {} : { perGroup: policy.perGroup }),
      ...(policy.spacingMs === undefined ? {} : { spacingMs: policy.spacingMs.bind(policy) }),
      keepWorkers: policy.releaseWhileRecording === 'room',
      work: (record, signal, release) => this.runOnce(record, signal, release),
      drainTimeoutMs: options.drainTimeoutMs,
      log: options.log,
    });
  }

  async start(): Promise<void> {
    await this.moveFormerBodies();
    this.running = true;
    await this.resumeParked();
    await this.runner.start();
  }

  async drain(): Promise<void> {
    this.running = false;
    await this.runner.drain();
    // Jobs stopped at the drain timeout write nothing; outcomes already handed over are written now.
    await this.outcomes.idle();
  }

  async close(): Promise<void> {
    this.running = false;
    await this.runner.close();
    this.statuses.close();
    this.policy.close?.();
  }

  /** How many jobs hold each of `statuses` now (/$metrics), kept as the store commits (status-counts.ts). */
  countByStatus(statuses: readonly string[]): Promise<{ status: string; count: number }[]> {
    return this.statuses.read(statuses);
  }

  /** Parked jobs the policy can run now become due (a handler was registered); from start on only. */
  resume(): void {
    if (this.running) void this.resumeParked();
  }

  /**
   * `$retry`: queues again a job that waits for its next attempt (`failed`: it runs now) or is `dead`
   * (from its first attempt). Anything else is refused with what it is: waiting for its first run,
   * done, or running now, so a job in flight never starts twice. The runner holds the job while its
   * new state is written: no start slips in between the check and the write.
   */
  requeue(id: string): Promise<Requeue> {
    const { store, clock, writer } = this.options;
    const { space } = this.policy.spaces;
    const decide = async (): Promise<CasStep<Requeue>> => {
      const record = store.get(space, id);
      if (record === undefined) return { done: { result: 'missing' } };
      if (this.runner.isRunning(id)) return { done: { result: 'refused', status: RUNNING } };
      const status = record.doc['status'];
      if (status !== FAILED && status !== DEAD) return { done: { result: 'refused', status: String(status) } };
      const unhold = this.runner.hold(id);
      // Another `$retry` of it is being written: decide again once it is.
      if (unhold === undefined) return { conflict: true };
      try {
        const restart = status === DEAD;
        const written = await writer.write([
          {
            kind: 'patch',
            collection: space,
            id,
            set: restart ? { status: this.policy.words.waiting, attempts: 0 } : {},
            unset: restart ? [...this.policy.forgetOnRestart, 'nextAttemptAt'] : ['nextAttemptAt'],
            dueAt: clock.now(),
            expect: { version: record.version },
          },
        ]);
        if (written.ok) return { done: { result: 'queued', record: written.records[0] as StoredRecord } };
        return written.reason === 'conflict' ? { conflict: true } : { done: { result: 'unavailable' } };
      } finally {
        unhold();
      }
    };
    return compareAndSwap(this.options, decide, () => ({ result: 'unavailable' }));
  }

  /**
   * `$recover`: queues again the failed and dead jobs of a window, each from its first attempt (as a
   * `$retry` of a dead one), at most WINDOW_LIMIT, earliest first. Each is due at its own time
   * (never later than now), ties broken by id (lib/store/time-heap.ts), so the runner takes them in
   * the order they first came, before anything that came after them. Written in atomic batches of
   * WINDOW_BATCH in that order: a crash leaves a batch whole or not written, the jobs queued again
   * are the earliest ones, and a repeat takes the rest (what it finds queued is no longer failed or
   * dead). A running job is left to its attempt, and the jobs of a batch are held while it is written,
   * so none starts twice.
   */
  async requeueWindow(window: JobWindow): Promise<WindowRequeue> {
    const { jobs, found } = await this.jobsIn(window);
    let requeued = 0;
    for (let start = 0; start < jobs.length; start += WINDOW_BATCH) {
      const written = await this.requeueBatch(jobs.slice(start, start + WINDOW_BATCH), window);
      if (written === 'unavailable') return { result: 'unavailable', requeued };
      requeued += written;
    }
    return { result: 'queued', requeued, remaining: found - jobs.length };
  }

  /** One run of one job, then its next state. */
  private async runOnce(record: StoredRecord, signal: AbortSignal, release: () => void): Promise<void> {
    const attempt = Number(record.doc['attempts'] ?? 0) + 1;
    const outcome = await this.policy.run(record, this.bodyOf(record), attempt, signal);
    const recordFirst = 'recordFirst' in outcome && outcome.recordFirst === true;
    if (!recordFirst) release();
    const now = this.options.clock.now();
    switch (outcome.kind) {
      case 'stopped':
        return;
      case 'park':
        await this.outcomes.write([this.patchOf(record, {}, held(record, PARK_UNSET), null)]);
        return;
      case 'done': {
        // The policy's fields after these two, in their order, assigned rather than spread (one object).
        const set: JsonObject = Object.assign({ status: this.policy.words.done, attempts: attempt }, outcome.set);
        const shared = this.policy.sharedBodies;
        // A body in the item goes with the members the done unsets; one in its own record, with it.
        const done = this.patchOf(record, set, held(record, this.doneUnset), null);
        const { id } = record;
        const changes: Mutation[] = [done];
        const { bodySpace } = this.policy.spaces;
        if (shared !== undefined) for (const drop of shared.dropWithDone(record)) changes.push(drop);
        else if (this.itemBody(record) === undefined) changes.push({ kind: 'delete', collection: bodySpace, id });
        const dropsBody = changes.length > 1;
        if (outcome.also !== undefined) for (const change of outcome.also) changes.push(change);
        await this.outcomes.write(changes);
        if (!dropsBody) await shared?.release(record);
        return;
      }
      case 'retry': {
        if (mayRetry(this.policy.backoff, attempt)) {
          await this.retryLater(record, attempt, now, outcome);
          return;
        }
        const error = this.policy.gaveUp(outcome, attempt);
        const also = outcome.also ?? [];
        await this.bury(record, attempt, now, { kind: 'dead', set: outcome.set, error, also });
        return;
      }
      case 'dead':
        await this.bury(record, attempt, now, outcome);
        return;
    }
  }

  /** `failed`, due after the backoff, or after a Retry-After clamped to the schedule's cap. */
  private async retryLater(record: StoredRecord, attempt: number, now: number, outcome: RetryOutcome): Promise<void> {
    const { backoff } = this.policy;
    const { retryAfterMs } = outcome;
    const wait =
      retryAfterMs === undefined
        ? retryDelay(backoff, attempt, this.options.random)
        : Math.min(retryAfterMs, backoff.schedule.capMs);
    const next = now + wait;
    const nextAttemptAt = new Date(next).toISOString();
    const set: JsonObject = { status: FAILED, attempts: attempt, ...outcome.set, nextAttemptAt };
    if (outcome.error !== undefined) set['lastError'] = outcome.error;
    const unset = outcome.error === undefined ? held(record, RETRY_UNSET) : undefined;
    await this.outcomes.write([this.patchOf(record, set, unset, next), ...(outcome.also ?? [])]);
  }

  /** The dead-letter line first, then `dead`: whoever sees the status finds its line. */
  private async bury(record: StoredRecord, attempt: number, now: number, outcome: DeadOutcome): Promise<void> {
    const { words, deadLetterLog } = this.policy;
    const line: JsonObject = {
      ...this.policy.deadLetterHead(record),
      deadAt: new Date(now).toISOString(),
      attempts: attempt,
      ...outcome.set,
      lastError: outcome.error,
      body: this.bodyOf(record) ?? null,
    };
    const logged = await this.options.store.appendSideLog(deadLetterLog, line);
    if (!logged.ok) {
      const message = `cannot write the ${deadLetterLog} line; the ${words.job} is dead in ${words.path} all the same`;
      this.options.log('error', message, { id: record.id, detail: logged.detail });
    }
    // And one log line, with its ids and why (never its body), like the dead-letter line.
    const said: JsonObject = { ...this.policy.deadLetterHead(record), attempts: attempt, lastError: outcome.error };
    this.deadLog('error', `${this.name}: the ${words.job} is dead`, said);
    const set: JsonObject = { status: DEAD, attempts: attempt, ...outcome.set, lastError: outcome.error };
    const dead = this.patchOf(record, set, held(record, PARK_UNSET), null);
    await this.outcomes.write([dead, ...(outcome.also ?? [])]);
  }

  /**
   * A change of the job's item that expects the version the run saw: a `$retry` meanwhile wins. Made
   * member by member: a spread followed by new members takes V8's slow path (~0.5 µs each, measured),
   * and this is written once per run.
   */
  private patchOf(record: StoredRecord, set: JsonObject, unset: string[] | undefined, dueAt: number | null): Mutation {
    const { space } = this.policy.spaces;
    return { kind: 'patch', collection: space, id: record.id, set, unset, dueAt, expect: { version: record.version } };
  }

  /** The job's body where the policy keeps it (policy.ts), else in its record of `bodySpace`. */
  private bodyOf(record: StoredRecord): string | undefined {
    if (this.policy.sharedBodies !== undefined) return this.policy.sharedBodies.bodyOf(record);
    const body = this.itemBody(record) ?? this.options.store.get(this.policy.spaces.bodySpace, record.id)?.doc['body'];
    return typeof body === 'string' ? body : undefined;
  }

  /** The body the job's item holds, when the policy keeps bodies there and this one was stored so. */
  private itemBody(record: StoredRecord): string | undefined {
    const inItem = this.policy.itemBodies;
    const text = inItem === undefined ? undefined : record.doc[inItem.text];
    return typeof text === 'string' ? text : undefined;
  }

  /**
   * The earliest WINDOW_LIMIT jobs of the window by (time, id), and how many it holds in all. The
   * space is read a page at a time, other work running between pages, and the earliest are kept as
   * they come (sorted and cut whenever twice the limit is reached), so memory stays bounded.
   */
  private async jobsIn(window: JobWindow): Promise<{ jobs: WindowJob[]; found: number }> {
    const { store } = this.options;
    const { space } = this.policy.spaces;
    let jobs: WindowJob[] = [];
    let found = 0;
    let after: string | undefined;
    for (;;) {
      const page = store.scan(space, { limit: WINDOW_SCAN, ...(after === undefined ? {} : { after }) });
      for (const record of page) {
        const at = timeInWindow(record, window);
        if (at === undefined) continue;
        found++;
        jobs.push({ id: record.id, at });
        if (jobs.length >= 2 * WINDOW_LIMIT) jobs = earliest(jobs);
      }
      if (page.length < WINDOW_SCAN) break;
      after = (page[page.length - 1] as StoredRecord).id;
      await nextTurn();
    }
    return { jobs: earliest(jobs), found };
  }

  /** One batch of a window, one atomic write; the jobs that are no longer failed or dead are left out. */
  private requeueBatch(batch: readonly WindowJob[], window: JobWindow): Promise<number | 'unavailable'> {
    const { store, clock, writer } = this.options;
    const { space } = this.policy.spaces;
    const decide = async (): Promise<CasStep<number | 'unavailable'>> => {
      const now = clock.now();
      const changes: Mutation[] = [];
      const unholds: (() => void)[] = [];
      try {
        for (const job of batch) {
          const record = store.get(space, job.id);
          // Queued or done meanwhile (by a `$retry`, another recover, its run) or gone: not ours.
          if (record === undefined || timeInWindow(record, window) === undefined) continue;
          // Running (its attempt is the send), or held by a `$retry` that queues it: left to them.
          const unhold = this.runner.hold(job.id);
          if (unhold === undefined) continue;
          unholds.push(unhold);
          changes.push({
            kind: 'patch',
            collection: space,
            id: job.id,
            set: { status: this.policy.words.waiting, attempts: 0 },
            unset: [...this.policy.forgetOnRestart, 'nextAttemptAt'],
            dueAt: Math.min(job.at, now),
            expect: { version: record.version },
          });
        }
        if (changes.length === 0) return { done: 0 };
        const written = await writer.write(changes);
        if (written.ok) return { done: changes.length };
        return written.reason === 'conflict' ? { conflict: true } : { done: 'unavailable' };
      } finally {
        for (const unhold of unholds) unhold();
      }
    };
    return compareAndSwap(this.options, decide, () => 'unavailable');
  }

  /**
   * Parked jobs (waiting or failed, and not due: only a park leaves a failed job without a next
   * attempt) that the policy can run now, made due in one write, in the order of their ids (which
   * for deliveries is the order they were written): one write gives them all one version, so each
   * is due a millisecond after the one before it, the last one now, and the runner takes them in turn.
   */
  private async resumeParked(): Promise<void> {
    const runnable = this.policy.runnable?.bind(this.policy);
    if (runnable === undefined) return;
    const { store, writer, clock, log } = this.options;
    const { space } = this.policy.spaces;
    const { waiting, job } = this.policy.words;
    const decide = async (): Promise<CasStep<void>> => {
      const now = clock.now();
      const parked: StoredRecord[] = [];
      for (const record of store.scan(space)) {
        const status = record.doc['status'];
        if (record.dueAt !== undefined || (status !== waiting && status !== FAILED) || !runnable(record)) continue;
        parked.push(record);
      }
      if (parked.length === 0) return { done: undefined };
      const first = now - (parked.length - 1);
      const changes = parked.map((record, n) => this.patchOf(record, {}, undefined, first + n));
      const written = await writer.write(changes);
      if (!written.ok && written.reason === 'conflict') return { conflict: true };
      if (!written.ok) log('error', `${this.name}: cannot queue parked ${job}s`, { reason: written.reason });
      return { done: undefined };
    };
    const exhausted = (): void => log('error', `${this.name}: parked ${job}s kept changing; not queued`);
    await compareAndSwap(this.options, decide, exhausted);
  }

  /** Bodies kept under a former name of `bodySpace` move to it, in batches, each atomic. */
  private async moveFormerBodies(): Promise<void> {
    const { store, writer } = this.options;
    const { bodySpace } = this.policy.spaces;
    for (const former of this.policy.formerBodySpaces ?? []) {
      for (;;) {
        const moves: Mutation[] = [];
        let characters = 0;
        for (const record of store.scan(former, { limit: MOVE_RECORDS })) {
          const expiry = record.expiresAt === undefined ? {} : { expiresAt: record.expiresAt };
          moves.push({ kind: 'put', collection: bodySpace, id: record.id, doc: record.doc, ...expiry });
          moves.push({ kind: 'delete', collection: former, id: record.id });
          characters += String(record.doc['body'] ?? '').length;
          if (characters >= MOVE_CHARACTERS) break;
        }
        if (moves.length === 0) break;
        const written = await writer.write(moves);
        if (!written.ok) {
          throw new Error(`${this.name}: cannot move the bodies in ${former} to ${bodySpace} (${written.reason})`);
        }
      }
    }
  }
}

/**
 * Those of `fields` the job's item holds, or undefined when it holds none: an outcome names no field
 * it has nothing to remove from (most jobs end at their first attempt), so its journal frame stays small.
 */
function held(record: StoredRecord, fields: readonly string[]): string[] | undefined {
  let unset: string[] | undefined;
  for (const field of fields) if (record.doc[field] !== undefined) (unset ??= []).push(field);
  return unset;
}

/** The job's time when it is failed or dead and in the window; undefined otherwise. */
function timeInWindow(record: StoredRecord, window: JobWindow): number | undefined {
  const { doc } = record;
  if (doc['status'] !== FAILED && doc['status'] !== DEAD) return undefined;
  const text = doc[window.field];
  const at = typeof text === 'string' ? Date.parse(text) : Number.NaN;
  if (!(at >= window.since && at <= window.until) || !window.where(doc)) return undefined;
  return at;
}

/** The WINDOW_LIMIT earliest jobs by time, then id (the order the runner takes them in). */
function earliest(jobs: WindowJob[]): WindowJob[] {
  jobs.sort((a, b) => a.at - b.at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return jobs.length > WINDOW_LIMIT ? jobs.slice(0, WINDOW_LIMIT) : jobs;
}
