// A worker pool over the due jobs of one store space (lib/store/types.ts `dueAt`): the engine of
// the job queue (lib/jobs/queue.ts) behind the webhook receiver's handlers (CONVENTIONS.md#webhook-handlers)
// and the sender's deliveries (CONVENTIONS.md#deliveries). A record is a job while its `dueAt` is set;
// `work` runs it and writes its next state (done: no dueAt; retry later: a later dueAt; dead), so every
// state a job passes through is in the store, and a restart resumes exactly the jobs that were due.
//
// At most `workers` jobs work at once, and at most `perGroup` of one group (an event kind, a
// subscription), whether or not other groups wait: a running job cannot be taken back (it runs at
// most once), so a group that took every free worker while it was alone would keep them, hung, when
// another group's job arrived. With the share a group is owed held back for it, no group waits
// behind another (no head-of-line blocking). The share counts jobs whose work runs (a handler, a
// request in flight); one that only waits for its outcome's commit (below) has left its group's room,
// and a worker it still holds comes back once that commit is in (a pause later when the store cannot
// write, lib/jobs/outcomes.ts), however long its work would have taken.
//
// To find the next job of a group with room behind thousands of another's, the runner keeps its own
// index: the due jobs of each group in a time heap (lib/store/time-heap.ts), filled from the store's
// due index at start and from every commit after. A look takes the earliest due head of each group
// with room, earliest first, so its cost is the number of groups, not of jobs. Entries are never
// updated: a job that changes is pushed again, and a look drops entries that no longer describe their
// record, and those of jobs running (re-entered when a job ends still due) or held by a `$retry`.
//
// A group may also be paced (a subscription's `rateLimit`): `spacingMs` says how long after one of
// its jobs starts the next may start, and until then a look treats the group's head as due at that
// time, so the group waits on the one timer of the runner, in its order, while others go on. A job
// whose `work` fails unexpectedly (a bug: `work` writes every outcome itself) stays due, and its group
// is paced the same way for FAULT_PAUSE_MS, so a bug costs one attempt and one log line per pause,
// never a loop that takes the same job again at once.
//
// A job whose work is done (a handler returned, a delivery answered) may release its group's room
// while its next state is being written (lib/jobs/outcomes.ts), so the group's next job starts
// meanwhile and the outcomes of many jobs share one commit; the job is not taken again until it ends.
// Its worker is released with the room, or, with `keepWorkers`, only once the job ends: then at most
// `workers` jobs are ever between their start and their written outcome (what a crash repeats).
//
// The runner is in one of four states:
//   stopped  not started, or draining: no job starts. A drain waits for the running jobs up to its
//            timeout, then tells the rest to stop (their AbortSignal) and leaves them due for the next
//            start.
//   open     the last look found a job for every free worker, or none has been taken yet, or it gave
//            its turn back and goes on in the next.
//   blocked  the last look left workers free: nothing is due, or what is due belongs to groups that
//            hold their share. A worker set free, a commit that brings a due job, or the timer for
//            the earliest later job of a group with room asks for the next look.
//   capped   released jobs still writing their outcomes reached RELEASED_PER_WORKER per worker (a slow
//            store): no job starts until one of them ends, which asks for a look.
// A look is asked for by `wake` and taken on the next turn of the event loop (nextTurn), once the turn's
// commits are all in and answered: a group commit applies many batches at once, and one look serves
// them all. Taken in the same turn (a microtask, as it was), the look ran between a group's sync and
// its answers: it started the deliveries the group's PUTs brought (~0.25 ms each) and the answers
// waited for it. Measured (PUT with one subscription, 32 connections, alternating with that build):
// from a group's sync to its answers, median 1.2-1.9 ms → 0.5-0.6 ms. A look also gives the turn back
// once it has spent LOOK_SLICE_MS starting jobs and goes on in the next, after the requests read
// meanwhile (a look that started 16 deliveries ran 4 ms): loop stalls of 5 ms or more of main-thread
// work, 50 → 29 per 60,000 such PUTs.
import { nextTurn, type Clock, type Timer } from '../clock.js';
import type { Component } from '../lifecycle.js';
import type { Logger } from '../log.js';
import { TimeHeap } from '../store/time-heap.js';
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
  /** The group a job belongs to (one group without it), and how many of one group may work at once. */
  readonly groupOf?: (record: StoredRecord) => string;
  readonly perGroup?: number;
  /** `release` gives back the group's room only; the worker is held until the job ends (see the header). */
  readonly keepWorkers?: boolean;
  /**
   * Milliseconds that must pass after a job of this record's group starts before the next of the
   * group may start (0: none); asked when the job starts.
   */
  readonly spacingMs?: (record: StoredRecord) => number;
  /** How long a drain waits for running jobs. */
  readonly drainTimeoutMs: number;
  readonly log: Logger;
}

export type RunnerState = 'stopped' | 'open' | 'blocked' | 'capped';

interface Running {
  readonly id: string;
  readonly group: string;
  /** Holds a worker: not yet released (or, with `keepWorkers`, not yet ended). */
  working: boolean;
  /** Holds a room in its group: not yet released. */
  inRoom: boolean;
  /** Set once its work is called. */
  done: Promise<void> | undefined;
}

/** A due job in the runner's index: its time, and its record's version (which orders equal times). */
interface DueEntry {
  readonly at: number;
  readonly order: number;
  readonly id: string;
}

/** The earliest job of a group that may start, found by a look. */
interface Head extends DueEntry {
  readonly group: string;
  readonly record: StoredRecord;
}

/**
 * Released jobs whose next state is still being written, per worker, beyond which no new job starts:
 * enough for a commit's worth of outcomes at loopback speed, and a bound when the store is slow.
 */
export const RELEASED_PER_WORKER = 8;
/**
 * How long one look may spend starting jobs before it yields the turn (see the header): a delivery's
 * start (signing, the POST written) costs ~0.25 ms, so a look that started 16 held the event loop 4 ms.
 */
export const LOOK_SLICE_MS = 1;
/** How long a group waits after one of its jobs failed unexpectedly before its next job starts. */
export const FAULT_PAUSE_MS = 5000;

export class JobRunner implements Component {
  readonly name: string;
  private readonly running = new Map<string, Running>();
  /** Running jobs that hold a worker; and per group, those that hold a room in it. */
  private working = 0;
  private readonly workingIn = new Map<string, number>();
  /** The due jobs of each group (see the header); a group without any has no entry. */
  private readonly queues = new Map<string, TimeHeap<DueEntry>>();
  /** Paced groups: the earliest time their next job may start (see the header). */
  private readonly notBefore = new Map<string, number>();
  /** Jobs a `$retry` is rewriting: none of them starts until its new state is written. */
  private readonly held = new Set<string>();
  /** The heads a look found, earliest first (see look). */
  private readonly heads = new TimeHeap<Head>();
  private state: RunnerState = 'stopped';
  /** A look is asked for and not yet taken. */
  private looking = false;
  private timer: Timer | undefined;
  private timerAt = Number.POSITIVE_INFINITY;
  private unwatch: (() => void) | undefined;
  private readonly groupOf: (record: StoredRecord) => string;
  private readonly perGroup: number;
  /** One signal for every job: it aborts when a drain gives up waiting (cheaper than one per job). */
  private readonly stopping = new AbortController();

  constructor(private readonly options: JobRunnerOptions) {
    if (!Number.isInteger(options.workers) || options.workers < 1) {
      throw new TypeError(`${options.name}: workers must be a positive integer`);
    }
    const perGroup = options.perGroup ?? options.workers;
    if (!Number.isInteger(perGroup) || perGroup < 1) {
      throw new TypeError(`${options.name}: perGroup must be a positive integer`);
    }
    this.name = options.name;
    this.groupOf = options.groupOf ?? (() => '');
    this.perGroup = perGroup;
  }

  /** Jobs running now. */
  get active(): number {
    return this.running.size;
  }

  /** The state the last look left (see the header), for tests and the log. */
  get status(): RunnerState {
    return this.state;
  }

  /** Is the job running now (its worker may be released already, its outcome not yet written)? */
  isRunning(id: string): boolean {
    return this.running.has(id);
  }

  /**
   * Keeps a job that is not running from starting until the returned function is called: a `$retry`
   * rewrites it meanwhile, and no start can slip in between its check and its write. Undefined when
   * the job is running, or held already.
   */
  hold(id: string): (() => void) | undefined {
    if (this.running.has(id) || this.held.has(id)) return undefined;
    this.held.add(id);
    return () => {
      if (!this.held.delete(id)) return;
      // A look meanwhile dropped its entry: it goes back in, as it is now.
      const record = this.options.store.get(this.options.space, id);
      if (record?.dueAt !== undefined) {
        this.index(record);
        this.wake();
      }
    };
  }

  async start(): Promise<void> {
    const { store, space } = this.options;
    this.queues.clear();
    for (const record of store.due(space, Number.MAX_SAFE_INTEGER, Number.POSITIVE_INFINITY)) this.index(record);
    this.state = 'open';
    this.unwatch = store.watch((commit) => {
      let due = false;
      for (const { mutation, record } of commit.applied) {
        if (mutation.collection !== space || record?.dueAt === undefined) continue;
        this.index(record);
        due = true;
      }
      if (due) this.wake();
    });
    this.wake();
  }

  /** Asks for a look at the end of this turn. */
  wake(): void {
    if (this.state === 'stopped' || this.looking) return;
    this.looking = true;
    void nextTurn().then(() => {
      this.looking = false;
      this.look();
    });
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
    this.queues.clear();
    this.notBefore.clear();
  }

  /** Free workers take the earliest due head of each group with room, earliest first, while they last. */
  private look(): void {
    if (this.state === 'stopped') return;
    const { clock, workers } = this.options;
    if (this.running.size - this.working >= workers * RELEASED_PER_WORKER) {
      this.state = 'capped';
      return;
    }
    this.state = 'open';
    let free = workers - this.working;
    if (free <= 0) return;
    const now = clock.now();
    const sliceEnds = clock.monotonic() + LOOK_SLICE_MS;
    // One heap of heads for every look: what the last one left (it stopped early) is forgotten.
    const heads = this.heads;
    while (heads.pop() !== undefined);
    let later = Number.POSITIVE_INFINITY;
    for (const [group, queue] of this.queues) {
      if (this.hasRoom(group)) later = Math.min(later, this.consider(group, queue, now));
    }
    for (let head = heads.pop(); head !== undefined; head = heads.pop()) {
      this.begin(head.record, head.group);
      free--;
      // Its entry stays on top of its queue until the next head is looked for (a running job's is dropped).
      const queue = this.queues.get(head.group);
      if (free === 0) break;
      // The slice is spent: the rest start on the next turn, after the requests read meanwhile.
      if (clock.monotonic() >= sliceEnds) {
        this.wake();
        return;
      }
      if (queue !== undefined && this.hasRoom(head.group)) {
        later = Math.min(later, this.consider(head.group, queue, now));
      }
    }
    if (free > 0) {
      this.state = 'blocked';
      // Workers left idle: the earliest later job of a group with room wakes the runner. A group
      // without room is woken by its own job's end.
      if (later !== Number.POSITIVE_INFINITY) this.timerFor(later, now);
    }
  }

  /**
   * A group's head: among this look's heads when it may start now, else the time it may (infinity
   * when the group has none).
   */
  private consider(group: string, queue: TimeHeap<DueEntry>, now: number): number {
    const head = this.headOf(group, queue);
    if (head === undefined) return Number.POSITIVE_INFINITY;
    const at = Math.max(head.at, this.pacedUntil(group, now));
    if (at > now) return at;
    this.heads.push(head);
    return Number.POSITIVE_INFINITY;
  }

  /**
   * The earliest entry of a group's queue that describes its record and may start, left on top;
   * entries before it are dropped (stale, running or held), and so is the queue once empty.
   */
  private headOf(group: string, queue: TimeHeap<DueEntry>): Head | undefined {
    const { store, space } = this.options;
    for (let entry = queue.peek(); entry !== undefined; entry = queue.peek()) {
      const record = store.get(space, entry.id);
      const current = record !== undefined && record.version === entry.order && record.dueAt === entry.at;
      // Made field by field: a spread followed by new members takes V8's slow path (~0.5 µs, measured).
      if (current && !this.running.has(entry.id) && !this.held.has(entry.id)) {
        return { at: entry.at, order: entry.order, id: entry.id, group, record };
      }
      queue.pop();
    }
    this.queues.delete(group);
    return undefined;
  }

  private index(record: StoredRecord): void {
    if (record.dueAt === undefined) return;
    const group = this.groupOf(record);
    let queue = this.queues.get(group);
    if (queue === undefined) {
      queue = new TimeHeap();
      this.queues.set(group, queue);
    }
    queue.push({ at: record.dueAt, order: record.version, id: record.id });
  }

  private hasRoom(group: string): boolean {
    return (this.workingIn.get(group) ?? 0) < this.perGroup;
  }

  /** The time a paced group's next job may start; a pace that has passed is forgotten. */
  private pacedUntil(group: string, now: number): number {
    const until = this.notBefore.get(group);
    if (until === undefined) return 0;
    if (until <= now) this.notBefore.delete(group);
    return until;
  }

  private begin(record: StoredRecord, group: string): void {
    const spacing = this.options.spacingMs?.(record) ?? 0;
    if (spacing > 0) this.notBefore.set(group, this.options.clock.now() + spacing);
    const job: Running = { id: record.id, group, working: true, inRoom: true, done: undefined };
    this.working++;
    this.workingIn.set(group, (this.workingIn.get(group) ?? 0) + 1);
    const release = (): void => {
      if (!job.inRoom) return;
      this.leaveRoom(job);
      if (this.options.keepWorkers !== true) this.freeWorker(job);
      this.wake();
    };
    this.running.set(record.id, job);
    const failed = (error: unknown): void => {
      // `work` writes every outcome itself; reaching here is a bug in it, and the job stays due.
      const message = error instanceof Error ? error.message : String(error);
      this.options.log('error', `${this.name}: a job failed unexpectedly`, { id: record.id, error: message });
      const until = this.options.clock.now() + FAULT_PAUSE_MS;
      this.notBefore.set(group, Math.max(until, this.notBefore.get(group) ?? 0));
      this.end(job);
    };
    // One reaction for either outcome rather than a catch and a finally: one promise less per job.
    job.done = this.options.work(record, this.stopping.signal, release).then(() => this.end(job), failed);
  }

  private leaveRoom(job: Running): void {
    job.inRoom = false;
    const left = (this.workingIn.get(job.group) ?? 1) - 1;
    if (left === 0) this.workingIn.delete(job.group);
    else this.workingIn.set(job.group, left);
  }

  private freeWorker(job: Running): void {
    job.working = false;
    this.working--;
  }

  private end(job: Running): void {
    const heldWorker = job.working;
    if (job.inRoom) this.leaveRoom(job);
    if (job.working) this.freeWorker(job);
    this.running.delete(job.id);
    // A look dropped its entry while it ran: still due (stopped, its outcome lost), it goes back in.
    const current = this.options.store.get(this.options.space, job.id);
    const due = current?.dueAt !== undefined;
    if (due) this.index(current);
    // A worker set free asks for a look; a job that gave its worker back earlier needs one only if
    // it is due again or if the bound on released jobs was reached.
    if (heldWorker || due || this.state === 'capped') this.wake();
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
