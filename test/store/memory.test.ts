// MemoryStore (lib/store/memory.ts) against the shared Store conformance suite, then its group commit.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryStore } from '../../lib/store/memory.js';
import { storeConformance } from './conformance.js';

storeConformance('MemoryStore', async (options, run) => {
  const store = new MemoryStore(options);
  try {
    await run(store);
  } finally {
    await store.close();
  }
});

describe('MemoryStore group commit', () => {
  it('should apply the commits of one turn together once the turn ends, in call order, each seeing the ones before', async () => {
    const store = new MemoryStore();
    const seen: number[] = [];
    store.watch((commit) => seen.push(commit.seq));
    const create = (id: string) => store.commit({ mutations: [{ kind: 'put', collection: 'g', id, doc: {}, expect: { absent: true } }] });
    const results = [create('a'), create('b'), create('a')];
    assert.equal(store.get('g', 'a'), undefined, 'nothing is applied before the turn ends');
    const [first, second, third] = await Promise.all(results);
    assert.equal(first?.ok && first.commit.seq, 1);
    assert.equal(second?.ok && second.commit.seq, 2);
    assert.equal(!third?.ok && third?.reason, 'conflict');
    assert.deepEqual(seen, [1, 2]);
    await store.close();
  });

  it('should answer commits queued before close', async () => {
    const store = new MemoryStore();
    const pending = store.commit({ mutations: [{ kind: 'put', collection: 'g', id: 'a', doc: {} }] });
    await store.close();
    assert.equal((await pending).ok, true);
    assert.equal((await store.commit({ mutations: [{ kind: 'put', collection: 'g', id: 'b', doc: {} }] })).ok, false);
  });
});
