// The one write path (README, Architecture): every change to the data (an item's PUT, POST or
// DELETE, an undo, every applied row of a bulk CSV, a query resource, the sample data of --seed, the
// server's own records) goes through Writer.write, which
//   1. validates every stored document (document.ts: a JSON object, depth, numbers JSON can carry,
//      the path id, the declared schema), naming the change that failed,
//   2. computes the representation each stored item will be served as (its JSON bytes and strong
//      ETag, CONVENTIONS.md#etags), so serving it costs no second serialization,
//   3. records the property paths the documents bring that their collection has not had before
//      (field-registry.ts: the field registry behind query validation, CONVENTIONS.md#filter-errors-and-budget),
//      refusing a document or a collection past its limit of distinct paths (CONVENTIONS.md#limits),
//   4. adds the event and outbox deliveries each change calls for (the transactional outbox of
//      CONVENTIONS.md#transactional-outbox: in the same atomic write as the change),
//   5. adds the idempotency record of the request when there is one (CONVENTIONS.md#idempotency-keys: in the same
//      atomic store write as the resource it created"),
//   6. and commits all of it as one atomic store batch.
// Nothing else calls Store.commit. The HTTP layer maps the outcome to a status; this module knows
// problems (they are values of lib/protocol) but not requests or responses.
import type { Clock } from '../clock.js';
import { DEFAULT_CONFIG, type CollectionConfig, type PropertyNameLimits } from '../config.js';
import type { JsonObject } from '../json.js';
import { isCollectionName } from '../names.js';
import type { Problem } from '../protocol/problem.js';
import type { CollectionUnchanged, Commit, CommitResult, Mutation, Store, StoredRecord } from '../store/types.js';
import { checkId, checkSchema, documentShapeProblem } from './document.js';
import { FieldRegistry } from './field-registry.js';
import { represent, type Representation } from '../protocol/representation.js';

/** The store space of idempotency records (CONVENTIONS.md#idempotency-keys). */
export const IDEMPOTENCY_SPACE = '$idempotency';
/** How long an idempotency record is kept: 24 hours (CONVENTIONS.md#idempotency-keys). */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/** The outcome of a keyed request, kept so a repeat of the request can be answered with it. */
export interface RememberedOutcome {
  /** The record id: a digest of the caller and the key. */
  readonly id: string;
  readonly fingerprint: string;
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

export type WriteResult =
  | {
      readonly ok: true;
      readonly commit: Commit;
      /** The record each change left, in change order (undefined after a delete). */
      readonly records: readonly (StoredRecord | undefined)[];
    }
  | {
      readonly ok: false;
      readonly reason: 'invalid';
      /** index of the change */
      readonly index: number;
      readonly problem: Problem;
    }
  | { readonly ok: false; readonly reason: 'conflict'; readonly index: number; readonly current?: StoredRecord }
  | {
      readonly ok: false;
      readonly reason: 'unavailable';
      /** for the log, never a client */
      readonly detail: string;
    };

/**
 * Where a committed record's representation is remembered for its reads
 * (lib/resources/representation-cache.ts).
 */
export interface RepresentationPrimer {
  prime(record: StoredRecord, representation: Representation): void;
}

export interface WriterOptions {
  readonly store: Store;
  readonly clock: Clock;
  /** Told each committed record's representation, which the write path computed while validating it. */
  readonly representations: RepresentationPrimer;
  /** The configuration of a user collection, for its schema. */
  readonly collectionConfig: (collection: string) => CollectionConfig | undefined;
  /** limits.maxPropertyNames (CONVENTIONS.md#limits); the defaults when left out. */
  readonly propertyNames?: PropertyNameLimits;
  /**
   * The outbox rows the changes call for (lib/webhooks/events.ts), given the representation of each
   * stored item; committed in the same batch, so an announced change and its announcement are one.
   */
  readonly events?: (
    changes: readonly Mutation[],
    representations: readonly (Representation | undefined)[],
  ) => Mutation[];
}

/**
 * What the write path refuses a change for, without a store: the document rules of document.ts for
 * what a put stores (the id and the schema only in user collections), the shape of a patch's fields.
 */
export function changeProblem(
  change: Mutation,
  collectionConfig: (collection: string) => CollectionConfig | undefined,
): Problem | undefined {
  const user = isCollectionName(change.collection);
  if (change.kind === 'patch') {
    // A patch bypasses the id and schema rules, so it is for the server's own records only.
    if (user) throw new TypeError(`Writer.write: patch is for system records, not the collection ${change.collection}`);
    return documentShapeProblem(change.set);
  }
  if (change.kind !== 'put') return undefined;
  const shape = documentShapeProblem(change.doc);
  if (shape !== undefined || !user) return shape;
  return checkId(change.doc, change.id) ?? checkSchema(change.doc, collectionConfig(change.collection));
}

export interface WriteOptions {
  /**
   * The outcome to keep with the changes; a function gets the representations of the changes (as
   * Writer.write computed them) and may answer undefined to keep none.
   */
  readonly remember?:
    | RememberedOutcome
    | ((representations: readonly (Representation | undefined)[]) => RememberedOutcome | undefined);
  /** Commit only if the collection is as it was (a conflict at index -1 otherwise; Batch.unchanged). */
  readonly unchanged?: CollectionUnchanged;
}

export class Writer {
  /** The property paths of every collection, kept by this writer: the store's only writer. */
  readonly fields: FieldRegistry;
  private readonly propertyNames: PropertyNameLimits;

  constructor(private readonly options: WriterOptions) {
    this.fields = new FieldRegistry(options.store);
    this.propertyNames = options.propertyNames ?? DEFAULT_CONFIG.limits.maxPropertyNames;
  }

  /** Validates, represents and commits `changes` (with the remembered outcome) as one atomic batch. */
  async write(changes: readonly Mutation[], options: WriteOptions = {}): Promise<WriteResult> {
    if (changes.length === 0 && options.remember === undefined) throw new TypeError('Writer.write: nothing to write');
    // Arrays of the batch's size from the start: a write (nearly always of one change) grows none.
    const count = changes.length;
    const representations = new Array<Representation | undefined>(count);
    // What the batch holds: a represented put carries its representation's bytes, which are exactly
    // JSON.stringify(doc), so the journal writes them instead of serializing the document again.
    const mutations = new Array<Mutation>(count);
    for (let index = 0; index < count; index++) {
      const change = changes[index] as Mutation;
      const problem = changeProblem(change, this.options.collectionConfig);
      if (problem !== undefined) return { ok: false, reason: 'invalid', index, problem };
      const representation = representationOf(change);
      representations[index] = representation;
      mutations[index] = representation === undefined ? change : withJson(change as PutMutation, representation.bytes);
    }
    // From here to the commit call nothing awaits, so the registry's count includes every write before it.
    const registration = this.fields.register(changes, this.propertyNames);
    if (!registration.ok) {
      return { ok: false, reason: 'invalid', index: registration.index, problem: registration.problem };
    }
    let result: CommitResult;
    try {
      const events = this.options.events?.(changes, representations) ?? [];
      // Field registrations and the remembered outcome follow the changes, so a conflict's index is a change's.
      for (const mutation of registration.mutations) mutations.push(mutation);
      for (const mutation of events) mutations.push(mutation);
      const { remember } = options;
      const outcome = typeof remember === 'function' ? remember(representations) : remember;
      if (outcome !== undefined) mutations.push(this.rememberMutation(outcome));
      const { unchanged } = options;
      result = await this.options.store.commit(unchanged === undefined ? { mutations } : { mutations, unchanged });
    } finally {
      // Committed paths are in the registry by now; those of a refused batch are free again.
      registration.release();
    }
    if (!result.ok) {
      if (result.reason === 'unavailable') return result;
      // The remembered outcome never carries an expectation, so a conflict is one of the changes (or -1).
      return result.current === undefined
        ? { ok: false, reason: 'conflict', index: result.index }
        : { ok: false, reason: 'conflict', index: result.index, current: result.current };
    }
    const records = new Array<StoredRecord | undefined>(count);
    for (let index = 0; index < count; index++) {
      const record = result.commit.applied[index]?.record;
      const representation = representations[index];
      if (record !== undefined && representation !== undefined) {
        this.options.representations.prime(record, representation);
      }
      records[index] = record;
    }
    return { ok: true, commit: result.commit, records };
  }

  /** Keeps only the outcome of a keyed request whose change was refused (a deterministic 4xx). */
  remember(outcome: RememberedOutcome): Promise<WriteResult> {
    return this.write([], { remember: outcome });
  }

  private rememberMutation(outcome: RememberedOutcome): Mutation {
    const doc: JsonObject = {
      fingerprint: outcome.fingerprint,
      status: outcome.status,
      headers: { ...outcome.headers },
      body: outcome.body,
    };
    const expiresAt = this.options.clock.now() + IDEMPOTENCY_TTL_MS;
    return { kind: 'put', collection: IDEMPOTENCY_SPACE, id: outcome.id, doc, expiresAt };
  }
}

type PutMutation = Extract<Mutation, { kind: 'put' }>;

/**
 * What a valid change will be served as: an item's representation is served right after (the write's
 * answer, the next GET); the server's own records are read rarely, and get theirs when they are.
 */
function representationOf(change: Mutation): Representation | undefined {
  return change.kind === 'put' && isCollectionName(change.collection)
    ? represent(JSON.stringify(change.doc))
    : undefined;
}

/**
 * The put with its document's bytes, made field by field: a spread of the change costs a write more
 * than the rest of this loop (measured), and every put comes out with one shape. An absent optional
 * field is an undefined one, which the store reads alike.
 */
function withJson(put: PutMutation, json: Buffer): Mutation {
  const { collection, id, doc, expect, expiresAt, dueAt } = put;
  return { kind: 'put', collection, id, doc, json, expect, expiresAt, dueAt };
}
