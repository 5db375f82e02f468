// Tests for lib/jobs/queue.ts, through a toy policy whose runs come from a script: what the inbox and
// the outbox share. A done job drops its body; a retry waits the backoff (or a Retry-After, clamped to
// the cap) and runs out into a dead job whose dead-letter line is written before its status; a dead
// job's further changes share its batch; a parked job resumes between start and drain only, so the
// queue writes nothing outside its lifecycle; a `$retry` takes only a failed or dead job (never one
// that runs or waits for its first run) and is one bounded compare-and-swap that answers
// `unavailable` when the job keeps changing under it. A policy that keeps bodies in the item
// (`itemBodies`) writes one record per job, unsets them with the done, keeps them through retries and
// once dead, and still runs a job stored with its body in a record of its own, dropping that record
// with the done. Driven by a manual clock: no real time passes.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Clock, Random } from '../../lib/clock.js';
import type { JobPolicy, RetryOutcome, RunOutcome } from '../../lib/jobs/policy.js';
import { JobQueue, jobItem } from '../../lib/jobs/queue.js';
import type { JsonObject } from '../../lib/json.js';
import type { Backoff } from '../../lib/retry.js';
import { MemoryStore } from '../../lib/store/memory.js';
import type { Batch, CommitResult, Mutation, SideLogResult, StoredRecord } from '../../lib/store/types.js';
import { RepresentationCache } from '../../lib/resources/representation-cache.js';
import { Writer } from '../../lib/writes/writer.js';
import { clockAt, ManualClock } from '../support/clock.js';
import { recordWhere } from '../support/store.js';

/**
 * A job as a policy without `itemBodies` or `sharedBodies` stores it, and as the inbox stored its events
 * before it kept their bodies in the item: the item, and its body in a record of `bodySpace`.
 */
function twoRecordJob(
  spaces: JobPolicy['spaces'],
  id: string,
  item: JsonObject,
  body: string,
  now: number,
  expiresAt: number,
): Mutation[] {
  return [
    jobItem(spaces, id, item, now, expiresAt),
    { kind: 'put', collection: spaces.bodySpace, id, doc: { body }, expiresAt },
  ];
}

const SPACES = { space: '$toys', bodySpace: '$toy-bodies' };
const BACKOFF: Backoff = { schedule: { baseMs: 1000, factor: 2, capMs: 10_000, attempts: 3 }, jitter: 'full' };
/** Full jitter drawn at its top: every wait is its whole ceiling. */
const LONGEST: Random = { bytes: (size) => Buffer.alloc(size, 1), fraction: () => 0.999_999 };

class ToyPolicy implements JobPolicy {
  readonly words = { name: 'toy jobs', job: 'toy', path: '/$toys', waiting: 'waiting', done: 'finished' };
  readonly spaces = SPACES;
  readonly formerBodySpaces = ['$toy-payloads'];
  readonly deadLetterLog = 'toy-dead-letter';
  readonly backoff = BACKOFF;
  readonly workers = 1;
  readonly releaseWhileRecording = 'room';
  readonly forgetOnRestart = ['lastError'];
  /** What the next runs come to, in order; then `done`. */
  readonly script: RunOutcome[] = [];
  readonly runs: { id: string; body: string | undefined; attempt: number }[] = [];
  canRun = true;

  async run(record: StoredRecord, body: string | undefined, attempt: number): Promise<RunOutcome> {
    this.runs.push({ id: record.id, body, attempt });
    return this.script.shift() ?? { kind: 'done', set: { finishedAt: 'then' } };
  }

  gaveUp(outcome: RetryOutcome, attempts: number): string {
    return `gave up after ${attempts}: ${outcome.error ?? 'no error'}`;
  }

  deadLetterHead(record: StoredRecord): JsonObject {
    return { id: record.id, kind: record.doc['kind'] ?? null };
  }

  runnable(): boolean {
    return this.canRun;
  }
}

/** A memory store that records its commits and, at each dead-letter line, the status its job had then. */
class WatchedStore extends MemoryStore {
  readonly batches: Batch[] = [];
  readonly statusAtLine: unknown[] = [];
  /** Called before each commit; a test makes a record change under a writer with it. */
  before: ((batch: Batch) => Promise<void>) | undefined;

  override async commit(batch: Batch): Promise<CommitResult> {
    await this.before?.(batch);
    this.batches.push(batch);
    return super.commit(batch);
  }

  override appendSideLog(name: string, entry: JsonObject): Promise<SideLogResult> {
    this.statusAtLine.push(this.get(SPACES.space, String(entry['id']))?.doc['status']);
    return super.appendSideLog(name, entry);
  }
}

interface Setup {
  readonly clock: ManualClock;
  readonly store: WatchedStore;
  readonly policy: ToyPolicy;
  readonly queue: JobQueue;
  /** Another queue of the same policy over the same store (a restart). */
  another(): JobQueue;
  add(id: string, body?: string): Promise<void>;
}

function setup(options: { clock?: Clock; random?: Random } = {}): Setup {
  const clock = new ManualClock();
  const store = new WatchedStore({ clock });
  const writer = new Writer({ store, clock, representations: new RepresentationCache(), collectionConfig: () => undefined });
  const policy = new ToyPolicy();
  const another = (): JobQueue =>
    new JobQueue(policy, {
      store,
      writer,
      clock: options.clock ?? clock,
      random: options.random ?? LONGEST,
      log: () => {},
      drainTimeoutMs: 1000,
    });
  const queue = another();
  const add = async (id: string, body = `{"toy":"${id}"}`): Promise<void> => {
    const item = { id, kind: 'toy.kind', status: 'waiting', attempts: 0 };
    const written = await writer.write(twoRecordJob(SPACES, id, item, body, clock.now(), clock.now() + 86_400_000));
    assert.ok(written.ok);
  };
  return { clock, store, policy, queue, another, add };
}

/** Lets the runs whose outcomes were just written end. */
async function settle(): Promise<void> {
  for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setImmediate(resolve));
}

async function stop(queue: JobQueue): Promise<void> {
  await queue.drain();
  await queue.close();
}

describe('JobQueue', () => {
  it("should write a done job with the policy's word and fields, and drop its body", async () => {
    const { store, queue, policy, add } = setup();
    await queue.start();
    await add('a', '{"v":1}');
    const done = await recordWhere(store, SPACES.space, 'a', (record) => record.doc['status'] === 'finished');
    assert.deepEqual(done.doc, { id: 'a', kind: 'toy.kind', status: 'finished', attempts: 1, finishedAt: 'then' });
    assert.equal(done.dueAt, undefined);
    assert.equal(store.get(SPACES.bodySpace, 'a'), undefined);
    assert.deepEqual(policy.runs, [{ id: 'a', body: '{"v":1}', attempt: 1 }]);
    await stop(queue);
  });

  it('should retry on the backoff, then write the dead-letter line before the status dead', async () => {
    const { clock, store, queue, policy, add } = setup();
    policy.script.push(...[1, 2, 3].map((n): RunOutcome => ({ kind: 'retry', set: { code: n }, error: `e${n}` })));
    await queue.start();
    await add('r');
    let record = await recordWhere(store, SPACES.space, 'r', (found) => found.doc['attempts'] === 1);
    for (const [attempt, wait] of [[1, 2000], [2, 4000]] as const) {
      assert.equal(record.doc['status'], 'failed');
      assert.equal(record.doc['lastError'], `e${attempt}`);
      assert.equal(record.doc['code'], attempt);
      // Full jitter at its top waits the whole ceiling, min(cap, base × factor^attempts).
      assert.equal(record.dueAt, clock.now() + wait);
      assert.equal(record.doc['nextAttemptAt'], new Date(clock.now() + wait).toISOString());
      clock.advance(wait);
      record = await recordWhere(store, SPACES.space, 'r', (found) => found.doc['attempts'] === attempt + 1);
    }
    assert.equal(record.doc['status'], 'dead');
    assert.equal(record.doc['lastError'], 'gave up after 3: e3');
    assert.equal(record.doc['nextAttemptAt'], undefined);
    assert.equal(record.dueAt, undefined);
    assert.deepEqual(await store.readSideLog('toy-dead-letter'), [
      { id: 'r', kind: 'toy.kind', deadAt: new Date(clock.now()).toISOString(), attempts: 3, code: 3, lastError: 'gave up after 3: e3', body: '{"toy":"r"}' },
    ]);
    assert.deepEqual(store.statusAtLine, ['failed'], 'the line is written while the job is not dead yet');
    assert.ok(store.get(SPACES.bodySpace, 'r') !== undefined, 'a dead job keeps its body');
    await stop(queue);
  });

  it("should wait a Retry-After clamped to the schedule's cap, and forget a last error a retry does not have", async () => {
    const { clock, store, queue, policy, add } = setup();
    policy.script.push({ kind: 'retry', set: {}, error: 'first' }, { kind: 'retry', set: {}, retryAfterMs: 60_000 });
    await queue.start();
    await add('later');
    await recordWhere(store, SPACES.space, 'later', (record) => record.doc['attempts'] === 1);
    clock.advance(2000);
    const record = await recordWhere(store, SPACES.space, 'later', (found) => found.doc['attempts'] === 2);
    assert.equal(record.dueAt, clock.now() + BACKOFF.schedule.capMs);
    assert.equal(record.doc['lastError'], undefined);
    await stop(queue);
  });

  it("should write a dead job's further changes in the batch that makes it dead", async () => {
    const { store, queue, policy, add } = setup();
    const also = { kind: 'put' as const, collection: '$toy-owners', id: 'o', doc: { disabled: true } };
    policy.script.push({ kind: 'dead', set: { code: 410 }, error: 'gone', also: [also] });
    await queue.start();
    await add('d');
    const dead = await recordWhere(store, SPACES.space, 'd', (record) => record.doc['status'] === 'dead');
    assert.deepEqual([dead.doc['attempts'], dead.doc['code'], dead.doc['lastError']], [1, 410, 'gone']);
    const batch = store.batches.at(-1) as Batch;
    assert.deepEqual(batch.mutations.map((mutation) => mutation.collection), [SPACES.space, '$toy-owners']);
    await stop(queue);
  });

  it('should park a job it cannot run, and resume parked jobs between start and drain only', async () => {
    const { store, queue, policy, add } = setup();
    policy.canRun = false;
    policy.script.push({ kind: 'park' });
    queue.resume();
    await queue.start();
    await add('p');
    const parked = await recordWhere(store, SPACES.space, 'p', (record) => record.dueAt === undefined);
    assert.equal(parked.doc['status'], 'waiting');
    policy.canRun = true;
    queue.resume();
    await recordWhere(store, SPACES.space, 'p', (record) => record.doc['status'] === 'finished');
    assert.equal(policy.runs.length, 2);
    await stop(queue);
    // A parked job and a queue that is not running: resume() writes nothing; the next start resumes it.
    const later = setup();
    later.policy.canRun = false;
    later.policy.script.push({ kind: 'park' });
    await later.queue.start();
    await later.add('q');
    await recordWhere(later.store, SPACES.space, 'q', (record) => record.dueAt === undefined);
    await stop(later.queue);
    later.policy.canRun = true;
    const commits = later.store.batches.length;
    later.queue.resume();
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(later.store.batches.length, commits, 'nothing written after a drain');
    const again = later.another();
    again.resume();
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(later.store.batches.length, commits, 'nothing written before a start');
    await again.start();
    await recordWhere(later.store, SPACES.space, 'q', (record) => record.doc['status'] === 'finished');
    await stop(again);
  });

  it('should queue a dead job again from its first attempt, and answer missing and done', async () => {
    const { clock, store, queue, policy, add } = setup();
    policy.script.push({ kind: 'dead', set: {}, error: 'bad' });
    await queue.start();
    await add('x');
    await recordWhere(store, SPACES.space, 'x', (record) => record.doc['status'] === 'dead');
    // The run ends once its outcome is written: until then it is running.
    await settle();
    assert.deepEqual(await queue.requeue('none'), { result: 'missing' });
    policy.canRun = false;
    policy.script.push({ kind: 'park' });
    const requeued = await queue.requeue('x');
    await recordWhere(store, SPACES.space, 'x', (found) => found.dueAt === undefined && found.doc['status'] === 'waiting');
    assert.equal(requeued.result, 'queued');
    const record = requeued.result === 'queued' ? requeued.record : undefined;
    assert.deepEqual(record?.doc, { id: 'x', kind: 'toy.kind', status: 'waiting', attempts: 0 });
    assert.equal(record?.dueAt, clock.now());
    policy.canRun = true;
    queue.resume();
    await recordWhere(store, SPACES.space, 'x', (found) => found.doc['status'] === 'finished');
    await settle();
    assert.deepEqual(policy.runs.map((run) => run.attempt), [1, 1, 1]);
    assert.deepEqual(await queue.requeue('x'), { result: 'refused', status: 'finished' });
    await stop(queue);
  });

  it('should refuse to re-queue a job that runs, or waits for its first run, and run a failed one now, once', async () => {
    const { clock, store, queue, policy, add } = setup();
    // The first run of `f` fails; the first run of `r` hangs until the test lets it finish.
    let finishRun: (() => void) | undefined;
    const run = policy.run.bind(policy);
    policy.run = async (record, body, attempt) => {
      if (record.id === 'r') await new Promise<void>((resolve) => (finishRun = resolve));
      return run(record, body, attempt);
    };
    policy.script.push({ kind: 'retry', set: {}, error: 'not yet' });
    await queue.start();
    await add('f');
    const failed = await recordWhere(store, SPACES.space, 'f', (record) => record.doc['status'] === 'failed');
    await settle();
    assert.equal(failed.dueAt, clock.now() + 2000, 'its next attempt is due later');
    const requeued = await queue.requeue('f');
    assert.equal(requeued.result, 'queued');
    assert.equal(requeued.result === 'queued' ? requeued.record.dueAt : undefined, clock.now(), 'due now');
    await recordWhere(store, SPACES.space, 'f', (record) => record.doc['status'] === 'finished');
    assert.deepEqual(policy.runs.map((entry) => [entry.id, entry.attempt]), [['f', 1], ['f', 2]]);

    await add('r');
    await add('w');
    while (finishRun === undefined) await settle();
    assert.deepEqual(await queue.requeue('r'), { result: 'refused', status: 'running' });
    assert.deepEqual(await queue.requeue('w'), { result: 'refused', status: 'waiting' }, 'one worker: w waits behind r');
    finishRun();
    await recordWhere(store, SPACES.space, 'w', (record) => record.doc['status'] === 'finished');
    assert.equal(store.get(SPACES.space, 'r')?.doc['status'], 'finished');
    assert.deepEqual(policy.runs.slice(2).map((entry) => entry.id), ['r', 'w'], 'each ran once');
    await stop(queue);
  });

  it('should give up a re-queue with unavailable when the job keeps changing under it, after a bounded number of tries', async () => {
    // Real timers (the compare-and-swap waits between tries) drawn at zero: the test takes no time.
    const zero: Random = { bytes: (size) => Buffer.alloc(size, 1), fraction: () => 0 };
    let time = 1_700_000_000_000;
    const { store, queue, policy, add } = setup({ clock: clockAt(() => time), random: zero });
    policy.script.push({ kind: 'dead', set: {}, error: 'bad' });
    await queue.start();
    await add('hot');
    await recordWhere(store, SPACES.space, 'hot', (record) => record.doc['status'] === 'dead');
    await settle();
    let tries = 0;
    store.before = async (batch) => {
      if (!batch.mutations.some((mutation) => mutation.id === 'hot' && mutation.kind === 'patch')) return;
      tries++;
      time++;
      // Another writer gets there first, every time (straight to the store, past this hook).
      const touch = { kind: 'patch' as const, collection: SPACES.space, id: 'hot', set: { touched: tries } };
      await MemoryStore.prototype.commit.call(store, { mutations: [touch] });
    };
    assert.deepEqual(await queue.requeue('hot'), { result: 'unavailable' });
    assert.equal(tries, 12, 'the default compare-and-swap policy: 12 decisions, then unavailable');
    await stop(queue);
  });

  it('should move bodies kept under a former name of its body space at start, expiry and all', async () => {
    const { clock, store, queue } = setup();
    const expiresAt = clock.now() + 5000;
    await store.commit({
      mutations: [
        { kind: 'put', collection: SPACES.space, id: 'old', doc: { id: 'old', status: 'dead', attempts: 3 }, expiresAt },
        { kind: 'put', collection: '$toy-payloads', id: 'old', doc: { body: '{"old":true}' }, expiresAt },
      ],
    });
    await queue.start();
    assert.equal(store.count('$toy-payloads'), 0);
    const moved = store.get(SPACES.bodySpace, 'old');
    assert.deepEqual([moved?.doc, moved?.expiresAt], [{ body: '{"old":true}' }, expiresAt]);
    await stop(queue);
  });
});

/** The toy policy keeping each job's body in its item (`itemBodies`), with a member beside it. */
class ItemBodyPolicy extends ToyPolicy {
  readonly itemBodies = { text: 'text', beside: ['extra'] };
}

describe('JobQueue with bodies kept in the item', () => {
  function itemSetup(): Setup & { policy: ItemBodyPolicy; addInItem(id: string, body: string): Promise<void> } {
    const clock = new ManualClock();
    const store = new WatchedStore({ clock });
    const writer = new Writer({ store, clock, representations: new RepresentationCache(), collectionConfig: () => undefined });
    const policy = new ItemBodyPolicy();
    const options = { store, writer, clock, random: LONGEST, log: () => {}, drainTimeoutMs: 1000 };
    const another = (): JobQueue => new JobQueue(policy, options);
    const expiresAt = clock.now() + 86_400_000;
    const add = async (id: string, body = `{"toy":"${id}"}`): Promise<void> => {
      const item = { id, kind: 'toy.kind', status: 'waiting', attempts: 0 };
      assert.ok((await writer.write(twoRecordJob(SPACES, id, item, body, clock.now(), expiresAt))).ok);
    };
    const addInItem = async (id: string, body: string): Promise<void> => {
      const item = { id, kind: 'toy.kind', status: 'waiting', attempts: 0, text: body, extra: { with: 'it' } };
      assert.ok((await writer.write([jobItem(SPACES, id, item, clock.now(), expiresAt)])).ok);
    };
    return { clock, store, policy, queue: another(), another, add, addInItem };
  }

  it('should run a job with the body its item holds, one record, and unset it with the done', async () => {
    const { store, queue, policy, addInItem } = itemSetup();
    await queue.start();
    await addInItem('a', '{"v":1}');
    assert.equal(store.batches[0]?.mutations.length, 1, 'one record per job');
    const done = await recordWhere(store, SPACES.space, 'a', (record) => record.doc['status'] === 'finished');
    assert.deepEqual(done.doc, { id: 'a', kind: 'toy.kind', status: 'finished', attempts: 1, finishedAt: 'then' });
    assert.deepEqual(policy.runs, [{ id: 'a', body: '{"v":1}', attempt: 1 }]);
    const last = store.batches.at(-1);
    assert.deepEqual(last?.mutations.map((mutation) => [mutation.kind, mutation.collection]), [['patch', SPACES.space]]);
    await stop(queue);
  });

  it('should keep the body in the item through retries and once dead, and write it in the dead-letter line', async () => {
    const { clock, store, queue, policy, addInItem } = itemSetup();
    policy.script.push(...[1, 2, 3].map((n): RunOutcome => ({ kind: 'retry', set: {}, error: `e${n}` })));
    await queue.start();
    await addInItem('r', '{"v":2}');
    const failed = await recordWhere(store, SPACES.space, 'r', (found) => found.doc['attempts'] === 1);
    assert.deepEqual([failed.doc['text'], failed.doc['extra']], ['{"v":2}', { with: 'it' }]);
    clock.advance(2000);
    await recordWhere(store, SPACES.space, 'r', (found) => found.doc['attempts'] === 2);
    clock.advance(4000);
    const dead = await recordWhere(store, SPACES.space, 'r', (found) => found.doc['status'] === 'dead');
    assert.deepEqual([dead.doc['text'], dead.doc['extra']], ['{"v":2}', { with: 'it' }]);
    assert.deepEqual(policy.runs.map((run) => run.body), ['{"v":2}', '{"v":2}', '{"v":2}']);
    const [line] = await store.readSideLog('toy-dead-letter');
    assert.equal(line?.['body'], '{"v":2}');
    await stop(queue);
  });

  it('should run a job stored before with its body in a record of its own, and drop that record with the done', async () => {
    const { store, queue, policy, add } = itemSetup();
    await queue.start();
    await add('old', '{"v":3}');
    const done = await recordWhere(store, SPACES.space, 'old', (record) => record.doc['status'] === 'finished');
    assert.equal(done.doc['text'], undefined);
    assert.equal(store.get(SPACES.bodySpace, 'old'), undefined);
    assert.deepEqual(policy.runs, [{ id: 'old', body: '{"v":3}', attempt: 1 }]);
    await stop(queue);
  });
});
