import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { lowerBound, SortedKeys, upperBound } from '../../lib/store/sorted-keys.js';
import { mulberry32 } from '../support/random.js';

describe('lowerBound and upperBound', () => {
  it('should find the first element >= and > the key', () => {
    const keys = ['a', 'c', 'c', 'e'];
    assert.equal(lowerBound(keys, 'c'), 1);
    assert.equal(upperBound(keys, 'c'), 3);
    assert.equal(lowerBound(keys, 'b'), 1);
    assert.equal(upperBound(keys, 'z'), 4);
    assert.equal(lowerBound([], 'a'), 0);
  });

  it('should compare by UTF-16 code unit, not by locale', () => {
    assert.equal(lowerBound(['B', 'a'], 'a'), 1);
    assert.equal(upperBound(['Z', 'a', '~'], 'a'), 2);
  });
});

/** Inserts or removes `id` in both, and checks that SortedKeys says what the model says. */
function insertOrRemove(keys: SortedKeys, model: Set<string>, id: string, insert: boolean): void {
  if (insert) {
    assert.equal(keys.insert(id), !model.has(id));
    model.add(id);
  } else {
    assert.equal(keys.remove(id), model.has(id));
    model.delete(id);
  }
}

/** SortedKeys holds exactly the model's ids, ascending. */
function assertSame(keys: SortedKeys, model: ReadonlySet<string>): void {
  const expected = [...model].sort();
  assert.deepEqual([...keys.after()], expected);
  assert.equal(keys.size, expected.length);
}

describe('SortedKeys', () => {
  it('should keep ids ascending and unique across random inserts and removes (many chunks)', () => {
    const random = mulberry32(7);
    const keys = new SortedKeys();
    const model = new Set<string>();
    for (let round = 0; round < 20_000; round++) {
      const id = `k${Math.floor(random() * 5000)}`;
      insertOrRemove(keys, model, id, random() < 0.7);
    }
    assertSame(keys, model);
  });

  it('should keep order when time-ordered ids are added at the end and taken from the front, mixed with others', () => {
    const random = mulberry32(11);
    const keys = new SortedKeys();
    const model = new Set<string>();
    let next = 0;
    let first = 0;
    for (let round = 0; round < 20_000; round++) {
      const roll = random();
      if (roll < 0.5) {
        const id = `t${String(next++).padStart(6, '0')}`;
        assert.equal(keys.insert(id), true);
        model.add(id);
      } else if (roll < 0.85 && first < next) {
        const id = `t${String(first++).padStart(6, '0')}`;
        assert.equal(keys.remove(id), model.has(id));
        model.delete(id);
      } else {
        // An id before or among the others, added or taken anywhere.
        const id = `${random() < 0.5 ? 'a' : 't'}${String(Math.floor(random() * next)).padStart(6, '0')}x`;
        insertOrRemove(keys, model, id, random() < 0.5);
      }
    }
    assertSame(keys, model);
  });

  it('should list the ids strictly after a key, whether or not the key is present', () => {
    const keys = new SortedKeys();
    for (let n = 0; n < 3000; n += 2) keys.insert(String(n).padStart(5, '0'));
    assert.deepEqual([...keys.after('02000')].slice(0, 2), ['02002', '02004']);
    assert.deepEqual([...keys.after('02001')].slice(0, 2), ['02002', '02004']);
    assert.deepEqual([...keys.after('99999')], []);
    assert.deepEqual([...keys.after('')].length, 1500);
  });

  it('should load a sorted array in one pass and keep working after it', () => {
    const keys = new SortedKeys();
    keys.replaceAll(Array.from({ length: 2000 }, (_, n) => `id${String(n).padStart(4, '0')}`));
    assert.equal(keys.size, 2000);
    assert.equal(keys.insert('id0500x'), true);
    assert.equal(keys.insert('id0500'), false);
    assert.equal(keys.remove('id1999'), true);
    const all = [...keys.after()];
    assert.equal(all.length, 2000);
    assert.deepEqual(all, [...all].sort());
  });

  it('should answer false to removing from an empty set', () => {
    assert.equal(new SortedKeys().remove('a'), false);
    assert.deepEqual([...new SortedKeys().after('a')], []);
  });
});
