import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TimeHeap } from '../../lib/store/time-heap.js';
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
