// The events of the webhook sender, written by the one write path (lib/writes/writer.ts) in the same
// atomic store batch as the change they announce, so no delivery is lost on a crash
// (CONVENTIONS.md#transactional-outbox). Every change to an item (created, replaced, deleted,
// restored, each applied bulk row) that an active subscription wants becomes one event, with one id
// shared by all its deliveries: the event, stored once in `$outbox-events` under its id (with the
// ids of its deliveries when it has more than one), and one delivery per such subscription, a job of
// the outbox's queue (lib/jobs/queue.ts `jobItem`): an item in `$outbox` (what GET /$outbox lists; due
// now). Every attempt of every delivery sends those same bytes (event-bodies.ts), so a change that a
// hundred subscriptions want writes its body once, not a hundred times. A change nobody subscribes to
// writes nothing more.
//
// The body is `{ "id", "event", "type", "occurredAt", "data": { "collection", "id", "etag", "sequence",
// "resource" } }`: `type` is `event` again (the member Standard Webhooks receivers read the kind from),
// the resource as stored and the ETag of its JSON representation; for a delete, the representation
// the item had just before (what was deleted).
//
// The event record holds what the body is made of that its deliveries do not: `{ "data": { "collection",
// "id", "etag", "resource" } }`, and `"deliveries"`, their ids, when there are more than one (one
// delivery needs no list to find the others). The body's `id` is the record's id, its `event` and
// `type` are the `event` of the delivery being sent, its `occurredAt` that delivery's `createdAt`
// (every delivery of an event holds both, alike, and no outcome changes them: no field is stored
// twice), and `resource` is the item's document itself (the record shares the object the item's
// record holds, and the journal writes it as JSON, not as an escaped string of JSON). Every read
// (eventBody) serializes the same members in the same order, and JSON text read back serializes to
// the same text, so every attempt, before and after a restart, sends the same bytes. (A record
// written before holds `event` and `occurredAt` itself, and its list of one; it is read as it is.)
//
// `data.sequence` is the sequence number of the store commit that made the change: the `version` the
// item has after it (CONVENTIONS.md#transactional-outbox says why). It is strictly increasing
// store-wide and durable like the change itself: the journal and the snapshots keep every record's
// version, a restart goes on from the last one, and a commit is seen by nobody before it is durable,
// so no restart, snapshot or kill -9 can hand out a number again. Changes committed together (the
// rows of one bulk file) share it. The number exists only once the commit is ordered, after these
// rows are made, so the record leaves it out and every read of the body puts in the version of the
// event's own record, written by the same commit. (A record written before events were stored this
// way holds its body as text, with `sequenceAt` marking where the number goes; it is read as it is.)
//
// One event announces no change of an item: `subscription.disabled`, that the server disabled a
// subscription (CONVENTIONS.md#auto-disable), written with the disabling, for the other active
// subscriptions that name it exactly (`disabledNoticeMutations`).
import type { Clock, Random } from '../clock.js';
import { newId } from '../ids.js';
import type { JobSpaces } from '../jobs/policy.js';
import { jobItem } from '../jobs/queue.js';
import { isJsonObject, type JsonObject } from '../json.js';
import { isCollectionName } from '../names.js';
import type { Mutation, Store, StoredRecord } from '../store/types.js';
import { represent, type Representation } from '../protocol/representation.js';
import { SUBSCRIPTION_SPACE, subscriptionOf, wants, type Change, type Subscription } from './subscriptions.js';
import { SUBSCRIPTION_DISABLED, wantsDisabledNotice } from './subscriptions.js';
import { TimeTexts } from './time-texts.js';

export const OUTBOX_SPACE = '$outbox';
/** One record per event, under its id: what its body is made of (eventBody), and its deliveries' ids. */
export const OUTBOX_EVENT_SPACE = '$outbox-events';
/**
 * Where each delivery kept a copy of its event's body before events shared theirs: a data dir
 * written then still has such records until they expire, and they are read (event-bodies.ts).
 */
export const OUTBOX_BODY_SPACE = '$outbox-bodies';
export const OUTBOX_SPACES: JobSpaces = { space: OUTBOX_SPACE, bodySpace: OUTBOX_BODY_SPACE };
/** Deliveries, their bodies included, are kept this long after their event, whatever became of them. */
const OUTBOX_RETENTION_MS = 30 * 86_400_000;

/** The JSON representation a read of a stored item answers (lib/resources/representation-cache.ts). */
export interface ItemRepresentations {
  itemJson(record: StoredRecord): Representation;
}

export interface EventContext {
  readonly store: Store;
  readonly clock: Clock;
  readonly random: Random;
  readonly representations: ItemRepresentations;
}

/** Collections whose event kinds an OutboxEvents keeps, at most (then they are made afresh). */
const KIND_COLLECTIONS = 1024;

/**
 * The events of the writes of one server (lib/server.ts makes one and hands `mutations` to the write
 * path). What it keeps between writes is only what makes the next one cheaper, each bounded: the active
 * subscriptions, read again once a commit has touched them (Store.collectionVersion), since every
 * write of an item asks; each event kind as one text per collection and change, and `createdAt` as one
 * text per millisecond (TimeTexts), so the deliveries kept for 30 days share them instead of holding
 * copies.
 */
export class OutboxEvents {
  private active: { readonly version: number; readonly list: readonly Subscription[] } | undefined;
  private readonly kinds = new Map<string, Partial<Record<Change, string>>>();
  private readonly createdTimes = new TimeTexts();

  constructor(private readonly context: EventContext) {}

  /**
   * The outbox rows for a batch of changes about to be committed. `represented` holds, per change, the
   * representation of the item a put stores (the write path has just computed it): its ETag is the
   * event's `etag`.
   */
  mutations(changes: readonly Mutation[], represented: readonly (Representation | undefined)[]): Mutation[] {
    const subscriptions = this.activeSubscriptions(changes);
    if (subscriptions === undefined) return [];
    const { store, clock, random, representations } = this.context;
    const now = clock.now();
    const occurredAt = this.createdTimes.at(now);
    const expiresAt = now + OUTBOX_RETENTION_MS;
    const bytes = (size: number): Buffer => random.bytes(size);
    const mutations: Mutation[] = [];
    for (let index = 0; index < changes.length; index++) {
      const change = changes[index] as Mutation;
      const { collection } = change;
      if (!isCollectionName(collection)) continue;
      const described = describe(store, representations, change, represented[index]);
      if (described === undefined) continue;
      const targets = subscriptions.filter((subscription) => wants(subscription, collection, described.change));
      if (targets.length === 0) continue;
      const eventId = newId(now, bytes);
      const event = this.kindOf(collection, described.change);
      const { etag } = described.representation;
      const data = { collection, id: change.id, etag, resource: described.resource };
      const deliveries = targets.map(() => newId(now, bytes));
      const eventDoc: JsonObject = deliveries.length === 1 ? { data } : { data, deliveries };
      const json = eventJson(data, deliveries, described.representation.bytes);
      mutations.push({ kind: 'put', collection: OUTBOX_EVENT_SPACE, id: eventId, doc: eventDoc, json, expiresAt });
      for (let at = 0; at < targets.length; at++) {
        const deliveryId = deliveries[at] as string;
        const item: JsonObject = {
          id: deliveryId,
          eventId,
          subscription: (targets[at] as Subscription).id,
          event,
          status: 'pending',
          attempts: 0,
          createdAt: occurredAt,
        };
        mutations.push(jobItem(OUTBOX_SPACES, deliveryId, item, now, expiresAt));
      }
    }
    return mutations;
  }

  /**
   * The active subscriptions, when a change of an item is among `changes` and any subscription is active;
   * undefined otherwise. A write that nobody subscribes to (most of them) allocates nothing here.
   */
  private activeSubscriptions(changes: readonly Mutation[]): readonly Subscription[] | undefined {
    let items = false;
    for (let index = 0; index < changes.length && !items; index++) {
      items = isCollectionName((changes[index] as Mutation).collection);
    }
    if (!items) return undefined;
    const { store } = this.context;
    const version = store.collectionVersion(SUBSCRIPTION_SPACE);
    if (this.active === undefined || this.active.version !== version) {
      const list: Subscription[] = [];
      for (const record of store.scan(SUBSCRIPTION_SPACE)) {
        const subscription = subscriptionOf(record.doc);
        if (subscription !== undefined && subscription.active) list.push(subscription);
      }
      this.active = { version, list };
    }
    return this.active.list.length === 0 ? undefined : this.active.list;
  }

  /** The event kind `<collection>.<change>`. */
  private kindOf(collection: string, change: Change): string {
    let kinds = this.kinds.get(collection);
    if (kinds === undefined) {
      if (this.kinds.size >= KIND_COLLECTIONS) this.kinds.clear();
      kinds = {};
      this.kinds.set(collection, kinds);
    }
    return (kinds[change] ??= `${collection}.${change}`);
  }
}

/**
 * The text every attempt of the event's deliveries sends: the event's members with `data.sequence`,
 * the version of the event's record (its commit's), before `resource`; `event` and `occurredAt` are
 * the `delivery`'s own `event` and `createdAt` unless the record holds them (written before). A record
 * holding its body as text is sent as it is, the sequence put in where `sequenceAt` says when it has
 * one (written before events were stored by their members; one without `sequenceAt`, before events
 * had a sequence).
 */
export function eventBody(record: StoredRecord, delivery: JsonObject): string | undefined {
  const { doc } = record;
  const { body, sequenceAt, data } = doc;
  if (typeof body === 'string') {
    if (typeof sequenceAt !== 'number') return body;
    return `${body.slice(0, sequenceAt)}"sequence":${record.version},${body.slice(sequenceAt)}`;
  }
  const event = doc['event'] ?? delivery['event'];
  const occurredAt = doc['occurredAt'] ?? delivery['createdAt'];
  if (typeof event !== 'string' || typeof occurredAt !== 'string' || !isJsonObject(data)) return undefined;
  const { collection, id, etag, resource } = data;
  const sequenced = { collection, id, etag, sequence: record.version, resource };
  return JSON.stringify({ id: record.id, event, type: event, occurredAt, data: sequenced });
}

/**
 * The event record's document as the journal writes it: exactly JSON.stringify of `{ data }`, or
 * `{ data, deliveries }` for more than one, as UTF-8 (lib/store/types.ts, a put's `json`), made around
 * the bytes of the item's JSON representation, which are exactly JSON.stringify(resource) (the
 * writer's, the representation cache's or the tombstone's, all made that way): the item is serialized
 * once for its write, not again for its event.
 */
function eventJson(
  data: { readonly collection: string; readonly id: string; readonly etag: string },
  deliveries: readonly string[],
  resource: Uint8Array,
): Buffer {
  const { collection, id, etag } = data;
  const head =
    `{"data":{"collection":${JSON.stringify(collection)},"id":${JSON.stringify(id)},"etag":${JSON.stringify(etag)},` +
    '"resource":';
  const tail = deliveries.length === 1 ? '}}' : `},"deliveries":${JSON.stringify(deliveries)}}`;
  const headBytes = Buffer.byteLength(head);
  const json = Buffer.allocUnsafe(headBytes + resource.length + Buffer.byteLength(tail));
  json.write(head, 0);
  json.set(resource, headBytes);
  json.write(tail, headBytes + resource.length);
  return json;
}

/** What a change does to its item, and the representation an event carries; undefined when it changes nothing. */
function describe(
  store: Store,
  representations: ItemRepresentations,
  change: Mutation,
  represented: Representation | undefined,
): { change: Change; representation: Representation; resource: JsonObject } | undefined {
  switch (change.kind) {
    case 'put': {
      const existed = store.get(change.collection, change.id) !== undefined;
      const representation = represented ?? represent(JSON.stringify(change.doc));
      return { change: existed ? 'replaced' : 'created', representation, resource: change.doc };
    }
    case 'delete': {
      const current = store.get(change.collection, change.id);
      if (current === undefined) return undefined;
      return { change: 'deleted', representation: representations.itemJson(current), resource: current.doc };
    }
    case 'restore': {
      const tombstone = store.getTombstone(change.collection, change.id);
      if (tombstone === undefined) return undefined;
      const representation = represent(JSON.stringify(tombstone.doc));
      return { change: 'restored', representation, resource: tombstone.doc };
    }
    case 'patch':
      return undefined;
  }
}

export interface NoticeContext {
  readonly store: Store;
  readonly clock: Clock;
  readonly random: Random;
}

/**
 * The outbox rows of the notice that `subscription` was disabled, to go in the batch that disables it:
 * `{ "id", "event", "type", "occurredAt", "data": { "subscription", "reason", "disabledAt" } }`, one
 * delivery to each other active subscription that names `subscription.disabled`; nothing when none does.
 */
export function disabledNoticeMutations(
  context: NoticeContext,
  subscription: string,
  reason: string,
  disabledAt: string,
): Mutation[] {
  const { store, clock, random } = context;
  const targets = store
    .scan(SUBSCRIPTION_SPACE)
    .map((record) => subscriptionOf(record.doc))
    .filter((one): one is Subscription => one !== undefined && one.active && one.id !== subscription)
    .filter(wantsDisabledNotice);
  if (targets.length === 0) return [];
  const now = clock.now();
  const expiresAt = now + OUTBOX_RETENTION_MS;
  const eventId = newId(now, (size) => random.bytes(size));
  const event = SUBSCRIPTION_DISABLED;
  const data = { subscription, reason, disabledAt };
  const body = JSON.stringify({ id: eventId, event, type: event, occurredAt: disabledAt, data });
  const deliveries = targets.map(() => newId(now, (size) => random.bytes(size)));
  const mutations: Mutation[] = [
    { kind: 'put', collection: OUTBOX_EVENT_SPACE, id: eventId, doc: { body, deliveries }, expiresAt },
  ];
  for (const [at, target] of targets.entries()) {
    const id = deliveries[at] as string;
    const item: JsonObject = {
      id, eventId, subscription: target.id, event, status: 'pending', attempts: 0, createdAt: disabledAt,
    };
    mutations.push(jobItem(OUTBOX_SPACES, id, item, now, expiresAt));
  }
  return mutations;
}
