// Tests for lib/webhooks/inbox.ts, what an accepted event is stored as (CONVENTIONS.md#inbox,
// CONVENTIONS.md#durable-acceptance): one record, its item, with its members in one order whichever
// source it came by, the body text and the provider's fields last, those exactly as that event sent
// them, also when the inbox keeps one object for the fields that repeat from one event to the next.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { systemRandom } from '../../lib/clock.js';
import { DEFAULT_CONFIG } from '../../lib/config.js';
import type { JsonObject } from '../../lib/json.js';
import { MemoryStore } from '../../lib/store/memory.js';
import type { Mutation } from '../../lib/store/types.js';
import { RepresentationCache } from '../../lib/resources/representation-cache.js';
import { Inbox } from '../../lib/webhooks/inbox.js';
import { Writer } from '../../lib/writes/writer.js';
import { ManualClock } from '../support/clock.js';

function setup(): { clock: ManualClock; inbox: Inbox } {
  const clock = new ManualClock(Date.UTC(2026, 3, 14, 9, 12, 40, 120));
  const store = new MemoryStore({ clock });
  const writer = new Writer({ store, clock, representations: new RepresentationCache(), collectionConfig: () => undefined });
  const inbox = new Inbox({ store, writer, clock, random: systemRandom, config: DEFAULT_CONFIG.webhooks, log: () => {}, drainTimeoutMs: 1000 });
  return { clock, inbox };
}

function event(source: string, eventId: string, headers: Readonly<Record<string, string>>) {
  return { source, eventId, kind: 'order.created', text: `{"id":"${eventId}","event":"order.created"}`, headers };
}

function docOf(mutation: Mutation): JsonObject {
  assert.equal(mutation.kind, 'put');
  assert.equal(mutation.collection, '$inbox');
  return (mutation as Extract<Mutation, { kind: 'put' }>).doc;
}

describe('Inbox acceptance', () => {
  it('should store the item of either source with its members in one order', () => {
    const { inbox } = setup();
    const receivedAt = '2026-04-14T09:12:40.120Z';
    const plain = docOf(inbox.acceptance(event('webhooks', 'evt_1', {})));
    const body = (id: string) => `{"id":"${id}","event":"order.created"}`;
    assert.deepEqual(
      Object.entries(plain),
      Object.entries({ id: 'evt_1', event: 'order.created', status: 'accepted', attempts: 0, receivedAt, body: body('evt_1'), headers: {} }),
    );
    const named = docOf(inbox.acceptance(event('stripe', 'evt_1', {})));
    assert.deepEqual(
      Object.entries(named),
      Object.entries({
        id: 'stripe:evt_1', source: 'stripe', eventId: 'evt_1', event: 'order.created', status: 'accepted', attempts: 0, receivedAt,
        body: body('evt_1'), headers: {},
      }),
    );
  });

  it('should give each event its own receivedAt as the clock moves', () => {
    const { clock, inbox } = setup();
    const first = docOf(inbox.acceptance(event('webhooks', 'evt_1', {})));
    clock.advance(1);
    const second = docOf(inbox.acceptance(event('webhooks', 'evt_2', {})));
    assert.equal(first['receivedAt'], '2026-04-14T09:12:40.120Z');
    assert.equal(second['receivedAt'], '2026-04-14T09:12:40.121Z');
  });

  it("should store each event's provider fields as it sent them, whether or not they repeat the previous event's", () => {
    const { inbox } = setup();
    const sent: Readonly<Record<string, string>>[] = [
      { 'content-type': 'application/json' },
      { 'content-type': 'application/json' },
      { 'content-type': 'application/json', 'x-request-id': 'r-3' },
      { 'content-type': 'application/json' },
      { 'content-type': 'text/plain' },
      { 'x-request-id': 'r-6' },
      {},
    ];
    const stored = sent.map((headers, index) => docOf(inbox.acceptance(event('webhooks', `evt_${index}`, headers)))['headers']);
    sent.forEach((headers, index) => assert.deepEqual(stored[index], headers, `event ${index}`));
  });

  it('should not keep the object a caller handed over', () => {
    const { inbox } = setup();
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    const stored = docOf(inbox.acceptance(event('webhooks', 'evt_1', headers)))['headers'];
    headers['content-type'] = 'text/plain';
    assert.deepEqual(stored, { 'content-type': 'application/json' });
  });
});
