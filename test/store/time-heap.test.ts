import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TimeHeap, TimeQueue } from '../../lib/store/time-heap.js';
import { MemoryStore } from '../../lib/store/memory.js';
import { clockAt } from '../support/clock.js';

describe('TimeHeap', () => {
  it('should pop entries in time order, only once due', () => {
    const queue = new TimeHeap<{ at: number; id: string }>();
    const times = [50, 10, 40, 10, 30, 20, 60, 5];
    times.forEach((at, index) => queue.push({ at, id: String(index) }));
    assert.equal(queue.popDue(4), undefined);
    const popped: number[] = [];
    for (let entry = queue.popDue(45); entry !== undefined; entry = queue.popDue(45)) popped.push(entry.at);
    assert.deepEqual(popped, [5, 10, 10, 20, 30, 40]);
    assert.equal(queue.size, 2);
  });

  it('should visit what is due in time order, ties by order, without taking anything out, and stop when told', () => {
    const queue = new TimeHeap<{ at: number; order: number }>();
    // A seeded shuffle of 500 entries with many equal times.
    let seed = 7;
    const entries = Array.from({ length: 500 }, (_, order) => ({ at: (order * 37) % 50, order }));
    for (let i = entries.length - 1; i > 0; i--) {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      const j = seed % (i + 1);
      [entries[i], entries[j]] = [entries[j] as { at: number; order: number }, entries[i] as { at: number; order: number }];
    }
    for (const entry of entries) queue.push(entry);
    const expected = entries.filter((entry) => entry.at <= 20).sort((a, b) => a.at - b.at || a.order - b.order);
    const visited: { at: number; order: number }[] = [];
    queue.visitDue(20, (entry) => (visited.push(entry), true));
    assert.deepEqual(visited, expected);
    const first: { at: number; order: number }[] = [];
    queue.visitDue(20, (entry) => (first.push(entry), first.length < 7));
    assert.deepEqual(first, expected.slice(0, 7));
    assert.equal(queue.size, 500);
    queue.visitDue(-1, () => assert.fail('nothing is due before the earliest time'));
  });

  it('should break ties of time and order by id, lower first, whatever the order of pushing', () => {
    const queue = new TimeHeap<{ at: number; order: number; id: string }>();
    const ids = ['f', 'a', 'e', 'b', 'd', 'c', 'g'];
    for (const id of ids) queue.push({ at: 10, order: 1, id });
    queue.push({ at: 10, order: 0, id: 'z' });
    queue.push({ at: 9, order: 5, id: 'y' });
    const popped: string[] = [];
    for (let entry = queue.pop(); entry !== undefined; entry = queue.pop()) popped.push(entry.id);
    assert.deepEqual(popped, ['y', 'z', 'a', 'b', 'c', 'd', 'e', 'f', 'g']);
  });
  it('should keep time order when entries pushed in order and out of order are mixed, and visit both', () => {
    const queue = new TimeHeap<{ at: number; id: string }>();
    // In order (the queue part), then earlier ones (the heap part), then in order again.
    for (const at of [10, 20, 30, 30, 40]) queue.push({ at, id: `a${at}` });
    for (const at of [15, 5, 35]) queue.push({ at, id: `b${at}` });
    for (const at of [50, 60]) queue.push({ at, id: `c${at}` });
    const visited: number[] = [];
    queue.visitDue(35, (entry) => (visited.push(entry.at), true));
    assert.deepEqual(visited, [5, 10, 15, 20, 30, 30, 35]);
    const popped: number[] = [];
    for (let entry = queue.pop(); entry !== undefined; entry = queue.pop()) popped.push(entry.at);
    assert.deepEqual(popped, [5, 10, 15, 20, 30, 30, 35, 40, 50, 60]);
    assert.equal(queue.size, 0);
  });

  it('should give back thousands of entries in order after the front was taken many times', () => {
    const queue = new TimeHeap<{ at: number }>();
    const taken: number[] = [];
    for (let at = 0; at < 5000; at++) {
      queue.push({ at });
      if (at % 3 === 0) taken.push((queue.pop() as { at: number }).at);
    }
    for (let entry = queue.pop(); entry !== undefined; entry = queue.pop()) taken.push(entry.at);
    assert.deepEqual(taken, Array.from({ length: 5000 }, (_, at) => at));
  });
});

describe('TimeQueue', () => {
  it('should give ids back in time order, only once due, whatever the order of pushing', () => {
    const queue = new TimeQueue();
    const entries = [[10, 'a'], [30, 'b'], [20, 'c'], [30, 'd'], [5, 'e'], [40, 'f']] as const;
    for (const [at, id] of entries) queue.push(at, id);
    assert.equal(queue.next(), 5);
    assert.equal(queue.popDue(4), undefined);
    const popped: string[] = [];
    for (let id = queue.popDue(30); id !== undefined; id = queue.popDue(30)) popped.push(id);
    assert.deepEqual(popped.slice(0, 3), ['e', 'a', 'c']);
    assert.deepEqual(popped.slice(3).sort(), ['b', 'd']);
    assert.equal(queue.size, 1);
    assert.equal(queue.next(), 40);
  });

  it('should keep only the entries kept by filter, each once, in order', () => {
    const queue = new TimeQueue();
    for (const [at, id] of [[1, 'a'], [2, 'b'], [2, 'b'], [3, 'c'], [0, 'z'], [0, 'z']] as const) queue.push(at, id);
    queue.filter((_, id) => id !== 'c');
    assert.equal(queue.size, 3);
    const popped: string[] = [];
    for (let id = queue.popDue(10); id !== undefined; id = queue.popDue(10)) popped.push(id);
    assert.deepEqual(popped, ['z', 'a', 'b']);
  });
});

describe('StoreState expiry', () => {
  it('should free expired records and tombstones on a later commit, and keep rewritten ones', async () => {
    let now = 1_000;
    const store = new MemoryStore({ clock: clockAt(() => now) });
    await store.commit({ mutations: [{ kind: 'put', collection: '$idem', id: 'a', doc: {}, expiresAt: 2_000 }] });
    await store.commit({ mutations: [{ kind: 'put', collection: '$idem', id: 'b', doc: {}, expiresAt: 2_000 }] });
    await store.commit({ mutations: [{ kind: 'put', collection: '$idem', id: 'b', doc: {}, expiresAt: 9_000 }] });
    await store.commit({ mutations: [{ kind: 'put', collection: 'c', id: 'x', doc: {} }] });
    await store.commit({ mutations: [{ kind: 'delete', collection: 'c', id: 'x', retainUntil: 2_000 }] });
    assert.equal(store.count('$idem'), 2);
    now = 3_000;
    await store.commit({ mutations: [{ kind: 'put', collection: 'c', id: 'y', doc: {} }] });
    assert.equal(store.count('$idem'), 1);
    assert.deepEqual(store.scan('$idem').map((record) => record.id), ['b']);
    assert.equal(store.getTombstone('c', 'x'), undefined);
  });
});

describe('StoreState expiry index', () => {
  it('should let go of the entries of deleted records long before they would fall due', async () => {
    const now = 1_000;
    const store = new MemoryStore({ clock: clockAt(() => now) });
    for (let n = 0; n < 1000; n++) {
      const id = `e${String(n).padStart(4, '0')}`;
      await store.commit({ mutations: [{ kind: 'put', collection: '$bodies', id, doc: {}, expiresAt: 1e9 }] });
      await store.commit({ mutations: [{ kind: 'delete', collection: '$bodies', id }] });
      await store.commit({ mutations: [{ kind: 'put', collection: '$kept', id, doc: {}, expiresAt: 1e9 + n }] });
    }
    // Reached through the state: the index is private, and what it holds is the point of the test.
    const spaces = (store as unknown as { state: { spaces: Map<string, { expiring: TimeQueue }> } }).state.spaces;
    assert.ok((spaces.get('$bodies')?.expiring.size ?? 0) <= 2 * 0 + 64 + 1);
    assert.equal(spaces.get('$kept')?.expiring.size, 1000);
    assert.equal(store.count('$kept'), 1000);
  });

  it('should expire a record rewritten back and forth between two times at its last one', async () => {
    let now = 1_000;
    const store = new MemoryStore({ clock: clockAt(() => now) });
    for (let n = 0; n < 300; n++) {
      const expiresAt = n % 2 === 0 ? 5_000 : 9_000;
      await store.commit({ mutations: [{ kind: 'put', collection: '$idem', id: 'a', doc: { n }, expiresAt }] });
    }
    now = 6_000;
    await store.commit({ mutations: [{ kind: 'put', collection: 'c', id: 'x', doc: {} }] });
    assert.equal(store.get('$idem', 'a')?.doc['n'], 299);
    now = 9_000;
    await store.commit({ mutations: [{ kind: 'put', collection: 'c', id: 'y', doc: {} }] });
    assert.equal(store.count('$idem'), 0);
  });
});

describe('StoreState expiry across collections', () => {
  it('should free what is due in every collection, whatever the order times were written in', async () => {
    let now = 0;
    const store = new MemoryStore({ clock: clockAt(() => now) });
    let seed = 3;
    const random = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const expiries = new Map<string, number>();
    for (let n = 0; n < 600; n++) {
      const collection = `$c${n % 7}`;
      const id = `r${n % 150}`;
      const expiresAt = 100 + Math.floor(random() * 900);
      await store.commit({ mutations: [{ kind: 'put', collection, id, doc: {}, expiresAt }] });
      expiries.set(`${collection} ${id}`, expiresAt);
    }
    for (now = 100; now <= 1000; now += 50) {
      await store.commit({ mutations: [{ kind: 'put', collection: 'tick', id: String(now), doc: {} }] });
      for (let c = 0; c < 7; c++) {
        const live = [...expiries].filter(([key, at]) => key.startsWith(`$c${c} `) && at > now).length;
        assert.equal(store.count(`$c${c}`), live, `$c${c} at ${now}`);
      }
    }
  });
});

describe('StoreState due index', () => {
  it('should drop the entries of finished jobs as they finish, and of deleted ones at the next write', async () => {
    const now = 1_000;
    const store = new MemoryStore({ clock: clockAt(() => now) });
    const dues = (): number =>
      (store as unknown as { state: { spaces: Map<string, { dues: TimeHeap<never> }> } }).state.spaces.get('$jobs')
        ?.dues.size ?? 0;
    for (let n = 0; n < 200; n++) {
      const id = `j${String(n).padStart(3, '0')}`;
      await store.commit({ mutations: [{ kind: 'put', collection: '$jobs', id, doc: {}, dueAt: now }] });
    }
    assert.equal(dues(), 200);
    // Finished in order, each patched to no due time: the runner never asks the store.
    for (let n = 0; n < 100; n++) {
      const id = `j${String(n).padStart(3, '0')}`;
      await store.commit({ mutations: [{ kind: 'patch', collection: '$jobs', id, set: { done: true }, dueAt: null }] });
    }
    assert.equal(dues(), 100);
    // The job on top deleted, then another job written: its entry goes too.
    await store.commit({ mutations: [{ kind: 'delete', collection: '$jobs', id: 'j100' }] });
    await store.commit({ mutations: [{ kind: 'put', collection: '$jobs', id: 'k', doc: {}, dueAt: now + 5 }] });
    assert.equal(dues(), 100);
    assert.deepEqual(store.due('$jobs', now, 2).map((record) => record.id), ['j101', 'j102']);
  });
});
