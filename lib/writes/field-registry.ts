// The field registry (CONVENTIONS.md#filter-errors-and-budget): without a declared schema, a
// collection's properties are every name any of its items has ever had, remembered across deletes and
// restarts, and nothing is kept for collections that do not exist. The write path records, in the same atomic batch as
// the write, every property path a stored document brings that its collection has not had before:
// one record per collection in the `$fields` space, whose keys are the paths. Paths are only ever
// added, so whether a query is valid never depends on which items exist at the moment, and a record
// exists only for a collection that has held an item (a query on a made-up name remembers nothing).
//
// A path is its segments, each escaped as in RFC 6901 §3 (a key may hold "/"), joined by "/". Paths
// through arrays of objects count as paths of the array's name: `lines/qty` is known once some item
// has `"lines": [{ "qty": 1 }]`, which is what a lambda such as `lines/any(l: l/qty gt 0)` reads.
import { escapePointerToken } from '../json-pointer.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../json.js';
import { isCollectionName } from '../names.js';
import type { Mutation, Store } from '../store/types.js';

export const FIELDS_SPACE = '$fields';
/** Bound on the nesting followed when collecting paths, so one odd document cannot cost unboundedly. */
const MAX_DEPTH = 16;
const SEPARATOR = '/';

/** The registry key of a property path. */
export function pathKey(path: readonly string[]): string {
  return path.map(escapePointerToken).join(SEPARATOR);
}

/** Every property path of a document, each once, as registry keys. */
export function pathsOf(doc: JsonObject): Set<string> {
  const paths = new Set<string>();
  const stack: { value: JsonValue; prefix: string; depth: number }[] = [{ value: doc, prefix: '', depth: 0 }];
  while (stack.length > 0) {
    const { value, prefix, depth } = stack.pop() as { value: JsonValue; prefix: string; depth: number };
    if (depth > MAX_DEPTH) continue;
    if (Array.isArray(value)) {
      for (const element of value) if (isJsonObject(element)) stack.push({ value: element, prefix, depth: depth + 1 });
      continue;
    }
    if (!isJsonObject(value)) continue;
    for (const [key, child] of Object.entries(value)) {
      const path = prefix === '' ? escapePointerToken(key) : `${prefix}${SEPARATOR}${escapePointerToken(key)}`;
      paths.add(path);
      stack.push({ value: child, prefix: path, depth: depth + 1 });
    }
  }
  return paths;
}

/**
 * The registry patches for `changes`: per user collection, the paths its stored documents bring that
 * the registry does not hold yet. An upsert patch only adds keys, so two concurrent writes that bring
 * different new paths both keep theirs.
 */
export function fieldRegistrations(store: Store, changes: readonly Mutation[]): Mutation[] {
  const fresh = new Map<string, JsonObject>();
  for (const change of changes) {
    if (change.kind !== 'put' || !isCollectionName(change.collection)) continue;
    const known = store.get(FIELDS_SPACE, change.collection)?.doc;
    for (const path of pathsOf(change.doc)) {
      if (known !== undefined && Object.hasOwn(known, path)) continue;
      const added = fresh.get(change.collection) ?? {};
      // An own data property even for a path named "__proto__".
      Object.defineProperty(added, path, { value: 1, enumerable: true, writable: true, configurable: true });
      fresh.set(change.collection, added);
    }
    // A collection whose first item has no field but its id still exists: record it, with no paths.
    if (known === undefined && !fresh.has(change.collection)) fresh.set(change.collection, {});
  }
  return [...fresh].map(([collection, set]) => ({
    kind: 'patch',
    collection: FIELDS_SPACE,
    id: collection,
    set,
    upsert: true,
  }));
}

/**
 * The registrations a store written before the registry existed needs: for every user collection
 * with items and no registry record, the union of its items' paths. Empty once caught up.
 */
export function missingRegistrations(store: Store): Mutation[] {
  const missing: Mutation[] = [];
  for (const collection of store.collections()) {
    if (!isCollectionName(collection) || store.get(FIELDS_SPACE, collection) !== undefined) continue;
    const set: JsonObject = {};
    for (const record of store.scan(collection)) {
      for (const path of pathsOf(record.doc)) {
        Object.defineProperty(set, path, { value: 1, enumerable: true, writable: true, configurable: true });
      }
    }
    missing.push({ kind: 'patch', collection: FIELDS_SPACE, id: collection, set, upsert: true });
  }
  return missing;
}
