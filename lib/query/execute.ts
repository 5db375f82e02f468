// Running a planned query over a collection, one page at a time, with keyset paging on (order-by
// keys, id) (CONTRACT §5: "items that exist for the whole walk are seen exactly once even while
// others are inserted or deleted"). A page starts strictly after the sort key of the previous page's
// last item, so inserts and deletes elsewhere never shift it, unlike an offset.
//
// Without $orderby the store's id order is the sort order, and the scan stops as soon as the page
// is full. With $orderby each page is a full pass over the matches keeping the best page-size of
// them; the benchmark reports what that costs.
import type { JsonValue } from '../json.js';
import type { Store, StoredRecord } from '../store/types.js';
import type { QueryPlan } from './plan.js';
import { compareKeys, keyOf } from './order.js';

export interface PageRequest {
  readonly pageSize: number;
  /** Sort key of the last item already returned, or undefined for the first page. */
  readonly after?: readonly JsonValue[];
  /** Items earlier pages returned (counts against $top). */
  readonly returned: number;
}

export interface Page {
  readonly items: readonly StoredRecord[];
  /** Sort key of the last item, present only when a next page exists. */
  readonly next?: readonly JsonValue[];
  /** All matches, when $count=true. */
  readonly count?: number;
}

const SCAN_CHUNK = 512;

export function runPage(store: Store, collection: string, plan: QueryPlan, request: PageRequest): Page {
  const top = plan.query.top;
  const remaining = top === undefined ? Number.POSITIVE_INFINITY : Math.max(0, top - request.returned);
  const limit = Math.min(request.pageSize, remaining);
  const order = plan.query.orderby;
  const window = order.length === 0 ? scanInIdOrder(store, collection, plan, request.after, limit) : sortAll(store, collection, plan, request.after, limit);
  const items = window.slice(0, limit);
  const more = window.length > limit && remaining > limit;
  const last = items[items.length - 1];
  const page: Page = more && last !== undefined ? { items, next: keyOf(last.doc, last.id, order) } : { items };
  return plan.query.count ? { ...page, count: countMatches(store, collection, plan) } : page;
}

/** Up to limit + 1 matches after `after`, reading the collection in id order. */
function scanInIdOrder(store: Store, collection: string, plan: QueryPlan, after: readonly JsonValue[] | undefined, limit: number): StoredRecord[] {
  const found: StoredRecord[] = [];
  let cursor = typeof after?.[0] === 'string' ? after[0] : undefined;
  while (found.length <= limit) {
    const chunk = store.scan(collection, cursor === undefined ? { limit: SCAN_CHUNK } : { after: cursor, limit: SCAN_CHUNK });
    for (const record of chunk) {
      if (plan.matches(record.doc)) found.push(record);
      if (found.length > limit) break;
    }
    if (chunk.length < SCAN_CHUNK) break;
    cursor = (chunk[chunk.length - 1] as StoredRecord).id;
  }
  return found;
}

/**
 * The first limit + 1 matches after `after` in (keys, id) order. A bounded sorted buffer keeps this
 * at O(n log k) per page instead of sorting every match.
 */
function sortAll(store: Store, collection: string, plan: QueryPlan, after: readonly JsonValue[] | undefined, limit: number): StoredRecord[] {
  const order = plan.query.orderby;
  const capacity = limit + 1;
  const best: { record: StoredRecord; key: JsonValue[] }[] = [];
  for (const record of store.scan(collection)) {
    if (!plan.matches(record.doc)) continue;
    const key = keyOf(record.doc, record.id, order);
    if (after !== undefined && compareKeys(key, after, order) <= 0) continue;
    if (best.length === capacity && compareKeys(key, (best[capacity - 1] as { key: JsonValue[] }).key, order) >= 0) continue;
    let low = 0;
    let high = best.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (compareKeys((best[mid] as { key: JsonValue[] }).key, key, order) < 0) low = mid + 1;
      else high = mid;
    }
    best.splice(low, 0, { record, key });
    if (best.length > capacity) best.pop();
  }
  return best.map((entry) => entry.record);
}

function countMatches(store: Store, collection: string, plan: QueryPlan): number {
  let count = 0;
  for (const record of store.scan(collection)) if (plan.matches(record.doc)) count++;
  return count;
}
