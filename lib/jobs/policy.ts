// What a policy of the job queue (queue.ts) says: where its jobs live, what one run is and how its
// outcome is classified, and the words a user sees. The webhook inbox (lib/webhooks/inbox.ts) and the
// outbox (lib/webhooks/outbox.ts) are the two policies; everything else about a job is the queue's.
import type { JsonObject } from '../json.js';
import type { Backoff } from '../retry.js';
import type { Mutation, StoredRecord } from '../store/types.js';

/** Where a queue keeps its jobs: items (a job while due) and their bodies, one name scheme for both. */
export interface JobSpaces {
  readonly space: string;
  readonly bodySpace: string;
}

/** The words a user sees: in the log, in /$inbox or /$outbox statuses, in dead-letter warnings. */
export interface JobWords {
  /** The queue's name in the log: `webhook handlers`. */
  readonly name: string;
  /** What one job is: `event`, `delivery`. */
  readonly job: string;
  /** Where the items are listed: `/$inbox`. */
  readonly path: string;
  /** The status of a job before its first run (and after a `$retry` of a dead one): `accepted`. */
  readonly waiting: string;
  /** The status of a job run to its end: `processed`, `delivered`. */
  readonly done: string;
}

/**
 * What one run came to; `set` holds the fields of the policy the item gains with its next state, and
 * `also` the policy's own changes written in the same atomic batch. With `recordFirst`, the run's
 * worker and its group's room are held until that batch is written, whatever `releaseWhileRecording`
 * says: the next run of the group must see what this one wrote.
 */
export type RunOutcome =
  | {
      readonly kind: 'done';
      readonly set: JsonObject;
      readonly also?: readonly Mutation[];
      readonly recordFirst?: boolean;
    }
  | {
      readonly kind: 'retry';
      readonly set: JsonObject;
      readonly error?: string;
      readonly retryAfterMs?: number;
      readonly also?: readonly Mutation[];
      readonly recordFirst?: boolean;
    }
  | {
      readonly kind: 'dead';
      readonly set: JsonObject;
      readonly error: string;
      readonly also?: readonly Mutation[];
      readonly recordFirst?: boolean;
    }
  | { readonly kind: 'park' }
  | { readonly kind: 'stopped' };

export type RetryOutcome = Extract<RunOutcome, { kind: 'retry' }>;
export type DeadOutcome = Extract<RunOutcome, { kind: 'dead' }>;

/**
 * Bodies that several jobs share (the deliveries of one event, lib/webhooks/event-bodies.ts), kept
 * by the policy: it reads a job's body, and lets it go once the job is done.
 */
export interface SharedBodies {
  /** The job's body; undefined when it was lost. */
  bodyOf(record: StoredRecord): string | undefined;
  /**
   * The changes that drop the body in the write that says the job is done, when no other job needs it
   * (none, when another may still: then `release` decides once that write is in).
   */
  dropWithDone(record: StoredRecord): Mutation[];
  /**
   * Called once the job's `done` is written, when `dropWithDone` gave nothing: drops the body if no
   * job needs it any more. Never rejects.
   */
  release(record: StoredRecord): Promise<void>;
}

/**
 * A job's body kept in its item: one record per job, one write to add it. `text` names the item's
 * member that holds the body's text, `beside` the members the policy keeps with it (the inbox: the
 * provider's header fields). No reader of the listing sees them (the policy's view leaves them out,
 * and a query names only the policy's fields); the write that says the job is done unsets them, while
 * a retry, a park and a dead job keep them.
 */
export interface ItemBodies {
  readonly text: string;
  readonly beside: readonly string[];
}

export interface JobPolicy {
  readonly words: JobWords;
  readonly spaces: JobSpaces;
  /**
   * Where a job's body lives, the policy's choice: `sharedBodies`, kept by the policy; else
   * `itemBodies`, in the job's item; else its own record in `spaces.bodySpace`. An item that holds no
   * body has it there (a store written before the policy kept bodies in items), and the write that
   * says the job is done drops that record.
   */
  readonly sharedBodies?: SharedBodies;
  readonly itemBodies?: ItemBodies;
  /** Names `bodySpace` had before: a store written under them still opens (its bodies move at start). */
  readonly formerBodySpaces?: readonly string[];
  /** The side log of dead jobs (lib/store/types.ts SIDE_LOG_NAME). */
  readonly deadLetterLog: string;
  readonly backoff: Backoff;
  readonly workers: number;
  readonly groupOf?: (record: StoredRecord) => string;
  readonly perGroup?: number;
  /** How long after a job of its group starts the group's next may start (runner.ts); 0 or absent: at once. */
  spacingMs?(record: StoredRecord): number;
  /**
   * What a run gives back while its outcome is written, so the group's next job starts meanwhile and
   * the outcomes of many runs share one commit (runner.ts): `worker`, its worker and its group's room
   * (a worker then runs on; lib/jobs/runner.ts bounds the runs still recording); `room`, its group's
   * room only, the worker waiting for the outcome, which bounds the runs a crash repeats to `workers`.
   */
  readonly releaseWhileRecording: 'worker' | 'room';
  /** One run of a job (`attempt` 1 for the first); `body` is undefined when it was lost. Never rejects. */
  run(record: StoredRecord, body: string | undefined, attempt: number, signal: AbortSignal): Promise<RunOutcome>;
  /** The `lastError` of a job whose last allowed attempt asked for a retry. */
  gaveUp(outcome: RetryOutcome, attempts: number): string;
  /** The fields that open a dead-letter line: which job it was. */
  deadLetterHead(record: StoredRecord): JsonObject;
  /** Fields a `$retry` of a dead job forgets, besides `nextAttemptAt` (it starts from attempt 1). */
  readonly forgetOnRestart: readonly string[];
  /**
   * Can a parked job run now? Without it, nothing is ever parked for long. A parked job keeps its
   * status (`words.waiting`, or `failed` after attempts) and has no next attempt until it can.
   */
  runnable?(record: StoredRecord): boolean;
  /** Releases what the policy holds (connections). */
  close?(): void;
}

/**
 * What a job is called while it runs. Not a stored status (the item keeps the one it had until the
 * run's outcome is written): the runner knows which jobs run, and a refused `$retry` says so.
 */
export const RUNNING = 'running';

/**
 * What `$retry` came to: `refused` (a 409) names what the job is instead of failed or dead: its
 * status, or RUNNING; `unavailable` is a 503.
 */
export type Requeue =
  | { readonly result: 'queued'; readonly record: StoredRecord }
  | { readonly result: 'refused'; readonly status: string }
  | { readonly result: 'missing' | 'unavailable' };
