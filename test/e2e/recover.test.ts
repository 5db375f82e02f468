// End to end, in-process: recovering a window after an outage (CONVENTIONS.md#recovering-after-an-outage).
// `POST /$subscriptions/{id}/$recover` queues again that subscription's failed and dead deliveries
// whose event time lies in the window, and `POST /$inbox/$recover` the failed and dead received
// events (of one source when asked), over the time received. On a manual clock with a short retry
// schedule, a receiver (or a handler) fails, deliveries (events) go dead, it recovers, and a window
// of them is sent (run) again: only those of the window, in their original order, each from its first
// attempt, never one that is in flight, and a second identical request finds nothing left to queue.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Random } from '../../lib/clock.js';
import type { WebhookSourceConfig } from '../../lib/config.js';
import type { ResapiServer } from '../../lib/index.js';
import type { JsonObject } from '../../lib/json.js';
import { signedHeaders } from '../../lib/protocol/scheme-headers.js';
import type { StoredRecord } from '../../lib/store/types.js';
import { OUTBOX_SPACE } from '../../lib/webhooks/events.js';
import { INBOX_SPACE } from '../../lib/webhooks/inbox.js';
import { ManualClock } from '../support/clock.js';
import { eventually } from '../support/eventually.js';
import { create, JSON_HEADERS, problemOf, request, type TestResponse } from '../support/http.js';
import { bodyOf, Receiver, type ReceiverAnswer } from '../support/receiver.js';
import { serverForSuite } from '../support/server.js';
import { recordWhere } from '../support/store.js';

/** How the receiver answers a delivery, by the id of the item it announces. */
type Outcome = 'ok' | 'fail' | 'fail-for-hours' | 'hold';

const ANSWERS: Record<Outcome, ReceiverAnswer> = {
  ok: 200,
  fail: 503,
  'fail-for-hours': { status: 503, headers: { 'Retry-After': String(6 * 3600) } },
  hold: 'hold',
};

/** The receiver answers each delivery by the item it announces. */
function answerBy(receiver: Receiver, outcome: (itemId: string) => Outcome): void {
  receiver.otherwise = (request) => ANSWERS[outcome(String((bodyOf(request)['data'] as JsonObject)['id']))];
}

/** The items announced, in the order their deliveries arrived (every attempt). */
function arrivedItems(receiver: Receiver): string[] {
  return receiver.bodies().map((body) => String((body['data'] as JsonObject)['id']));
}

/** The event ids, in the order their deliveries arrived. */
function eventIds(receiver: Receiver): string[] {
  return receiver.bodies().map((body) => String(body['id']));
}

const SECRET = 'recover-test-secret-of-some-length';
/** Jitter pinned at one half; ids stay random (they must be unique). */
const halfway: Random = { bytes: (size) => randomBytes(size), fraction: () => 0.5 };

function subscribe(base: string, id: string, url: string, events: string[], extra: JsonObject = {}): Promise<TestResponse> {
  const body = JSON.stringify({ url, events, secret: SECRET, ...extra });
  return request(base, `/$subscriptions/${id}`, { method: 'PUT', headers: { ...JSON_HEADERS, 'If-None-Match': '*' }, body });
}

function recover(base: string, path: string, body: unknown): Promise<TestResponse> {
  return request(base, path, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify(body) });
}

/** The pointers a 400 problem names. */
function pointers(res: TestResponse): string[] {
  return (problemOf(res).errors ?? []).map((item) => (item as { pointer: string }).pointer);
}

/** Creates `/<collection>/<id>` and returns its one new delivery. */
async function change(server: ResapiServer, collection: string, id: string): Promise<StoredRecord> {
  const before = new Set(server.store.scan(OUTBOX_SPACE).map((record) => record.id));
  assert.equal((await create(server.url, `/${collection}/${id}`, { n: 0 })).status, 201);
  const fresh = server.store.scan(OUTBOX_SPACE).filter((record) => !before.has(record.id));
  assert.equal(fresh.length, 1, `one delivery for ${collection}/${id}`);
  return fresh[0] as StoredRecord;
}

describe('POST /$subscriptions/{id}/$recover', () => {
  const clock = new ManualClock(Date.now());
  const receiver = new Receiver();
  before(async () => {
    await receiver.start();
  });
  // The receiver first (after() hooks run in registration order): a delivery it still holds then
  // fails at once, and the server's drain has nothing to wait for.
  after(async () => {
    await receiver.stop(500);
  });
  // One delivery of a subscription at a time (CONVENTIONS.md#deliveries): the receiver sees them in the
  // order they start, so the order they are recovered in is the order they arrive in.
  const outbox = { inFlight: 1, retry: { attempts: 2 } };
  const server = serverForSuite({ memory: true, clock, random: halfway, outbox }, async (server) => {
    assert.equal((await subscribe(server.url, 'shop', receiver.url, ['things.*'])).status, 201);
    assert.equal((await subscribe(server.url, 'other', receiver.url, ['gadgets.*'])).status, 201);
  });

  /** Waits for the delivery's first attempt to fail, then moves the clock to its second, which fails too: dead. */
  async function dead(record: StoredRecord): Promise<StoredRecord> {
    const failed = await recordWhere(server.store, OUTBOX_SPACE, record.id, (r) => r.doc['attempts'] === 1);
    assert.equal(failed.doc['status'], 'failed');
    clock.advance((failed.dueAt as number) - clock.now());
    return recordWhere(server.store, OUTBOX_SPACE, record.id, (r) => r.doc['status'] === 'dead');
  }

  it('should queue again only the window\'s failed and dead deliveries of the subscription, send them in order from attempt 1, and say how many', async () => {
    answerBy(receiver, (item) => (item === 't3' ? 'fail-for-hours' : 'fail'));
    clock.advance(10_000);
    const t0 = await dead(await change(server, 'things', 't0'));
    clock.advance(10_000);
    const t1 = await dead(await change(server, 'things', 't1'));
    clock.advance(10_000);
    answerBy(receiver, () => 'ok');
    const ok = await change(server, 'things', 'ok');
    await recordWhere(server.store, OUTBOX_SPACE, ok.id, (r) => r.doc['status'] === 'delivered');
    answerBy(receiver, (item) => (item === 't3' ? 'fail-for-hours' : 'fail'));
    clock.advance(10_000);
    const t2 = await dead(await change(server, 'things', 't2'));
    const gadget = await dead(await change(server, 'gadgets', 'g1'));
    clock.advance(10_000);
    const t3 = await change(server, 'things', 't3');
    const waiting = await recordWhere(server.store, OUTBOX_SPACE, t3.id, (r) => r.doc['status'] === 'failed');
    assert.ok((waiting.dueAt as number) > clock.now() + 3600_000, 'waits hours for its next attempt');
    clock.advance(10_000);
    const t4 = await dead(await change(server, 'things', 't4'));

    answerBy(receiver, () => 'ok');
    const before = arrivedItems(receiver).length;
    const window = { since: t1.doc['createdAt'], until: t3.doc['createdAt'] };
    const res = await recover(server.url, '/$subscriptions/shop/$recover', window);
    assert.equal(res.status, 202, res.text);
    assert.equal(res.headers['content-type'], 'application/json');
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.deepEqual(res.json(), { requeued: 3, remaining: 0 });
    for (const record of [t1, t2, t3]) {
      const delivered = await recordWhere(server.store, OUTBOX_SPACE, record.id, (r) => r.doc['status'] === 'delivered');
      assert.equal(delivered.doc['attempts'], 1, `${record.id} starts again from its first attempt`);
    }
    assert.deepEqual(arrivedItems(receiver).slice(before), ['t1', 't2', 't3'], 'in their original order, each once');
    for (const record of [t0, t4, gadget]) {
      assert.equal(server.store.get(OUTBOX_SPACE, record.id)?.doc['status'], 'dead', `${record.id} is outside the window`);
    }
    assert.equal(server.store.get(OUTBOX_SPACE, ok.id)?.doc['attempts'], 1, 'a delivered one is untouched');

    const again = await recover(server.url, '/$subscriptions/shop/$recover', window);
    assert.equal(again.status, 202);
    assert.deepEqual(again.json(), { requeued: 0, remaining: 0 });
    assert.equal(arrivedItems(receiver).length, before + 3);
  });

  it('should send deliveries of one event time in the order of their ids', async () => {
    assert.equal((await subscribe(server.url, 'rows', receiver.url, ['rows.replaced'])).status, 201);
    const ids = ['r1', 'r2', 'r3', 'r4', 'r5', 'r6', 'r7'];
    for (const id of ids) assert.equal((await create(server.url, `/rows/${id}`, { n: 0 })).status, 201);
    answerBy(receiver, () => 'fail');
    const before = new Set(server.store.scan(OUTBOX_SPACE).map((record) => record.id));
    const csv = `id,currentN,newN\r\n${ids.map((id) => `${id},0,1`).join('\r\n')}\r\n`;
    const bulk = await request(server.url, '/rows/$bulk', { method: 'PUT', headers: { 'Content-Type': 'text/csv' }, body: csv });
    assert.equal(bulk.status, 200, bulk.text);
    const fresh = server.store.scan(OUTBOX_SPACE).filter((record) => !before.has(record.id));
    assert.equal(fresh.length, ids.length);
    assert.equal(new Set(fresh.map((record) => record.doc['createdAt'])).size, 1, 'one commit, one event time');
    for (const record of fresh) await recordWhere(server.store, OUTBOX_SPACE, record.id, (r) => r.doc['attempts'] === 1);
    clock.advance(Math.max(...fresh.map((record) => server.store.get(OUTBOX_SPACE, record.id)?.dueAt as number)) - clock.now());
    for (const record of fresh) await recordWhere(server.store, OUTBOX_SPACE, record.id, (r) => r.doc['status'] === 'dead');

    answerBy(receiver, () => 'ok');
    const arrived = eventIds(receiver).length;
    const at = fresh[0]?.doc['createdAt'];
    const res = await recover(server.url, '/$subscriptions/rows/$recover', { since: at, until: at });
    assert.deepEqual(res.json(), { requeued: ids.length, remaining: 0 });
    await receiver.got(arrived + ids.length);
    const byId = [...fresh].sort((a, b) => (a.id < b.id ? -1 : 1)).map((record) => record.doc['eventId']);
    assert.deepEqual(eventIds(receiver).slice(arrived), byId);
  });

  it('should send the recovered deliveries before newer ones of the subscription still waiting, as they first came', async () => {
    assert.equal((await subscribe(server.url, 'late', receiver.url, ['late.*'])).status, 201);
    answerBy(receiver, () => 'fail');
    clock.advance(10_000);
    const l1 = await dead(await change(server, 'late', 'l1'));
    clock.advance(10_000);
    const l2 = await dead(await change(server, 'late', 'l2'));
    // With outbox.inFlight 1, one delivery at a time goes to a subscription: while n1 is in flight, n2 waits.
    answerBy(receiver, (item) => (item === 'n1' ? 'hold' : 'ok'));
    const before = arrivedItems(receiver).length;
    clock.advance(10_000);
    await change(server, 'late', 'n1');
    await receiver.got(before + 1);
    const n2 = await change(server, 'late', 'n2');
    const res = await recover(server.url, '/$subscriptions/late/$recover', { since: l1.doc['createdAt'], until: l2.doc['createdAt'] });
    assert.deepEqual(res.json(), { requeued: 2, remaining: 0 });
    assert.equal(server.store.get(OUTBOX_SPACE, n2.id)?.doc['status'], 'pending');
    receiver.release(200);
    await recordWhere(server.store, OUTBOX_SPACE, n2.id, (r) => r.doc['status'] === 'delivered');
    assert.deepEqual(arrivedItems(receiver).slice(before), ['n1', 'l1', 'l2', 'n2']);
  });

  it('should leave alone a delivery whose attempt is in flight, so it is never sent twice at once', async () => {
    assert.equal((await subscribe(server.url, 'busy', receiver.url, ['busy.*'])).status, 201);
    answerBy(receiver, () => 'fail');
    const record = await change(server, 'busy', 'b1');
    const failed = await recordWhere(server.store, OUTBOX_SPACE, record.id, (r) => r.doc['attempts'] === 1);
    answerBy(receiver, () => 'hold');
    const before = arrivedItems(receiver).length;
    clock.advance((failed.dueAt as number) - clock.now());
    await receiver.got(before + 1);
    const res = await recover(server.url, '/$subscriptions/busy/$recover', { since: record.doc['createdAt'] });
    assert.equal(res.status, 202);
    assert.deepEqual(res.json(), { requeued: 0, remaining: 0 });
    receiver.release(200);
    const delivered = await recordWhere(server.store, OUTBOX_SPACE, record.id, (r) => r.doc['status'] === 'delivered');
    assert.equal(delivered.doc['attempts'], 2);
    assert.equal(arrivedItems(receiver).filter((item) => item === 'b1').length, 2, 'two attempts in all, none doubled');
    const retry = await request(server.url, `/$outbox/${record.id}/$retry`, { method: 'PUT' });
    assert.equal(retry.status, 409, '$retry still refuses a delivered delivery');
  });

  it('should answer 404 for an unknown subscription and 409 for a disabled one, changing nothing', async () => {
    const since = new Date(clock.now() - 3600_000).toISOString();
    const missing = await recover(server.url, '/$subscriptions/nobody/$recover', { since });
    assert.equal(missing.status, 404);
    assert.equal(missing.headers['content-type'], 'application/problem+json');
    assert.match(problemOf(missing).detail, /nobody/);
    assert.equal((await subscribe(server.url, 'off', receiver.url, ['off.*'], { status: 'disabled' })).status, 201);
    const disabled = await recover(server.url, '/$subscriptions/off/$recover', { since });
    assert.equal(disabled.status, 409);
    assert.match(problemOf(disabled).detail, /disabled.*"status": "active"/);
  });

  it('should refuse a malformed window with 400 naming the member, and a body that is not JSON with 415', async () => {
    const dead = server.store.scan(OUTBOX_SPACE).filter((record) => record.doc['status'] === 'dead').map((record) => record.id);
    assert.ok(dead.length > 0);
    const now = new Date(clock.now()).toISOString();
    const later = new Date(clock.now() + 60_000).toISOString();
    const cases: readonly [unknown, string][] = [
      [{}, '/since'],
      [{ since: 'yesterday' }, '/since'],
      [{ since: '2026-04-14' }, '/since'],
      [{ since: '2026-04-14T09:00:00' }, '/since'],
      [{ since: '2026-04-14T09:00Z' }, '/since'],
      [{ since: '2026-02-30T09:00:00Z' }, '/since'],
      [{ since: 1776157961 }, '/since'],
      [{ since: now, until: 'now' }, '/until'],
      [{ since: later, until: now }, '/until'],
      [{ since: later }, '/since'],
      [{ since: now, colour: 'red' }, '/colour'],
      [{ since: now, source: 'webhooks' }, '/source'],
    ];
    for (const [body, pointer] of cases) {
      const res = await recover(server.url, '/$subscriptions/shop/$recover', body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.headers['content-type'], 'application/problem+json');
      assert.deepEqual(pointers(res), [pointer], `${JSON.stringify(body)}: ${res.text}`);
    }
    const array = await recover(server.url, '/$subscriptions/shop/$recover', [{ since: now }]);
    assert.equal(array.status, 400);
    const text = await request(server.url, '/$subscriptions/shop/$recover', { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: 'since' });
    assert.equal(text.status, 415);
    assert.deepEqual(dead.filter((id) => server.store.get(OUTBOX_SPACE, id)?.doc['status'] !== 'dead'), [], 'nothing changed');
  });

  it('should answer only POST, with the other methods refused as 405', async () => {
    const res = await request(server.url, '/$subscriptions/shop/$recover', { method: 'GET' });
    assert.equal(res.status, 405);
    assert.match(String(res.headers['allow']), /POST/);
  });
});

/** A signed resapi-scheme delivery to /webhooks. */
function deliver(base: string, clock: ManualClock, id: string, kind = 'order.created'): Promise<TestResponse> {
  const body = JSON.stringify({ id, event: kind });
  const headers = signedHeaders('resapi', SECRET, { id, kind, body, timestampS: Math.floor(clock.now() / 1000) });
  return request(base, '/webhooks', { method: 'POST', headers: { ...JSON_HEADERS, ...headers }, body });
}

describe('POST /$inbox/$recover', () => {
  const clock = new ManualClock(Date.now());
  let broken = true;
  const handled: string[] = [];
  const server = serverForSuite({
    memory: true,
    clock,
    webhookSecrets: [SECRET],
    webhooks: { retry: { attempts: 1 } },
    webhookHandlers: {
      'order.created': (event) => {
        if (broken) throw new Error('the payment service is down');
        handled.push(String(event['id']));
      },
    },
  });

  async function deadEvent(id: string): Promise<StoredRecord> {
    const res = await deliver(server.url, clock, id);
    assert.equal(res.status, 200, res.text);
    return recordWhere(server.store, INBOX_SPACE, id, (record) => record.doc['status'] === 'dead');
  }

  it('should run again the window\'s dead events in the order received, each from attempt 1, and then nothing more', async () => {
    const a = await deadEvent('evt-a');
    clock.advance(10_000);
    const b = await deadEvent('evt-b');
    clock.advance(10_000);
    const c = await deadEvent('evt-c');
    clock.advance(10_000);
    await deadEvent('evt-d');
    broken = false;
    const window = { since: b.doc['receivedAt'], until: c.doc['receivedAt'] };
    const res = await recover(server.url, '/$inbox/$recover', window);
    assert.equal(res.status, 202, res.text);
    assert.deepEqual(res.json(), { requeued: 2, remaining: 0 });
    for (const id of ['evt-b', 'evt-c']) {
      const processed = await recordWhere(server.store, INBOX_SPACE, id, (record) => record.doc['status'] === 'processed');
      assert.equal(processed.doc['attempts'], 1);
    }
    assert.deepEqual(handled, ['evt-b', 'evt-c']);
    for (const id of ['evt-a', 'evt-d']) assert.equal(server.store.get(INBOX_SPACE, id)?.doc['status'], 'dead');
    assert.deepEqual((await recover(server.url, '/$inbox/$recover', window)).json(), { requeued: 0, remaining: 0 });
    assert.equal((await request(server.url, '/$inbox/evt-b/$retry', { method: 'PUT' })).status, 409, '$retry still refuses a processed event');

    // The default source's events carry no source of their own: they are the source `webhooks`.
    const all = await recover(server.url, '/$inbox/$recover', { since: a.doc['receivedAt'], source: 'webhooks' });
    assert.deepEqual(all.json(), { requeued: 2, remaining: 0 });
    await eventually('every event processed', () => handled.length === 4);
    assert.deepEqual(handled, ['evt-b', 'evt-c', 'evt-a', 'evt-d']);
  });

  it('should refuse a source this server does not receive from, and a malformed window, naming the member', async () => {
    const now = new Date(clock.now()).toISOString();
    const cases: readonly [unknown, string][] = [
      [{ since: now, source: 'stripe' }, '/source'],
      [{ since: now, source: 7 }, '/source'],
      [{ since: now, source: '' }, '/source'],
      [{ until: now }, '/since'],
      [{ since: now, until: '2026-04-14T09:00:00.000+25:00' }, '/until'],
      [{ since: now, subscription: 'shop' }, '/subscription'],
    ];
    for (const [body, pointer] of cases) {
      const res = await recover(server.url, '/$inbox/$recover', body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.deepEqual(pointers(res), [pointer], `${JSON.stringify(body)}: ${res.text}`);
    }
    const stripe = await recover(server.url, '/$inbox/$recover', { since: now, source: 'stripe' });
    assert.match(problemOf(stripe).detail, /webhooks/, 'the detail names the sources there are');
  });
});

describe('POST /$inbox/$recover by source', () => {
  const handled: string[] = [];
  const sources: WebhookSourceConfig[] = [
    { path: '/webhooks', scheme: 'resapi', secretsEnv: 'RESAPI_WEBHOOK_SECRETS' },
    { path: '/webhooks/stripe', scheme: 'stripe', secretsEnv: 'RECOVER_TEST_STRIPE_SECRETS' },
  ];
  const server = serverForSuite({
    memory: true,
    webhookSecrets: [SECRET],
    webhooks: { sources },
    webhookHandlers: { '*': (event) => void handled.push(String(event['id'])) },
  });

  it('should run again only the events of the source named, those without a source being `webhooks`', async () => {
    const receivedAt = new Date(Date.now() - 60_000).toISOString();
    const item = (id: string, extra: JsonObject): JsonObject => ({
      id, event: 'invoice.paid', status: 'dead', attempts: 8, receivedAt, lastError: 'Error: down', ...extra,
    });
    // Items as the receiver writes them: the default source's without a source, a named source's
    // addressed `<name>:<eventId>`.
    const items = [item('evt_1', {}), item('stripe:evt_2', { source: 'stripe', eventId: 'evt_2' })];
    const written = await server.store.commit({
      mutations: items.flatMap((doc) => [
        { kind: 'put' as const, collection: INBOX_SPACE, id: String(doc['id']), doc },
        { kind: 'put' as const, collection: '$inbox-bodies', id: String(doc['id']), doc: { body: JSON.stringify({ id: doc['eventId'] ?? doc['id'], type: 'invoice.paid' }) } },
      ]),
    });
    assert.equal(written.ok, true);
    const stripe = await recover(server.url, '/$inbox/$recover', { since: receivedAt, source: 'stripe' });
    assert.deepEqual(stripe.json(), { requeued: 1, remaining: 0 });
    await recordWhere(server.store, INBOX_SPACE, 'stripe:evt_2', (record) => record.doc['status'] === 'processed');
    assert.equal(server.store.get(INBOX_SPACE, 'evt_1')?.doc['status'], 'dead');
    const own = await recover(server.url, '/$inbox/$recover', { since: receivedAt, source: 'webhooks' });
    assert.deepEqual(own.json(), { requeued: 1, remaining: 0 });
    await recordWhere(server.store, INBOX_SPACE, 'evt_1', (record) => record.doc['status'] === 'processed');
    assert.deepEqual(handled, ['evt_2', 'evt_1']);
  });
});

describe('POST .../$recover behind API keys and the Host and Origin checks', () => {
  const KEY = 'recover-test-key-aaaaaaaaaaaa';
  const auth = { Authorization: `Bearer ${KEY}` };
  const server = serverForSuite({ memory: true, apiKeys: [KEY] }, async (server) => {
    const body = JSON.stringify({ url: 'http://127.0.0.1:9/hook', events: ['*'], secret: SECRET });
    const made = await request(server.url, '/$subscriptions/keyed', { method: 'PUT', headers: { ...JSON_HEADERS, ...auth, 'If-None-Match': '*' }, body });
    assert.equal(made.status, 201);
  });

  it('should ask for a key, refuse a web origin with 403 and a foreign Host with 421, as any POST', async () => {
    const body = JSON.stringify({ since: '2026-04-14T09:00:00Z' });
    const port = new URL(server.url).port;
    for (const path of ['/$inbox/$recover', '/$subscriptions/keyed/$recover']) {
      const post = (headers: Record<string, string>): Promise<TestResponse> => request(server.url, path, { method: 'POST', headers: { ...JSON_HEADERS, ...headers }, body });
      assert.equal((await post({})).status, 401, path);
      assert.equal((await post({ ...auth, Origin: 'https://pages.example' })).status, 403, path);
      assert.equal((await post({ ...auth, Host: `evil.example:${port}` })).status, 421, path);
      const allowed = await post(auth);
      assert.equal(allowed.status, 202, `${path}: ${allowed.text}`);
      assert.deepEqual(allowed.json(), { requeued: 0, remaining: 0 });
    }
  });
});
