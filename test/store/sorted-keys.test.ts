// Tests for lib/store/sorted-keys.ts: an ascending id array in code-unit order, the order keyset
// paging walks (CONTRACT §5).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { insertKey, lowerBound, removeKey, upperBound } from '../../lib/store/sorted-keys.js';

/** A small deterministic generator (mulberry32), so a failure can be replayed. */
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('lowerBound', () => {
  it('should be 0 for an empty array', () => {
    assert.equal(lowerBound([], 'a'), 0);
  });

  it('should find the index of a present key', () => {
    assert.equal(lowerBound(['a', 'c', 'e'], 'c'), 1);
  });

  it('should find where an absent key would go', () => {
    assert.equal(lowerBound(['a', 'c', 'e'], '0'), 0);
    assert.equal(lowerBound(['a', 'c', 'e'], 'b'), 1);
    assert.equal(lowerBound(['a', 'c', 'e'], 'z'), 3);
  });
});

describe('upperBound', () => {
  it('should be 0 for an empty array', () => {
    assert.equal(upperBound([], 'a'), 0);
  });

  it('should point past a present key', () => {
    assert.equal(upperBound(['a', 'c', 'e'], 'c'), 2);
    assert.equal(upperBound(['a', 'c', 'e'], 'e'), 3);
  });

  it('should equal lowerBound for an absent key', () => {
    for (const key of ['0', 'b', 'd', 'z']) assert.equal(upperBound(['a', 'c', 'e'], key), lowerBound(['a', 'c', 'e'], key), key);
  });
});

describe('insertKey', () => {
  it('should keep the array ascending', () => {
    const keys: string[] = [];
    for (const key of ['m', 'a', 'z', 'c']) insertKey(keys, key);
    assert.deepEqual(keys, ['a', 'c', 'm', 'z']);
  });

  it('should not insert a key twice', () => {
    const keys = ['a', 'b'];
    insertKey(keys, 'a');
    insertKey(keys, 'b');
    assert.deepEqual(keys, ['a', 'b']);
  });

  it('should order by code unit, not by locale or number', () => {
    const keys: string[] = [];
    for (const key of ['b', 'B', '9', '10', '_', '-', '~', 'a', '.']) insertKey(keys, key);
    assert.deepEqual(keys, ['-', '.', '10', '9', 'B', '_', 'a', 'b', '~']);
  });

  it('should agree with sort() and a Set over many random inserts and removes', () => {
    const random = generator(20260101);
    const alphabet = 'ab0Z_~.';
    const keys: string[] = [];
    const model = new Set<string>();
    for (let step = 0; step < 3000; step++) {
      const length = 1 + Math.floor(random() * 3);
      let key = '';
      for (let i = 0; i < length; i++) key += alphabet[Math.floor(random() * alphabet.length)];
      if (random() < 0.6) {
        insertKey(keys, key);
        model.add(key);
      } else {
        removeKey(keys, key);
        model.delete(key);
      }
    }
    assert.ok(model.size > 10, 'the walk should leave keys behind');
    assert.deepEqual(keys, [...model].sort());
  });
});

describe('removeKey', () => {
  it('should remove a present key', () => {
    const keys = ['a', 'b', 'c'];
    removeKey(keys, 'b');
    assert.deepEqual(keys, ['a', 'c']);
  });

  it('should leave the array alone when the key is absent', () => {
    const keys = ['a', 'c'];
    removeKey(keys, 'b');
    removeKey(keys, 'z');
    removeKey(keys, '0');
    assert.deepEqual(keys, ['a', 'c']);
  });

  it('should empty a one-element array', () => {
    const keys = ['only'];
    removeKey(keys, 'only');
    assert.deepEqual(keys, []);
  });
});
