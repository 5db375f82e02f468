// The next states of finished jobs (lib/jobs/queue.ts: a handler's run, CONVENTIONS.md#webhook-handlers;
// a delivery's attempt, CONVENTIONS.md#deliveries), written through the one write path in shared
// batches: while one batch is being committed, the outcomes of jobs that finish meanwhile wait and go
// together in the next. A busy pool then pays one commit for many jobs instead of one each, and an
// idle one writes at once.
//
// Each job's outcome expects the version of the record it ran, so one that was changed meanwhile (a
// $retry, an expiry) conflicts: its new state wins, and the others of the batch are written without
// it. When the store cannot write, every outcome of the batch is lost, its jobs stay due and run
// again, and the writer pauses first, so a failing disk is not hammered (a drain cuts the pause short:
// no job runs again before the next start anyway).
import type { Clock } from '../clock.js';
import type { Logger } from '../log.js';
import type { Mutation } from '../store/types.js';
import type { Writer } from '../writes/writer.js';

interface Waiting {
  readonly changes: readonly Mutation[];
  readonly settle: () => void;
}

/** How long the writer waits after the store could not write, before the jobs may run again. */
const STORE_RETRY_MS = 1000;

export class OutcomeWriter {
  private waiting: Waiting[] = [];
  private writing = false;
  private draining = false;
  private idleWaiters: (() => void)[] = [];
  private cutPause: (() => void) | undefined;

  constructor(
    private readonly name: string,
    private readonly writer: Writer,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {}

  /** Resolves once the changes are written, superseded by a newer state, or lost to a store failure. */
  write(changes: readonly Mutation[]): Promise<void> {
    return new Promise((settle) => {
      this.waiting.push({ changes, settle });
      if (!this.writing) void this.flush();
    });
  }

  /** Resolves once every outcome handed over is written (or lost); a drain's last wait. */
  idle(): Promise<void> {
    this.draining = true;
    this.cutPause?.();
    if (!this.writing) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private async flush(): Promise<void> {
    this.writing = true;
    while (this.waiting.length > 0) {
      const batch = this.waiting;
      this.waiting = [];
      await this.commit(batch);
    }
    this.writing = false;
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  private pause(): Promise<void> {
    if (this.draining) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = this.clock.setTimer(STORE_RETRY_MS, () => {
        this.cutPause = undefined;
        resolve();
      });
      this.cutPause = () => {
        this.cutPause = undefined;
        timer.cancel();
        resolve();
      };
    });
  }

  private async commit(batch: readonly Waiting[]): Promise<void> {
    let left = batch;
    while (left.length > 0) {
      const written = await this.writer.write(changesOf(left));
      if (written.ok) break;
      if (written.reason === 'unavailable') {
        const message = `${this.name}: cannot record the outcome of ${left.length} job(s); they will run again`;
        this.log('error', message, { detail: written.detail });
        await this.pause();
        break;
      }
      // A conflict (the job's record changed meanwhile) or a refused change (a bug, logged): that
      // job's outcome is dropped, the others are written without it.
      const culprit = ownerOf(left, written.index);
      if (written.reason === 'invalid') {
        this.log('error', `${this.name}: a job's outcome was refused`, { detail: written.problem.detail });
      }
      culprit.settle();
      left = left.filter((entry) => entry !== culprit);
    }
    for (const entry of left) entry.settle();
  }
}

/** The changes of the entries, in order, in one array (flatMap makes one more per entry). */
function changesOf(entries: readonly Waiting[]): Mutation[] {
  const changes: Mutation[] = [];
  for (const entry of entries) for (const change of entry.changes) changes.push(change);
  return changes;
}

/** The entry whose changes hold the `index`th change of the batch. */
function ownerOf(entries: readonly Waiting[], index: number): Waiting {
  let first = 0;
  for (const entry of entries) {
    if (index < first + entry.changes.length) return entry;
    first += entry.changes.length;
  }
  throw new RangeError(`OutcomeWriter: no change has the index ${index}`);
}
