// Running a planned query over a collection, one page at a time, with keyset paging on (order-by
// keys, id) (CONVENTIONS.md#paging): items that exist for the whole walk are seen exactly once even while
// others are inserted or deleted. A page starts strictly after the sort key of the previous page's
// last item, so inserts and deletes elsewhere never shift it, unlike an offset.
//
// Without $orderby the store's id order is the sort order, and the scan stops as soon as the page
// is full. With $orderby each page is a full pass over the matches keeping the best page-size of
// them; the benchmark reports what that costs.
//
// A filter that requires `path eq value` (or `in`) on a large collection reads only the items an
// index hands it for that term (equality-index.ts), in id order, so a page costs what it returns
// rather than what the collection holds; every candidate is still tested against the whole filter.
//
// Long scans share the process (CONVENTIONS.md#filter-errors-and-budget): a scan gives the event loop a turn
// every YIELD_ROWS rows, and sooner when the filter's work budget says the rows were costly, so a
// request that reads a million items never holds up the others. Records are immutable objects, so a
// scan that resumes after a turn still reads a consistent page.
import type { Store, StoredRecord } from '../store/types.js';
import type { Candidates } from './equality-index.js';
import type { EqualityTerm } from './equality.js';
import type { QueryPlan } from './plan.js';
import { compareKeys, keyOf, type SortValue } from './order.js';

/** Where a page's records are read: a store, or the service document's list of collections. */
export type RecordSource = Pick<Store, 'scan' | 'get'>;

export interface PageRequest {
  readonly pageSize: number;
  /** Sort key of the last item already returned, or undefined for the first page. */
  readonly after?: readonly SortValue[];
  /** Items earlier pages returned (counts against $top). */
  readonly returned: number;
}

export interface Page {
  readonly items: readonly StoredRecord[];
  /** Sort key of the last item, present only when a next page exists. */
  readonly next?: readonly SortValue[];
  /** All matches, when $count=true. */
  readonly count?: number;
}

/** Decides when a scan lets other work run: after `rows` rows, or once `work()` grew by `steps`. */
export interface Pace {
  readonly rows: number;
  readonly steps: number;
  /** Work done so far (the filter budget's steps); 0 when nothing is measured. */
  readonly work: () => number;
  /** Gives the event loop a turn. */
  readonly yieldTurn: () => Promise<void>;
}

/** What an index offers a query for its equality terms, or undefined when the collection is walked. */
export type CandidateSource = (collection: string, terms: readonly EqualityTerm[]) => Promise<Candidates | undefined>;

const SCAN_CHUNK = 512;

export async function runPage(
  store: RecordSource,
  collection: string,
  plan: QueryPlan,
  request: PageRequest,
  pace?: Pace,
  index?: CandidateSource,
): Promise<Page> {
  const top = plan.query.top;
  const remaining = top === undefined ? Number.POSITIVE_INFINITY : Math.max(0, top - request.returned);
  const limit = Math.min(request.pageSize, remaining);
  const order = plan.query.orderby;
  const pacer = new Pacer(pace);
  const candidates =
    index === undefined || plan.equalities.length === 0 ? undefined : await index(collection, plan.equalities);
  const rows = (after?: string): Iterable<StoredRecord> =>
    candidates === undefined ? walk(store, collection, after) : fetched(store, collection, candidates, after);
  const window =
    order.length === 0
      ? await scanInIdOrder(rows, plan, request.after, limit, pacer)
      : await sortAll(rows(), plan, request.after, limit, pacer);
  const items = window.slice(0, limit);
  const more = window.length > limit && remaining > limit;
  const last = items[items.length - 1];
  const page: Page = more && last !== undefined ? { items, next: keyOf(last.doc, last.id, order) } : { items };
  return plan.query.count ? { ...page, count: await countMatches(rows(), plan, pacer) } : page;
}

/** The collection's records in id order after `after`, read a chunk at a time. */
function* walk(store: RecordSource, collection: string, after: string | undefined): Generator<StoredRecord> {
  let cursor = after;
  for (;;) {
    const range = cursor === undefined ? { limit: SCAN_CHUNK } : { after: cursor, limit: SCAN_CHUNK };
    const chunk = store.scan(collection, range);
    yield* chunk;
    if (chunk.length < SCAN_CHUNK) return;
    cursor = (chunk[chunk.length - 1] as StoredRecord).id;
  }
}

/**
 * The records of the candidate ids after `after`, in id order. The ids are taken a chunk at a time
 * with no turn in between, and each chunk starts after the last id of the one before, so a commit
 * that changes the index while the scan yields can neither repeat an item nor skip one that stayed.
 */
function* fetched(
  store: RecordSource,
  collection: string,
  candidates: Candidates,
  after: string | undefined,
): Generator<StoredRecord> {
  let cursor = after;
  for (;;) {
    const ids: string[] = [];
    for (const id of candidates.ids(cursor)) {
      ids.push(id);
      if (ids.length === SCAN_CHUNK) break;
    }
    for (const id of ids) {
      const record = store.get(collection, id);
      if (record !== undefined) yield record;
    }
    if (ids.length < SCAN_CHUNK) return;
    cursor = ids[ids.length - 1];
  }
}

/** Up to limit + 1 matches after `after`, in id order. */
async function scanInIdOrder(
  rows: (after?: string) => Iterable<StoredRecord>,
  plan: QueryPlan,
  after: readonly SortValue[] | undefined,
  limit: number,
  pacer: Pacer,
): Promise<StoredRecord[]> {
  const found: StoredRecord[] = [];
  for (const record of rows(typeof after?.[0] === 'string' ? after[0] : undefined)) {
    if (plan.matches(record.doc)) found.push(record);
    if (found.length > limit) break;
    if (pacer.due()) await pacer.yieldTurn();
  }
  return found;
}

/**
 * The first limit + 1 matches after `after` in (keys, id) order. A bounded sorted buffer keeps this
 * at O(n log k) per page instead of sorting every match.
 */
async function sortAll(
  rows: Iterable<StoredRecord>,
  plan: QueryPlan,
  after: readonly SortValue[] | undefined,
  limit: number,
  pacer: Pacer,
): Promise<StoredRecord[]> {
  const order = plan.query.orderby;
  const capacity = limit + 1;
  const best: { record: StoredRecord; key: SortValue[] }[] = [];
  for (const record of rows) {
    if (pacer.due()) await pacer.yieldTurn();
    if (!plan.matches(record.doc)) continue;
    const key = keyOf(record.doc, record.id, order);
    if (after !== undefined && compareKeys(key, after, order) <= 0) continue;
    if (best.length === capacity && compareKeys(key, (best[capacity - 1] as { key: SortValue[] }).key, order) >= 0) {
      continue;
    }
    let low = 0;
    let high = best.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (compareKeys((best[mid] as { key: SortValue[] }).key, key, order) < 0) low = mid + 1;
      else high = mid;
    }
    best.splice(low, 0, { record, key });
    if (best.length > capacity) best.pop();
  }
  return best.map((entry) => entry.record);
}

async function countMatches(rows: Iterable<StoredRecord>, plan: QueryPlan, pacer: Pacer): Promise<number> {
  let count = 0;
  for (const record of rows) {
    if (pacer.due()) await pacer.yieldTurn();
    if (plan.matches(record.doc)) count++;
  }
  return count;
}

/** Counts rows and work since the last turn; cheap enough to ask on every row. */
class Pacer {
  private rows = 0;
  private workAtTurn: number;

  constructor(private readonly pace: Pace | undefined) {
    this.workAtTurn = pace?.work() ?? 0;
  }

  due(): boolean {
    if (this.pace === undefined) return false;
    this.rows++;
    return this.rows >= this.pace.rows || this.pace.work() - this.workAtTurn >= this.pace.steps;
  }

  async yieldTurn(): Promise<void> {
    this.rows = 0;
    await this.pace?.yieldTurn();
    this.workAtTurn = this.pace?.work() ?? 0;
  }
}
