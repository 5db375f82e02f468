// Tests for lib/jobs/runner.ts: a worker pool over the due jobs of a store space. Jobs run when due,
// no more than `workers` at once and `perGroup` per group, a job due later runs when the clock gets
// there even while others run, a drain waits and then stops what still runs, leaving it due. A group
// with room finds its job behind any backlog of another's, and the store's due index is read at
// start only; a job held for a `$retry` does not start until it is let go; a paced group's jobs start
// no closer than its spacing; with `keepWorkers` a released job gives back its group's room and keeps
// its worker until it ends. The `capped` state holds new jobs while too many released ones are
// still writing, and lets go when one ends. Driven by a manual clock and jobs the test finishes
// itself: no real time passes.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FAULT_PAUSE_MS, JobRunner, LOOK_SLICE_MS, RELEASED_PER_WORKER } from '../../lib/jobs/runner.js';
import { MemoryStore } from '../../lib/store/memory.js';
import type { Mutation, StoredRecord } from '../../lib/store/types.js';
import { ManualClock } from '../support/clock.js';

const SPACE = '$jobs';

interface Started {
  readonly id: string;
  readonly signal: AbortSignal;
  /** Frees the job's worker while the job goes on. */
  release(): void;
  /** Marks the job done (its record no longer due) and lets the runner move on. */
  finish(): Promise<void>;
  /** Makes `work` reject, as a bug in it would: the record stays due. */
  fail(): Promise<void>;
}

/** A memory store that counts reads of its due index: the runner reads it at start only. */
class CountingStore extends MemoryStore {
  dueReads = 0;

  override due(collection: string, now: number, limit: number): StoredRecord[] {
    this.dueReads++;
    return super.due(collection, now, limit);
  }
}

interface Harness {
  readonly clock: ManualClock;
  readonly store: CountingStore;
  readonly runner: JobRunner;
  readonly started: Started[];
  add(id: string, dueAt: number, group?: string): Promise<void>;
  /** Resolves once `count` jobs have started in all. */
  startedCount(count: number): Promise<void>;
}

function harness(options: { workers: number; perGroup?: number; keepWorkers?: boolean; drainTimeoutMs?: number; spacingMs?: (record: StoredRecord) => number; clock?: ManualClock }): Harness {
  const clock = options.clock ?? new ManualClock();
  const store = new CountingStore({ clock });
  const started: Started[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const runner = new JobRunner({
    name: 'test jobs',
    store,
    clock,
    space: SPACE,
    workers: options.workers,
    ...(options.perGroup === undefined ? {} : { perGroup: options.perGroup, groupOf: (record: StoredRecord) => String(record.doc['group']) }),
    drainTimeoutMs: options.drainTimeoutMs ?? 1000,
    ...(options.keepWorkers === undefined ? {} : { keepWorkers: options.keepWorkers }),
    ...(options.spacingMs === undefined ? {} : { spacingMs: options.spacingMs }),
    log: () => {},
    work: (record, signal, release) =>
      new Promise<void>((resolve, reject) => {
        started.push({
          id: record.id,
          signal,
          release,
          finish: async () => {
            await store.commit({ mutations: [{ kind: 'patch', collection: SPACE, id: record.id, set: { done: true }, dueAt: null }] });
            resolve();
            await new Promise((next) => setImmediate(next));
          },
          fail: async () => {
            reject(new Error('a bug in work'));
            await new Promise((next) => setImmediate(next));
          },
        });
        for (const waiter of waiters.filter((candidate) => started.length >= candidate.count)) waiter.resolve();
        signal.addEventListener('abort', () => resolve(), { once: true });
      }),
  });
  return {
    clock,
    store,
    runner,
    started,
    add: async (id, dueAt, group = 'g') => {
      const mutation: Mutation = { kind: 'put', collection: SPACE, id, doc: { group }, dueAt };
      await store.commit({ mutations: [mutation] });
    },
    startedCount: (count) => (started.length >= count ? Promise.resolve() : new Promise((resolve) => waiters.push({ count, resolve }))),
  };
}

/** Lets every commit, look and job ending already under way run to its end. */
async function settle(): Promise<void> {
  for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setImmediate(resolve));
}

/** A manual clock whose monotonic reading moves on by `step` each time it is read: work that takes time. */
class SteppingClock extends ManualClock {
  private reads = 0;

  constructor(private readonly step: number) {
    super();
  }

  override monotonic(): number {
    return super.monotonic() + this.step * this.reads++;
  }
}

/** Resolves after the callbacks already queued for this turn's check phase (a look asked for by `wake`). */
function afterQueuedTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function ids(started: readonly Started[]): string[] {
  return started.map((job) => job.id);
}

describe('JobRunner', () => {
  it('should run due jobs, at most `workers` at once, and take the next when one finishes', async () => {
    const h = harness({ workers: 2 });
    for (const id of ['a', 'b', 'c']) await h.add(id, h.clock.now());
    await h.runner.start();
    await h.startedCount(2);
    assert.deepEqual(h.started.map((job) => job.id).sort(), ['a', 'b']);
    assert.equal(h.runner.active, 2);
    await (h.started[0] as Started).finish();
    await h.startedCount(3);
    assert.equal(h.started[2]?.id, 'c');
    for (const job of h.started.slice(1)) await job.finish();
    await h.runner.drain();
    await h.runner.close();
  });

  it('should run a job added later, as soon as its commit lands', async () => {
    const h = harness({ workers: 1 });
    await h.runner.start();
    assert.equal(h.started.length, 0);
    await h.add('late', h.clock.now());
    await h.startedCount(1);
    assert.equal(h.started[0]?.id, 'late');
    await (h.started[0] as Started).finish();
    await h.runner.close();
  });

  it('should run a job due later when the clock reaches it, even while another job keeps running', async () => {
    const h = harness({ workers: 2 });
    await h.add('now', h.clock.now());
    await h.add('soon', h.clock.now() + 5000);
    await h.runner.start();
    await h.startedCount(1);
    assert.deepEqual(h.started.map((job) => job.id), ['now']);
    h.clock.advance(4999);
    assert.equal(h.started.length, 1, 'not before its time');
    h.clock.advance(1);
    await h.startedCount(2);
    assert.equal(h.started[1]?.id, 'soon');
    for (const job of h.started) await job.finish();
    await h.runner.close();
  });

  it('should run at most `perGroup` jobs of one group, so other groups still get workers', async () => {
    const h = harness({ workers: 3, perGroup: 1 });
    for (const [id, group] of [['a1', 'a'], ['a2', 'a'], ['a3', 'a'], ['b1', 'b']] as const) await h.add(id, h.clock.now(), group);
    await h.runner.start();
    await h.startedCount(2);
    assert.deepEqual(h.started.map((job) => job.id).sort(), ['a1', 'b1']);
    await (h.started.find((job) => job.id === 'a1') as Started).finish();
    await h.startedCount(3);
    assert.equal(h.started[2]?.id, 'a2');
    for (const job of h.started.slice(1)) await job.finish();
    await h.runner.close();
  });

  it('should give a released worker the next job, and not take the released job again until it finishes', async () => {
    const h = harness({ workers: 1 });
    for (const id of ['a', 'b']) await h.add(id, h.clock.now());
    await h.runner.start();
    await h.startedCount(1);
    const a = h.started[0] as Started;
    a.release();
    await h.startedCount(2);
    assert.equal(h.started[1]?.id, 'b');
    assert.equal(h.runner.active, 2, 'the released job still runs');
    (h.started[1] as Started).release();
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(h.started.length, 2, 'a, still due and still running, is not taken again');
    for (const job of h.started) await job.finish();
    assert.equal(h.runner.active, 0);
    await h.runner.close();
  });

  it("should, with keepWorkers, give a released job's room to its group's next job on another worker, and its worker back only when it ends", async () => {
    const h = harness({ workers: 2, perGroup: 1, keepWorkers: true });
    for (const [id, group] of [['a1', 'a'], ['a2', 'a'], ['a3', 'a']] as const) await h.add(id, h.clock.now(), group);
    await h.runner.start();
    await h.startedCount(1);
    (h.started[0] as Started).release();
    await h.startedCount(2);
    assert.deepEqual(ids(h.started), ['a1', 'a2'], "a1's room goes to a2 while a1 writes its outcome");
    (h.started[1] as Started).release();
    await settle();
    assert.equal(h.started.length, 2, 'both workers are held by jobs still writing: a3 waits');
    await h.add('b1', h.clock.now(), 'b');
    await settle();
    assert.equal(h.started.length, 2, 'another group waits for a worker too');
    await (h.started[0] as Started).finish();
    await settle();
    assert.deepEqual(ids(h.started), ['a1', 'a2', 'a3'], 'the worker a1 gives back takes the earliest head, a3');
    await (h.started[1] as Started).finish();
    await settle();
    assert.deepEqual(ids(h.started), ['a1', 'a2', 'a3', 'b1']);
    for (const job of h.started.slice(2)) await job.finish();
    await h.runner.close();
  });

  it('should drain by waiting for running jobs, then stop the ones still running at the timeout and leave them due', async () => {
    const h = harness({ workers: 2, drainTimeoutMs: 10_000 });
    await h.add('quick', h.clock.now());
    await h.add('stuck', h.clock.now());
    await h.runner.start();
    await h.startedCount(2);
    const drained = h.runner.drain();
    await (h.started.find((job) => job.id === 'quick') as Started).finish();
    const stuck = h.started.find((job) => job.id === 'stuck') as Started;
    assert.equal(stuck.signal.aborted, false);
    h.clock.advance(10_000);
    await drained;
    assert.equal(stuck.signal.aborted, true);
    assert.deepEqual(h.store.due(SPACE, h.clock.now(), 10).map((record) => record.id), ['stuck'], 'a stopped job stays due for the next start');
    await h.add('after', h.clock.now());
    assert.equal(h.started.length, 2, 'no job starts once draining');
    await h.runner.close();
  });

  it('should start no job once RELEASED_PER_WORKER released jobs per worker are still writing, until one ends', async () => {
    const h = harness({ workers: 1 });
    const names = Array.from({ length: RELEASED_PER_WORKER + 2 }, (_, n) => `j${String(n).padStart(2, '0')}`);
    for (const id of names) await h.add(id, h.clock.now());
    await h.runner.start();
    // Each job releases its worker at once and goes on writing: the worker takes the next.
    for (let count = 1; count <= RELEASED_PER_WORKER; count++) {
      await h.startedCount(count);
      (h.started[count - 1] as Started).release();
    }
    await settle();
    assert.deepEqual(ids(h.started), names.slice(0, RELEASED_PER_WORKER), 'the worker is free, yet nothing more starts');
    assert.equal(h.runner.status, 'capped');
    assert.equal(h.runner.active, RELEASED_PER_WORKER);
    // One released job ends: nothing else would wake the runner (its record is no longer due).
    await (h.started[0] as Started).finish();
    await settle();
    assert.deepEqual(ids(h.started), names.slice(0, RELEASED_PER_WORKER + 1));
    (h.started[RELEASED_PER_WORKER] as Started).release();
    await settle();
    assert.equal(h.started.length, RELEASED_PER_WORKER + 1, 'capped again');
    for (const job of h.started.slice(1)) await job.finish();
    await settle();
    assert.deepEqual(ids(h.started), names);
    await (h.started.at(-1) as Started).finish();
    await h.runner.close();
  });

  it('should start a due arrival of a group with room at once, and one due later when the clock gets there', async () => {
    const h = harness({ workers: 2, perGroup: 1 });
    const now = h.clock.now();
    await h.add('a1', now, 'a');
    await h.add('a2', now, 'a');
    await h.runner.start();
    await settle();
    assert.deepEqual(ids(h.started), ['a1'], 'a2 waits for room in its group');
    assert.equal(h.runner.status, 'blocked');
    await h.add('b1', now, 'b');
    await settle();
    assert.deepEqual(ids(h.started), ['a1', 'b1'], 'the arrival is due and its group has room');
    assert.equal(h.runner.status, 'open');
    await (h.started[1] as Started).finish();
    await settle();
    assert.equal(h.runner.status, 'blocked');
    await h.add('c1', now + 5000, 'c');
    // An arrival changed again within the same turn counts by its latest state: not due, not run.
    void h.store.commit({ mutations: [{ kind: 'put', collection: SPACE, id: 'd1', doc: { group: 'd' }, dueAt: now }] });
    await h.store.commit({ mutations: [{ kind: 'patch', collection: SPACE, id: 'd1', set: {}, dueAt: null }] });
    await settle();
    assert.deepEqual(ids(h.started), ['a1', 'b1']);
    h.clock.advance(4999);
    await settle();
    assert.equal(h.started.length, 2, 'not before its time');
    h.clock.advance(1);
    await settle();
    assert.deepEqual(ids(h.started), ['a1', 'b1', 'c1']);
    for (const job of [h.started[0], h.started[2]]) await (job as Started).finish();
    await settle();
    assert.deepEqual(ids(h.started), ['a1', 'b1', 'c1', 'a2']);
    await (h.started[3] as Started).finish();
    await h.runner.close();
  });

  it("should find a group's job behind any backlog of another group's, and read the store's due index at start only", async () => {
    const h = harness({ workers: 3, perGroup: 1 });
    const now = h.clock.now();
    const backlog = 500;
    for (let n = 0; n < backlog; n++) await h.add(`a${String(n).padStart(3, '0')}`, now, 'a');
    await h.runner.start();
    await settle();
    const reads = h.store.dueReads;
    // Due after every job of `a`: a look that read the earliest due jobs alone would never see them.
    await h.add('b1', now + 1, 'b');
    await h.add('c1', now + 2, 'c');
    h.clock.advance(2);
    await settle();
    assert.deepEqual(ids(h.started), ['a000', 'b1', 'c1']);
    assert.equal(h.runner.status, 'open');
    // Each group keeps its place: `a` runs one at a time, in order, whatever else comes.
    await (h.started[1] as Started).finish();
    await (h.started[0] as Started).finish();
    await settle();
    assert.deepEqual(ids(h.started), ['a000', 'b1', 'c1', 'a001']);
    assert.equal(h.store.dueReads, reads, 'looks keep their own index');
    for (const job of h.started.slice(2)) await job.finish();
    await h.runner.close();
  });

  it('should start the jobs of a paced group no closer than its spacing, in order, on one timer, and hold up no other group', async () => {
    // Groups a and c are paced at 500 ms (a rate of 2 per second), b is not.
    const h = harness({ workers: 3, perGroup: 1, spacingMs: (record) => (record.doc['group'] === 'b' ? 0 : 500) });
    const now = h.clock.now();
    for (const [id, group] of [['a1', 'a'], ['a2', 'a'], ['a3', 'a'], ['b1', 'b'], ['b2', 'b'], ['c1', 'c'], ['c2', 'c']] as const) await h.add(id, now, group);
    await h.runner.start();
    await settle();
    assert.deepEqual(ids(h.started).sort(), ['a1', 'b1', 'c1']);
    for (const job of h.started.slice()) await job.finish();
    await settle();
    assert.deepEqual(ids(h.started).slice(3), ['b2'], 'the group without a pace goes on at once');
    assert.equal(h.clock.timers, 1, 'one timer for both paced groups');
    h.clock.advance(499);
    await settle();
    assert.equal(h.started.length, 4, 'not before the spacing has passed');
    h.clock.advance(1);
    await settle();
    assert.deepEqual(ids(h.started).slice(4).sort(), ['a2', 'c2']);
    for (const job of h.started.slice(3)) await job.finish();
    await settle();
    assert.equal(h.started.length, 6, 'a3 waits for its turn');
    h.clock.advance(500);
    await settle();
    assert.deepEqual(ids(h.started).slice(6), ['a3']);
    await (h.started[6] as Started).finish();
    await h.runner.close();
  });

  it('should pause a group for FAULT_PAUSE_MS when its job fails unexpectedly, instead of taking it again at once', async () => {
    const h = harness({ workers: 2, perGroup: 1 });
    const now = h.clock.now();
    await h.add('x1', now, 'x');
    await h.add('y1', now, 'y');
    await h.add('y2', now, 'y');
    await h.runner.start();
    await settle();
    assert.deepEqual(ids(h.started).sort(), ['x1', 'y1']);
    await (h.started.find((job) => job.id === 'x1') as Started).fail();
    await (h.started.find((job) => job.id === 'y1') as Started).finish();
    await settle();
    assert.deepEqual(ids(h.started).slice(2), ['y2'], 'the other group goes on; the failed job is not taken again at once');
    h.clock.advance(FAULT_PAUSE_MS - 1);
    await settle();
    assert.equal(h.started.length, 3);
    h.clock.advance(1);
    await settle();
    assert.deepEqual(ids(h.started).slice(3), ['x1'], 'taken again once the pause has passed');
    for (const job of h.started.slice(2)) await job.finish();
    await h.runner.close();
  });

  it('should not start a job held for a $retry until it is let go, and hold no job that runs', async () => {
    const h = harness({ workers: 2 });
    await h.add('held', h.clock.now());
    const letGo = h.runner.hold('held');
    assert.ok(letGo !== undefined);
    assert.equal(h.runner.hold('held'), undefined, 'held once at a time');
    await h.runner.start();
    await h.add('other', h.clock.now());
    await settle();
    assert.deepEqual(ids(h.started), ['other'], 'the held job waits');
    letGo();
    await settle();
    assert.deepEqual(ids(h.started), ['other', 'held']);
    assert.equal(h.runner.isRunning('held'), true);
    assert.equal(h.runner.hold('held'), undefined, 'a running job is not held');
    for (const job of h.started) await job.finish();
    assert.equal(h.runner.isRunning('held'), false);
    await h.runner.close();
  });
  it("should answer a commit before starting the jobs it brings (the look waits for the next turn)", async () => {
    const h = harness({ workers: 1 });
    await h.runner.start();
    let startedWhenAnswered = -1;
    const job: Mutation = { kind: 'put', collection: SPACE, id: 'j', doc: { group: 'g' }, dueAt: h.clock.now() };
    await h.store.commit({ mutations: [job] }).then(() => {
      startedWhenAnswered = h.started.length;
    });
    assert.equal(startedWhenAnswered, 0, "the commit's caller runs before the job starts");
    await h.startedCount(1);
    await (h.started[0] as Started).finish();
    await h.runner.close();
  });

  it('should yield the turn once a look has spent LOOK_SLICE_MS starting jobs, and start the rest on the next', async () => {
    // Each reading of the clock is half a slice later: a look starts two jobs, then gives the turn back.
    const h = harness({ workers: 4, clock: new SteppingClock(LOOK_SLICE_MS / 2) });
    for (const id of ['a', 'b', 'c', 'd']) await h.add(id, h.clock.now());
    await h.runner.start();
    await afterQueuedTurn();
    assert.deepEqual(ids(h.started), ['a', 'b'], 'the first look stops when its slice is spent');
    await h.startedCount(4);
    assert.deepEqual(ids(h.started), ['a', 'b', 'c', 'd'], 'the next turn starts the rest, in order');
    for (const job of h.started) await job.finish();
    await h.runner.close();
  });
});
