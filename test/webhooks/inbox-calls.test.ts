// Tests for lib/webhooks/inbox.ts, one handler call: it ends with the handler, with its timeout (the
// event is retried, the handler's signal aborted), or with a drain that gives up waiting (the event
// stays accepted and due for the next start, the handler's signal aborted). Driven by a manual clock:
// no real time passes.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { systemRandom } from '../../lib/clock.js';
import { DEFAULT_CONFIG } from '../../lib/config.js';
import { MemoryStore } from '../../lib/store/memory.js';
import { RepresentationCache } from '../../lib/resources/representation-cache.js';
import { Inbox, INBOX_SPACE, type HandlerContext } from '../../lib/webhooks/inbox.js';
import { Writer } from '../../lib/writes/writer.js';
import { ManualClock } from '../support/clock.js';

const DRAIN_MS = 1000;
const TIMEOUT_MS = 5000;

async function setup(): Promise<{ clock: ManualClock; store: MemoryStore; inbox: Inbox }> {
  const clock = new ManualClock();
  const store = new MemoryStore({ clock });
  const writer = new Writer({ store, clock, representations: new RepresentationCache(), collectionConfig: () => undefined });
  const config = { ...DEFAULT_CONFIG.webhooks, handlerTimeoutMs: TIMEOUT_MS };
  const inbox = new Inbox({ store, writer, clock, random: systemRandom, config, log: () => {}, drainTimeoutMs: DRAIN_MS });
  const event = { source: 'webhooks', eventId: 'evt_1', kind: 'order.created', text: '{"id":"evt_1","event":"order.created"}', headers: {} };
  const written = await writer.write([inbox.acceptance(event)]);
  assert.ok(written.ok);
  return { clock, store, inbox };
}

/** Resolves once the handler has been called, with its context. */
function hangingHandler(inbox: Inbox): Promise<HandlerContext> {
  return new Promise((called) => {
    inbox.on('*', (_event, context) => {
      called(context);
      return new Promise(() => {});
    });
  });
}

async function turns(): Promise<void> {
  for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
}

/** Accepts one more event of `kind` through the inbox's write path. */
async function accept(store: MemoryStore, inbox: Inbox, clock: ManualClock, eventId: string, kind: string): Promise<void> {
  const writer = new Writer({ store, clock, representations: new RepresentationCache(), collectionConfig: () => undefined });
  const text = JSON.stringify({ id: eventId, event: kind });
  const written = await writer.write([inbox.acceptance({ source: 'webhooks', eventId, kind, text, headers: {} })]);
  assert.ok(written.ok);
}

describe('Inbox handler calls', () => {
  it('should stop a call still running when a drain gives up, abort its signal, and leave the event accepted and due', async () => {
    const { clock, store, inbox } = await setup();
    const called = hangingHandler(inbox);
    await inbox.queue.start();
    const context = await called;
    const drained = inbox.queue.drain();
    clock.advance(DRAIN_MS);
    await drained;
    await turns();
    assert.equal(context.signal.aborted, true);
    const item = store.get(INBOX_SPACE, 'evt_1');
    assert.equal(item?.doc['status'], 'accepted');
    assert.equal(item?.doc['attempts'], 0, 'a stopped call is no attempt');
    assert.notEqual(item?.dueAt, undefined, 'it runs again at the next start');
    await inbox.queue.close();
  });

  it('should time out each of two calls that started at different times at its own deadline', async () => {
    const { clock, store, inbox } = await setup();
    const started: string[] = [];
    // Two kinds, so both run at once (one kind holds a quarter of the workers).
    inbox.on('*', (_event, context) => {
      started.push(context.id);
      return new Promise(() => {});
    });
    await inbox.queue.start();
    await turns();
    assert.deepEqual(started, ['evt_1']);
    clock.advance(2000);
    await accept(store, inbox, clock, 'evt_2', 'order.paid');
    await turns();
    assert.deepEqual(started, ['evt_1', 'evt_2']);
    clock.advance(TIMEOUT_MS - 2000);
    await turns();
    assert.equal(store.get(INBOX_SPACE, 'evt_1')?.doc['status'], 'failed', 'the first call timed out');
    assert.equal(store.get(INBOX_SPACE, 'evt_2')?.doc['status'], 'accepted', 'the second runs on until its own deadline');
    clock.advance(1999);
    await turns();
    assert.equal(store.get(INBOX_SPACE, 'evt_2')?.doc['status'], 'accepted', 'a millisecond before its deadline');
    clock.advance(1);
    await turns();
    assert.equal(store.get(INBOX_SPACE, 'evt_2')?.doc['status'], 'failed');
    assert.match(String(store.get(INBOX_SPACE, 'evt_2')?.doc['lastError']), /did not finish within 5000 ms/);
    // The first event's retry may be running again by now: the drain gives up on it.
    const drained = inbox.queue.drain();
    clock.advance(DRAIN_MS);
    await drained;
    await inbox.queue.close();
  });

  it('should fail a call that passes its timeout, abort its signal, and retry the event later', async () => {
    const { clock, store, inbox } = await setup();
    const called = hangingHandler(inbox);
    await inbox.queue.start();
    const context = await called;
    clock.advance(TIMEOUT_MS);
    await turns();
    assert.equal(context.signal.aborted, true);
    const item = store.get(INBOX_SPACE, 'evt_1');
    assert.equal(item?.doc['status'], 'failed');
    assert.match(String(item?.doc['lastError']), /did not finish within 5000 ms/);
    assert.ok((item?.dueAt ?? 0) > clock.now(), 'due again after the backoff');
    await inbox.queue.drain();
    await inbox.queue.close();
  });
});
