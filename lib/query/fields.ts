// The properties a collection knows (CONTRACT §5: "a property that no item of the collection has (or
// the schema lacks) → 400"; seed, Filtering rule 5: "A non-existent property in a filter gives a
// 4xx"). With a declared schema, its fields (plus `id`). Otherwise the union of the property paths
// its items have, counted per path and kept up to date from each commit, so validating a query never
// scans the collection.
//
// Paths through arrays of objects count as paths of the array's name: `lines/qty` is known when
// some item has `"lines": [{ "qty": 1 }]`, which is what a lambda such as `lines/any(l: l/qty gt 0)`
// reads.
import type { CollectionConfig } from '../config.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../json.js';
import type { Commit, StoredRecord } from '../store/types.js';

/** A path is stored as its segments joined by "/" (a segment cannot contain "/" in a query). */
const SEPARATOR = '/';
/** Bound on the nesting followed when collecting paths, so one odd document cannot cost unboundedly. */
const MAX_DEPTH = 16;

export class FieldIndex {
  private readonly counts = new Map<string, Map<string, number>>();

  /**
   * `scan` lists a collection's records; it is called once per collection, the first time the
   * collection is asked about, so start-up never pays for collections nobody queries.
   */
  constructor(
    private readonly schemaOf: (collection: string) => CollectionConfig['schema'] | undefined,
    private readonly scan: (collection: string) => Iterable<StoredRecord>,
  ) {}

  /** Keeps the counts in step with a commit (subscribe with store.watch). */
  observe(commit: Commit): void {
    for (const applied of commit.applied) {
      const counts = this.counts.get(applied.mutation.collection);
      if (counts === undefined) continue;
      if (applied.previous !== undefined) adjust(counts, applied.previous.doc, -1);
      if (applied.record !== undefined) adjust(counts, applied.record.doc, 1);
    }
  }

  /** Is `path` a property of `collection`? */
  has(collection: string, path: readonly string[]): boolean {
    const schema = this.schemaOf(collection);
    if (schema !== undefined) {
      const [head] = path;
      if (head === undefined) return false;
      if (head === 'id') return path.length === 1;
      const declared = Object.hasOwn(schema, head) ? schema[head] : undefined;
      if (declared === undefined) return false;
      // Below a declared object or array field the schema says nothing more; accept what items hold.
      return path.length === 1 || ((declared === 'object' || declared === 'array') && this.seen(collection, path));
    }
    return this.seen(collection, path);
  }

  private seen(collection: string, path: readonly string[]): boolean {
    let counts = this.counts.get(collection);
    if (counts === undefined) {
      counts = new Map();
      for (const record of this.scan(collection)) adjust(counts, record.doc, 1);
      this.counts.set(collection, counts);
    }
    return (counts.get(path.map(escapeSegment).join(SEPARATOR)) ?? 0) > 0;
  }
}

function adjust(counts: Map<string, number>, doc: JsonObject, delta: number): void {
  for (const path of pathsOf(doc)) {
    const next = (counts.get(path) ?? 0) + delta;
    if (next <= 0) counts.delete(path);
    else counts.set(path, next);
  }
}

/** RFC 6901 §3 escaping, so a key holding "/" is never mistaken for a nested path. */
function escapeSegment(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Every property path of a document, each once (segments escaped, joined by "/"). */
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
      const path = prefix === '' ? escapeSegment(key) : `${prefix}${SEPARATOR}${escapeSegment(key)}`;
      paths.add(path);
      stack.push({ value: child, prefix: path, depth: depth + 1 });
    }
  }
  return paths;
}
