// Indexes from a property's values to the ids of the items holding them, for the equality terms of
// filters (equality.ts; README, Performance: "its cost must grow with the page, not with the
// collection"). An index is made the first time a filter on a large enough user collection needs it,
// by one paced walk of the collection (it yields like any long scan, so the server keeps answering),
// and from then on it follows every commit: the store tells each commit to its watchers as it is
// applied, so a reader never sees the index and the items disagree. The walk and the commits may
// interleave: an id is added once whatever the order, and removed only from the value it left.
//
// Bounded: at most MAX_INDEXES at once, the least recently used dropped first, so filters on ever
// new properties cannot grow it; what such a stranger costs is one walk per request, which is what
// the same filter costs without any index. System spaces are never indexed: their records expire
// without a commit. The walk reads each document without keeping its parse (store `peekDocument`): a
// store opened from a snapshot holds its documents as text, and a million parsed documents left
// behind by one walk made every young-generation collection after it slower.
import { nextTurn } from '../clock.js';
import { readPath } from '../filter/values.js';
import type { JsonValue } from '../json.js';
import { isCollectionName } from '../names.js';
import { SortedKeys } from '../store/sorted-keys.js';
import { peekDocument } from '../store/state.js';
import type { Store, StoredRecord } from '../store/types.js';
import type { EqualityTerm, IndexedValue } from './equality.js';

/** The ids an index hands a query for one term: how many, and in ascending order after an id. */
export interface Candidates {
  readonly size: number;
  ids(after?: string): Iterable<string>;
}

/** Collections smaller than this are walked whole: an index would cost writes more than it saves. */
export const INDEX_FROM_ITEMS = 2048;
const MAX_INDEXES = 16;
/** A term with more values than this is left to the walk. */
const MAX_TERM_VALUES = 64;
const BUILD_CHUNK = 2048;

class PropertyIndex {
  readonly ids = new Map<IndexedValue, SortedKeys>();
  ready: Promise<void> = Promise.resolve();

  constructor(readonly path: readonly string[]) {}

  add(record: StoredRecord): void {
    const value = indexedValue(readPath(peekDocument(record), this.path));
    if (value === undefined) return;
    let ids = this.ids.get(value);
    if (ids === undefined) this.ids.set(value, (ids = new SortedKeys()));
    ids.insert(record.id);
  }

  remove(record: StoredRecord): void {
    const value = indexedValue(readPath(peekDocument(record), this.path));
    if (value === undefined) return;
    const ids = this.ids.get(value);
    if (ids === undefined) return;
    ids.remove(record.id);
    if (ids.size === 0) this.ids.delete(value);
  }
}

export class EqualityIndexes {
  /** By collection, then by the path's key; Map order of `order` is the order of last use. */
  private readonly indexes = new Map<string, Map<string, PropertyIndex>>();
  private readonly order = new Map<string, { readonly collection: string; readonly key: string }>();
  private readonly unwatch: () => void;

  constructor(private readonly store: Store) {
    this.unwatch = store.watch((commit) => {
      for (const applied of commit.applied) {
        const byPath = this.indexes.get(applied.mutation.collection);
        if (byPath === undefined) continue;
        for (const index of byPath.values()) {
          if (applied.previous !== undefined) index.remove(applied.previous);
          if (applied.record !== undefined) index.add(applied.record);
        }
      }
    });
  }

  /**
   * The smallest candidate set among `terms`, or undefined when the collection is walked instead
   * (a system space, a small collection, no usable term). Makes the indexes it needs first.
   */
  async candidates(collection: string, terms: readonly EqualityTerm[]): Promise<Candidates | undefined> {
    if (!isCollectionName(collection) || this.store.count(collection) < INDEX_FROM_ITEMS) return undefined;
    let best: Candidates | undefined;
    for (const term of terms) {
      if (term.values.length > MAX_TERM_VALUES) continue;
      const index = await this.index(collection, term.path);
      const sets = [...new Set(term.values)]
        .map((value) => index.ids.get(value))
        .filter((ids): ids is SortedKeys => ids !== undefined);
      const size = sets.reduce((total, ids) => total + ids.size, 0);
      if (best === undefined || size < best.size) best = { size, ids: (after) => merged(sets, after) };
      if (size === 0) break;
    }
    return best;
  }

  close(): void {
    this.unwatch();
    this.indexes.clear();
    this.order.clear();
  }

  private async index(collection: string, path: readonly string[]): Promise<PropertyIndex> {
    const key = JSON.stringify(path);
    const id = `${collection}\n${key}`;
    let byPath = this.indexes.get(collection);
    let index = byPath?.get(key);
    if (index === undefined) {
      index = new PropertyIndex(path);
      if (byPath === undefined) this.indexes.set(collection, (byPath = new Map()));
      byPath.set(key, index);
      // Watched from now on, then filled by a walk: see the header for why the order is safe.
      index.ready = this.fill(collection, index);
      this.dropBeyondLimit(id);
    }
    this.order.delete(id);
    this.order.set(id, { collection, key });
    await index.ready;
    return index;
  }

  private async fill(collection: string, index: PropertyIndex): Promise<void> {
    let after: string | undefined;
    for (;;) {
      const range = after === undefined ? { limit: BUILD_CHUNK } : { after, limit: BUILD_CHUNK };
      const chunk = this.store.scan(collection, range);
      for (const record of chunk) index.add(record);
      if (chunk.length < BUILD_CHUNK) return;
      after = (chunk[chunk.length - 1] as StoredRecord).id;
      await nextTurn();
    }
  }

  private dropBeyondLimit(keep: string): void {
    for (const [id, { collection, key }] of this.order) {
      if (this.order.size < MAX_INDEXES) return;
      if (id === keep) continue;
      this.order.delete(id);
      const byPath = this.indexes.get(collection);
      byPath?.delete(key);
      if (byPath?.size === 0) this.indexes.delete(collection);
    }
  }
}

function indexedValue(value: JsonValue | unknown): IndexedValue | undefined {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? value : undefined;
}

/** The ids of several sorted sets in one ascending sequence (a value is held by one item at most once). */
function* merged(sets: readonly SortedKeys[], after: string | undefined): Generator<string> {
  if (sets.length === 1) {
    yield* (sets[0] as SortedKeys).after(after);
    return;
  }
  const cursors = sets.map((ids) => ids.after(after)).map((iterator) => ({ iterator, head: iterator.next() }));
  for (;;) {
    let smallest: (typeof cursors)[number] | undefined;
    for (const cursor of cursors) {
      if (cursor.head.done === true) continue;
      if (smallest === undefined || (cursor.head.value as string) < (smallest.head.value as string)) smallest = cursor;
    }
    if (smallest === undefined) return;
    yield smallest.head.value as string;
    smallest.head = smallest.iterator.next();
  }
}
