// A worker pool over the store's due-time index (lib/store/types.ts `due`, `nextDue`): the engine of
// the job queue (lib/jobs/queue.ts) behind the webhook receiver's handlers (CONVENTIONS.md#webhook-handlers)
// and the sender's deliveries (CONVENTIONS.md#deliveries). A record is a job while its `dueAt` is set;
// `work` runs it and writes its next state (done: no dueAt; retry later: a later dueAt; dead), so every
// state a job passes through is in the store, and a restart resumes exactly the jobs that were due.
//
// At most `workers` jobs work at once, and at most `perGroup` of one group (a subscription), so one
// slow group cannot take every worker. A job whose work is done (a delivery answered) may release its
// worker while its next state is being written (lib/jobs/outcomes.ts): the worker takes the next job
// meanwhile, so the outcomes of many jobs share one commit; the job is not taken again until it ends.
//
// The runner is in one of four states:
//   stopped  not started, or draining: no job starts. A drain waits for the running jobs up to its
//            timeout, then tells the rest to stop (their AbortSignal) and leaves them due for the next
//            start.
//   open     the next look is a full one: the due index is read and free workers take what they may.
//            Every worker is busy, or no look has been taken yet; a worker set free asks for a look.
//   blocked  the last full look left workers free and no job they could take (every due job within
//            reach was running, or its group full). Until a worker is set free or the timer for the
//            earliest later job fires, only a job that a commit brings can change that, so a commit
//            asks for a look at its own arrivals only, not at the whole index.
//   capped   released jobs still writing their outcomes reached RELEASED_PER_WORKER per worker (a slow
//            store): no job starts until one of them ends, which asks for a full look.
// A look is asked for by `wake` and taken once the turn's commits are all in (one microtask): a group
// commit applies many batches at once, and one look serves them all.
import type { Clock, Timer } from '../clock.js';
import type { Component } from '../lifecycle.js';
import type { Logger } from '../log.js';
import type { Store, StoredRecord } from '../store/types.js';

export interface JobRunnerOptions {
  readonly name: string;
  readonly store: Store;
  readonly clock: Clock;
  /** The store space whose due records are the jobs. */
  readonly space: string;
  readonly workers: number;
  /**
   * Runs one job to its next state and writes that state. Must not reject; `signal` aborts at
   * shutdown. `release` frees the job's worker (and its room in its group) before the job resolves,
   * once only the writing of its next state is left.
   */
  readonly work: (record: StoredRecord, signal: AbortSignal, release: () => void) => Promise<void>;
  /** The group a job belongs to, and how many of one group may run at once. */
  readonly groupOf?: (record: StoredRecord) => string;
  readonly perGroup?: number;
  /** How long a drain waits for running jobs. */
  readonly drainTimeoutMs: number;
  readonly log: Logger;
}

export type RunnerState = 'stopped' | 'open' | 'blocked' | 'capped';
type Look = 'none' | 'arrivals' | 'full';

interface Running {
  readonly group: string;
  /** Holds a worker: not yet released. */
  working: boolean;
  done: Promise<void>;
}

/** Extra due records read beyond the free workers, so jobs of a busy group cannot hide the others. */
const LOOKAHEAD = 64;
/**
 * Released jobs whose next state is still being written, per worker, beyond which no new job starts:
 * enough for a commit's worth of outcomes at loopback speed, and a bound when the store is slow.
 */
export const RELEASED_PER_WORKER = 8;

export class JobRunner implements Component {
  readonly name: string;
  private readonly running = new Map<string, Running>();
  /** Running jobs that hold a worker. */
  private working = 0;
  private state: RunnerState = 'stopped';
  /** The look asked for and not yet taken. */
  private look: Look = 'none';
  /** Jobs the turn's commits brought while `blocked`: all an arrivals look considers. */
  private arrivals: StoredRecord[] = [];
  private timer: Timer | undefined;
  private timerAt = Number.POSITIVE_INFINITY;
  private unwatch: (() => void) | undefined;
  /** Extra due records to read when groups may make some wait (see LOOKAHEAD). */
  private readonly lookahead: number;
  /** One signal for every job: it aborts when a drain gives up waiting (cheaper than one per job). */
  private readonly stopping = new AbortController();

  constructor(private readonly options: JobRunnerOptions) {
    if (!Number.isInteger(options.workers) || options.workers < 1) {
      throw new TypeError(`${options.name}: workers must be a positive integer`);
    }
    this.name = options.name;
    this.lookahead = options.groupOf === undefined ? 0 : LOOKAHEAD;
  }

  /** Jobs running now. */
  get active(): number {
    return this.running.size;
  }

  /** The state the last look left (see the header), for tests and the log. */
  get status(): RunnerState {
    return this.state;
  }

  async start(): Promise<void> {
    this.state = 'open';
    this.unwatch = this.options.store.watch((commit) => {
      let touched = false;
      for (const applied of commit.applied) {
        if (applied.mutation.collection !== this.options.space) continue;
        touched = true;
        if (this.state === 'blocked' && applied.record?.dueAt !== undefined) this.arrivals.push(applied.record);
      }
      if (touched) this.wake(this.state === 'blocked' ? 'arrivals' : 'full');
    });
    this.wake();
  }

  /** Asks for a look at the end of this turn: a full one, or (while `blocked`) one at arrivals only. */
  wake(look: 'full' | 'arrivals' = 'full'): void {
    if (this.state === 'stopped') return;
    if (this.look !== 'none') {
      if (look === 'full') this.look = 'full';
      return;
    }
    this.look = look;
    queueMicrotask(() => {
      const asked = this.look;
      const arrivals = this.arrivals;
      this.look = 'none';
      this.arrivals = [];
      if (asked === 'full' || this.state !== 'blocked') this.fill();
      else this.admit(arrivals);
    });
  }

  /** A full look: free workers take the earliest due jobs they may. */
  private fill(): void {
    if (this.state === 'stopped') return;
    const { store, space, clock, workers } = this.options;
    if (this.running.size - this.working >= workers * RELEASED_PER_WORKER) {
      this.state = 'capped';
      return;
    }
    const free = workers - this.working;
    this.state = 'open';
    if (free <= 0) return;
    const now = clock.now();
    let started = 0;
    for (const record of store.due(space, now, this.running.size + free + this.lookahead)) {
      if (started === free) break;
      if (this.running.has(record.id) || !this.groupHasRoom(record)) continue;
      this.begin(record);
      started++;
    }
    if (started < free) {
      this.state = 'blocked';
      // Workers left idle: make sure the next job to come due wakes the runner.
      this.schedule();
    }
  }

  /** An arrivals look (`blocked`): the jobs just committed start if due and free to, while workers are free. */
  private admit(arrivals: readonly StoredRecord[]): void {
    const { store, space, clock, workers } = this.options;
    const now = clock.now();
    for (const record of arrivals) {
      if (this.working >= workers) break;
      // A later commit of the same turn may have changed it again: only its latest state counts.
      if (store.get(space, record.id) !== record || record.dueAt === undefined) continue;
      if (record.dueAt > now) this.timerFor(record.dueAt, now);
      else if (!this.running.has(record.id) && this.groupHasRoom(record)) this.begin(record);
    }
    // No worker left: the next look is a full one.
    if (this.working >= workers) this.state = 'open';
  }

  async drain(): Promise<void> {
    this.state = 'stopped';
    this.cancelTimer();
    if (this.running.size === 0) return;
    let timedOut = false;
    let deadlineTimer: Timer | undefined;
    const deadline = new Promise<void>((resolve) => {
      deadlineTimer = this.options.clock.setTimer(this.options.drainTimeoutMs, () => {
        timedOut = true;
        resolve();
      });
    });
    await Promise.race([Promise.all([...this.running.values()].map((job) => job.done)), deadline]);
    deadlineTimer?.cancel();
    if (timedOut) {
      const running = this.running.size;
      const message = `${this.name}: jobs still running at the drain timeout are stopped and stay due`;
      this.options.log('warn', message, { running });
      this.stopping.abort();
    }
  }

  async close(): Promise<void> {
    this.state = 'stopped';
    this.cancelTimer();
    this.unwatch?.();
    this.unwatch = undefined;
  }

  private begin(record: StoredRecord): void {
    const job: Running = { group: this.options.groupOf?.(record) ?? '', working: true, done: Promise.resolve() };
    this.working++;
    const release = (): void => {
      if (!job.working) return;
      job.working = false;
      this.working--;
      this.wake();
    };
    this.running.set(record.id, job);
    job.done = this.options
      .work(record, this.stopping.signal, release)
      .catch((error: unknown) => {
        // `work` writes every outcome itself; reaching here is a bug in it, and the job stays due.
        const message = error instanceof Error ? error.message : String(error);
        this.options.log('error', `${this.name}: a job failed unexpectedly`, { id: record.id, error: message });
      })
      .finally(() => {
        const held = job.working;
        release();
        this.running.delete(record.id);
        // Releasing woke the runner already; a job released earlier needs a look only if its record
        // is still due (stopped, or its outcome lost) or if the bound on released jobs was reached.
        if (!held && (this.state === 'capped' || this.stillDue(record.id))) this.wake();
      });
  }

  private groupHasRoom(record: StoredRecord): boolean {
    const { groupOf, perGroup } = this.options;
    if (groupOf === undefined || perGroup === undefined) return true;
    const group = groupOf(record);
    let count = 0;
    for (const job of this.running.values()) if (job.working && job.group === group) count++;
    return count < perGroup;
  }

  /**
   * A timer for the earliest dueAt still to come. Jobs already due are running, or waiting for a
   * worker or for room in their group; a finishing job wakes the runner for those.
   */
  private schedule(): void {
    if (this.state === 'stopped') return;
    const { store, space, clock } = this.options;
    const now = clock.now();
    let next: number | undefined;
    for (const record of store.due(space, Number.MAX_SAFE_INTEGER, this.running.size + 1 + this.lookahead)) {
      if (this.running.has(record.id) || record.dueAt === undefined || record.dueAt <= now) continue;
      next = record.dueAt;
      break;
    }
    if (next !== undefined) this.timerFor(next, now);
  }

  private stillDue(id: string): boolean {
    const dueAt = this.options.store.get(this.options.space, id)?.dueAt;
    return dueAt !== undefined && dueAt <= this.options.clock.now();
  }

  /** A timer for `at`, unless one is set for that time or earlier. */
  private timerFor(at: number, now: number): void {
    if (this.timer !== undefined && this.timerAt <= at) return;
    this.cancelTimer();
    this.timerAt = at;
    this.timer = this.options.clock.setTimer(at - now, () => {
      this.timer = undefined;
      this.timerAt = Number.POSITIVE_INFINITY;
      this.wake();
    });
  }

  private cancelTimer(): void {
    this.timer?.cancel();
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
  }
}
