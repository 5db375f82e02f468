// Tests for lib/query/equality-index.ts: candidates follow every commit, the paced walk that makes an
// index agrees with commits landing during it, and the limits (small collections and system spaces
// are walked, at most 16 indexes). Pages read through the index equal pages read by a walk, whatever
// the filter and the writes in between (lib/query/execute.ts).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { JsonObject } from '../../lib/json.js';
import { EqualityIndexes, INDEX_FROM_ITEMS } from '../../lib/query/equality-index.js';
import { runPage, type Page } from '../../lib/query/execute.js';
import { planQuery, type QueryPlan } from '../../lib/query/plan.js';
import { MemoryStore } from '../../lib/store/memory.js';
import type { Mutation } from '../../lib/store/types.js';
import { mulberry32 } from '../support/random.js';

const COLLECTION = 'items';

function item(n: number, random: () => number): JsonObject {
  return { id: `i${String(n).padStart(6, '0')}`, category: `c${Math.floor(random() * 5)}`, price: Math.floor(random() * 20), flag: random() < 0.5, nested: { tag: `t${Math.floor(random() * 3)}` } };
}

async function filled(count: number, random: () => number): Promise<MemoryStore> {
  const store = new MemoryStore();
  const mutations: Mutation[] = [];
  for (let n = 0; n < count; n++) {
    const doc = item(n, random);
    mutations.push({ kind: 'put', collection: COLLECTION, id: doc['id'] as string, doc });
  }
  assert.ok((await store.commit({ mutations })).ok);
  return store;
}

function plan(filter: string, orderby = false): QueryPlan {
  const planned = planQuery({ filter, conditions: [], orderby: orderby ? [{ path: ['price'], descending: true }] : [], count: true }, { known: () => true, itemLink: (id) => `/items/${id}` });
  assert.ok(planned.ok, filter);
  return planned.plan;
}

function bruteForce(store: MemoryStore, path: readonly string[], value: unknown): string[] {
  return store.scan(COLLECTION).filter((record) => path.reduce<unknown>((at, segment) => (at as JsonObject | undefined)?.[segment], record.doc) === value).map((record) => record.id);
}

async function candidates(indexes: EqualityIndexes, path: string[], values: (string | number | boolean)[]): Promise<string[]> {
  const found = await indexes.candidates(COLLECTION, [{ path, values }]);
  assert.ok(found !== undefined);
  return [...found.ids()];
}

describe('EqualityIndexes', () => {
  it('should hand the ids holding a value, in id order, and follow puts, deletes and restores', async () => {
    const random = mulberry32(1);
    const store = await filled(INDEX_FROM_ITEMS + 100, random);
    const indexes = new EqualityIndexes(store);
    assert.deepEqual(await candidates(indexes, ['category'], ['c2']), bruteForce(store, ['category'], 'c2'));
    const first = bruteForce(store, ['category'], 'c2')[0] as string;
    await store.commit({ mutations: [{ kind: 'put', collection: COLLECTION, id: first, doc: { id: first, category: 'c4' } }] });
    await store.commit({ mutations: [{ kind: 'put', collection: COLLECTION, id: 'zz-new', doc: { id: 'zz-new', category: 'c2' } }] });
    const second = bruteForce(store, ['category'], 'c2')[0] as string;
    await store.commit({ mutations: [{ kind: 'delete', collection: COLLECTION, id: second, retainUntil: Date.now() + 60_000 }] });
    assert.deepEqual(await candidates(indexes, ['category'], ['c2']), bruteForce(store, ['category'], 'c2'));
    await store.commit({ mutations: [{ kind: 'restore', collection: COLLECTION, id: second }] });
    assert.deepEqual(await candidates(indexes, ['category'], ['c2']), bruteForce(store, ['category'], 'c2'));
    assert.ok((await candidates(indexes, ['category'], ['c2'])).includes(second));
    assert.deepEqual(await candidates(indexes, ['category'], ['c2', 'c4']), [...bruteForce(store, ['category'], 'c2'), ...bruteForce(store, ['category'], 'c4')].sort());
    assert.deepEqual(await candidates(indexes, ['nested', 'tag'], ['t1']), bruteForce(store, ['nested', 'tag'], 't1'));
    assert.deepEqual(await candidates(indexes, ['flag'], [true]), bruteForce(store, ['flag'], true));
    indexes.close();
  });

  it('should agree with commits that land while the index is being made', async () => {
    const random = mulberry32(2);
    const store = await filled(INDEX_FROM_ITEMS * 3, random);
    const indexes = new EqualityIndexes(store);
    const making = indexes.candidates(COLLECTION, [{ path: ['category'], values: ['c1'] }]);
    // The walk yields between chunks: change items at both ends of the collection meanwhile.
    const ids = store.scan(COLLECTION).map((record) => record.id);
    const changes: Mutation[] = [ids[0], ids[ids.length - 1], ids[ids.length >> 1]].map((id) => ({ kind: 'put', collection: COLLECTION, id: id as string, doc: { id: id as string, category: 'c1' } }));
    await store.commit({ mutations: changes });
    await store.commit({ mutations: [{ kind: 'delete', collection: COLLECTION, id: ids[10] as string }] });
    await making;
    assert.deepEqual(await candidates(indexes, ['category'], ['c1']), bruteForce(store, ['category'], 'c1'));
    indexes.close();
  });

  it('should walk small collections and system spaces instead', async () => {
    const store = await filled(INDEX_FROM_ITEMS - 1, mulberry32(3));
    const indexes = new EqualityIndexes(store);
    assert.equal(await indexes.candidates(COLLECTION, [{ path: ['category'], values: ['c1'] }]), undefined);
    assert.equal(await indexes.candidates('$outbox', [{ path: ['status'], values: ['dead'] }]), undefined);
    indexes.close();
  });

  it('should keep at most 16 indexes, and make a dropped one again when it is needed', async () => {
    const store = await filled(INDEX_FROM_ITEMS, mulberry32(4));
    const indexes = new EqualityIndexes(store);
    for (let n = 0; n < 20; n++) await indexes.candidates(COLLECTION, [{ path: [`missing${n}`], values: ['x'] }]);
    assert.deepEqual(await candidates(indexes, ['category'], ['c0']), bruteForce(store, ['category'], 'c0'));
    indexes.close();
  });

  it('should give the same pages as a walk, for any equality filter and writes between pages', async () => {
    const random = mulberry32(5);
    const store = await filled(INDEX_FROM_ITEMS + 500, random);
    const indexes = new EqualityIndexes(store);
    const source = (collection: string, terms: Parameters<EqualityIndexes['candidates']>[1]) => indexes.candidates(collection, terms);
    const filters = ["category eq 'c1'", "category in ('c0', 'c3') and price gt 5", "price eq 7 and category eq 'c2'", "nested/tag eq 't2' and flag eq false", "category eq 'nope'"];
    for (const filter of filters) {
      for (const orderby of [false, true]) {
        const query = plan(filter, orderby);
        const walked: string[] = [];
        const indexed: string[] = [];
        for (const [pages, index] of [[walked, undefined], [indexed, source]] as const) {
          let after: Page["next"] = undefined;
          for (let turn = 0; turn < 1000; turn++) {
            const page = await runPage(store, COLLECTION, query, { pageSize: 37, returned: 0, ...(after === undefined ? {} : { after }) }, undefined, index);
            pages.push(...page.items.map((record) => record.id), `count ${String(page.count)}`);
            if (page.next === undefined) break;
            after = page.next;
          }
        }
        assert.deepEqual(indexed, walked, `${filter}${orderby ? ' ordered' : ''}`);
      }
      // A write between filters, so every filter meets an index that has followed commits.
      const id = `i${String(Math.floor(random() * 2000)).padStart(6, '0')}`;
      await store.commit({ mutations: [{ kind: 'put', collection: COLLECTION, id, doc: item(Number(id.slice(1)), random) }] });
    }
    indexes.close();
  });
});
