// The field registry (CONVENTIONS.md#filter-errors-and-budget): without a declared schema, a
// collection's properties are every name any of its items has ever had, remembered across deletes and
// restarts, and nothing is kept for collections that do not exist. The write path records, in the same
// atomic batch as the write, every property path a stored document brings that its collection has not
// had before. Paths are only ever added, so whether a query is valid never depends on which items exist
// at the moment, and a collection has registrations only once it has held an item (a query on a
// made-up name remembers nothing).
//
// A path is its segments, each escaped as in RFC 6901 §3 (a key may hold "/"), joined by "/". Paths
// through arrays of objects count as paths of the array's name: `lines/qty` is known once some item
// has `"lines": [{ "qty": 1 }]`, which is what a lambda such as `lines/any(l: l/qty gt 0)` reads.
//
// Cost: registering k new paths costs O(k), whatever the collection already knows. Each write that
// brings new paths puts one new record in the `$fields` space holding only those paths
// (`{ "collection": "c", "paths": [...] }`, id `c.<n>`); nothing known is rewritten or copied, in the
// store or in its journal. The union lives in memory here, read once from the store when the writer
// is made and kept current by the store's change feed. A store written when the registry was one
// record per collection (id `c`, its keys the paths, grown by patches) is read as it is.
//
// Limits (CONVENTIONS.md#limits): a document carries at most `limits.maxPropertyNames.document`
// distinct paths, and a collection has at most `limits.maxPropertyNames.collection`. The collection
// count includes the paths that writes still in flight are registering, so concurrent writes cannot
// pass the limit together; a write that adds no path beyond the registry is never refused by it, so a
// store already beyond a lower limit keeps taking writes of the names it has.
import type { PropertyNameLimits } from '../config.js';
import { escapePointerToken } from '../json-pointer.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../json.js';
import { isCollectionName } from '../names.js';
import { problem, type Problem } from '../protocol/problem.js';
import { peekDocument } from '../store/state.js';
import type { Applied, Mutation, Store } from '../store/types.js';

export const FIELDS_SPACE = '$fields';
/** Bound on the nesting followed when collecting paths, so one odd document cannot cost unboundedly. */
const MAX_DEPTH = 16;
const SEPARATOR = '/';
/** Between the collection and the number in a registration id; never part of a collection name. */
const ID_SEPARATOR = '.';

/** What registering a batch's paths comes to: the records to commit with it, or the change refused. */
export type Registration =
  | {
      readonly ok: true;
      /** The `$fields` records to commit in the same batch as the changes. */
      readonly mutations: readonly Mutation[];
      /** Ends the reservation of the paths once the batch is committed or refused; idempotent. */
      readonly release: () => void;
    }
  | { readonly ok: false; readonly index: number; readonly problem: Problem };

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
 * Whether `doc` has at most `limit` property paths, each of them in `known`: what pathsOf and the
 * registry's look-ups would find, without building a set. Not sure (false) for a document holding an
 * array of objects, whose elements may repeat paths: pathsOf decides then. Asked of nearly every write,
 * so it allocates nothing but the paths below the top level: `for in` reads a parsed object's keys from
 * V8's enum cache (an inherited enumerable key, which no parsed document has, could only make it say
 * false, and pathsOf decide), and the recursion is bounded by MAX_DEPTH.
 */
function bringsNothingNew(doc: JsonObject, known: ReadonlySet<string>, limit: number): boolean {
  return knownPathCount(doc, '', 0, known, limit) !== -1;
}

/** How many paths `object` (at `prefix`) has, all known and at most `budget`; -1 when not so. */
function knownPathCount(
  object: JsonObject,
  prefix: string,
  depth: number,
  known: ReadonlySet<string>,
  budget: number,
): number {
  let count = 0;
  for (const key in object) {
    const path = prefix === '' ? escapePointerToken(key) : `${prefix}${SEPARATOR}${escapePointerToken(key)}`;
    if (++count > budget || !known.has(path)) return -1;
    const child = object[key];
    if (Array.isArray(child)) {
      if (child.some(isJsonObject)) return -1;
    } else if (isJsonObject(child) && depth < MAX_DEPTH) {
      const below = knownPathCount(child, path, depth + 1, known, budget - count);
      if (below === -1) return -1;
      count += below;
    }
  }
  return count;
}

/** A registration of nothing: a write that brings no new path. */
const NOTHING_TO_REGISTER: Registration = Object.freeze({ ok: true, mutations: Object.freeze([]), release: () => {} });

/** The paths one batch brings to one collection that the registry does not hold. */
interface Addition {
  readonly paths: Set<string>;
  /** How many of them no write in flight is registering either: what the batch adds to the count. */
  beyond: number;
}

export class FieldRegistry {
  /** Per collection, the paths of committed registrations. */
  private readonly known = new Map<string, Set<string>>();
  /** Per collection, paths that writes in flight register and the registry does not hold yet, with how many do. */
  private readonly pending = new Map<string, Map<string, number>>();
  /** The number of the next registration record; above every number the store holds. */
  private next = 1;

  constructor(private readonly store: Store) {
    for (const record of store.scan(FIELDS_SPACE)) this.absorb(record.id, record.doc);
    // Called as each commit is applied, before its writer resumes, so a query never sees an item
    // whose paths are not known yet.
    store.watch((commit) => {
      for (const applied of commit.applied) {
        if (applied.mutation.collection === FIELDS_SPACE) this.absorbApplied(applied);
      }
    });
  }

  /** The paths `collection` has had, or undefined when it has never held an item. */
  paths(collection: string): ReadonlySet<string> | undefined {
    return this.known.get(collection);
  }

  /**
   * The registrations the put changes of a batch call for, with their paths reserved until `release`;
   * or the first change that passes a limit, as a 400 naming it. Synchronous, so the count it checks
   * cannot change before the reservation is made.
   */
  register(changes: readonly Mutation[], limits: PropertyNameLimits): Registration {
    // Made only for a write that brings a new path: nearly every one brings none.
    let additions: Map<string, Addition> | undefined;
    for (let index = 0; index < changes.length; index++) {
      const change = changes[index] as Mutation;
      if (change.kind !== 'put' || !isCollectionName(change.collection)) continue;
      const { collection } = change;
      // Nearly every write brings names its collection has: that is answered without a path set.
      const known = this.known.get(collection);
      if (known !== undefined && bringsNothingNew(change.doc, known, limits.document)) continue;
      const paths = pathsOf(change.doc);
      if (paths.size > limits.document) {
        return { ok: false, index, problem: documentProblem(paths.size, limits.document) };
      }
      const pending = this.pending.get(collection);
      additions ??= new Map();
      let addition = additions.get(collection);
      // A collection's first item is recorded even if it brought no path at all.
      if (addition === undefined && known === undefined) addition = { paths: new Set(), beyond: 0 };
      const before = addition?.beyond ?? 0;
      for (const path of paths) {
        if (known?.has(path) === true || addition?.paths.has(path) === true) continue;
        addition ??= { paths: new Set(), beyond: 0 };
        addition.paths.add(path);
        if (pending?.has(path) !== true) addition.beyond++;
      }
      if (addition === undefined) continue;
      additions.set(collection, addition);
      const total = (known?.size ?? 0) + (pending?.size ?? 0) + addition.beyond;
      if (addition.beyond > before && total > limits.collection) {
        return { ok: false, index, problem: collectionProblem(collection, known?.size ?? 0, total, limits.collection) };
      }
    }
    return additions === undefined ? NOTHING_TO_REGISTER : this.reserve(additions);
  }

  /**
   * The registrations a store written before the registry existed needs: for every user collection
   * with items and no registration, the union of its items' paths. Empty once caught up. Not limited:
   * what a store holds is served whatever the limits say now.
   */
  missingRegistrations(): Mutation[] {
    const missing: Mutation[] = [];
    for (const collection of this.store.collections()) {
      if (!isCollectionName(collection) || this.known.has(collection)) continue;
      const paths = new Set<string>();
      // A look that keeps no parse (peekDocument): a store loaded from a snapshot keeps its documents
      // as text, which its next snapshot copies instead of encoding (CONVENTIONS.md#durability).
      for (const record of this.store.scan(collection)) {
        for (const path of pathsOf(peekDocument(record))) paths.add(path);
      }
      missing.push(this.record(collection, paths));
    }
    return missing;
  }

  private reserve(additions: ReadonlyMap<string, Addition>): Registration {
    if (additions.size === 0) return NOTHING_TO_REGISTER;
    const mutations: Mutation[] = [];
    for (const [collection, { paths }] of additions) {
      mutations.push(this.record(collection, paths));
      let pending = this.pending.get(collection);
      if (pending === undefined) this.pending.set(collection, (pending = new Map()));
      for (const path of paths) pending.set(path, (pending.get(path) ?? 0) + 1);
    }
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      for (const [collection, { paths }] of additions) this.unreserve(collection, paths);
    };
    return { ok: true, mutations, release };
  }

  private unreserve(collection: string, paths: ReadonlySet<string>): void {
    const pending = this.pending.get(collection);
    if (pending === undefined) return;
    for (const path of paths) {
      // A path the registry absorbed meanwhile is no longer pending for anyone.
      const holders = pending.get(path);
      if (holders === undefined) continue;
      if (holders > 1) pending.set(path, holders - 1);
      else pending.delete(path);
    }
    if (pending.size === 0) this.pending.delete(collection);
  }

  /** A new registration record: its id is unique in the store (this registry is its only writer). */
  private record(collection: string, paths: ReadonlySet<string>): Mutation {
    const id = `${collection}${ID_SEPARATOR}${this.next++}`;
    return { kind: 'put', collection: FIELDS_SPACE, id, doc: { collection, paths: [...paths] } };
  }

  private absorbApplied(applied: Applied): void {
    const { mutation } = applied;
    if (mutation.kind === 'put') this.absorb(mutation.id, mutation.doc);
    // The former shape, grown by patches: only stores written before this one hold them.
    else if (mutation.kind === 'patch') this.absorb(mutation.id, mutation.set);
  }

  /** Adds the paths of a `$fields` record (either shape) to what its collection knows. */
  private absorb(id: string, doc: JsonObject): void {
    const { collection, paths } = doc;
    const current = typeof collection === 'string' && Array.isArray(paths);
    const name = current ? collection : id;
    let known = this.known.get(name);
    if (known === undefined) this.known.set(name, (known = new Set()));
    const pending = this.pending.get(name);
    for (const path of current ? paths : Object.keys(doc)) {
      if (typeof path !== 'string') continue;
      known.add(path);
      pending?.delete(path);
    }
    if (current) {
      const number = Number(id.slice(id.lastIndexOf(ID_SEPARATOR) + 1));
      if (Number.isSafeInteger(number) && number >= this.next) this.next = number + 1;
    }
  }
}

function documentProblem(count: number, limit: number): Problem {
  const detail =
    `The document carries ${count} distinct property paths; limits.maxPropertyNames.document allows ` +
    `${limit}. Nest fewer names, or keep open-ended keys as values (an array of objects).`;
  return problem('invalid-body', detail, {
    errors: [{ pointer: '', detail: `${count} distinct property paths, more than limits.maxPropertyNames.document` }],
  });
}

function collectionProblem(collection: string, known: number, total: number, limit: number): Problem {
  const detail =
    `The write would bring the collection '${collection}' to ${total} distinct property paths (it has ` +
    `${known}); limits.maxPropertyNames.collection allows ${limit}. Use property names it already has.`;
  return problem('invalid-body', detail, {
    errors: [{ pointer: '', detail: 'new property paths past limits.maxPropertyNames.collection' }],
  });
}
