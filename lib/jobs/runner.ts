// A worker pool over the store's due-time index (lib/store/types.ts `due`, `nextDue`): the engine
// behind the webhook receiver's handlers (CONTRACT §7) and the sender's deliveries (§8). A record is a
// job while its `dueAt` is set; the job's `work` function runs it and writes the record's next state
// (done: no dueAt; retry later: a later dueAt; dead), so every state a job passes through is in the
// store, and a restart resumes exactly the jobs that were due (nothing is kept only in memory).
//
// The runner wakes when a commit touches its space (a new job), when the earliest dueAt comes (a
// timer on the injected clock), and when a worker frees up. At most `workers` jobs run at once, and
// at most `perGroup` of one group (a subscription), so one slow group cannot take every worker. As a
// lifecycle component it drains by taking no new jobs and waiting for the running ones up to the
// drain timeout; what is still running then is told to stop (its AbortSignal) and left due, so the
// next start runs it again.
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
  /** Runs one job to its next state and writes that state. Must not reject; `signal` aborts at shutdown. */
  readonly work: (record: StoredRecord, signal: AbortSignal) => Promise<void>;
  /** The group a job belongs to, and how many of one group may run at once. */
  readonly groupOf?: (record: StoredRecord) => string;
  readonly perGroup?: number;
  /** How long a drain waits for running jobs. */
  readonly drainTimeoutMs: number;
  readonly log: Logger;
}

interface Running {
  readonly group: string;
  readonly done: Promise<void>;
}

/** Extra due records read beyond the free workers, so jobs of a busy group cannot hide the others. */
const LOOKAHEAD = 64;

export class JobRunner implements Component {
  readonly name: string;
  private readonly running = new Map<string, Running>();
  private timer: Timer | undefined;
  private timerAt = Number.POSITIVE_INFINITY;
  private unwatch: (() => void) | undefined;
  private accepting = false;
  private wakePending = false;
  /** Extra due records to read when groups may make some wait (see LOOKAHEAD). */
  private readonly lookahead: number;
  /** One signal for every job: it aborts when a drain gives up waiting (cheaper than one per job). */
  private readonly stopping = new AbortController();

  constructor(private readonly options: JobRunnerOptions) {
    if (!Number.isInteger(options.workers) || options.workers < 1) throw new TypeError(`${options.name}: workers must be a positive integer`);
    this.name = options.name;
    this.lookahead = options.groupOf === undefined ? 0 : LOOKAHEAD;
  }

  /** Jobs running now. */
  get active(): number {
    return this.running.size;
  }

  async start(): Promise<void> {
    this.accepting = true;
    this.unwatch = this.options.store.watch((commit) => {
      if (commit.applied.some((applied) => applied.mutation.collection === this.options.space)) this.wake();
    });
    this.wake();
  }

  /**
   * Looks for due jobs, once the current turn's commits are all in: a group commit applies many
   * batches at once, and one look serves them all.
   */
  wake(): void {
    if (!this.accepting || this.wakePending) return;
    this.wakePending = true;
    queueMicrotask(() => {
      this.wakePending = false;
      this.fill();
    });
  }

  private fill(): void {
    if (!this.accepting) return;
    const { store, space, clock, workers } = this.options;
    const free = workers - this.running.size;
    if (free <= 0) return;
    const now = clock.now();
    let started = 0;
    for (const record of store.due(space, now, this.running.size + free + this.lookahead)) {
      if (started === free) break;
      if (this.running.has(record.id) || !this.groupHasRoom(record)) continue;
      this.begin(record);
      started++;
    }
    // Workers left idle: make sure the next job to come due wakes the runner.
    if (started < free) this.schedule();
  }

  async drain(): Promise<void> {
    this.accepting = false;
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
      this.options.log('warn', `${this.name}: jobs still running at the drain timeout are stopped and stay due`, { running: this.running.size });
      this.stopping.abort();
    }
  }

  async close(): Promise<void> {
    this.accepting = false;
    this.cancelTimer();
    this.unwatch?.();
    this.unwatch = undefined;
  }

  private begin(record: StoredRecord): void {
    const group = this.options.groupOf?.(record) ?? '';
    const done = this.options
      .work(record, this.stopping.signal)
      .catch((error: unknown) => {
        // `work` writes every outcome itself; reaching here is a bug in it, and the job stays due.
        this.options.log('error', `${this.name}: a job failed unexpectedly`, { id: record.id, error: error instanceof Error ? error.message : String(error) });
      })
      .finally(() => {
        this.running.delete(record.id);
        this.wake();
      });
    this.running.set(record.id, { group, done });
  }

  private groupHasRoom(record: StoredRecord): boolean {
    const { groupOf, perGroup } = this.options;
    if (groupOf === undefined || perGroup === undefined) return true;
    const group = groupOf(record);
    let count = 0;
    for (const job of this.running.values()) if (job.group === group) count++;
    return count < perGroup;
  }

  /**
   * A timer for the earliest dueAt still to come. Jobs already due are running, or waiting for a
   * worker or for room in their group; a finishing job wakes the runner for those.
   */
  private schedule(): void {
    if (!this.accepting) return;
    const { store, space, clock } = this.options;
    const now = clock.now();
    let next: number | undefined;
    for (const record of store.due(space, Number.MAX_SAFE_INTEGER, this.running.size + 1 + this.lookahead)) {
      if (this.running.has(record.id) || record.dueAt === undefined || record.dueAt <= now) continue;
      next = record.dueAt;
      break;
    }
    if (next === undefined) return;
    if (this.timer !== undefined && this.timerAt <= next) return;
    this.cancelTimer();
    this.timerAt = next;
    this.timer = this.options.clock.setTimer(next - now, () => {
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
