// The work budget of `$filter` evaluation (CONVENTIONS.md#filter-errors-and-budget: every filter runs
// under a budget of evaluation steps and bytes built, so no request can stall the server; one that
// exceeds it → 400 saying so). A short filter can ask for a lot: `a/any(x: a/any(y: a/any(z: …)))` is
// n³ element visits, and a tree of `concat` over one long string builds hundreds of megabytes.
//
// Work is measured in steps and bytes, never in wall time, so the verdict on a request does not
// depend on the machine's load and a test can reproduce it. One WorkBudget serves one request: every
// row the request evaluates charges the same instance, and `beginRow()` starts each row's own,
// smaller allowance, so a filter whose cost per item explodes is stopped on its first item instead
// of after a whole request's worth of work. What a step and a byte are is decided by the compiler
// (cost.ts); this module only counts and says no.
//
// Exceeding a limit throws BudgetExceeded: the charge happens deep inside nested closures, and a
// throw is the only way out of them that costs nothing while the budget holds. The caller that runs
// the predicate catches it at the boundary and turns it into a value (the 400 problem); its message
// is written for the client and names no internals.

/** Ceilings of one budget; every value is a positive safe integer. */
export interface BudgetLimits {
  /** Steps one request may take, over all the rows it evaluates. */
  readonly maxSteps: number;
  /** Bytes of strings one request may build, over all its rows. */
  readonly maxBytes: number;
  /** Steps one row (one item) may take. */
  readonly maxRowSteps: number;
  /** Bytes of strings one row may build. */
  readonly maxRowBytes: number;
}

/**
 * Per request 100,000,000 steps and 1 GiB of strings built; per row 1,000,000 steps and 16 MiB.
 * A step is worth about 10 ns (cost.ts): the costliest row stops within about 13 ms on a 2.1 GHz
 * server core, and a request within a second or two of filter work. An ordinary filter fits over a
 * large collection: `price gt 10 and tags/any(t: t eq 'sale')` takes at most 33 steps on an item
 * with five tags (33,000,000 for 1,000,000 items), `createdAt ge 2024-01-01 and createdAt lt
 * 2024-02-01` 73.
 */
export const DEFAULT_BUDGET_LIMITS: BudgetLimits = Object.freeze({
  maxSteps: 100_000_000,
  maxBytes: 1024 ** 3,
  maxRowSteps: 1_000_000,
  maxRowBytes: 16 * 1024 ** 2,
});

export type BudgetLimit = 'steps' | 'bytes' | 'row-steps' | 'row-bytes';

/** Thrown by a budgeted predicate the moment one of its limits is passed. */
export class BudgetExceeded extends Error {
  readonly limit: BudgetLimit;

  constructor(limit: BudgetLimit, limits: BudgetLimits) {
    super(describe(limit, limits));
    this.name = 'BudgetExceeded';
    this.limit = limit;
  }
}

/** The running totals of one request's filter evaluation, and the limits they must stay within. */
export class WorkBudget {
  readonly limits: BudgetLimits;
  // Copies of the limits as plain fields: the charge methods run once per row and per lambda
  // element, so they read nothing but own fields.
  private readonly maxSteps: number;
  private readonly maxBytes: number;
  private readonly maxRowSteps: number;
  private readonly maxRowBytes: number;
  private totalSteps = 0;
  private totalBytes = 0;
  private rowSteps = 0;
  private rowBytes = 0;

  constructor(limits: BudgetLimits = DEFAULT_BUDGET_LIMITS) {
    if (typeof limits !== 'object' || limits === null) throw new TypeError('WorkBudget: limits must be an object');
    this.maxSteps = positive(limits.maxSteps, 'maxSteps');
    this.maxBytes = positive(limits.maxBytes, 'maxBytes');
    this.maxRowSteps = positive(limits.maxRowSteps, 'maxRowSteps');
    this.maxRowBytes = positive(limits.maxRowBytes, 'maxRowBytes');
    this.limits = Object.freeze({
      maxSteps: this.maxSteps, maxBytes: this.maxBytes, maxRowSteps: this.maxRowSteps, maxRowBytes: this.maxRowBytes,
    });
  }

  /** Steps taken so far by every row of this request. */
  get steps(): number {
    return this.totalSteps;
  }

  /** Bytes of strings built so far by every row of this request. */
  get bytes(): number {
    return this.totalBytes;
  }

  /** Starts the allowance of a new row; the request's totals carry on. */
  beginRow(): void {
    this.rowSteps = 0;
    this.rowBytes = 0;
  }

  /** Counts `count` steps against the row and the request; throws BudgetExceeded past either limit. */
  chargeSteps(count: number): void {
    this.rowSteps += count;
    this.totalSteps += count;
    if (this.rowSteps > this.maxRowSteps) throw new BudgetExceeded('row-steps', this.limits);
    if (this.totalSteps > this.maxSteps) throw new BudgetExceeded('steps', this.limits);
  }

  /** Counts `count` bytes of strings built; throws BudgetExceeded past the row's or the request's limit. */
  chargeBytes(count: number): void {
    this.rowBytes += count;
    this.totalBytes += count;
    if (this.rowBytes > this.maxRowBytes) throw new BudgetExceeded('row-bytes', this.limits);
    if (this.totalBytes > this.maxBytes) throw new BudgetExceeded('bytes', this.limits);
  }
}

function positive(value: unknown, name: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw new TypeError(`WorkBudget: limits.${name} must be a positive safe integer`);
  }
  return value;
}

/** What the client reads in the 400 problem: which limit, how large, and what to change. */
function describe(limit: BudgetLimit, limits: BudgetLimits): string {
  switch (limit) {
    case 'steps':
      return `the filter needs more work than one request may do (${limits.maxSteps} steps); ` +
        'narrow it or simplify nested any/all lambdas';
    case 'bytes':
      return `the filter builds more text than one request may (${limits.maxBytes} bytes); ` +
        'use fewer concat, substring, tolower, toupper or trim calls, or narrow the filter';
    case 'row-steps':
      return `the filter needs more work for a single item than is allowed (${limits.maxRowSteps} steps); ` +
        'simplify nested any/all lambdas or string searches over long values';
    case 'row-bytes':
      return `the filter builds more text for a single item than is allowed (${limits.maxRowBytes} bytes); ` +
        'use fewer concat, substring, tolower, toupper or trim calls on long values';
  }
}
