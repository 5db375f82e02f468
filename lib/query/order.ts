// `$orderby` (OASIS OData 4.01 Part 2 §5.1.1 / §5.1.5 "System Query Option $orderby";
// CONVENTIONS.md#select-and-orderby: `$orderby=price desc,name`, ascending by default, id the final
// tiebreaker), and the total order of JSON values that keyset paging relies on: every pair of values
// compares, so (keys, id) positions every item exactly once.
//
// OData §5.1.5: "null values come before non-null values when sorting in ascending order and after
// non-null values when sorting in descending order". Values of different JSON types cannot be
// compared by OData at all (the store is schemaless), so resapi orders them by type first:
// null (and missing) < false < true < numbers < strings < arrays and objects (by their JSON text).
// Strings compare ordinally by UTF-16 code unit, as `$filter` does.
//
// Sort keys are bounded (CONVENTIONS.md#skip-tokens: every @nextLink stays under 8 KiB, and the next page's token
// carries the last item's key): a key orders by the first MAX_SORT_TEXT code units of a string, and
// of an array's or object's JSON text, then by id. Note: this departs from a plain total order only
// for values that share their first MAX_SORT_TEXT code units; those order by id instead.
import { valueAt, type JsonObject, type JsonPrimitive, type JsonValue } from '../json.js';

export interface OrderKey {
  readonly path: readonly string[];
  readonly descending: boolean;
}

/** A value as a sort key holds it: scalars as they are, strings and structured values bounded. */
export type SortValue = JsonPrimitive | { readonly structured: string };

/** Code units of a string (or of structured JSON text) that a sort key keeps. */
export const MAX_SORT_TEXT = 128;

const TYPE_RANK = { null: 0, boolean: 1, number: 2, string: 3, structured: 4 } as const;

/** Total order of JSON values (negative, zero or positive). */
export function compareValues(a: JsonValue, b: JsonValue): number {
  return compareSortValues(sortValueOf(a, Number.POSITIVE_INFINITY), sortValueOf(b, Number.POSITIVE_INFINITY));
}

/** The value a sort key holds for `value`: text kept to `limit` code units (MAX_SORT_TEXT by default). */
export function sortValueOf(value: JsonValue, limit: number = MAX_SORT_TEXT): SortValue {
  if (typeof value === 'string') return value.length > limit ? value.slice(0, limit) : value;
  if (typeof value !== 'object' || value === null) return value;
  const text = JSON.stringify(value);
  return { structured: text.length > limit ? text.slice(0, limit) : text };
}

/** The sort key of a document: its order-by values, then its id. */
export function keyOf(doc: JsonObject, id: string, order: readonly OrderKey[]): SortValue[] {
  return [...order.map((key) => sortValueOf(valueAt(doc, key.path))), id];
}

/** Compares two sort keys made by keyOf under `order` (the trailing id is always ascending). */
export function compareKeys(a: readonly SortValue[], b: readonly SortValue[], order: readonly OrderKey[]): number {
  for (let index = 0; index < order.length; index++) {
    const difference = compareSortValues(a[index] ?? null, b[index] ?? null);
    if (difference !== 0) return (order[index] as OrderKey).descending ? -difference : difference;
  }
  return compareSortValues(a[order.length] ?? null, b[order.length] ?? null);
}

/** Is `value` a sort value as keyOf makes them? (Guards positions read back from a token.) */
export function isSortValue(value: unknown): value is SortValue {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  return (
    typeof value === 'object' &&
    !Array.isArray(value) &&
    Object.keys(value).length === 1 &&
    typeof (value as { structured?: unknown }).structured === 'string'
  );
}

function compareSortValues(a: SortValue, b: SortValue): number {
  const rankA = rank(a);
  const rankB = rank(b);
  if (rankA !== rankB) return rankA - rankB;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  if (typeof a === 'string' && typeof b === 'string') return compareText(a, b);
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return 0;
  return compareText(a.structured, b.structured);
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function rank(value: SortValue): number {
  if (value === null) return TYPE_RANK.null;
  if (typeof value === 'boolean') return TYPE_RANK.boolean;
  if (typeof value === 'number') return TYPE_RANK.number;
  if (typeof value === 'string') return TYPE_RANK.string;
  return TYPE_RANK.structured;
}
