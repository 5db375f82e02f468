// Tests for lib/jobs/outcomes.ts: the next states of finished jobs share commits. An outcome arriving
// while a commit is under way goes into the next one with every other that arrived meanwhile; an
// outcome whose record changed meanwhile is dropped and the rest still written; a store that cannot
// write loses the batch and holds its jobs on the clock before they may run again, except while a drain
// waits for the outcomes in hand.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { OutcomeWriter } from '../../lib/jobs/outcomes.js';
import { MemoryStore } from '../../lib/store/memory.js';
import type { Batch, CommitResult, Mutation } from '../../lib/store/types.js';
import { RepresentationCache } from '../../lib/resources/representation-cache.js';
import { Writer } from '../../lib/writes/writer.js';
import { ManualClock } from '../support/clock.js';

const SPACE = '$jobs';

/** A memory store that can be told to fail its commits, and counts the ones that were asked of it. */
class CountingStore extends MemoryStore {
  commits = 0;
  failing = false;

  override commit(batch: Batch): Promise<CommitResult> {
    this.commits++;
    if (this.failing) return Promise.resolve({ ok: false, reason: 'unavailable', detail: 'the disk is full' });
    return super.commit(batch);
  }
}

function setup(): { clock: ManualClock; store: CountingStore; outcomes: OutcomeWriter; logged: string[] } {
  const clock = new ManualClock();
  const store = new CountingStore({ clock });
  const writer = new Writer({ store, clock, representations: new RepresentationCache(), collectionConfig: () => undefined });
  const logged: string[] = [];
  const outcomes = new OutcomeWriter('test jobs', writer, clock, (_level, message) => logged.push(message));
  return { clock, store, outcomes, logged };
}

async function addJob(store: MemoryStore, id: string): Promise<number> {
  const result = await store.commit({ mutations: [{ kind: 'put', collection: SPACE, id, doc: { status: 'pending' }, dueAt: 0 }] });
  assert.ok(result.ok);
  return result.commit.applied[0]?.record?.version as number;
}

function done(id: string, version: number): Mutation {
  return { kind: 'patch', collection: SPACE, id, set: { status: 'done' }, dueAt: null, expect: { version } };
}

describe('OutcomeWriter', () => {
  it('should write outcomes that arrive during a commit together, in the next commit', async () => {
    const { store, outcomes } = setup();
    const versions: number[] = [];
    for (const id of ['a', 'b', 'c', 'd']) versions.push(await addJob(store, id));
    store.commits = 0;
    const written = ['a', 'b', 'c', 'd'].map((id, index) => outcomes.write([done(id, versions[index] as number)]));
    await Promise.all(written);
    assert.equal(store.commits, 2, 'the first outcome alone, then the three that arrived while it was committed');
    for (const id of ['a', 'b', 'c', 'd']) assert.equal(store.get(SPACE, id)?.doc['status'], 'done');
    assert.deepEqual(store.due(SPACE, Number.MAX_SAFE_INTEGER, 10), []);
  });

  it('should drop an outcome whose record changed meanwhile and write the others of its batch', async () => {
    const { store, outcomes } = setup();
    const first = await addJob(store, 'first');
    const a = await addJob(store, 'a');
    const b = await addJob(store, 'b');
    const c = await addJob(store, 'c');
    // The job `b` is queued again (a newer version) after it ran.
    await store.commit({ mutations: [{ kind: 'patch', collection: SPACE, id: 'b', set: { status: 'requeued' }, dueAt: 5 }] });
    const written = [outcomes.write([done('first', first)]), outcomes.write([done('a', a)]), outcomes.write([done('b', b)]), outcomes.write([done('c', c)])];
    await Promise.all(written);
    assert.deepEqual(['first', 'a', 'b', 'c'].map((id) => store.get(SPACE, id)?.doc['status']), ['done', 'done', 'requeued', 'done']);
    assert.equal(store.get(SPACE, 'b')?.dueAt, 5, "the newer state's due time stands");
  });

  it('should settle a batch the store cannot write only after a pause on the clock, leaving its jobs due', async () => {
    const { clock, store, outcomes, logged } = setup();
    const version = await addJob(store, 'a');
    store.failing = true;
    let settled = false;
    const written = outcomes.write([done('a', version)]).then(() => (settled = true));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(settled, false, 'held until the pause has passed');
    assert.match(logged.join('\n'), /cannot record the outcome of 1 job/);
    clock.advance(999);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(settled, false);
    clock.advance(1);
    await written;
    store.failing = false;
    assert.deepEqual(store.due(SPACE, Number.MAX_SAFE_INTEGER, 10).map((record) => record.id), ['a']);
  });

  it('should let a drain wait for the outcomes in hand, without the pause after a failed write', async () => {
    const { store, outcomes } = setup();
    const a = await addJob(store, 'a');
    const b = await addJob(store, 'b');
    store.failing = true;
    let settled = 0;
    const first = outcomes.write([done('a', a)]).then(() => settled++);
    const second = outcomes.write([done('b', b)]).then(() => settled++);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(settled, 0, 'the failed batch waits out its pause');
    store.failing = false;
    // No clock advance: idle() cuts the pause short, and the batch still waiting is written.
    await outcomes.idle();
    await Promise.all([first, second]);
    assert.equal(settled, 2);
    assert.deepEqual(['a', 'b'].map((id) => store.get(SPACE, id)?.doc['status']), ['pending', 'done']);
  });
});
