// The work budget of `$filter` evaluation (CONVENTIONS.md#filter-errors-and-budget): evaluation
// steps and bytes built are counted, so no request can stall the server. The regressions are
// the two filters that stalled it: three nested lambdas over 1,000-element arrays (10⁹ element
// visits per item) and a concat tree over a 1 MB string. No test reads a clock: a budget counts
// work, so every outcome here is the same on any machine.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { JsonObject } from '../../lib/json.js';
import {
  BudgetExceeded, DEFAULT_BUDGET_LIMITS, WorkBudget, compileFilter, type BudgetLimits, type Predicate,
} from '../../lib/filter/index.js';
import { FIXTURE, VALID, knownProperty } from './corpus.js';

const anyProperty = (): boolean => true;
const LARGE = 1 << 30;

function budgeted(filter: string, budget: WorkBudget): Predicate {
  const result = compileFilter(filter, { knownProperty: anyProperty, budget });
  if (!result.ok) assert.fail(`${filter}: ${result.error.message}`);
  return result.predicate;
}

/** Limits with the given ones small and the others out of the way. */
function limits(overrides: Partial<BudgetLimits>): BudgetLimits {
  return { maxSteps: LARGE, maxBytes: LARGE, maxRowSteps: LARGE, maxRowBytes: LARGE, ...overrides };
}

/** The BudgetExceeded that `run` throws; fails the test when it returns or throws anything else. */
function exceeded(run: () => unknown): BudgetExceeded {
  try {
    run();
  } catch (error) {
    if (error instanceof BudgetExceeded) return error;
    throw error;
  }
  return assert.fail('expected BudgetExceeded');
}

/** Rows evaluated until the predicate threw, or all of them. */
function rowsUntilThrow(predicate: Predicate, docs: readonly JsonObject[]): { rows: number; error: BudgetExceeded | null } {
  let rows = 0;
  try {
    for (const doc of docs) {
      rows += 1;
      predicate(doc);
    }
  } catch (error) {
    if (error instanceof BudgetExceeded) return { rows, error };
    throw error;
  }
  return { rows, error: null };
}

describe('WorkBudget', () => {
  it('should default to 100,000,000 steps and 1 GiB per request, 1,000,000 steps and 16 MiB per row', () => {
    assert.deepEqual({ ...DEFAULT_BUDGET_LIMITS }, {
      maxSteps: 100_000_000, maxBytes: 1_073_741_824, maxRowSteps: 1_000_000, maxRowBytes: 16_777_216,
    });
    assert.deepEqual({ ...new WorkBudget().limits }, { ...DEFAULT_BUDGET_LIMITS });
  });

  it('should keep request totals across rows and reset only the row allowance on beginRow', () => {
    const budget = new WorkBudget(limits({ maxRowSteps: 10, maxRowBytes: 100 }));
    for (let row = 0; row < 5; row += 1) {
      budget.beginRow();
      budget.chargeSteps(10);
      budget.chargeBytes(100);
    }
    assert.deepEqual([budget.steps, budget.bytes], [50, 500]);
    assert.equal(exceeded(() => budget.chargeSteps(1)).limit, 'row-steps');
    budget.beginRow();
    assert.equal(exceeded(() => budget.chargeBytes(101)).limit, 'row-bytes');
  });

  it('should name each limit it stops at, in words a client can act on', () => {
    const cases: [BudgetLimits, (budget: WorkBudget) => void, string, RegExp][] = [
      [limits({ maxSteps: 5 }), (b) => b.chargeSteps(6), 'steps',
        /^the filter needs more work than one request may do \(5 steps\); narrow it or simplify nested any\/all lambdas$/],
      [limits({ maxBytes: 5 }), (b) => b.chargeBytes(6), 'bytes', /^the filter builds more text than one request may \(5 bytes\)/],
      [limits({ maxRowSteps: 5 }), (b) => b.chargeSteps(6), 'row-steps',
        /^the filter needs more work for a single item than is allowed \(5 steps\)/],
      [limits({ maxRowBytes: 5 }), (b) => b.chargeBytes(6), 'row-bytes',
        /^the filter builds more text for a single item than is allowed \(5 bytes\)/],
    ];
    for (const [given, charge, limit, message] of cases) {
      const error = exceeded(() => charge(new WorkBudget(given)));
      assert.equal(error.limit, limit);
      assert.equal(error.name, 'BudgetExceeded');
      assert.ok(error instanceof Error);
      assert.match(error.message, message);
    }
  });

  it('should allow exactly the limit and stop one past it', () => {
    const budget = new WorkBudget(limits({ maxRowSteps: 3 }));
    budget.beginRow();
    budget.chargeSteps(3);
    assert.equal(exceeded(() => budget.chargeSteps(1)).limit, 'row-steps');
  });

  it('should refuse limits that are not positive safe integers', () => {
    for (const bad of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53]) {
      assert.throws(() => new WorkBudget(limits({ maxRowBytes: bad })), {
        name: 'TypeError', message: /limits\.maxRowBytes must be a positive safe integer/,
      });
    }
    assert.throws(() => new WorkBudget(null as unknown as BudgetLimits), { name: 'TypeError', message: /limits must be an object/ });
  });
});

describe('compileFilter with a budget', () => {
  it('should stop three nested lambdas over 1,000-element arrays on the first item, at the row limit', () => {
    const filter = 'tags/any(a:tags/any(b:tags/any(c:c eq -1)))';
    assert.equal(filter.length, 43);
    const tags = Array.from({ length: 1_000 }, (_, index) => index);
    const budget = new WorkBudget();
    const predicate = budgeted(filter, budget);
    const { rows, error } = rowsUntilThrow(predicate, [{ tags }, { tags }]);
    assert.equal(error?.limit, 'row-steps');
    assert.equal(rows, 1);
    // Stopped within the first row's allowance: at most one lambda element's steps past it.
    assert.ok(budget.steps <= DEFAULT_BUDGET_LIMITS.maxRowSteps + 100, `${budget.steps} steps`);
  });

  it('should stop the 46-character form with spaces, over the same two items, in the same way', () => {
    const filter = 'tags/any(a: tags/any(b: tags/any(c: c eq -1)))';
    assert.equal(filter.length, 46);
    const tags = Array.from({ length: 1_000 }, (_, index) => index);
    assert.equal(exceeded(() => [{ tags }, { tags }].filter(budgeted(filter, new WorkBudget()))).limit, 'row-steps');
  });

  it('should stop a concat tree over a 1 MB string at the row byte limit', () => {
    let tree = 's';
    while (`contains(concat(${tree},${tree}), 'y')`.length <= 4096) tree = `concat(${tree},${tree})`;
    const filter = `contains(${tree}, 'y')`;
    const budget = new WorkBudget();
    const error = exceeded(() => budgeted(filter, budget)({ s: 'x'.repeat(1_000_000) }));
    assert.equal(error.limit, 'row-bytes');
    // Stopped at the first string past the limit, not after building the whole tree.
    assert.ok(budget.bytes <= DEFAULT_BUDGET_LIMITS.maxRowBytes + 16_000_000, `${budget.bytes} bytes`);
  });

  it('should count bytes for every string-building function', () => {
    const doc: JsonObject = { s: 'abcdefghij' };
    for (const call of ['tolower(s)', 'toupper(s)', 'trim(s)', 'substring(s, 0)', "concat(s, '')"]) {
      const budget = new WorkBudget(limits({ maxRowBytes: 19 }));
      assert.equal(exceeded(() => budgeted(`${call} eq 'x'`, budget)(doc)).limit, 'row-bytes', call);
      const roomy = new WorkBudget(limits({ maxRowBytes: 20 }));
      assert.equal(budgeted(`${call} eq 'x'`, roomy)(doc), false, call);
      assert.equal(roomy.bytes, 20, call);
    }
    const none = new WorkBudget();
    budgeted("contains(s, 'a') and length(s) eq 10 and indexof(s, 'b') eq 1", none)(doc);
    assert.equal(none.bytes, 0);
  });

  it('should enforce the request total across many cheap rows', () => {
    const budget = new WorkBudget(limits({ maxSteps: 1_000, maxRowSteps: 100 }));
    const predicate = budgeted('price gt 10', budget);
    const docs = Array.from({ length: 10_000 }, (_, index) => ({ price: index }));
    const { rows, error } = rowsUntilThrow(predicate, docs);
    assert.equal(error?.limit, 'steps');
    assert.ok(rows > 10 && rows < docs.length, `stopped after ${rows} rows`);
    // Once spent, the request stays spent: every later row is refused too.
    assert.equal(exceeded(() => predicate({ price: 1 })).limit, 'steps');
  });

  it('should enforce the request byte total across rows that each stay within their own', () => {
    const budget = new WorkBudget(limits({ maxBytes: 1_000, maxRowBytes: 100 }));
    const predicate = budgeted("tolower(name) eq 'x'", budget);
    const docs = Array.from({ length: 1_000 }, () => ({ name: 'ABCDEFGHIJ' }));
    const { rows, error } = rowsUntilThrow(predicate, docs);
    assert.equal(error?.limit, 'bytes');
    assert.ok(rows > 1 && rows < docs.length, `stopped after ${rows} rows`);
  });

  it('should pass an ordinary filter over 1,000,000 items within the default budget', () => {
    const pool = Array.from({ length: 1_000 }, (_, index): JsonObject => ({
      id: `i${String(index).padStart(8, '0')}`, name: `Item ${index} crate`, price: index % 200, category: `c${index % 20}`,
      tags: ['new', 'eco', 'gift', index % 3 === 0 ? 'sale' : 'bulk', 'promo'], stock: index, note: 'x'.repeat(40),
    }));
    const budget = new WorkBudget();
    const predicate = budgeted("price gt 10 and tags/any(t: t eq 'sale')", budget);
    let matches = 0;
    for (let row = 0; row < 1_000_000; row += 1) if (predicate(pool[row % pool.length] as JsonObject)) matches += 1;
    assert.ok(matches > 250_000, `${matches} matches`);
    assert.ok(budget.steps >= 1_000_000 && budget.steps < DEFAULT_BUDGET_LIMITS.maxSteps, `${budget.steps} steps`);
  });

  it('should give each WorkBudget its own counts', () => {
    const first = new WorkBudget(limits({ maxSteps: 500 }));
    const second = new WorkBudget(limits({ maxSteps: 500 }));
    const firstPredicate = budgeted('price gt 10', first);
    const secondPredicate = budgeted('price gt 10', second);
    assert.equal(rowsUntilThrow(firstPredicate, Array.from({ length: 1_000 }, () => ({ price: 1 }))).error?.limit, 'steps');
    assert.equal(second.steps, 0);
    assert.equal(secondPredicate({ price: 11 }), true);
    assert.ok(second.steps > 0 && second.steps < first.steps);
  });

  it('should start every row afresh: a row over its limit does not spend the next one', () => {
    const budget = new WorkBudget(limits({ maxRowSteps: 1_000 }));
    const predicate = budgeted('tags/any(t: t eq 0)', budget);
    const heavy = { tags: Array.from({ length: 10_000 }, () => 1) };
    assert.equal(exceeded(() => predicate(heavy)).limit, 'row-steps');
    assert.equal(predicate({ tags: [1, 0] }), true);
  });

  it('should multiply the steps of nested lambdas as their work multiplies', () => {
    const steps = (size: number): number => {
      const budget = new WorkBudget();
      budgeted('tags/any(a: tags/any(b: b eq -1))', budget)({ tags: Array.from({ length: size }, (_, index) => index) });
      return budget.steps;
    };
    const ratio = steps(200) / steps(100);
    assert.ok(ratio > 3.5 && ratio < 4.5, `doubling the array multiplied the steps by ${ratio}`);
  });

  it('should charge by the elements that in and eq walk, and by the length of strings searched or compared', () => {
    const small = limits({ maxRowSteps: 10_000 });
    const long = Array.from({ length: 20_000 }, (_, index) => index);
    assert.equal(exceeded(() => budgeted('-1 in values', new WorkBudget(small))({ values: long })).limit, 'row-steps');
    assert.equal(budgeted('-1 in values', new WorkBudget(small))({ values: [1, 2, 3] }), false);
    assert.equal(exceeded(() => budgeted('a eq b', new WorkBudget(small))({ a: long, b: [...long] })).limit, 'row-steps');
    const objects = (): JsonObject => Object.fromEntries(long.map((value) => [`k${value}`, value]));
    assert.equal(exceeded(() => budgeted('a eq b', new WorkBudget(small))({ a: objects(), b: objects() })).limit, 'row-steps');
    assert.equal(budgeted('a eq b', new WorkBudget(small))({ a: [1, { x: [2] }], b: [1, { x: [2] }] }), true);
    assert.equal(exceeded(() => budgeted("contains(s, 'ab')", new WorkBudget(small))({ s: 'a'.repeat(100_000) })).limit, 'row-steps');
    assert.equal(budgeted("contains(s, 'ab')", new WorkBudget(small))({ s: 'a'.repeat(100) }), false);
    assert.equal(exceeded(() => budgeted("tolower(s) eq 'x'", new WorkBudget(small))({ s: 'Δ'.repeat(20_000) })).limit, 'row-steps');
    const text = (last: string): string => `${'Δ'.repeat(400_000)}${last}`;
    for (const compare of ['s lt t', 's eq t', 'a eq b']) {
      const doc = { s: text('x'), t: text('y'), a: ['k', text('x')], b: ['k', text('x')] };
      assert.equal(exceeded(() => budgeted(compare, new WorkBudget(small))(doc)).limit, 'row-steps', compare);
      assert.equal(budgeted(compare, new WorkBudget(small))({ s: 'ab', t: 'ac', a: ['k'], b: ['k'] }), compare !== 's eq t', compare);
    }
  });

  it('should select exactly what the unbudgeted predicate selects on every corpus case', () => {
    for (const { filter, ids } of VALID) {
      const budget = new WorkBudget();
      const result = compileFilter(filter, { knownProperty, budget });
      if (!result.ok) assert.fail(`${filter}: ${result.error.message}`);
      const plain = compileFilter(filter, { knownProperty });
      if (!plain.ok) assert.fail(`${filter}: ${plain.error.message}`);
      const selected = FIXTURE.filter(result.predicate).map((item) => String(item.id)).sort();
      assert.deepEqual(selected, FIXTURE.filter(plain.predicate).map((item) => String(item.id)).sort(), filter);
      assert.deepEqual(selected, ids, filter);
      assert.ok(budget.steps >= FIXTURE.length, `${filter}: only ${budget.steps} steps charged`);
    }
  });

  it('should leave a predicate compiled without a budget free of limits', () => {
    const result = compileFilter('tags/any(a: tags/any(b: b eq -1))', { knownProperty: anyProperty });
    assert.ok(result.ok);
    const tags = Array.from({ length: 2_000 }, (_, index) => index);
    assert.equal(result.predicate({ tags }), false);
  });

  it('should throw TypeError when budget is not a WorkBudget', () => {
    assert.throws(() => compileFilter('a eq 1', { knownProperty: anyProperty, budget: { steps: 0 } as unknown as WorkBudget }), {
      name: 'TypeError', message: /options\.budget must be a WorkBudget/,
    });
  });
});
