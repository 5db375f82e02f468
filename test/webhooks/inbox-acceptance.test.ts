// Tests for lib/webhooks/inbox.ts, what an accepted event is stored as (CONVENTIONS.md#inbox,
// CONVENTIONS.md#durable-acceptance): one record, its item, with its members in one order whichever
// source it came by, the body text and the provider's fields last, those exactly as that event sent
// them, also when the inbox keeps one object for the fields that repeat from one event to the next;
// due when a handler takes its kind, else parked, also when the handler is registered during its write.
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

function setup(): { clock: ManualClock; store: MemoryStore; inbox: Inbox } {
  const clock = new ManualClock(Date.UTC(2026, 3, 14, 9, 12, 40, 120));
  const store = new MemoryStore({ clock });
  const writer = new Writer({ store, clock, representations: new RepresentationCache(), collectionConfig: () => undefined });
  const inbox = new Inbox({ store, writer, clock, random: systemRandom, config: DEFAULT_CONFIG.webhooks, log: () => {}, drainTimeoutMs: 1000 });
  return { clock, store, inbox };
}

/** The due time a put of the inbox carries (undefined: parked). */
function dueAtOf(mutation: Mutation): number | undefined {
  docOf(mutation);
  return (mutation as Extract<Mutation, { kind: 'put' }>).dueAt;
}

/** Turns of the event loop (each one lets the memory store apply what was committed), at most `turns`, until `done()`. */
async function within(turns: number, done: () => boolean): Promise<boolean> {
  for (let turn = 0; turn < turns && !done(); turn++) await new Promise((resolve) => setImmediate(resolve));
  return done();
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
  it('should store an event parked while no handler takes its kind, and due once one does', () => {
    const { clock, inbox } = setup();
    assert.equal(dueAtOf(inbox.acceptance(event('webhooks', 'evt_1', {}))), undefined);
    inbox.on('other.kind', () => {});
    assert.equal(dueAtOf(inbox.acceptance(event('webhooks', 'evt_2', {}))), undefined);
    inbox.on('order.created', () => {});
    assert.equal(dueAtOf(inbox.acceptance(event('webhooks', 'evt_3', {}))), clock.now());
    const { inbox: anyKind } = setup();
    anyKind.on('*', () => {});
    assert.equal(dueAtOf(anyKind.acceptance(event('stripe', 'evt_1', {}))), clock.now());
  });

  it('should run an event accepted parked when its handler is registered while the acceptance is written', async () => {
    const { store, inbox } = setup();
    await inbox.queue.start();
    try {
      const accepting = inbox.accept(event('webhooks', 'evt_1', {}), []);
      // The write is under way, not applied: the registration's own look for parked events misses it.
      assert.equal(store.get('$inbox', 'evt_1'), undefined);
      const seen: string[] = [];
      inbox.on('order.created', (received) => void seen.push(received['id'] as string));
      assert.ok((await accepting).ok);
      assert.ok(await within(100, () => seen.length > 0), 'the handler was never called');
      assert.deepEqual(seen, ['evt_1']);
    } finally {
      await inbox.queue.close();
    }
  });

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
