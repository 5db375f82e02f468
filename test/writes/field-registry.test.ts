// Tests for lib/writes/field-registry.ts: the property paths of a document, and the registry patches the write
// path adds for paths a collection has not had before (CONVENTIONS.md#filter-errors-and-budget).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { JsonObject } from '../../lib/json.js';
import { MemoryStore } from '../../lib/store/memory.js';
import { FIELDS_SPACE, fieldRegistrations, missingRegistrations, pathKey, pathsOf } from '../../lib/writes/field-registry.js';

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


describe('pathKey', () => {
  it('should escape "/" and "~" in segments (RFC 6901 §3) and join them with "/"', () => {
    assert.equal(pathKey(['a', 'b/c', 'd~e']), 'a/b~1c/d~0e');
  });
});

describe('fieldRegistrations', () => {
  it('should register the paths of new documents, once per collection, and nothing for system spaces', () => {
    const store = new MemoryStore();
    const registrations = fieldRegistrations(store, [
      { kind: 'put', collection: 'products', id: 'a', doc: { id: 'a', name: 'x' } },
      { kind: 'put', collection: 'products', id: 'b', doc: { id: 'b', dims: { w: 1 } } },
      { kind: 'put', collection: '$queries', id: 'q', doc: { filter: 'x' } },
      { kind: 'delete', collection: 'orders', id: 'o' },
    ]);
    assert.deepEqual(registrations, [{ kind: 'patch', collection: FIELDS_SPACE, id: 'products', set: { id: 1, name: 1, dims: 1, 'dims/w': 1 }, upsert: true }]);
  });

  it('should add nothing once the registry knows every path', async () => {
    const store = new MemoryStore();
    await store.commit({ mutations: [{ kind: 'patch', collection: FIELDS_SPACE, id: 'products', set: { id: 1, name: 1 }, upsert: true }] });
    assert.deepEqual(fieldRegistrations(store, [{ kind: 'put', collection: 'products', id: 'a', doc: { id: 'a', name: 'y' } }]), []);
    assert.deepEqual(fieldRegistrations(store, [{ kind: 'put', collection: 'products', id: 'a', doc: { id: 'a', price: 1 } }]).map((m) => m.kind === 'patch' && m.set), [{ price: 1 }]);
  });

  it('should register a "__proto__" path as plain data', () => {
    const [registration] = fieldRegistrations(new MemoryStore(), [{ kind: 'put', collection: 'c', id: 'a', doc: JSON.parse('{"id":"a","__proto__":1}') as JsonObject }]);
    assert.ok(registration?.kind === 'patch');
    assert.equal(Object.hasOwn(registration.set, '__proto__'), true);
    assert.equal(Object.getPrototypeOf(registration.set), Object.prototype);
  });
});

describe('missingRegistrations', () => {
  it('should register the union of paths of collections written before the registry, and nothing after', async () => {
    const store = new MemoryStore();
    await store.commit({ mutations: [
      { kind: 'put', collection: 'old', id: 'a', doc: { id: 'a', x: 1 } },
      { kind: 'put', collection: 'old', id: 'b', doc: { id: 'b', y: { z: 2 } } },
      { kind: 'put', collection: '$meta', id: 'seed', doc: {} },
    ] });
    const missing = missingRegistrations(store);
    assert.deepEqual(missing, [{ kind: 'patch', collection: FIELDS_SPACE, id: 'old', set: { id: 1, x: 1, y: 1, 'y/z': 1 }, upsert: true }]);
    await store.commit({ mutations: missing });
    assert.deepEqual(missingRegistrations(store), []);
  });
});
