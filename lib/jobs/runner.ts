// A worker pool over the store's due-time index (lib/store/types.ts `due`, `nextDue`): the engine
// behind the webhook receiver's handlers (CONTRACT §7) and the sender's deliveries (§8). A record is a
// job while its `dueAt` is set; the job's `work` function runs it and writes the record's next state
// (done: no dueAt; retry later: a later dueAt; dead), so every state a job passes through is in the
// store, and a restart resumes exactly the jobs that were due (nothing is kept only in memory).
//
// The runner wakes when a commit touches its space (a new job), when the earliest dueAt comes (a
// timer on the injected clock), and when a worker frees up. At most `workers` jobs work at once, and
// at most `perGroup` of one group (a subscription), so one slow group cannot take every worker. A job
// whose work is done (a delivery answered) may release its worker while its next state is being
// written (lib/jobs/outcomes.ts): the worker takes the next job meanwhile, so the outcomes of many
// jobs share one commit, and the job itself is not taken again until it has finished. As a lifecycle
// component it drains by taking no new jobs and waiting for the running ones up to the drain timeout;
// what is still running then is told to stop (its AbortSignal) and left due, so the next start runs
// it again.
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
const RELEASED_PER_WORKER = 8;

export class JobRunner implements Component {
  readonly name: string;
  private readonly running = new Map<string, Running>();
  /** Running jobs that hold a worker. */
  private working = 0;
  private timer: Timer | undefined;
  private timerAt = Number.POSITIVE_INFINITY;
  private unwatch: (() => void) | undefined;
  private accepting = false;
  private wakePending = false;
  /**
   * The last full look found workers free and no job they could take (every due job within reach was
   * running, or its group full). Until a job releases its worker or finishes, or a timer fires, only
   * a job that arrives with a commit can change that: such a commit wakes the runner for its own jobs
   * alone, not for another full look.
   */
  private blocked = false;
  /** The last full look stopped at the bound on released jobs: the next job to finish lifts it. */
  private capped = false;
  private fullLook = false;
  private arrivals: StoredRecord[] = [];
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
      let touched = false;
      for (const applied of commit.applied) {
        if (applied.mutation.collection !== this.options.space) continue;
        touched = true;
        if (this.blocked && applied.record?.dueAt !== undefined) this.arrivals.push(applied.record);
      }
      if (touched) this.wake(this.blocked ? 'arrivals' : 'full');
    });
    this.wake();
  }

  /**
   * Looks for due jobs, once the current turn's commits are all in: a group commit applies many
   * batches at once, and one look serves them all. A full look reads the due index; a look at
   * arrivals only considers the jobs the turn's commits brought (see `blocked`).
   */
  wake(look: 'full' | 'arrivals' = 'full'): void {
    if (look === 'full') this.fullLook = true;
    if (!this.accepting || this.wakePending) return;
    this.wakePending = true;
    queueMicrotask(() => {
      this.wakePending = false;
      const arrivals = this.arrivals;
      this.arrivals = [];
      if (this.fullLook || !this.blocked) {
        this.fullLook = false;
        this.fill();
      } else {
        this.admit(arrivals);
      }
    });
  }

  private fill(): void {
    this.blocked = false;
    this.capped = this.running.size - this.working >= this.options.workers * RELEASED_PER_WORKER;
    if (!this.accepting) return;
    const { store, space, clock, workers } = this.options;
    const free = workers - this.working;
    if (free <= 0 || this.capped) return;
    const now = clock.now();
    let started = 0;
    for (const record of store.due(space, now, this.running.size + free + this.lookahead)) {
      if (started === free) break;
      if (this.running.has(record.id) || !this.groupHasRoom(record)) continue;
      this.begin(record);
      started++;
    }
    if (started < free) {
      this.blocked = true;
      // Workers left idle: make sure the next job to come due wakes the runner.
      this.schedule();
    }
  }

  /** Starts the jobs just committed that are due and have room, while workers are free (`blocked`). */
  private admit(arrivals: readonly StoredRecord[]): void {
    if (!this.accepting) return;
    const { store, space, clock, workers } = this.options;
    const now = clock.now();
    for (const record of arrivals) {
      if (this.working >= workers) break;
      // A later commit of the same turn may have changed it again: only its latest state counts.
      if (store.get(space, record.id) !== record || record.dueAt === undefined) continue;
      if (record.dueAt > now) this.timerFor(record.dueAt, now);
      else if (!this.running.has(record.id) && this.groupHasRoom(record)) this.begin(record);
    }
    // No worker left: the next wake (a worker freed) takes a full look.
    if (this.working >= workers) this.blocked = false;
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
        this.options.log('error', `${this.name}: a job failed unexpectedly`, { id: record.id, error: error instanceof Error ? error.message : String(error) });
      })
      .finally(() => {
        const held = job.working;
        release();
        this.running.delete(record.id);
        // Releasing woke the runner already; a job released earlier needs a look only if its record
        // is still due (stopped, or its outcome lost) or if the bound on released jobs was reached.
        if (!held && (this.capped || this.stillDue(record.id))) this.wake();
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
    if (!this.accepting) return;
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
