// runPage (lib/query/execute.ts) over a real MemoryStore: keyset paging on (orderby keys, id)
// (CONVENTIONS.md#paging: an item that exists for the whole walk is seen exactly once, even while
// others are inserted or deleted), `$top` across pages, `$count` of all matches, and `next` only
// when a next page exists.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { JsonObject } from '../../lib/json.js';
import { runPage, type Page } from '../../lib/query/execute.js';
import type { CollectionQuery } from '../../lib/query/options.js';
import { compareKeys, keyOf, type OrderKey, type SortValue } from '../../lib/query/order.js';
import { planQuery, type QueryPlan } from '../../lib/query/plan.js';
import { MemoryStore } from '../../lib/store/memory.js';
import type { Mutation, StoredRecord } from '../../lib/store/types.js';
import { mulberry32 } from '../support/random.js';

const COLLECTION = 'products';
const BY_PRICE_DESC_NAME: OrderKey[] = [{ path: ['price'], descending: true }, { path: ['name'], descending: false }];
const BY_NAME: OrderKey[] = [{ path: ['name'], descending: false }];
const MAX_PAGES = 100_000;

function pick<T>(random: () => number, choices: readonly T[]): T {
  return choices[Math.floor(random() * choices.length)] as T;
}

function randomId(random: () => number): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789-_.~';
  let id = '';
  for (let i = 0; i < 10; i++) id += pick(random, [...alphabet]);
  return id;
}

/** A document with many ties and mixed types in the ordered fields, to exercise the total order. */
function randomDoc(random: () => number, id: string): JsonObject {
  const doc: JsonObject = { id };
  const priceKind = random();
  if (priceKind < 0.7) doc['price'] = Math.floor(random() * 20);
  else if (priceKind < 0.8) doc['price'] = null;
  else if (priceKind < 0.85) doc['price'] = pick(random, [true, false]);
  else if (priceKind < 0.9) doc['price'] = pick(random, ['cheap', 'dear']);
  else if (priceKind < 0.93) doc['price'] = { amount: Math.floor(random() * 3) };
  if (random() < 0.9) doc['name'] = pick(random, ['tea', 'Tea', 'coffee', 'cocoa', 'mate', '']);
  return doc;
}

function plan(query: Partial<CollectionQuery>): QueryPlan {
  const result = planQuery({ conditions: [], orderby: [], count: false, ...query }, { known: () => true, itemLink: (id) => `/${COLLECTION}/${id}` });
  assert.ok(result.ok);
  return result.plan;
}

async function put(store: MemoryStore, docs: readonly JsonObject[]): Promise<void> {
  const mutations: Mutation[] = docs.map((doc) => ({ kind: 'put', collection: COLLECTION, id: doc['id'] as string, doc }));
  const result = await store.commit({ mutations });
  assert.ok(result.ok);
}

async function remove(store: MemoryStore, ids: readonly string[]): Promise<void> {
  const result = await store.commit({ mutations: ids.map((id): Mutation => ({ kind: 'delete', collection: COLLECTION, id })) });
  assert.ok(result.ok);
}

async function randomStore(random: () => number, size: number): Promise<MemoryStore> {
  const store = new MemoryStore();
  const ids = new Set<string>();
  while (ids.size < size) ids.add(randomId(random));
  await put(store, [...ids].map((id) => randomDoc(random, id)));
  return store;
}

/** Every match, in the order the pages must return them. */
function expectedOrder(store: MemoryStore, queryPlan: QueryPlan): string[] {
  const order = queryPlan.query.orderby;
  return store
    .scan(COLLECTION)
    .filter((record) => queryPlan.matches(record.doc))
    .map((record) => ({ id: record.id, key: keyOf(record.doc, record.id, order) }))
    .sort((a, b) => compareKeys(a.key, b.key, order))
    .map((entry) => entry.id);
}

interface Walk {
  readonly pages: Page[];
  readonly ids: string[];
}

/**
 * Follows `next` from the first page to the last, passing the key through JSON as the token does;
 * `between` runs after each page that has a next one (to insert and delete).
 */
async function walk(store: MemoryStore, queryPlan: QueryPlan, pageSize: number, between?: (page: Page) => Promise<void>): Promise<Walk> {
  const pages: Page[] = [];
  const ids: string[] = [];
  let after: readonly SortValue[] | undefined;
  let returned = 0;
  for (let index = 0; index < MAX_PAGES; index++) {
    const page = await runPage(store, COLLECTION, queryPlan, after === undefined ? { pageSize, returned } : { pageSize, returned, after });
    pages.push(page);
    ids.push(...page.items.map((item) => item.id));
    assert.ok(page.items.length <= pageSize, `page ${index} holds ${page.items.length} items, more than ${pageSize}`);
    if (page.next === undefined) return { pages, ids };
    assert.ok(page.items.length > 0, 'a page with a next link must not be empty');
    after = JSON.parse(JSON.stringify(page.next)) as SortValue[];
    returned += page.items.length;
    if (between !== undefined) await between(page);
  }
  assert.fail(`no last page after ${MAX_PAGES} pages`);
}

function sizes(result: Walk): number[] {
  return result.pages.map((page) => page.items.length);
}

describe('runPage', () => {
  describe('keyset paging over a static collection', () => {
    for (const [label, orderby] of [
      ['id order', []],
      ['$orderby=price desc,name', BY_PRICE_DESC_NAME],
      ['$orderby=name', BY_NAME],
    ] as const) {
      for (const pageSize of [1, 7, 50]) {
        it(`should return every item exactly once, in order, with ${label} and pages of ${pageSize}`, async () => {
          const store = await randomStore(mulberry32(1000 + pageSize), 1000);
          const queryPlan = plan({ orderby });
          const result = await walk(store, queryPlan, pageSize);
          assert.deepEqual(result.ids, expectedOrder(store, queryPlan));
          assert.equal(result.ids.length, 1000);
          assert.equal(result.pages.length, Math.ceil(1000 / pageSize));
        });
      }
    }

    it('should page through the matches only, with a filter', async () => {
      const store = await randomStore(mulberry32(7), 1000);
      const queryPlan = plan({ filter: 'price gt 10', orderby: BY_NAME });
      const expected = expectedOrder(store, queryPlan);
      assert.ok(expected.length > 50 && expected.length < 1000);
      assert.deepEqual((await walk(store, queryPlan, 7)).ids, expected);
      assert.deepEqual((await walk(store, plan({ filter: 'price gt 10' }), 7)).ids, expectedOrder(store, plan({ filter: 'price gt 10' })));
    });

    it('should find sparse matches across the store scan chunks in id order', async () => {
      const store = new MemoryStore();
      const picked = new Set([0, 1, 510, 511, 512, 513, 1023, 1024, 1025, 1535, 2047, 2999]);
      const docs: JsonObject[] = [];
      for (let i = 0; i < 3000; i++) docs.push({ id: `i${String(i).padStart(4, '0')}`, pick: picked.has(i) });
      await put(store, docs);
      const queryPlan = plan({ conditions: [{ path: ['pick'], value: 'true' }] });
      const expected = [...picked].sort((a, b) => a - b).map((i) => `i${String(i).padStart(4, '0')}`);
      for (const pageSize of [1, 2, 5, 12, 50]) {
        const result = await walk(store, queryPlan, pageSize);
        assert.deepEqual(result.ids, expected, `pages of ${pageSize}`);
        assert.equal(result.pages.length, Math.ceil(picked.size / pageSize));
      }
    });

    it('should return the next key as the (keys, id) of the last item', async () => {
      const store = new MemoryStore();
      await put(store, [{ id: 'a', price: 1, name: 'x' }, { id: 'b', price: 3, name: 'y' }, { id: 'c', price: 2, name: 'z' }]);
      const page = await runPage(store, COLLECTION, plan({ orderby: BY_PRICE_DESC_NAME }), { pageSize: 2, returned: 0 });
      assert.deepEqual(page.items.map((item) => item.id), ['b', 'c']);
      assert.deepEqual(page.next, [2, 'z', 'c']);
      const byId = await runPage(store, COLLECTION, plan({}), { pageSize: 2, returned: 0 });
      assert.deepEqual(byId.next, ['b']);
    });

    it('should break ties by ascending id under a descending key', async () => {
      const store = new MemoryStore();
      await put(store, ['d', 'a', 'c', 'b'].map((id) => ({ id, price: 5 })));
      const result = await walk(store, plan({ orderby: [{ path: ['price'], descending: true }] }), 1);
      assert.deepEqual(result.ids, ['a', 'b', 'c', 'd']);
    });

    it('should put missing and null values last under a descending key, first under an ascending one', async () => {
      const store = new MemoryStore();
      await put(store, [{ id: 'a', price: 1 }, { id: 'b' }, { id: 'c', price: null }, { id: 'd', price: 2 }]);
      assert.deepEqual((await walk(store, plan({ orderby: [{ path: ['price'], descending: true }] }), 3)).ids, ['d', 'a', 'b', 'c']);
      assert.deepEqual((await walk(store, plan({ orderby: [{ path: ['price'], descending: false }] }), 3)).ids, ['b', 'c', 'a', 'd']);
    });
  });

  describe('the last page', () => {
    it('should have no next when the last page is exactly full', async () => {
      const store = new MemoryStore();
      await put(store, Array.from({ length: 14 }, (_, i) => ({ id: `p${String(i).padStart(2, '0')}`, price: i % 3 })));
      for (const orderby of [[], BY_PRICE_DESC_NAME]) {
        const result = await walk(store, plan({ orderby }), 7);
        assert.deepEqual(sizes(result), [7, 7]);
        assert.equal(result.pages[0]?.next === undefined, false);
        assert.equal(result.pages[1]?.next, undefined);
        assert.equal(Object.hasOwn(result.pages[1] as Page, 'next'), false);
      }
    });

    it('should have no next on a partial last page', async () => {
      const store = new MemoryStore();
      await put(store, Array.from({ length: 15 }, (_, i) => ({ id: `p${String(i).padStart(2, '0')}`, price: i % 4 })));
      for (const orderby of [[], BY_PRICE_DESC_NAME]) {
        assert.deepEqual(sizes(await walk(store, plan({ orderby }), 7)), [7, 7, 1]);
      }
    });

    it('should answer an empty page without next for an empty collection or no match', async () => {
      const store = new MemoryStore();
      assert.deepEqual(await runPage(store, COLLECTION, plan({}), { pageSize: 5, returned: 0 }), { items: [] });
      await put(store, [{ id: 'a', price: 1 }]);
      assert.deepEqual(await runPage(store, COLLECTION, plan({ filter: 'price gt 5' }), { pageSize: 5, returned: 0 }), { items: [] });
      assert.deepEqual(await runPage(store, COLLECTION, plan({ filter: 'price gt 5', orderby: BY_NAME }), { pageSize: 5, returned: 0 }), { items: [] });
    });

    it('should have no next when the only page holds everything', async () => {
      const store = new MemoryStore();
      await put(store, [{ id: 'a' }, { id: 'b' }]);
      const page = await runPage(store, COLLECTION, plan({}), { pageSize: 50, returned: 0 });
      assert.equal(page.items.length, 2);
      assert.equal(page.next, undefined);
    });
  });

  describe('$top', () => {
    for (const orderby of [[], BY_PRICE_DESC_NAME]) {
      const label = orderby.length === 0 ? 'id order' : '$orderby';
      it(`should cap the total across pages (${label})`, async () => {
        const store = await randomStore(mulberry32(23), 100);
        const full = expectedOrder(store, plan({ orderby }));
        const result = await walk(store, plan({ orderby, top: 23 }), 7);
        assert.deepEqual(sizes(result), [7, 7, 7, 2]);
        assert.deepEqual(result.ids, full.slice(0, 23));
      });

      it(`should stop without next when $top is a multiple of the page size (${label})`, async () => {
        const store = await randomStore(mulberry32(21), 100);
        const result = await walk(store, plan({ orderby, top: 21 }), 7);
        assert.deepEqual(sizes(result), [7, 7, 7]);
        assert.equal(result.pages[2]?.next, undefined);
      });

      it(`should return everything when $top exceeds the matches (${label})`, async () => {
        const store = await randomStore(mulberry32(99), 30);
        const result = await walk(store, plan({ orderby, top: 1000 }), 7);
        assert.deepEqual(sizes(result), [7, 7, 7, 7, 2]);
      });

      it(`should answer $top=0 with an empty page and no next (${label})`, async () => {
        const store = await randomStore(mulberry32(5), 10);
        assert.deepEqual(await runPage(store, COLLECTION, plan({ orderby, top: 0 }), { pageSize: 7, returned: 0 }), { items: [] });
      });

      it(`should return fewer than a page when $top is smaller (${label})`, async () => {
        const store = await randomStore(mulberry32(6), 10);
        const page = await runPage(store, COLLECTION, plan({ orderby, top: 3 }), { pageSize: 7, returned: 0 });
        assert.equal(page.items.length, 3);
        assert.equal(page.next, undefined);
      });
    }
  });

  describe('$count', () => {
    it('should count all matches on every page, not the page', async () => {
      const store = await randomStore(mulberry32(77), 300);
      const queryPlan = plan({ filter: 'price ge 5', orderby: BY_NAME, count: true });
      const matches = store.scan(COLLECTION).filter((record: StoredRecord) => typeof record.doc['price'] === 'number' && record.doc['price'] >= 5).length;
      const result = await walk(store, queryPlan, 50);
      assert.ok(result.pages.length > 1);
      for (const page of result.pages) assert.equal(page.count, matches);
    });

    it('should count all matches even when $top caps the items', async () => {
      const store = await randomStore(mulberry32(78), 40);
      const page = await runPage(store, COLLECTION, plan({ top: 3, count: true }), { pageSize: 10, returned: 0 });
      assert.equal(page.items.length, 3);
      assert.equal(page.count, 40);
    });

    it('should count zero when nothing matches', async () => {
      const store = await randomStore(mulberry32(79), 10);
      assert.deepEqual(await runPage(store, COLLECTION, plan({ filter: 'price gt 1000', count: true }), { pageSize: 10, returned: 0 }), { items: [], count: 0 });
    });

    it('should leave count out without $count=true', async () => {
      const store = await randomStore(mulberry32(80), 10);
      assert.equal(Object.hasOwn(await runPage(store, COLLECTION, plan({}), { pageSize: 5, returned: 0 }), 'count'), false);
    });
  });

  describe('paging while items are inserted and deleted', () => {
    it('should still find the next page when the last item returned was deleted', async () => {
      for (const orderby of [[], BY_PRICE_DESC_NAME]) {
        const store = new MemoryStore();
        await put(store, Array.from({ length: 10 }, (_, i) => ({ id: `p${i}`, price: i % 3, name: `n${i}` })));
        const expected = expectedOrder(store, plan({ orderby }));
        const result = await walk(store, plan({ orderby }), 3, async (page) => remove(store, [(page.items.at(-1) as StoredRecord).id]));
        assert.deepEqual(result.ids, expected);
      }
    });

    for (const [label, orderby] of [
      ['id order', []],
      ['$orderby=price desc,name', BY_PRICE_DESC_NAME],
    ] as const) {
      for (const pageSize of [1, 7, 50]) {
        it(`should see every item that exists for the whole walk exactly once (${label}, pages of ${pageSize})`, async () => {
          const seed = 4242 + pageSize + orderby.length;
          const random = mulberry32(seed);
          const store = await randomStore(random, 1000);
          const initial = new Set(store.scan(COLLECTION).map((record) => record.id));
          const live = [...initial];
          const everExisted = new Set(initial);
          const deleted = new Set<string>();
          const queryPlan = plan({ orderby });
          const result = await walk(store, queryPlan, pageSize, async () => {
            const inserts: JsonObject[] = [];
            for (let n = Math.floor(random() * 4); n > 0; n--) {
              const id = randomId(random);
              if (everExisted.has(id)) continue;
              everExisted.add(id);
              live.push(id);
              inserts.push(randomDoc(random, id));
            }
            if (inserts.length > 0) await put(store, inserts);
            const removals: string[] = [];
            for (let n = Math.floor(random() * 4); n > 0 && live.length > 0; n--) {
              const [id] = live.splice(Math.floor(random() * live.length), 1) as [string];
              deleted.add(id);
              removals.push(id);
            }
            if (removals.length > 0) await remove(store, removals);
          });
          const seen = new Map<string, number>();
          for (const id of result.ids) seen.set(id, (seen.get(id) ?? 0) + 1);
          const twice = [...seen].filter(([, times]) => times > 1).map(([id]) => id);
          assert.deepEqual(twice, [], `seed ${seed}: seen more than once`);
          const missed = [...initial].filter((id) => !deleted.has(id) && !seen.has(id));
          assert.deepEqual(missed, [], `seed ${seed}: stable items never seen`);
          const invented = result.ids.filter((id) => !everExisted.has(id));
          assert.deepEqual(invented, [], `seed ${seed}: ids that never existed`);
          assert.ok(deleted.size > 0 && everExisted.size > initial.size, `seed ${seed}: the walk should have changed the collection`);
          const keys = result.pages.flatMap((page) => page.items.map((item) => keyOf(item.doc, item.id, orderby)));
          for (let i = 1; i < keys.length; i++) {
            assert.ok(compareKeys(keys[i - 1] as SortValue[], keys[i] as SortValue[], orderby) < 0, `seed ${seed}: keys not ascending at ${i}`);
          }
        });
      }
    }
  });
});
