// JSON values as they travel on the wire and in the store: explicit shapes, no `any`. Reading JSON
// text (exact numbers, errors in resapi's own words) is json-text.ts.
export type JsonPrimitive = string | number | boolean | null;
export type JsonValue = JsonPrimitive | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

/** What is wrong with a JSON text, in resapi's words; never V8's message, never a slice of the text. */

/** True for a plain JSON object (not an array, not null). */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
