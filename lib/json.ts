// JSON values as they travel on the wire and in the store: explicit shapes, no `any`. Reading JSON
// text (exact numbers, errors in resapi's own words) is json-text.ts.
export type JsonPrimitive = string | number | boolean | null;
export type JsonValue = JsonPrimitive | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

/** True for a plain JSON object (not an array, not null). */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The value at `path` below `root`: null when a step is missing or null, or when a step's parent is
 * not an object (an array has no named members here). Own members only, so `constructor` is never
 * found on the prototype. The one reader of a member path: queries, sort keys, filters, the CSV view.
 */
export function valueAt(root: JsonValue, path: readonly string[]): JsonValue {
  let value: JsonValue = root;
  for (const segment of path) {
    if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.hasOwn(value, segment)) {
      return null;
    }
    value = value[segment] ?? null;
  }
  return value;
}
