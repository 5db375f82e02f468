// `$orderby` (OASIS OData 4.01 Part 2 §5.1.1 / §5.1.5 "System Query Option $orderby"; CONTRACT §5:
// "`$orderby=price desc,name` (asc default; id is the final tiebreaker)"), and the total order of
// JSON values that keyset paging relies on: every pair of values compares, so (keys, id) positions
// every item exactly once.
//
// OData §5.1.5: "null values come before non-null values when sorting in ascending order and after
// non-null values when sorting in descending order". Values of different JSON types cannot be
// compared by OData at all (the store is schemaless), so resapi orders them by type first:
// null (and missing) < false < true < numbers < strings < arrays and objects (by their JSON text).
// Strings compare ordinally by UTF-16 code unit, as `$filter` does.
import type { JsonObject, JsonValue } from '../json.js';

export interface OrderKey {
  readonly path: readonly string[];
  readonly descending: boolean;
}

const TYPE_RANK = { null: 0, boolean: 1, number: 2, string: 3, structured: 4 } as const;

/** The value at `path` in `doc`, or null when any step is missing. */
export function valueAt(doc: JsonObject, path: readonly string[]): JsonValue {
  let value: JsonValue | undefined = doc;
  for (const segment of path) {
    if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.hasOwn(value, segment)) return null;
    value = value[segment];
  }
  return value ?? null;
}

/** Total order of JSON values (negative, zero or positive). */
export function compareValues(a: JsonValue, b: JsonValue): number {
  const rankA = rank(a);
  const rankB = rank(b);
  if (rankA !== rankB) return rankA - rankB;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  if (a === null) return 0;
  const textA = JSON.stringify(a);
  const textB = JSON.stringify(b);
  return textA < textB ? -1 : textA > textB ? 1 : 0;
}

/** The sort key of a document: its order-by values, then its id. */
export function keyOf(doc: JsonObject, id: string, order: readonly OrderKey[]): JsonValue[] {
  return [...order.map((key) => valueAt(doc, key.path)), id];
}

/** Compares two sort keys made by keyOf under `order` (the trailing id is always ascending). */
export function compareKeys(a: readonly JsonValue[], b: readonly JsonValue[], order: readonly OrderKey[]): number {
  for (let index = 0; index < order.length; index++) {
    const difference = compareValues(a[index] ?? null, b[index] ?? null);
    if (difference !== 0) return (order[index] as OrderKey).descending ? -difference : difference;
  }
  return compareValues(a[order.length] ?? null, b[order.length] ?? null);
}

function rank(value: JsonValue): number {
  if (value === null) return TYPE_RANK.null;
  if (typeof value === 'boolean') return TYPE_RANK.boolean;
  if (typeof value === 'number') return TYPE_RANK.number;
  if (typeof value === 'string') return TYPE_RANK.string;
  return TYPE_RANK.structured;
}
