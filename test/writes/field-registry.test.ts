// Tests for lib/writes/field-registry.ts: the property paths of a document, and the registrations the write
// path adds for paths a collection has not had before (CONVENTIONS.md#filter-errors-and-budget), within
// the limits of distinct paths per document and per collection (CONVENTIONS.md#limits).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { JsonObject } from '../../lib/json.js';
import { MemoryStore } from '../../lib/store/memory.js';
import type { Mutation } from '../../lib/store/types.js';
import { FIELDS_SPACE, FieldRegistry, pathKey, pathsOf, type Registration } from '../../lib/writes/field-registry.js';

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

const ROOMY = { collection: 1_000_000, document: 100_000 } as const;

function put(collection: string, doc: JsonObject): Mutation {
  return { kind: 'put', collection, id: String(doc['id']), doc };
}

/** The registration's records as collection → paths, asserting it was not refused. */
function registered(registration: Registration): Record<string, string[]> {
  assert.ok(registration.ok, JSON.stringify(registration));
  const result: Record<string, string[]> = {};
  for (const mutation of registration.mutations) {
    assert.ok(mutation.kind === 'put' && mutation.collection === FIELDS_SPACE, JSON.stringify(mutation));
    result[mutation.doc['collection'] as string] = [...(mutation.doc['paths'] as string[])].sort();
  }
  return result;
}

/** Commits `changes` with their registrations, as the writer does. */
async function commit(store: MemoryStore, registry: FieldRegistry, changes: Mutation[]): Promise<void> {
  const registration = registry.register(changes, ROOMY);
  assert.ok(registration.ok);
  const result = await store.commit({ mutations: [...changes, ...registration.mutations] });
  registration.release();
  assert.ok(result.ok);
}

describe('FieldRegistry.register', () => {
  it('should register the paths of new documents, once per collection, and nothing for system spaces', () => {
    const registry = new FieldRegistry(new MemoryStore());
    const registration = registry.register([
      put('products', { id: 'a', name: 'x' }),
      put('products', { id: 'b', dims: { w: 1 } }),
      { kind: 'put', collection: '$queries', id: 'q', doc: { filter: 'x' } },
      { kind: 'delete', collection: 'orders', id: 'o' },
    ], ROOMY);
    assert.deepEqual(registered(registration), { products: ['dims', 'dims/w', 'id', 'name'] });
  });

  it('should add nothing once the registry knows every path, and only the new paths after', async () => {
    const store = new MemoryStore();
    const registry = new FieldRegistry(store);
    await commit(store, registry, [put('products', { id: 'a', name: 'x' })]);
    assert.deepEqual([...(registry.paths('products') ?? [])].sort(), ['id', 'name']);
    assert.deepEqual(registered(registry.register([put('products', { id: 'a', name: 'y' })], ROOMY)), {});
    assert.deepEqual(registered(registry.register([put('products', { id: 'a', price: 1 })], ROOMY)), { products: ['price'] });
  });

  it('should find the one new path of a collection that knows the rest: nested, escaped, in an array of objects', async () => {
    const store = new MemoryStore();
    const registry = new FieldRegistry(store);
    const known = { id: 'a', 'a/b': { 'c~d': 1 }, lines: [{ qty: 1 }], tags: ['x'], deep: { l1: { l2: 1 } } };
    await commit(store, registry, [put('k', known)]);
    assert.deepEqual(registered(registry.register([put('k', { ...known, tags: ['y', ['z']] })], ROOMY)), {});
    assert.deepEqual(registered(registry.register([put('k', { ...known, lines: [{ qty: 2 }, { qty: 3 }] })], ROOMY)), {});
    assert.deepEqual(registered(registry.register([put('k', { ...known, 'a/b': { 'c~e': 1 } })], ROOMY)), { k: ['a~1b/c~0e'] });
    assert.deepEqual(registered(registry.register([put('k', { ...known, lines: [{ qty: 1 }, { sku: 'x' }] })], ROOMY)), { k: ['lines/sku'] });
    assert.deepEqual(registered(registry.register([put('k', { ...known, deep: { l1: { l3: 1 } } })], ROOMY)), { k: ['deep/l1/l3'] });
    // Every path known, but more of them than a document may carry: refused all the same.
    const refused = registry.register([put('k', known)], { collection: 100, document: 3 });
    assert.equal(refused.ok, false);
  });

  // Point 1 of the hardening round: registering k new paths costs O(k), never O(paths known).
  it('should write only the added path when a collection knows 50,000, and rewrite no record it holds', async () => {
    const store = new MemoryStore();
    const registry = new FieldRegistry(store);
    const wide: JsonObject = { id: 'wide' };
    for (let n = 0; n < 50_000; n++) wide[`f${n}`] = n;
    await commit(store, registry, [put('wide', wide)]);
    const before = store.scan(FIELDS_SPACE);
    const changes = [put('wide', { id: 'one', added: 1 })];
    const registration = registry.register(changes, ROOMY);
    assert.deepEqual(registered(registration), { wide: ['added'] });
    assert.ok(registration.ok);
    const result = await store.commit({ mutations: [...changes, ...registration.mutations] });
    assert.ok(result.ok);
    const written = result.commit.applied.filter((applied) => applied.mutation.collection === FIELDS_SPACE);
    assert.deepEqual(written.map((applied) => applied.record?.doc), [{ collection: 'wide', paths: ['added'] }]);
    assert.equal(written[0]?.previous, undefined, 'a new record, not a rewrite of the one holding the 50,000');
    for (const record of before) assert.equal(store.get(FIELDS_SPACE, record.id), record, 'earlier records stay as they were');
    assert.equal(registry.paths('wide')?.size, 50_002);
  });

  it('should register a "__proto__" path as plain data', async () => {
    const store = new MemoryStore();
    const registry = new FieldRegistry(store);
    await commit(store, registry, [put('c', JSON.parse('{"id":"a","__proto__":1}') as JsonObject)]);
    assert.equal(registry.paths('c')?.has('__proto__'), true);
    assert.equal(registry.paths('constructor'), undefined);
  });

  it('should refuse a document with more distinct paths than the document limit, naming it, and reserve nothing', () => {
    const registry = new FieldRegistry(new MemoryStore());
    const refused = registry.register([put('c', { id: 'a' }), put('c', { id: 'b', x: { y: 1 } })], { collection: 100, document: 2 });
    assert.ok(!refused.ok);
    assert.equal(refused.index, 1);
    assert.equal(refused.problem.status, 400);
    assert.match(refused.problem.detail, /3 distinct property paths; limits\.maxPropertyNames\.document allows 2/);
    assert.deepEqual(registered(registry.register([put('c', { id: 'c', z: 1 })], { collection: 2, document: 2 })), { c: ['id', 'z'] });
  });

  it('should count the paths of batches in flight, so concurrent batches cannot pass the collection limit together', () => {
    const registry = new FieldRegistry(new MemoryStore());
    const limits = { collection: 4, document: 10 };
    const first = registry.register([put('c', { id: 'a', x: 1, y: 1 })], limits);
    assert.deepEqual(registered(first), { c: ['id', 'x', 'y'] });
    const second = registry.register([put('c', { id: 'b', z: 1, w: 1 })], limits);
    assert.ok(!second.ok, 'id, x, y in flight; z and w would make five');
    assert.match(second.problem.detail, /limits\.maxPropertyNames\.collection allows 4/);
    assert.deepEqual(registered(registry.register([put('c', { id: 'b', x: 2 })], limits)), { c: ['id', 'x'] }, 'paths in flight add nothing more');
    assert.ok(first.ok);
    first.release();
    first.release();
    assert.ok(registry.register([put('c', { id: 'b', z: 1, w: 1 })], limits).ok, 'a refused batch frees its paths');
  });

  it('should keep taking known paths in a collection already beyond a lower limit, and refuse only additions', async () => {
    const store = new MemoryStore();
    await commit(store, new FieldRegistry(store), [put('c', { id: 'a', p: 1, q: 1, r: 1 })]);
    const registry = new FieldRegistry(store);
    const limits = { collection: 2, document: 10 };
    assert.deepEqual(registered(registry.register([put('c', { id: 'b', p: 1, r: 2 })], limits)), {});
    const refused = registry.register([put('c', { id: 'b', p: 1 }), put('c', { id: 'c', s: 1 })], limits);
    assert.ok(!refused.ok);
    assert.equal(refused.index, 1);
    assert.match(refused.problem.detail, /to 5 distinct property paths \(it has 4\)/);
  });
});

describe('FieldRegistry over a store it did not write', () => {
  it('should read the records of another registry, and number its own records after theirs', async () => {
    const store = new MemoryStore();
    const earlier = new FieldRegistry(store);
    await commit(store, earlier, [put('c', { id: 'a', x: 1 })]);
    await commit(store, earlier, [put('c', { id: 'b', y: 1 })]);
    const registry = new FieldRegistry(store);
    assert.deepEqual([...(registry.paths('c') ?? [])].sort(), ['id', 'x', 'y']);
    const registration = registry.register([put('c', { id: 'c', z: 1 })], ROOMY);
    assert.ok(registration.ok);
    const ids = new Set(store.scan(FIELDS_SPACE).map((record) => record.id));
    for (const mutation of registration.mutations) assert.equal(ids.has(mutation.id), false, mutation.id);
  });

  it('should read the former one-record-per-collection shape and follow its patches', async () => {
    const store = new MemoryStore();
    await store.commit({ mutations: [{ kind: 'patch', collection: FIELDS_SPACE, id: 'old', set: { id: 1, name: 1, 'dims/w': 1 }, upsert: true }] });
    const registry = new FieldRegistry(store);
    assert.deepEqual([...(registry.paths('old') ?? [])].sort(), ['dims/w', 'id', 'name']);
    await store.commit({ mutations: [{ kind: 'patch', collection: FIELDS_SPACE, id: 'old', set: { price: 1 }, upsert: true }] });
    assert.equal(registry.paths('old')?.has('price'), true);
    assert.deepEqual(registered(registry.register([put('old', { id: 'a', name: 'n', tag: 't' })], ROOMY)), { old: ['tag'] });
  });
});

describe('FieldRegistry.missingRegistrations', () => {
  it('should register the union of paths of collections written before the registry, and nothing after', async () => {
    const store = new MemoryStore();
    await store.commit({ mutations: [
      put('old', { id: 'a', x: 1 }),
      put('old', { id: 'b', y: { z: 2 } }),
      { kind: 'put', collection: '$meta', id: 'seed', doc: {} },
    ] });
    const registry = new FieldRegistry(store);
    const missing = registry.missingRegistrations();
    assert.deepEqual(missing.map((mutation) => mutation.kind === 'put' && mutation.doc), [{ collection: 'old', paths: ['id', 'x', 'y', 'y/z'] }]);
    await store.commit({ mutations: missing });
    assert.deepEqual(registry.missingRegistrations(), []);
    assert.deepEqual([...(registry.paths('old') ?? [])].sort(), ['id', 'x', 'y', 'y/z']);
  });
});
