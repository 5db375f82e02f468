// The bytes a delivery sends, read from its event's record (lib/webhooks/events.ts eventBody,
// CONVENTIONS.md#transactional-outbox): the record stores the event's members once, and every read,
// before and after the record went through JSON (a journal replay, a snapshot), gives the same text.
// Records of the earlier forms, a body as text with or without `sequenceAt`, or members with the kind and
// the time that the deliveries hold now, are sent as they were.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryStore } from '../../lib/store/memory.js';
import type { Mutation, StoredRecord } from '../../lib/store/types.js';
import { eventBody, OUTBOX_EVENT_SPACE, OUTBOX_SPACE, OutboxEvents } from '../../lib/webhooks/events.js';
import { SUBSCRIPTION_SPACE } from '../../lib/webhooks/subscriptions.js';
import { RepresentationCache } from '../../lib/resources/representation-cache.js';
import { systemClock, systemRandom } from '../../lib/clock.js';
import { makeRecord } from '../../lib/store/state.js';

const RESOURCE = { id: 'p-1', name: 'Cup "blue"', price: 11.5, tags: ['a', 'ü'], '7': 'seven', nested: { x: [1, null, true] } };

/** The delivery being sent: what a record that leaves the kind and the time out takes them from. */
const DELIVERY = { id: 'd-1', eventId: 'evt-1', event: 'things.replaced', createdAt: '2026-04-14T09:12:40.120Z' };

function record(doc: StoredRecord['doc'], version = 42): StoredRecord {
  return makeRecord(OUTBOX_EVENT_SPACE, 'evt-1', version, 0, doc, undefined, undefined);
}

describe('eventBody', () => {
  it('should send the members in the order of the event body, with the record version as data.sequence', () => {
    const doc = { event: 'things.replaced', occurredAt: '2026-04-14T09:12:40.120Z', deliveries: ['d-1'],
      data: { collection: 'things', id: 'p-1', etag: '"abc"', resource: RESOURCE } };
    const text = eventBody(record(doc), DELIVERY);
    const expected = JSON.stringify({ id: 'evt-1', event: 'things.replaced', type: 'things.replaced',
      occurredAt: '2026-04-14T09:12:40.120Z',
      data: { collection: 'things', id: 'p-1', etag: '"abc"', sequence: 42, resource: RESOURCE } });
    assert.equal(text, expected);
  });

  it('should give the same text once the record went through JSON (a replay or a snapshot)', () => {
    const doc = { event: 'things.created', occurredAt: '2026-04-14T09:12:40.120Z', deliveries: ['d-1'],
      data: { collection: 'things', id: 'p-1', etag: '"abc"', resource: RESOURCE } };
    const again = JSON.parse(JSON.stringify(doc)) as StoredRecord['doc'];
    assert.equal(eventBody(record(again), DELIVERY), eventBody(record(doc), DELIVERY));
  });

  it('should send a body stored as text with its sequence put in where sequenceAt says', () => {
    const head = '{"id":"evt-1","event":"things.replaced","data":{"collection":"things",';
    const body = `${head}"resource":{"id":"p-1"}}}`;
    const text = eventBody(record({ body, deliveries: ['d-1'], sequenceAt: head.length }, 7), DELIVERY);
    assert.equal(text, `${head}"sequence":7,"resource":{"id":"p-1"}}}`);
  });

  it('should send a body stored as text without sequenceAt as it is', () => {
    const body = '{"id":"evt-1","event":"subscription.disabled","data":{"subscription":"s1"}}';
    assert.equal(eventBody(record({ body, deliveries: ['d-1'] }), DELIVERY), body);
  });

  it('should send the same text from a record that leaves the kind and the time to its delivery', () => {
    const data = { collection: 'things', id: 'p-1', etag: '"abc"', resource: RESOURCE };
    const before = { event: 'things.replaced', occurredAt: '2026-04-14T09:12:40.120Z', deliveries: ['d-1'], data };
    assert.equal(eventBody(record({ data }), DELIVERY), eventBody(record(before), { id: 'd-1' }));
    assert.equal(eventBody(record({ data }), { id: 'd-1' }), undefined, 'nothing to send without the kind and the time');
  });

  it('should have nothing to send for a record of neither form', () => {
    assert.equal(eventBody(record({ deliveries: ['d-1'] }), DELIVERY), undefined);
  });
});

describe('OutboxEvents', () => {
  it('should store the event by its members, its resource the document the put stores', async () => {
    const clock = systemClock;
    const store = new MemoryStore({ clock });
    const subscription = { id: 's1', url: 'http://127.0.0.1:9/hook', events: ['things.*'], status: 'active' };
    await store.commit({ mutations: [{ kind: 'put', collection: SUBSCRIPTION_SPACE, id: 's1', doc: subscription }] });
    const change: Mutation = { kind: 'put', collection: 'things', id: 'p-1', doc: RESOURCE };
    const events = new OutboxEvents({ store, clock, random: systemRandom, representations: new RepresentationCache() });
    const rows = events.mutations([change], [undefined]);
    const event = rows.find((row) => row.collection === OUTBOX_EVENT_SPACE);
    assert.ok(event !== undefined && event.kind === 'put', 'an event row');
    assert.equal(JSON.stringify(event.doc).includes('\\"id\\"'), false, 'no body stored as escaped text');
    const committed = await store.commit({ mutations: [change, ...rows] });
    assert.ok(committed.ok);
    const stored = store.get(OUTBOX_EVENT_SPACE, event.id) as StoredRecord;
    const delivery = rows.find((row) => row.collection === OUTBOX_SPACE);
    assert.ok(delivery !== undefined && delivery.kind === 'put', 'a delivery row');
    assert.deepEqual(Object.keys(event.doc), ['data'], 'one delivery: no list, no kind or time of its own');
    const sent = JSON.parse(eventBody(stored, delivery.doc) as string) as Record<string, unknown>;
    assert.deepEqual(sent['data'], { collection: 'things', id: 'p-1', etag: (sent['data'] as { etag: string }).etag,
      sequence: stored.version, resource: RESOURCE });
    assert.equal(sent['id'], event.id);
    assert.equal(sent['type'], 'things.created');
  });

  it('should hand the journal the event as exactly JSON.stringify of its document, for a put, a delete and a restore', async () => {
    const clock = systemClock;
    const store = new MemoryStore({ clock });
    const subscription = { id: 's1', url: 'http://127.0.0.1:9/hook', events: ['things.*'], status: 'active' };
    await store.commit({ mutations: [{ kind: 'put', collection: SUBSCRIPTION_SPACE, id: 's1', doc: subscription }] });
    const events = new OutboxEvents({ store, clock, random: systemRandom, representations: new RepresentationCache() });
    const put: Mutation = { kind: 'put', collection: 'things', id: 'p-1', doc: RESOURCE };
    const remove: Mutation = { kind: 'delete', collection: 'things', id: 'p-1', retainUntil: clock.now() + 60_000 };
    const restore: Mutation = { kind: 'restore', collection: 'things', id: 'p-1' };
    for (const change of [put, remove, restore]) {
      const rows = events.mutations([change], [undefined]);
      const event = rows.find((row) => row.collection === OUTBOX_EVENT_SPACE);
      assert.ok(event !== undefined && event.kind === 'put' && event.json !== undefined, `an event row for a ${change.kind}`);
      assert.equal(Buffer.from(event.json).toString('utf8'), JSON.stringify(event.doc), `the ${change.kind}'s event`);
      assert.ok((await store.commit({ mutations: [change, ...rows] })).ok);
    }
  });

  it('should follow every change of the subscriptions: created, disabled, active again, deleted', async () => {
    const clock = systemClock;
    const store = new MemoryStore({ clock });
    const events = new OutboxEvents({ store, clock, random: systemRandom, representations: new RepresentationCache() });
    const change: Mutation = { kind: 'put', collection: 'things', id: 'p-1', doc: RESOURCE };
    const deliveries = (): number => events.mutations([change], [undefined]).filter((row) => row.collection === OUTBOX_SPACE).length;
    const subscription = (status: string): Mutation =>
      ({ kind: 'put', collection: SUBSCRIPTION_SPACE, id: 's1', doc: { id: 's1', url: 'http://127.0.0.1:9/hook', events: ['things.*'], status } });
    assert.equal(deliveries(), 0, 'no subscription');
    for (const [mutation, expected] of [
      [subscription('active'), 1],
      [subscription('disabled'), 0],
      [subscription('active'), 1],
      [{ kind: 'delete', collection: SUBSCRIPTION_SPACE, id: 's1' }, 0],
    ] as const) {
      assert.ok((await store.commit({ mutations: [mutation] })).ok);
      assert.equal(deliveries(), expected, `after ${mutation.kind} ${mutation.kind === 'put' ? String(mutation.doc['status']) : ''}`);
    }
  });
});
