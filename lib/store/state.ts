// The in-memory state shared by every Store implementation: live records, tombstones, ordered keys
// and the due-time index per collection, and the one function that applies a batch. The memory store
// applies batches at once; the file store once their journal record is durable. Keeping the check and
// apply logic here means both stores cannot disagree about what a batch does (one interface, one
// conformance suite: test/store/conformance.ts).
import type { JsonObject, JsonValue } from '../json.js';
import { isJsonObject } from '../json.js';
import type {
  Applied,
  Batch,
  Commit,
  Expectation,
  Mutation,
  ScanOptions,
  StoredRecord,
  Tombstone,
} from './types.js';
import { SortedKeys } from './sorted-keys.js';
import { TimeHeap, TimeQueue } from './time-heap.js';

interface CollectionState {
  readonly records: Map<string, StoredRecord>;
  readonly tombstones: Map<string, Tombstone>;
  /** Ascending ids of `records`. */
  readonly keys: SortedKeys;
  /** Records with a `dueAt`, by that time. An entry is current while the record keeps its version. */
  readonly dues: TimeHeap<DueEntry>;
  /**
   * The top entry of `dues` as last found current by indexDue, forgotten when its record is written or
   * freed: until then it still is, and the look that tells (a Map lookup) is not made again.
   */
  dueChecked: DueEntry | undefined;
  /** Ids of records with an `expiresAt`, by that time; an entry is current while the record keeps it. */
  readonly expiring: TimeQueue;
  /** Ids of tombstones, by `retainUntil`, current likewise. */
  readonly retained: TimeQueue;
  /** The time of this collection's entry in StoreState.expiries (+Infinity while it has none). */
  expiresNext: number;
  lastModified: number | undefined;
  /** The seq of the last commit that touched the collection (Store.collectionVersion). */
  version: number;
}

interface DueEntry {
  readonly at: number;
  readonly id: string;
  /**
   * The record's version: the entry is current while the record keeps it, and it orders ties (first
   * written, first due).
   */
  readonly order: number;
}

export type Verdict =
  | { readonly ok: true }
  | { readonly ok: false; readonly index: number; readonly current?: StoredRecord };

/** Expiry entries that describe no record or tombstone kept before they are let go, beyond one per record. */
const STALE_SLACK = 64;

/**
 * The largest expiry queue let go of its stale entries at once: the look per entry (a Map lookup,
 * cold: ~0.4 µs) made a queue of 2M entries hold the event loop ~0.9 s. A larger one keeps its stale
 * entries until they fall due, as every entry was kept before (16 bytes each now, not 80).
 */
const COMPACT_LIMIT = 16_384;

/** Documents kept as text (keepDocumentsAsText) share a payload of about this many characters, as in a snapshot. */
const TEXT_PAYLOAD_CHARACTERS = 64 << 10;

/** Batches up to this long are searched for a record touched twice pair by pair (at most 28 comparisons). */
const SHORT_BATCH = 8;

/** The verdict of every batch that may be applied: one object, not one per check. */
const ACCEPTED: Verdict = Object.freeze({ ok: true });

export class StoreState {
  private readonly spaces = new Map<string, CollectionState>();
  private lastSeq = 0;
  /**
   * The collections by the earliest time an entry of their `expiring` or `retained` falls due: a purge
   * visits the ones due, not every collection (users may have thousands, each with tombstones).
   */
  private readonly expiries = new TimeHeap<{ readonly at: number; readonly space: CollectionState }>();
  /** While true, `keys` are not kept ordered per insert; `endBulk` sorts them once (recovery speed). */
  private bulk = false;

  constructor(private readonly now: () => number) {}

  get seq(): number {
    return this.lastSeq;
  }

  get(collection: string, id: string): StoredRecord | undefined {
    const record = this.spaces.get(collection)?.records.get(id);
    if (record === undefined || this.isExpired(record)) return undefined;
    return record;
  }

  getTombstone(collection: string, id: string): Tombstone | undefined {
    const tombstone = this.spaces.get(collection)?.tombstones.get(id);
    if (tombstone === undefined || tombstone.retainUntil <= this.now()) return undefined;
    return tombstone;
  }

  scan(collection: string, options: ScanOptions = {}): StoredRecord[] {
    const space = this.spaces.get(collection);
    if (space === undefined) return [];
    const limit = options.limit ?? Number.POSITIVE_INFINITY;
    const out: StoredRecord[] = [];
    if (limit <= 0) return out;
    for (const id of space.keys.after(options.after)) {
      const record = space.records.get(id) as StoredRecord;
      if (!this.isExpired(record)) out.push(record);
      if (out.length >= limit) break;
    }
    return out;
  }

  count(collection: string): number {
    this.purgeExpired();
    return this.spaces.get(collection)?.records.size ?? 0;
  }

  collections(): string[] {
    this.purgeExpired();
    const names: string[] = [];
    for (const [name, space] of this.spaces) if (space.records.size > 0) names.push(name);
    return names.sort();
  }

  /**
   * Up to `limit` current due records at `now`, earliest first (ties: first written first); stale index
   * entries are dropped.
   */
  due(collection: string, now: number, limit: number): StoredRecord[] {
    const space = this.spaces.get(collection);
    if (space === undefined || limit <= 0) return [];
    // Entries that no longer describe their record are dropped from the top, where finished jobs
    // leave theirs; the rest are walked in place (a job stays due until its owner patches it).
    for (
      let entry = space.dues.peek();
      entry !== undefined && this.currentDue(space, entry) === undefined;
      entry = space.dues.peek()
    ) {
      space.dues.pop();
    }
    const found: StoredRecord[] = [];
    space.dues.visitDue(now, (entry) => {
      const record = this.currentDue(space, entry);
      if (record !== undefined) found.push(record);
      return found.length < limit;
    });
    return found;
  }

  nextDue(collection: string): number | undefined {
    const space = this.spaces.get(collection);
    if (space === undefined) return undefined;
    for (let entry = space.dues.peek(); entry !== undefined; entry = space.dues.peek()) {
      if (this.currentDue(space, entry) !== undefined) return entry.at;
      space.dues.pop();
    }
    return undefined;
  }

  lastModified(collection: string): number | undefined {
    return this.spaces.get(collection)?.lastModified;
  }

  collectionVersion(collection: string): number {
    return this.spaces.get(collection)?.version ?? 0;
  }

  /**
   * Store.keepDocumentsAsText: each record holding its document as an object is made again as a
   * LoadedVersion over the document's JSON text, gathered with its neighbours' in one payload of about
   * TEXT_PAYLOAD_CHARACTERS (kept as bytes, outside the JS heap, when it is ASCII), as a snapshot's records
   * are loaded. The text is JSON.stringify of the document, what its representation and ETag are made
   * of, and the version, times and id are the record's own. A seed of a million items loaded into the
   * memory store held a million document objects (1.1 GB resident once collected, where the file store
   * opened on the same items holds 0.6): each young-generation collection under writes costs more the
   * larger the old generation, and each major one marks them all.
   */
  keepDocumentsAsText(): void {
    for (const space of this.spaces.values()) {
      let batch: RecordVersion[] = [];
      let texts: string[] = [];
      let characters = 0;
      const keep = (): void => {
        const text = texts.join('');
        // Only an all-ASCII text has as many UTF-8 bytes as characters; any other is kept as text.
        const ascii = Buffer.byteLength(text, 'utf8') === text.length;
        const frame = new LoadedFrame(ascii ? Buffer.from(text, 'latin1') : text);
        let start = 0;
        for (let index = 0; index < batch.length; index++) {
          const record = batch[index] as RecordVersion;
          const end = start + (texts[index] as string).length;
          const { collection, id, version, modifiedAt, expiresAt, dueAt } = record;
          const loaded = new LoadedVersion(collection, id, version, modifiedAt, expiresAt, dueAt, frame, start, end);
          space.records.set(id, loaded);
          start = end;
        }
        batch = [];
        texts = [];
        characters = 0;
      };
      for (const record of space.records.values()) {
        if (!(record instanceof RecordVersion) || record.loadedFrame() !== undefined) continue;
        const text = record.docText();
        batch.push(record);
        texts.push(text);
        characters += text.length;
        if (characters >= TEXT_PAYLOAD_CHARACTERS) keep();
      }
      if (batch.length > 0) keep();
    }
  }

  /** Checks every expectation of the batch against the current state without changing anything. */
  check(batch: Batch): Verdict {
    const { unchanged } = batch;
    if (unchanged !== undefined && this.collectionVersion(unchanged.collection) !== unchanged.version) {
      return { ok: false, index: -1 };
    }
    // Mutations later in a batch see the effect of earlier ones on the same record, so a batch that
    // touches a record twice simulates presence per key (not after the last one: nothing reads it).
    // Most batches touch each record once (an event's item and body, a change and its delivery).
    const { mutations } = batch;
    // The mutations before this one record their effect (none when no record is touched twice).
    const simulated = touchesTwice(mutations) ? mutations.length - 1 : 0;
    let pending: Map<string, StoredRecord | null> | undefined;
    for (let index = 0; index < mutations.length; index++) {
      const mutation = mutations[index] as Mutation;
      const key = simulated === 0 ? '' : `${mutation.collection}\u0000${mutation.id}`;
      let next: StoredRecord | null;
      if ((mutation.kind === 'put' || mutation.kind === 'delete') && mutation.expect === undefined) {
        // Applies whatever the record is now: no look up (a miss in a large Map, for a new record).
        if (index >= simulated) continue;
        next = mutation.kind === 'put'
          ? { collection: mutation.collection, id: mutation.id, version: 0, modifiedAt: 0, doc: mutation.doc }
          : null;
        (pending ??= new Map()).set(key, next);
        continue;
      }
      const current =
        pending?.has(key) === true ? (pending.get(key) ?? undefined) : this.get(mutation.collection, mutation.id);
      if (mutation.kind === 'restore') {
        const tombstone = this.getTombstone(mutation.collection, mutation.id);
        if (current !== undefined || tombstone === undefined) return conflict(index, current);
        if (index >= simulated) continue;
        next = { collection: mutation.collection, id: mutation.id, version: 0, modifiedAt: 0, doc: tombstone.doc };
      } else {
        if (mutation.expect !== undefined && !meets(mutation.expect, current)) return conflict(index, current);
        if (mutation.kind === 'patch' && current === undefined && mutation.upsert !== true) {
          return conflict(index, current);
        }
        if (index >= simulated) continue;
        if (mutation.kind === 'patch') {
          const base = current ?? {
            collection: mutation.collection, id: mutation.id, version: 0, modifiedAt: 0, doc: {},
          };
          // Field by field: a stored record's modifiedAt and doc are accessors, which a spread leaves out.
          next = { collection: base.collection, id: base.id, version: base.version, modifiedAt: 0,
            doc: patched(base.doc, mutation.set, mutation.unset) };
        } else {
          next = mutation.kind === 'put'
            ? { collection: mutation.collection, id: mutation.id, version: 0, modifiedAt: 0, doc: mutation.doc }
            : null;
        }
      }
      (pending ??= new Map()).set(key, next);
    }
    return ACCEPTED;
  }

  /**
   * Applies a batch that `check` accepted (or that a journal recorded as accepted). `seq` and `at`
   * come from the caller so that replaying a journal reproduces the original versions and times.
   */
  apply(batch: Batch, seq: number, at: number): Commit {
    this.purgeExpired();
    // Of the batch's size from the start: an empty array's first push allocates room for 17.
    const { mutations } = batch;
    const applied = new Array<Applied>(mutations.length);
    for (let index = 0; index < mutations.length; index++) {
      applied[index] = this.applyOne(mutations[index] as Mutation, seq, at);
    }
    this.lastSeq = Math.max(this.lastSeq, seq);
    return { seq, at, applied };
  }

  /** Frees the memory of records and tombstones whose time is up (they already read as absent). */
  purgeExpired(): number {
    const now = this.now();
    let removed = 0;
    for (let due = this.expiries.popDue(now); due !== undefined; due = this.expiries.popDue(now)) {
      const { space } = due;
      // An entry of a collection that was scheduled earlier since (and purged then) is stale.
      if (due.at !== space.expiresNext) continue;
      // An entry may have been rewritten since it was queued: drop its owner only if it is still due.
      for (let id = space.retained.popDue(now); id !== undefined; id = space.retained.popDue(now)) {
        const tombstone = space.tombstones.get(id);
        if (tombstone !== undefined && tombstone.retainUntil <= now) {
          space.tombstones.delete(id);
          removed++;
        }
      }
      for (let id = space.expiring.popDue(now); id !== undefined; id = space.expiring.popDue(now)) {
        const record = space.records.get(id);
        if (record?.expiresAt !== undefined && record.expiresAt <= now) {
          if (space.dueChecked?.id === id) space.dueChecked = undefined;
          space.records.delete(id);
          space.keys.remove(id);
          removed++;
        }
      }
      space.expiresNext = Number.POSITIVE_INFINITY;
      this.scheduleExpiry(space, Math.min(space.retained.next() ?? Infinity, space.expiring.next() ?? Infinity));
    }
    return removed;
  }

  /**
   * Every record and tombstone, an array of each collection's in insertion order. A snapshot takes them
   * synchronously while commits wait, so this is only a copy of the Maps' values (Array.from, native:
   * about 7 ms for a million records, where pushing them one by one and filtering out the expired ones
   * took 70-240 ms; joining the collections' arrays into one doubled it); expired entries are left out
   * as the snapshot is written.
   */
  snapshotEntries(): { records: StoredRecord[][]; tombstones: Tombstone[][] } {
    const records: StoredRecord[][] = [];
    const tombstones: Tombstone[][] = [];
    for (const space of this.spaces.values()) {
      records.push(Array.from(space.records.values()));
      tombstones.push(Array.from(space.tombstones.values()));
    }
    return { records, tombstones };
  }

  /** Loads one entry from a snapshot (no expectations, no sequence bump beyond the entry's). */
  load(entry: { record?: StoredRecord; tombstone?: Tombstone }): void {
    if (entry.record !== undefined) {
      const space = this.space(entry.record.collection);
      if (!this.bulk) space.keys.insert(entry.record.id);
      space.records.set(entry.record.id, entry.record);
      space.lastModified = Math.max(space.lastModified ?? 0, entry.record.modifiedAt);
      space.version = Math.max(space.version, entry.record.version);
      this.lastSeq = Math.max(this.lastSeq, entry.record.version);
      this.expireRecord(space, entry.record.id, entry.record.expiresAt, undefined);
      this.indexDue(space, entry.record);
    }
    if (entry.tombstone !== undefined) {
      const space = this.space(entry.tombstone.collection);
      const { retainUntil, id } = entry.tombstone;
      const before = space.tombstones.get(id)?.retainUntil;
      space.tombstones.set(id, entry.tombstone);
      this.retainTombstone(space, id, retainUntil, before);
      space.lastModified = Math.max(space.lastModified ?? 0, entry.tombstone.deletedAt);
      space.version = Math.max(space.version, entry.tombstone.version, entry.tombstone.restoredVersion ?? 0);
      this.lastSeq = Math.max(this.lastSeq, entry.tombstone.version, entry.tombstone.restoredVersion ?? 0);
    }
  }

  /** Sets the sequence counter after loading a snapshot whose last commit wrote no live record. */
  advanceSeq(seq: number): void {
    this.lastSeq = Math.max(this.lastSeq, seq);
  }

  /** Every collection's last-modified time (deletes included), for snapshots. */
  lastModifiedTimes(): Array<[string, number]> {
    const times: Array<[string, number]> = [];
    for (const [name, space] of this.spaces) {
      if (space.lastModified !== undefined) times.push([name, space.lastModified]);
    }
    return times;
  }

  /** Restores a collection's last-modified time from a snapshot (a delete leaves no record to derive it from). */
  setLastModified(collection: string, at: number): void {
    const space = this.space(collection);
    space.lastModified = Math.max(space.lastModified ?? at, at);
  }

  /**
   * Starts a bulk load (recovery): inserts stop splicing ordered keys, which costs O(n) per insert
   * in a large collection. `endBulk` rebuilds them with one sort per collection.
   */
  beginBulk(): void {
    this.bulk = true;
  }

  endBulk(): void {
    this.bulk = false;
    for (const space of this.spaces.values()) {
      // Map order is insertion order, which for time-ordered ids is already sorted; the sort
      // (TimSort merges presorted runs) is then close to linear, and ~0.3 s for 1M random ids.
      space.keys.replaceAll(Array.from(space.records.keys()).sort());
    }
  }

  private applyOne(mutation: Mutation, seq: number, at: number): Applied {
    const space = this.space(mutation.collection);
    // The raw record, not `get`: expiry depends on the clock, and replaying a journal later must
    // reproduce exactly what the original apply did.
    const previous = space.records.get(mutation.id);
    if (space.dueChecked?.id === mutation.id) space.dueChecked = undefined;
    space.lastModified = at;
    space.version = seq;
    switch (mutation.kind) {
      case 'put': {
        const { collection, id, expiresAt } = mutation;
        const record = makeRecord(collection, id, seq, at, mutation.doc, expiresAt, mutation.dueAt);
        // A live record's id is in `keys` already (the two change together): a replace searches nothing.
        if (previous === undefined && !this.bulk) space.keys.insert(id);
        space.records.set(id, record);
        this.expireRecord(space, id, expiresAt, previous);
        this.indexDue(space, record);
        return previous === undefined ? { mutation, record } : { mutation, record, previous };
      }
      case 'patch': {
        // check() guarantees the record exists unless the patch upserts; a replayed journal holds only
        // patches that passed it.
        if (previous === undefined && mutation.upsert !== true) return { mutation };
        const dueAt = mutation.dueAt === undefined ? previous?.dueAt : (mutation.dueAt ?? undefined);
        const doc = patched(previous?.doc ?? {}, mutation.set, mutation.unset);
        const record = makeRecord(mutation.collection, mutation.id, seq, at, doc, previous?.expiresAt, dueAt);
        if (previous === undefined && !this.bulk) space.keys.insert(mutation.id);
        space.records.set(mutation.id, record);
        this.indexDue(space, record);
        return previous === undefined ? { mutation, record } : { mutation, record, previous };
      }
      case 'delete': {
        if (space.records.delete(mutation.id) && !this.bulk) space.keys.remove(mutation.id);
        if (previous !== undefined && mutation.retainUntil !== undefined) {
          const before = space.tombstones.get(mutation.id)?.retainUntil;
          space.tombstones.set(mutation.id, {
            collection: mutation.collection,
            id: mutation.id,
            version: seq,
            deletedAt: at,
            retainUntil: mutation.retainUntil,
            doc: previous.doc,
          });
          this.retainTombstone(space, mutation.id, mutation.retainUntil, before);
        }
        return previous === undefined ? { mutation } : { mutation, previous };
      }
      case 'restore': {
        const tombstone = space.tombstones.get(mutation.id);
        if (tombstone === undefined) return { mutation };
        const record = makeRecord(mutation.collection, mutation.id, seq, at, tombstone.doc, undefined, undefined);
        if (!this.bulk) space.keys.insert(mutation.id);
        space.records.set(mutation.id, record);
        space.tombstones.set(mutation.id, { ...tombstone, restoredVersion: seq });
        return { mutation, record };
      }
    }
  }

  private space(collection: string): CollectionState {
    let space = this.spaces.get(collection);
    if (space === undefined) {
      space = {
        records: new Map(),
        tombstones: new Map(),
        keys: new SortedKeys(),
        dues: new TimeHeap(),
        dueChecked: undefined,
        expiring: new TimeQueue(),
        retained: new TimeQueue(),
        expiresNext: Number.POSITIVE_INFINITY,
        lastModified: undefined,
        version: 0,
      };
      this.spaces.set(collection, space);
    }
    return space;
  }

  /**
   * Queues a record's expiry, unless the version it replaces had the same one (whose entry stays
   * current). Every live record with an `expiresAt` has one current entry; the entries that no longer
   * describe a record (deleted, or given another time) are let go once they are as many as the
   * records (up to COMPACT_LIMIT entries), so a collection whose records are deleted soon after they
   * are written (an event's body) keeps no entry per record for the whole window.
   */
  private expireRecord(
    space: CollectionState,
    id: string,
    expiresAt: number | undefined,
    previous: StoredRecord | undefined,
  ): void {
    if (expiresAt === undefined || previous?.expiresAt === expiresAt) return;
    space.expiring.push(expiresAt, id);
    this.scheduleExpiry(space, expiresAt);
    const { size } = space.expiring;
    if (size > 2 * space.records.size + STALE_SLACK && size <= COMPACT_LIMIT) {
      space.expiring.filter((at, key) => space.records.get(key)?.expiresAt === at);
    }
  }

  /** As expireRecord, for a tombstone just set, kept until `retainUntil` (the one it replaced: `before`). */
  private retainTombstone(space: CollectionState, id: string, retainUntil: number, before: number | undefined): void {
    if (before === retainUntil) return;
    space.retained.push(retainUntil, id);
    this.scheduleExpiry(space, retainUntil);
    const { size } = space.retained;
    if (size > 2 * space.tombstones.size + STALE_SLACK && size <= COMPACT_LIMIT) {
      space.retained.filter((at, key) => space.tombstones.get(key)?.retainUntil === at);
    }
  }

  /** Makes sure the collection is looked at by a purge at `at` or before. */
  private scheduleExpiry(space: CollectionState, at: number): void {
    if (!(at < space.expiresNext)) return;
    space.expiresNext = at;
    this.expiries.push({ at, space });
  }

  private isExpired(record: StoredRecord): boolean {
    return record.expiresAt !== undefined && record.expiresAt <= this.now();
  }

  /**
   * Indexes the record's due time, and drops the entries on top that no longer describe their record:
   * `due` and `nextDue` drop them too, but a running queue keeps its own index and seldom asks, and
   * every finished job would otherwise leave its entry for as long as the process runs.
   */
  private indexDue(space: CollectionState, record: StoredRecord): void {
    if (record.dueAt !== undefined) space.dues.push({ at: record.dueAt, id: record.id, order: record.version });
    for (let entry = space.dues.peek(); entry !== undefined && entry !== space.dueChecked; entry = space.dues.peek()) {
      if (this.currentDue(space, entry) !== undefined) {
        space.dueChecked = entry;
        return;
      }
      space.dues.pop();
    }
  }

  /** The record an index entry points at, while the entry still describes it. */
  private currentDue(space: CollectionState, entry: DueEntry): StoredRecord | undefined {
    const record = space.records.get(entry.id);
    if (record === undefined || record.version !== entry.order || record.dueAt !== entry.at) return undefined;
    if (this.isExpired(record)) return undefined;
    return record;
  }
}

/**
 * The payload of a records frame of a snapshot as it was loaded, which every record loaded from it keeps
 * a slice of until it is read. An all-ASCII payload (the usual one) is kept as its bytes, outside the JS
 * heap, where offsets count bytes; any other as its decoded text, where they count UTF-16 code units.
 * Kept as strings, a 1M-record store's 230 MB of payloads were over half its heap, and a young-generation
 * collection costs more the more pages the old generation has (measured under PUTs at 1M items, 15-25
 * collections a second: median 2.7-3.1 ms each with them, 1.8-2.5 without; they were the largest share of
 * the slowest requests' time). The price: V8 starts a major collection after a growth in proportion to
 * the heap, so they come twice as often (each marks the same records, with shorter pauses).
 * A class, so that a record tells it from a parsed document by its prototype.
 */
export class LoadedFrame {
  constructor(readonly payload: Buffer | string) {}

  /** The text from `start` to `end` (a document, or an id). */
  slice(start: number, end: number): string {
    const { payload } = this;
    return typeof payload === 'string' ? payload.slice(start, end) : payload.toString('latin1', start, end);
  }
}

/**
 * Times are kept as two small integers, below and above this: V8 stores an integer under 2^31 in the
 * object itself, and any other number as a heap object of its own, so a time in ms kept whole was a
 * second object per record (1M of them at 1M records: a third of the objects a major collection marks).
 */
const TIME_SPLIT = 2 ** 30;

/** The part of a time above TIME_SPLIT (0 for a time that is not a safe integer: see lowPart). */
function highPart(at: number): number {
  // `| 0` is exact for both parts of a safe integer, and turns -0 into 0 (-0 is not a small integer).
  return Number.isSafeInteger(at) ? Math.floor(at / TIME_SPLIT) | 0 : 0;
}

/** The part of a time below TIME_SPLIT, or an object holding a time that is not an integer (a test clock may). */
function lowPart(at: number, high: number): number | { readonly at: number } {
  return Number.isSafeInteger(at) ? (at - high * TIME_SPLIT) | 0 : { at };
}

function timeOf(high: number, low: number | { readonly at: number }): number {
  return typeof low === 'number' ? high * TIME_SPLIT + low : low.at;
}

/**
 * One version of a record. A record kept for a window (an inbox event, a delivery: 30 days) costs its
 * fields for as long, so it keeps no field it does not need: times split into small integers, and the
 * place of a document loaded as text only in LoadedVersion.
 */
class RecordVersion implements StoredRecord {
  readonly collection: string;
  readonly id: string;
  readonly version: number;
  readonly dueAt: number | undefined;
  /** modifiedAt as TIME_SPLIT times this plus `#modifiedLow`. */
  readonly #modifiedHigh: number;
  readonly #modifiedLow: number | { readonly at: number };
  /** expiresAt likewise; `#expiresLow` is undefined when the record never expires. */
  readonly #expiresHigh: number;
  readonly #expiresLow: number | { readonly at: number } | undefined;
  /** The parsed document, or while unparsed the frame whose payload holds it (LoadedVersion). */
  #doc: JsonObject | LoadedFrame;
  /** What a reader derived from this version and keeps with it (derivedOf), or undefined. */
  #derived: object | undefined = undefined;

  constructor(
    collection: string,
    id: string,
    version: number,
    modifiedAt: number,
    expiresAt: number | undefined,
    dueAt: number | undefined,
    doc: JsonObject | LoadedFrame,
  ) {
    this.collection = collection;
    this.id = id;
    this.version = version;
    this.dueAt = dueAt;
    this.#modifiedHigh = highPart(modifiedAt);
    this.#modifiedLow = lowPart(modifiedAt, this.#modifiedHigh);
    if (expiresAt === undefined) {
      this.#expiresHigh = 0;
      this.#expiresLow = undefined;
    } else {
      this.#expiresHigh = highPart(expiresAt);
      this.#expiresLow = lowPart(expiresAt, this.#expiresHigh);
    }
    this.#doc = doc;
  }

  get modifiedAt(): number {
    return timeOf(this.#modifiedHigh, this.#modifiedLow);
  }

  /** Records in system spaces may expire; an expired record reads as absent. */
  get expiresAt(): number | undefined {
    const low = this.#expiresLow;
    return low === undefined ? undefined : timeOf(this.#expiresHigh, low);
  }

  get doc(): JsonObject {
    const doc = this.#doc;
    if (!(doc instanceof LoadedFrame)) return doc;
    const parsed = this.parse(doc);
    this.#doc = parsed;
    return parsed;
  }

  /**
   * The document for one look: a loaded text is parsed and not kept, so a walk that reads every record
   * once (an equality index being made) leaves the records as compact as it found them.
   */
  peekDoc(): JsonObject {
    const doc = this.#doc;
    return doc instanceof LoadedFrame ? this.parse(doc) : doc;
  }

  private parse(source: LoadedFrame): JsonObject {
    const value: unknown = JSON.parse(this.loadedText(source));
    // The snapshot loader checked the braces and the frame's checksum held, so this is a defect.
    if (!isJsonObject(value)) throw new Error(`stored document of ${this.collection}/${this.id} is not a JSON object`);
    return value;
  }

  /** The document's text in the frame it was loaded from: only a LoadedVersion holds one. */
  protected loadedText(_source: LoadedFrame): string {
    throw new Error(`record ${this.collection}/${this.id} was made with its document, not loaded from a frame`);
  }

  /** The document as JSON text: the loaded text as is while it has not been parsed. */
  docText(): string {
    const doc = this.#doc;
    return doc instanceof LoadedFrame ? this.loadedText(doc) : JSON.stringify(doc);
  }

  get derived(): object | undefined {
    return this.#derived;
  }

  set derived(value: object) {
    this.#derived = value;
  }

  /** The snapshot frame the record was loaded from, while it has not been read since. */
  loadedFrame(): LoadedFrame | undefined {
    const doc = this.#doc;
    return doc instanceof LoadedFrame ? doc : undefined;
  }

  /** The fields a reader sees, the accessors included (JSON.stringify would skip them). */
  toJSON(): JsonObject {
    const { collection, id, version, modifiedAt, doc, expiresAt, dueAt } = this;
    return {
      collection,
      id,
      version,
      modifiedAt,
      doc,
      ...(expiresAt === undefined ? {} : { expiresAt }),
      ...(dueAt === undefined ? {} : { dueAt }),
    };
  }
}

/**
 * A record version loaded from a snapshot, which keeps its document as the JSON text it was written as
 * until something reads `doc`: building a million document objects (JSON.parse and the collector's
 * copying of them) was most of what opening a 1M-record store cost, and most of those documents are
 * never read before they are replaced. The first read parses and drops the text. The text is the
 * frame's payload from `#start` to `#end` (no string per record).
 */
class LoadedVersion extends RecordVersion {
  readonly #start: number;
  readonly #end: number;

  constructor(
    collection: string,
    id: string,
    version: number,
    modifiedAt: number,
    expiresAt: number | undefined,
    dueAt: number | undefined,
    source: LoadedFrame,
    start: number,
    end: number,
  ) {
    super(collection, id, version, modifiedAt, expiresAt, dueAt, source);
    this.#start = start;
    this.#end = end;
  }

  protected override loadedText(source: LoadedFrame): string {
    return source.slice(this.#start, this.#end);
  }
}

/** A record version with its document. */
export function makeRecord(
  collection: string,
  id: string,
  version: number,
  modifiedAt: number,
  doc: JsonObject,
  expiresAt: number | undefined,
  dueAt: number | undefined,
): StoredRecord {
  return new RecordVersion(collection, id, version, modifiedAt, expiresAt, dueAt, doc);
}

/**
 * A record version loaded from a snapshot: its document is the JSON text of `source` from `start` to
 * `end`, parsed on first read (the whole frame's payload stays alive until every record of it is read).
 */
export function makeLoadedRecord(
  collection: string,
  id: string,
  version: number,
  modifiedAt: number,
  source: LoadedFrame,
  start: number,
  end: number,
  expiresAt: number | undefined,
  dueAt: number | undefined,
): StoredRecord {
  return new LoadedVersion(collection, id, version, modifiedAt, expiresAt, dueAt, source, start, end);
}

/** A record's document for one look, without keeping the parse of one loaded as text and not read since. */
export function peekDocument(record: StoredRecord): JsonObject {
  return record instanceof RecordVersion ? record.peekDoc() : record.doc;
}

/**
 * What a reader derived from a record version and keeps with it (the representation an item is served
 * as: lib/resources/representation-cache.ts), or undefined. A version never changes, and neither does
 * what is derived from it; kept in the record it costs one field, where a WeakMap entry per write cost
 * its insertion and the collector's work on weak entries (measured: ~0.7 µs per write).
 */
export function derivedOf(record: StoredRecord): object | undefined {
  return record instanceof RecordVersion ? record.derived : undefined;
}

/** Keeps `value` with `record` (derivedOf); false, keeping nothing, for a record the store did not make. */
export function keepDerived(record: StoredRecord, value: object): boolean {
  if (!(record instanceof RecordVersion)) return false;
  record.derived = value;
  return true;
}

/** The snapshot frame a record was loaded from, while the record has not been read since its load. */
export function loadedFrame(record: StoredRecord): LoadedFrame | undefined {
  return record instanceof RecordVersion ? record.loadedFrame() : undefined;
}

/** A record's document as JSON text, without parsing one that was loaded as text and not read since. */
export function documentText(record: StoredRecord): string {
  return record instanceof RecordVersion ? record.docText() : JSON.stringify(record.doc);
}

const PROTO = '__proto__';

/**
 * The document with `set` merged over its top-level fields and `unset` removed; never edits `doc`.
 * Built by assignment from an empty object, so documents patched alike share one hidden class: V8
 * gives the result of `{ ...doc, ...set }` a hidden class of its own each time (a map and its
 * descriptors, ~240 bytes, kept as long as the record: 30 days for a processed event or a delivered delivery).
 */
function patched(doc: JsonObject, set: JsonObject, unset: readonly string[] | undefined): JsonObject {
  // Spread copies own properties as data properties, so a key such as "__proto__" stays plain data;
  // assignment would set the prototype instead, so such a document takes the spread.
  const plain = !Object.hasOwn(doc, PROTO) && !Object.hasOwn(set, PROTO);
  if (!plain || unset === undefined || unset.length === 0) {
    const next: JsonObject = plain ? Object.assign({}, doc, set) : { ...doc, ...set };
    for (const key of unset ?? []) delete next[key];
    return next;
  }
  // The fields kept are copied, not the others deleted: `delete` turns an object into a dictionary,
  // several times the memory of its fields (~340 bytes an inbox item, measured), kept with the record.
  const next: JsonObject = {};
  for (const key of Object.keys(doc)) if (!unset.includes(key)) next[key] = doc[key] as JsonValue;
  Object.assign(next, set);
  for (const key of unset) if (Object.hasOwn(set, key)) delete next[key];
  return next;
}

/** Does the batch touch one record twice? Pairs compared for a short batch, keys counted for a long one. */
function touchesTwice(mutations: readonly Mutation[]): boolean {
  const count = mutations.length;
  if (count > SHORT_BATCH) {
    const keys = new Set<string>();
    for (const { collection, id } of mutations) keys.add(`${collection}\u0000${id}`);
    return keys.size < count;
  }
  for (let second = 1; second < count; second++) {
    const { collection, id } = mutations[second] as Mutation;
    for (let first = 0; first < second; first++) {
      const earlier = mutations[first] as Mutation;
      if (earlier.collection === collection && earlier.id === id) return true;
    }
  }
  return false;
}

function meets(expect: Expectation, current: StoredRecord | undefined): boolean {
  if ('absent' in expect) return current === undefined;
  if ('present' in expect) return current !== undefined;
  return current !== undefined && current.version === expect.version;
}

function conflict(index: number, current: StoredRecord | undefined): Verdict {
  return current === undefined ? { ok: false, index } : { ok: false, index, current };
}
