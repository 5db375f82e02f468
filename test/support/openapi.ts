// Structural checks of an OpenAPI 3.1 document, written here because the project takes no
// dependencies: JSON Pointer resolution of every $ref (RFC 6901), the operations of each path item,
// and the statuses and header fields documented for one operation, with response $refs followed.
import assert from 'node:assert/strict';
import type { JsonObject, JsonValue } from '../../lib/json.js';
import { isJsonObject } from '../../lib/json.js';

/** The operation keys of a Path Item Object (OpenAPI 3.1 §4.8.9). */
export const OPERATION_KEYS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

export function objectAt(value: JsonValue | undefined, what: string): JsonObject {
  assert.ok(isJsonObject(value ?? null), `${what} should be an object`);
  return value as JsonObject;
}

/** Every `$ref` value in the document, with where it was found. */
export function refsOf(value: JsonValue, at = '#'): { ref: string; at: string }[] {
  if (Array.isArray(value)) return value.flatMap((item, index) => refsOf(item, `${at}/${index}`));
  if (!isJsonObject(value)) return [];
  const found: { ref: string; at: string }[] = [];
  for (const [key, member] of Object.entries(value)) {
    if (key === '$ref' && typeof member === 'string') found.push({ ref: member, at });
    else found.push(...refsOf(member, `${at}/${key}`));
  }
  return found;
}

/** A local reference ("#/a/b~1c") resolved against the document, or undefined when nothing is there. */
export function resolve(document: JsonObject, ref: string): JsonValue | undefined {
  if (!ref.startsWith('#/')) return undefined;
  let node: JsonValue | undefined = document;
  for (const raw of ref.slice(2).split('/')) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(node)) node = node[Number(key)];
    else if (isJsonObject(node ?? null) && Object.hasOwn(node as JsonObject, key)) node = (node as JsonObject)[key];
    else return undefined;
  }
  return node;
}

/** A value with its $ref followed (once is enough for responses and headers, which never chain here). */
export function deref(document: JsonObject, value: JsonValue | undefined): JsonValue | undefined {
  if (isJsonObject(value ?? null) && typeof (value as JsonObject)['$ref'] === 'string') return resolve(document, (value as JsonObject)['$ref'] as string);
  return value;
}

export function pathItem(document: JsonObject, path: string): JsonObject {
  return objectAt(objectAt(document['paths'], 'paths')[path], `paths["${path}"]`);
}

/** Upper-case methods a path item lists. */
export function methodsOf(item: JsonObject): string[] {
  return OPERATION_KEYS.filter((key) => Object.hasOwn(item, key)).map((key) => key.toUpperCase());
}

export function operationOf(document: JsonObject, path: string, method: string): JsonObject {
  return objectAt(pathItem(document, path)[method.toLowerCase()], `${method} ${path}`);
}

export function documentedStatuses(document: JsonObject, path: string, method: string): number[] {
  return Object.keys(objectAt(operationOf(document, path, method)['responses'], `${method} ${path} responses`)).map(Number);
}

/** The header field names documented for one status of an operation (lower-case, as Node reports them). */
export function documentedHeaders(document: JsonObject, path: string, method: string, status: number): string[] {
  const responses = objectAt(operationOf(document, path, method)['responses'], 'responses');
  const response = objectAt(deref(document, responses[String(status)]), `${method} ${path} ${status}`);
  return Object.keys(isJsonObject(response['headers'] ?? null) ? (response['headers'] as JsonObject) : {}).map((name) => name.toLowerCase());
}
