// The Store interface: the only thing that owns durability and the only code that touches `fs`
// (README, Architecture: the store never knows HTTP; the HTTP layer never touches files).
//
// Both implementations (memory.ts, and the journal-backed file store) keep the live state in memory,
// so reads are synchronous and cheap; only `commit` waits (for the fsync, in the file store).
//
// Everything later sections need lives here from the start:
// - atomic batches: one `commit` may write an item, an idempotency record and an outbox row
//   together (CONVENTIONS.md#idempotency-keys, CONVENTIONS.md#transactional-outbox); either all of it
//   is applied or none;
// - compare-and-set per mutation (`expect`), and per collection (`Batch.unchanged`), so a precondition
//   evaluated by the HTTP layer cannot be overtaken by a concurrent write between evaluation and commit;
// - ordered keys per collection (`scan` returns ids in ascending code-unit order) for keyset paging;
// - tombstones kept until `retainUntil`, for `$undoDelete` (CONVENTIONS.md#undo-delete);
// - a version per record: the store-wide sequence number of the commit that wrote it;
// - a change feed (`watch`) of committed batches, in commit order; a watcher that throws is logged
//   and never undoes or fails a commit that is already applied;
// - a due-time index (`due`, `nextDue`): a record may carry `dueAt`, the time some component should
//   look at it again (an inbox event's next attempt, an outbox delivery's retry); rebuilt on recovery;
// - `patch`, which changes a few top-level fields of a record: the journal carries only the change,
//   so the status updates of a large record (an inbox event of up to 1 MiB) never rewrite its body;
// - append-only side logs (`appendSideLog`): fsynced JSON lines next to the store, for dead letters
//   (`dead-letter.jsonl`, CONVENTIONS.md#inbox-retries-and-dead-letters; `outbox-dead-letter.jsonl`,
//   CONVENTIONS.md#delivery-retries).
//
// Collections whose name starts with `$` are system spaces (idempotency records, later the inbox,
// outbox, subscriptions and query resources). They can never collide with a user collection, whose
// names match ^[A-Za-z][A-Za-z0-9_-]{0,63}$ (CONVENTIONS.md#names).
import type { JsonObject } from '../json.js';

/** One live record. Immutable once returned: a write replaces the object, never edits it. */
export interface StoredRecord {
  readonly collection: string;
  readonly id: string;
  /** Sequence number of the commit that last wrote this record; strictly increasing store-wide. */
  readonly version: number;
  /** Milliseconds since the epoch when this record was last written (the store's clock). */
  readonly modifiedAt: number;
  /** Records in system spaces may expire; an expired record reads as absent. */
  readonly expiresAt?: number;
  /** When a component wants to see this record again (`Store.due`). */
  readonly dueAt?: number;
  readonly doc: JsonObject;
}

/** A deleted record kept for undo: undo needs what was deleted (CONVENTIONS.md#delete-and-tombstones). */
export interface Tombstone {
  readonly collection: string;
  readonly id: string;
  /** Version of the delete commit. */
  readonly version: number;
  readonly deletedAt: number;
  readonly retainUntil: number;
  /** The record as it was just before the delete. */
  readonly doc: JsonObject;
  /** Set when the tombstone was used to restore the record: the version the restore wrote. */
  readonly restoredVersion?: number;
}

/** What a mutation expects of the record's current state; a mismatch fails the whole batch. */
export type Expectation =
  | { readonly absent: true }
  | { readonly present: true }
  | { readonly version: number };

export type Mutation =
  | {
      readonly kind: 'put';
      readonly collection: string;
      readonly id: string;
      readonly doc: JsonObject;
      /**
       * Exactly JSON.stringify(doc) as UTF-8, when the caller has it already (the write path makes it as
       * the item's representation): the journal writes these bytes instead of serializing the document
       * again. Bytes that are not exactly that would replay as another document, so leave it out unless
       * they are made from `doc` itself.
       */
      readonly json?: Uint8Array;
      readonly expect?: Expectation;
      readonly expiresAt?: number;
      readonly dueAt?: number;
    }
  | {
      /**
       * Sets (and with `unset`, removes) top-level fields of an existing record, keeping the rest of
       * its document; `dueAt` replaces the record's due time (null clears it, absent keeps it). The
       * record must exist (a patch of an absent record fails the batch as a conflict) unless `upsert`
       * is set, when an absent record is created with `set` as its document: concurrent upserts of one
       * record then merge instead of overwriting each other.
       */
      readonly kind: 'patch';
      readonly collection: string;
      readonly id: string;
      readonly set: JsonObject;
      readonly unset?: readonly string[];
      readonly dueAt?: number | null;
      readonly upsert?: boolean;
      readonly expect?: Expectation;
    }
  | {
      readonly kind: 'delete';
      readonly collection: string;
      readonly id: string;
      readonly expect?: Expectation;
      /** Keep a tombstone until this time (ms); omit to delete without a trace. */
      readonly retainUntil?: number;
    }
  | {
      /** Bring back the tombstoned record; fails with a conflict if the record exists or no tombstone. */
      readonly kind: 'restore';
      readonly collection: string;
      readonly id: string;
    };

/**
 * A precondition on a whole collection: the batch applies only if no commit has touched `collection`
 * since `Store.collectionVersion` answered `version` (POST's If-Match, CONVENTIONS.md#post-preconditions,
 * is about the collection, not one record). Checked like `expect`, at commit time; never journaled,
 * since replay applies only what was accepted.
 */
export interface CollectionUnchanged {
  readonly collection: string;
  readonly version: number;
}

export interface Batch {
  readonly mutations: readonly Mutation[];
  readonly unchanged?: CollectionUnchanged;
}

/** The effect of one applied mutation, in batch order. `record` is absent after a delete. */
export interface Applied {
  readonly mutation: Mutation;
  readonly record?: StoredRecord;
  readonly previous?: StoredRecord;
}

export interface Commit {
  readonly seq: number;
  readonly at: number;
  readonly applied: readonly Applied[];
}

/** Outcomes are values, not exceptions (README, Architecture: errors are values, not strings). */
export type CommitResult =
  | { readonly ok: true; readonly commit: Commit }
  | {
      readonly ok: false;
      readonly reason: 'conflict';
      /** Index of the mutation whose expectation failed; -1 when it was the batch's `unchanged`. */
      readonly index: number;
      readonly current?: StoredRecord;
    }
  | {
      readonly ok: false;
      readonly reason: 'unavailable';
      /** Internal description for the log; never sent to a client. */
      readonly detail: string;
    };

export interface ScanOptions {
  /** Return only ids strictly greater than this one (code-unit order). */
  readonly after?: string;
  readonly limit?: number;
}

export interface StoreHealth {
  readonly writable: boolean;
  /** Internal description for the log; never sent to a client. */
  readonly detail?: string;
}

export type CommitListener = (commit: Commit) => void;

/** Names of side logs: the file is `<name>.jsonl` in the data dir. */
export const SIDE_LOG_NAME = /^[a-z][a-z0-9-]{0,63}$/;

export type SideLogResult =
  | { readonly ok: true }
  | {
      readonly ok: false;
      /** for the log, never a client */
      readonly detail: string;
    };

/** Told about the store's work as it happens (lib/resources/metrics-scrape.ts turns it into /$metrics). */
export interface StoreObserver {
  /** A group commit made durable: how many batches shared it, its bytes, and the write and fdatasync's duration. */
  groupCommitted(batches: number, bytes: number, syncMs: number): void;
}

export interface Store {
  /** True when an acknowledged commit survives a crash. */
  readonly durable: boolean;
  get(collection: string, id: string): StoredRecord | undefined;
  getTombstone(collection: string, id: string): Tombstone | undefined;
  /** Records in ascending id order. */
  scan(collection: string, options?: ScanOptions): StoredRecord[];
  /** Live records of the collection (expired ones excluded). */
  count(collection: string): number;
  /** Names of collections holding at least one live record, sorted; `$` spaces included. */
  collections(): string[];
  /**
   * Up to `limit` live records whose `dueAt` is at or before `now`, earliest first (equal times: the one
   * written first).
   */
  due(collection: string, now: number, limit: number): StoredRecord[];
  /** The earliest `dueAt` of a live record in the collection, or undefined when none is due ever. */
  nextDue(collection: string): number | undefined;
  /** Time (ms) of the last commit that changed the collection (deletes included), or undefined. */
  lastModified(collection: string): number | undefined;
  /**
   * Changes with every commit that touches the collection: the seq of the last one since the store
   * opened (0 before any). What `Batch.unchanged` compares; a time cannot, two commits share a millisecond.
   */
  collectionVersion(collection: string): number;
  /**
   * Keeps the document of every record written since the store opened as its JSON text until
   * something reads it, as the records a store opens with are (state.ts LoadedVersion): called once a
   * seed is loaded, so that a large one is not held as a document object per item. What a reader sees
   * does not change.
   */
  keepDocumentsAsText(): void;
  /**
   * Applies the batch atomically. Resolves once it is durable (or failed). Never rejects; throws a
   * TypeError at once for a malformed batch (a programmer error: journaling it would make the next
   * start refuse).
   */
  commit(batch: Batch): Promise<CommitResult>;
  /** Appends one JSON line to the side log `name` (SIDE_LOG_NAME) and makes it durable. */
  appendSideLog(name: string, entry: JsonObject): Promise<SideLogResult>;
  /** Every entry of a side log, oldest first (a torn last line, cut by a crash, is left out). */
  readSideLog(name: string): Promise<JsonObject[]>;
  /** Calls `listener` after each successful commit, in commit order. Returns an unsubscribe. */
  watch(listener: CommitListener): () => void;
  /**
   * Can the store write now? A store that failed a write checks the disk again before it answers, so
   * the answer is never older than the question (CONVENTIONS.md#health).
   */
  health(): Promise<StoreHealth>;
  /** Bytes the store holds on disk (journals, snapshot, side logs); 0 in memory. */
  diskBytes(): Promise<number>;
  /** Waits for pending commits, then releases resources. */
  close(): Promise<void>;
}
