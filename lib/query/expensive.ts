// Expensive filters share a concurrency limit (CONVENTIONS.md#filter-errors-and-budget). Every filter
// starts out cheap; once the filter work of its request (the plan's `work`, in the budget's steps,
// lib/filter/cost.ts) passes EXPENSIVE_STEPS, the request needs one of `limits.expensiveFilters`
// slots to go on. When every slot is taken it stops at once with FiltersBusy, which the paging flow
// answers 503 with Retry-After; a request keeps its slot until its page is built.
//
// Why refuse rather than wait: a waiting scan would hold its partial page and its connection while
// it waited, and the cost it has already spent is small by definition (it has just crossed the
// line). A client told to retry after a second spends nothing meanwhile, and the filters that
// never pass the line (most, and all that an index answers) never meet the limit at all.
import type { QueryPlan } from './plan.js';

/**
 * Filter work past which a request is expensive: a million steps, about 10 ms of evaluation
 * (lib/filter/cost.ts), a hundredth of a request's budget.
 */
export const EXPENSIVE_STEPS = 1_000_000;

/** Thrown by a limited plan's `matches` when it became expensive and no slot was free. */
export class FiltersBusy extends Error {
  constructor() {
    super('every slot for expensive filters is taken');
    this.name = 'FiltersBusy';
  }
}

/** At most `limit` holders at once; one instance per server. */
export class FilterSlots {
  private held = 0;

  constructor(readonly limit: number) {
    if (!Number.isSafeInteger(limit) || limit < 1) throw new TypeError('FilterSlots: limit must be a positive integer');
  }

  /** Slots taken now. */
  get taken(): number {
    return this.held;
  }

  /** A slot, as the function that gives it back (safe to call twice), or undefined when all are taken. */
  acquire(): (() => void) | undefined {
    if (this.held >= this.limit) return undefined;
    this.held++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.held--;
    };
  }
}

/**
 * `plan` whose `matches` takes a slot from `slots` once the request's filter work passes
 * EXPENSIVE_STEPS, or throws FiltersBusy; `release` gives the slot back (call it when the page is built,
 * however that ends).
 */
export function limitExpensive(plan: QueryPlan, slots: FilterSlots): { plan: QueryPlan; release: () => void } {
  let slot: (() => void) | undefined;
  const inner = plan.matches;
  const matches = (doc: Parameters<QueryPlan['matches']>[0]): boolean => {
    const matched = inner(doc);
    if (slot === undefined && plan.work() >= EXPENSIVE_STEPS) {
      slot = slots.acquire();
      if (slot === undefined) throw new FiltersBusy();
    }
    return matched;
  };
  return { plan: { ...plan, matches }, release: () => slot?.() };
}
