// KnownProperties (lib/query/known-properties.ts): the properties a collection knows
// (CONVENTIONS.md#filter-errors-and-budget), from the declared schema or from every path its items
// have ever had (the field registry the write path keeps), so a query's validity never depends on
// which items exist at the moment.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CollectionConfig } from '../../lib/config.js';
import type { JsonObject } from '../../lib/json.js';
import { KnownProperties } from '../../lib/query/known-properties.js';
import { MemoryStore } from '../../lib/store/memory.js';
import type { Mutation } from '../../lib/store/types.js';
import { FIELDS_SPACE } from '../../lib/writes/field-registry.js';
import { RepresentationCache } from '../../lib/resources/representation-cache.js';
import { Writer } from '../../lib/writes/writer.js';
import { ManualClock } from '../support/clock.js';

type Schema = CollectionConfig['schema'];

interface Harness {
  readonly store: MemoryStore;
  readonly fields: KnownProperties;
  put(collection: string, ...docs: JsonObject[]): Promise<void>;
  remove(collection: string, ...ids: string[]): Promise<void>;
}

/** A KnownProperties over a store written through the write path, the way the server wires them. */
function harness(schemas: Readonly<Record<string, Schema>> = {}): Harness {
  const clock = new ManualClock();
  const store = new MemoryStore({ clock });
  const writer = new Writer({ store, clock, representations: new RepresentationCache(), collectionConfig: () => undefined });
  const fields = new KnownProperties(
    (collection) => (Object.hasOwn(schemas, collection) ? schemas[collection] : undefined),
    (collection) => writer.fields.paths(collection),
  );
  const write = async (mutations: Mutation[]): Promise<void> => {
    const result = await writer.write(mutations);
    assert.ok(result.ok, JSON.stringify(result));
  };
  return {
    store,
    fields,
    put: (collection, ...docs) => write(docs.map((doc) => ({ kind: 'put', collection, id: doc['id'] as string, doc }))),
    remove: (collection, ...ids) => write(ids.map((id) => ({ kind: 'delete', collection, id }))),
  };
}

describe('KnownProperties', () => {
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

    it('should take every property of a collection that has never held an item, so a query there matches nothing instead of failing', () => {
      const h = harness();
      assert.equal(h.fields.has('nothing', ['name']), true);
      assert.equal(h.fields.has('nothing', ['a', 'b']), true);
      assert.deepEqual(h.store.scan(FIELDS_SPACE), [], 'nothing is remembered for a name that holds nothing');
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

    it('should remember a field after the last item having it is deleted', async () => {
      const h = harness();
      await h.put('products', { id: 'a', colour: 'red' }, { id: 'b', colour: 'blue' }, { id: 'c', name: 'n' });
      await h.remove('products', 'a', 'b');
      assert.equal(h.fields.has('products', ['colour']), true);
      await h.remove('products', 'c');
      assert.equal(h.fields.has('products', ['name']), true, 'an emptied collection keeps its properties');
      assert.equal(h.fields.has('products', ['colour', 'x']), false, 'a typo is still unknown');
    });

    it('should remember a field after the last item having it is replaced without it', async () => {
      const h = harness();
      await h.put('products', { id: 'a', colour: 'red', origin: { country: 'DE' } });
      await h.put('products', { id: 'a', origin: 'DE' });
      assert.equal(h.fields.has('products', ['colour']), true);
      assert.equal(h.fields.has('products', ['origin', 'country']), true);
      assert.equal(h.fields.has('products', ['origin']), true);
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
    // nested path a → b known (CONVENTIONS.md#filter-errors-and-budget: a property no item has → 400).
    it('should not mistake a key containing "/" for a nested path', async () => {
      const h = harness();
      await h.put('products', { id: 'a', 'a/b': 1 });
      assert.equal(h.fields.has('products', ['a']), false);
      assert.equal(h.fields.has('products', ['a', 'b']), false);
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
      assert.equal(h.fields.has('products', ['origin', 'country']), true);
      assert.equal(h.fields.has('products', ['origin']), true);
    });

    it('should refuse undeclared fields of a schema collection even before it holds an item', () => {
      const h = harness(schemas);
      assert.equal(h.fields.has('products', ['colour']), false);
      assert.equal(h.fields.has('products', ['name']), true);
    });
  });
});
