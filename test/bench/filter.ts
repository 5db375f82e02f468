// Benchmark (README, Performance): the cost of `$filter` over 100k and 1M items, for a
// selective and a broad filter, first page and full walk; and the compiled predicate against the
// plain AST interpreter over the same rows. Not a test: figures are printed, never asserted.
import { compileFilter, interpretFilter } from '../../lib/filter/index.js';
import type { JsonObject } from '../../lib/json.js';
import { runPage } from '../../lib/query/execute.js';
import type { SortValue } from '../../lib/query/order.js';
import { planQuery } from '../../lib/query/plan.js';
import { MemoryStore } from '../../lib/store/memory.js';
import type { Mutation } from '../../lib/store/types.js';
import { median, medianAsync, time, timeAsync, type Report } from './measure.js';

const FILTERS = {
  selective: "price gt 900 and category eq 'c7' and contains(name, 'crate')",
  broad: "price gt 10 and tags/any(t: t eq 'sale' or t eq 'new')",
};

export async function benchFilter(report: Report, sizes: readonly number[]): Promise<void> {
  for (const size of sizes) {
    const store = new MemoryStore();
    const docs = await fill(store, size);
    for (const [name, filter] of Object.entries(FILTERS)) {
      const planned = planQuery({ filter, conditions: [], orderby: [], count: false }, { known: () => true, itemLink: (id) => `/items/${id}` });
      if (!planned.ok) throw new Error(planned.problem.detail);
      const plan = planned.plan;
      const firstPage = await medianAsync(5, () => timeAsync(() => runPage(store, 'items', plan, { pageSize: 50, returned: 0 })));
      let matches = 0;
      const walk = await timeAsync(async () => {
        let after: readonly SortValue[] | undefined;
        do {
          const page = await runPage(store, 'items', plan, { pageSize: 50, returned: 0, ...(after === undefined ? {} : { after }) });
          matches += page.items.length;
          after = page.next;
        } while (after !== undefined);
      });
      report.row('filter', `${name} over ${size.toLocaleString('en')} items`, {
        matches,
        'first page ms': firstPage.toFixed(2),
        'full walk ms': walk.toFixed(0),
      });
      const compiled = compileFilter(filter, { knownProperty: () => true });
      if (!compiled.ok) throw new Error(compiled.error.message);
      const { predicate, ast } = compiled;
      const compiledMs = median(3, () => time(() => docs.filter(predicate).length));
      const interpretedMs = median(3, () => time(() => docs.filter((doc) => interpretFilter(ast, doc)).length));
      report.row('filter', `${name} predicate over ${size.toLocaleString('en')} rows`, {
        'compiled ms': compiledMs.toFixed(1),
        'interpreted ms': interpretedMs.toFixed(1),
        'compiled speed-up': `${(interpretedMs / compiledMs).toFixed(1)}x`,
      });
    }
  }
}

/** Items of about 200 bytes of JSON, ids ascending so the store appends. */
async function fill(store: MemoryStore, size: number): Promise<JsonObject[]> {
  const docs: JsonObject[] = [];
  let random = 42;
  const next = (): number => {
    random = (random * 1103515245 + 12345) % 2147483648;
    return random / 2147483648;
  };
  const tagPool = ['sale', 'new', 'eco', 'gift', 'bulk', 'promo'];
  for (let start = 0; start < size; start += 10_000) {
    const mutations: Mutation[] = [];
    for (let n = start; n < Math.min(size, start + 10_000); n++) {
      const id = `i${String(n).padStart(8, '0')}`;
      const doc: JsonObject = {
        id,
        name: `Item ${n} ${next() < 0.5 ? 'box' : 'crate'}`,
        price: Math.round(next() * 100_000) / 100,
        category: `c${Math.floor(next() * 20)}`,
        tags: [tagPool[Math.floor(next() * 6)] as string, tagPool[Math.floor(next() * 6)] as string],
        stock: Math.floor(next() * 500),
        createdAt: '2026-11-22T10:00:00Z',
        note: 'x'.repeat(40),
      };
      docs.push(doc);
      mutations.push({ kind: 'put', collection: 'items', id, doc });
    }
    await store.commit({ mutations });
  }
  return docs;
}
