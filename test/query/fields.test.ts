// FieldIndex and pathsOf (lib/query/fields.ts): the properties a collection knows (CONTRACT §5: "a
// property that no item of the collection has (or the schema lacks) → 400"), from the declared
// schema or from the union of its items' paths, kept up to date from commits.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CollectionConfig } from '../../lib/config.js';
import type { JsonObject } from '../../lib/json.js';
import { FieldIndex, pathsOf } from '../../lib/query/fields.js';
import { MemoryStore } from '../../lib/store/memory.js';
import type { Mutation } from '../../lib/store/types.js';

type Schema = CollectionConfig['schema'];

interface Harness {
  readonly store: MemoryStore;
  readonly fields: FieldIndex;
  /** How many times the index listed each collection. */
  readonly scans: Map<string, number>;
  put(collection: string, ...docs: JsonObject[]): Promise<void>;
  remove(collection: string, ...ids: string[]): Promise<void>;
}

/** A FieldIndex wired to a MemoryStore the way the server wires it (scan + watch). */
function harness(schemas: Readonly<Record<string, Schema>> = {}): Harness {
  const store = new MemoryStore();
  const scans = new Map<string, number>();
  const fields = new FieldIndex(
    (collection) => (Object.hasOwn(schemas, collection) ? schemas[collection] : undefined),
    (collection) => {
      scans.set(collection, (scans.get(collection) ?? 0) + 1);
      return store.scan(collection);
    },
  );
  store.watch((commit) => fields.observe(commit));
  const commit = async (mutations: Mutation[]): Promise<void> => {
    const result = await store.commit({ mutations });
    assert.ok(result.ok);
  };
  return {
    store,
    fields,
    scans,
    put: (collection, ...docs) => commit(docs.map((doc) => ({ kind: 'put', collection, id: doc['id'] as string, doc }))),
    remove: (collection, ...ids) => commit(ids.map((id) => ({ kind: 'delete', collection, id }))),
  };
}

describe('pathsOf', () => {
  it('should list top-level and nested paths', () => {
    assert.deepEqual(new Set(pathsOf({ a: 1, b: { c: { d: null } } })), new Set(['a', 'b', 'b/c', 'b/c/d']));
  });

  it('should count the fields of objects inside arrays as children of the array name', () => {
    assert.deepEqual(new Set(pathsOf({ lines: [{ qty: 1 }, { qty: 2, sku: 'x' }, 3, 'y'] })), new Set(['lines', 'lines/qty', 'lines/sku']));
  });

  it('should list scalar-array and empty-object fields only by name', () => {
    assert.deepEqual(new Set(pathsOf({ tags: ['a', 'b'], meta: {}, none: [] })), new Set(['tags', 'meta', 'none']));
  });

  it('should list an own __proto__ key like any other', () => {
    assert.deepEqual(new Set(pathsOf(JSON.parse('{"__proto__": {"x": 1}}') as JsonObject)), new Set(['__proto__', '__proto__/x']));
  });

  it('should give the empty set for an empty document', () => {
    assert.equal(pathsOf({}).size, 0);
  });
});

describe('FieldIndex', () => {
  describe('without a schema: the union of the items\u2019 fields', () => {
    it('should know the fields some item has and no others', async () => {
      const h = harness();
      await h.put('products', { id: 'a', name: 'x' }, { id: 'b', price: 2, origin: { country: 'DE' } });
      for (const path of [['id'], ['name'], ['price'], ['origin'], ['origin', 'country']]) {
        assert.equal(h.fields.has('products', path), true, path.join('/'));
      }
      for (const path of [['colour'], ['origin', 'city'], ['name', 'x'], ['country'], []]) {
        assert.equal(h.fields.has('products', path), false, path.join('/'));
      }
    });

    it('should know paths through arrays of objects', async () => {
      const h = harness();
      await h.put('orders', { id: 'o1', lines: [{ qty: 1, item: { sku: 's' } }] });
      assert.equal(h.fields.has('orders', ['lines']), true);
      assert.equal(h.fields.has('orders', ['lines', 'qty']), true);
      assert.equal(h.fields.has('orders', ['lines', 'item', 'sku']), true);
      assert.equal(h.fields.has('orders', ['lines', 'price']), false);
    });

    it('should know nothing of an empty or unknown collection', () => {
      const h = harness();
      assert.equal(h.fields.has('nothing', ['name']), false);
    });

    it('should keep collections apart', async () => {
      const h = harness();
      await h.put('a', { id: '1', onlyA: true });
      await h.put('b', { id: '1', onlyB: true });
      assert.equal(h.fields.has('a', ['onlyA']), true);
      assert.equal(h.fields.has('a', ['onlyB']), false);
      assert.equal(h.fields.has('b', ['onlyB']), true);
    });

    it('should learn fields from later commits', async () => {
      const h = harness();
      await h.put('products', { id: 'a', name: 'x' });
      assert.equal(h.fields.has('products', ['price']), false);
      await h.put('products', { id: 'b', price: 1, dims: { w: 2 } });
      assert.equal(h.fields.has('products', ['price']), true);
      assert.equal(h.fields.has('products', ['dims', 'w']), true);
    });

    it('should forget a field once the last item having it is deleted', async () => {
      const h = harness();
      await h.put('products', { id: 'a', colour: 'red' }, { id: 'b', colour: 'blue' }, { id: 'c', name: 'n' });
      assert.equal(h.fields.has('products', ['colour']), true);
      await h.remove('products', 'a');
      assert.equal(h.fields.has('products', ['colour']), true);
      await h.remove('products', 'b');
      assert.equal(h.fields.has('products', ['colour']), false);
      assert.equal(h.fields.has('products', ['name']), true);
    });

    it('should forget a field once the last item having it is replaced without it', async () => {
      const h = harness();
      await h.put('products', { id: 'a', colour: 'red', origin: { country: 'DE' } });
      assert.equal(h.fields.has('products', ['origin', 'country']), true);
      await h.put('products', { id: 'a', origin: 'DE' });
      assert.equal(h.fields.has('products', ['colour']), false);
      assert.equal(h.fields.has('products', ['origin', 'country']), false);
      assert.equal(h.fields.has('products', ['origin']), true);
    });

    it('should count an array-element path once per item, so deleting the item forgets it', async () => {
      const h = harness();
      await h.put('orders', { id: 'o1', lines: [{ qty: 1 }, { qty: 2 }, { qty: 3 }] }, { id: 'o2', lines: [{ qty: 4 }] });
      assert.equal(h.fields.has('orders', ['lines', 'qty']), true);
      await h.remove('orders', 'o2');
      assert.equal(h.fields.has('orders', ['lines', 'qty']), true);
      await h.remove('orders', 'o1');
      assert.equal(h.fields.has('orders', ['lines', 'qty']), false);
      assert.equal(h.fields.has('orders', ['lines']), false);
    });

    it('should keep a field that two commits replace back and forth', async () => {
      const h = harness();
      await h.put('products', { id: 'a', x: 1 });
      assert.equal(h.fields.has('products', ['x']), true);
      for (let i = 0; i < 5; i++) await h.put('products', { id: 'a', x: i });
      assert.equal(h.fields.has('products', ['x']), true);
      await h.remove('products', 'a');
      assert.equal(h.fields.has('products', ['x']), false);
    });

    it('should read an own __proto__ field as a field, and not invent one', async () => {
      const h = harness();
      await h.put('products', { id: 'a' });
      assert.equal(h.fields.has('products', ['__proto__']), false);
      assert.equal(h.fields.has('products', ['constructor']), false);
      await h.put('products', JSON.parse('{"id": "b", "__proto__": {"x": 1}}') as JsonObject);
      assert.equal(h.fields.has('products', ['__proto__']), true);
      assert.equal(h.fields.has('products', ['__proto__', 'x']), true);
    });

    // A stored key may contain "/"; the index joins paths with "/", so {"a/b": 1} must not make the
    // nested path a → b known (CONTRACT §5: a property no item has → 400).
    it('should not mistake a key containing "/" for a nested path', async () => {
      const h = harness();
      await h.put('products', { id: 'a', 'a/b': 1 });
      assert.equal(h.fields.has('products', ['a']), false);
      assert.equal(h.fields.has('products', ['a', 'b']), false);
    });
  });

  describe('the first scan is lazy', () => {
    it('should not list a collection before it is asked about, and list it once', async () => {
      const h = harness();
      await h.put('products', { id: 'a', name: 'x' });
      await h.put('other', { id: 'a', name: 'x' });
      assert.equal(h.scans.size, 0);
      assert.equal(h.fields.has('products', ['name']), true);
      assert.equal(h.fields.has('products', ['price']), false);
      await h.put('products', { id: 'b', price: 1 });
      assert.equal(h.fields.has('products', ['price']), true);
      assert.deepEqual([...h.scans], [['products', 1]]);
    });

    it('should reflect commits made before the first question through that scan, counted once', async () => {
      const h = harness();
      await h.put('products', { id: 'a', colour: 'red' });
      await h.put('products', { id: 'b', colour: 'red' });
      await h.remove('products', 'a');
      assert.equal(h.fields.has('products', ['colour']), true);
      await h.remove('products', 'b');
      assert.equal(h.fields.has('products', ['colour']), false);
      assert.equal(h.scans.get('products'), 1);
    });
  });

  describe('with a schema', () => {
    const schemas: Readonly<Record<string, Schema>> = {
      products: { name: 'string', price: 'number', origin: 'object', lines: 'array', active: 'boolean' },
    };

    it('should know the declared fields and id even when no item has them', () => {
      const h = harness(schemas);
      for (const name of ['id', 'name', 'price', 'origin', 'lines', 'active']) assert.equal(h.fields.has('products', [name]), true, name);
    });

    it('should not know an undeclared field even when items have it', async () => {
      const h = harness(schemas);
      await h.put('products', { id: 'a', colour: 'red', name: 'x' });
      assert.equal(h.fields.has('products', ['colour']), false);
      assert.equal(h.fields.has('products', ['__proto__']), false);
      assert.equal(h.fields.has('products', ['constructor']), false);
    });

    it('should know nothing below a scalar field or id', async () => {
      const h = harness(schemas);
      await h.put('products', { id: 'a', name: { odd: 1 } });
      assert.equal(h.fields.has('products', ['name', 'odd']), false);
      assert.equal(h.fields.has('products', ['id', 'x']), false);
      assert.equal(h.fields.has('products', []), false);
    });

    it('should know paths below an object or array field that some item has', async () => {
      const h = harness(schemas);
      await h.put('products', { id: 'a', origin: { country: 'DE' }, lines: [{ qty: 1 }] });
      assert.equal(h.fields.has('products', ['origin', 'country']), true);
      assert.equal(h.fields.has('products', ['lines', 'qty']), true);
      assert.equal(h.fields.has('products', ['origin', 'city']), false);
      await h.remove('products', 'a');
      assert.equal(h.fields.has('products', ['origin', 'country']), false);
      assert.equal(h.fields.has('products', ['origin']), true);
    });

    it('should not scan for top-level questions', () => {
      const h = harness(schemas);
      h.fields.has('products', ['name']);
      h.fields.has('products', ['colour']);
      assert.equal(h.scans.size, 0);
    });
  });
});
