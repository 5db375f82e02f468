// End to end, in-process: the webhook sender (CONVENTIONS.md#sending-webhooks). Subscriptions as
// resources with a write-only secret; every change writes its event and deliveries in the same atomic
// batch; deliveries carry the body, signature and timestamp of CONVENTIONS.md#deliveries; retries follow the
// schedule on a manual clock (so a day of backoff takes milliseconds) with Retry-After honoured;
// 4xx is dead at once, 410 disables the subscription, a slow receiver never holds up the others.
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Random } from '../../lib/clock.js';
import type { ResapiServer } from '../../lib/index.js';
import type { JsonObject } from '../../lib/json.js';
import { verifySignature } from '../../lib/protocol/signature.js';
import { OUTBOX_EVENT_SPACE, OUTBOX_SPACE } from '../../lib/webhooks/events.js';
import { SECRET_SPACE } from '../../lib/webhooks/subscriptions.js';
import { ManualClock } from '../support/clock.js';
import { eventually } from '../support/eventually.js';
import { create, JSON_HEADERS, problemOf, request } from '../support/http.js';
import { Receiver, type ReceivedRequest } from '../support/receiver.js';
import { serverForSuite } from '../support/server.js';
import { recordWhere } from '../support/store.js';

const SECRET = 'subscriber-secret';

/** Creates an item and returns the id of the one delivery that change wrote. */
async function changeAndDelivery(server: ResapiServer, path: string, doc: JsonObject): Promise<string> {
  const before = new Set(server.store.scan(OUTBOX_SPACE).map((record) => record.id));
  assert.equal((await create(server.url, path, doc)).status, 201);
  const fresh = server.store.scan(OUTBOX_SPACE).filter((record) => !before.has(record.id));
  assert.equal(fresh.length, 1);
  return (fresh[0] as { id: string }).id;
}
/** Jitter pinned at one half; ids stay random (they must be unique). */
const halfway: Random = { bytes: (size) => randomBytes(size), fraction: () => 0.5 };

function subscribe(base: string, id: string, url: string, events: string[] = ['*'], extra: JsonObject = {}): ReturnType<typeof request> {
  return request(base, `/$subscriptions/${id}`, { method: 'PUT', headers: { ...JSON_HEADERS, 'If-None-Match': '*' }, body: JSON.stringify({ url, events, secret: SECRET, ...extra }) });
}

describe('subscriptions', () => {
  const server = serverForSuite({ memory: true });

  it('should be a resource with the PUT rules of any other: 428, 201, 412, If-Match replace, 204', async () => {
    const body = JSON.stringify({ url: 'http://127.0.0.1:9/hook', events: ['products.created'], secret: SECRET });
    assert.equal((await request(server.url, '/$subscriptions/s1', { method: 'PUT', headers: JSON_HEADERS, body })).status, 428);
    const created = await request(server.url, '/$subscriptions/s1', { method: 'PUT', headers: { ...JSON_HEADERS, 'If-None-Match': '*' }, body });
    assert.equal(created.status, 201);
    assert.equal(created.headers.location, '/$subscriptions/s1');
    assert.equal((await request(server.url, '/$subscriptions/s1', { method: 'PUT', headers: { ...JSON_HEADERS, 'If-None-Match': '*' }, body })).status, 412);
    const replaced = await request(server.url, '/$subscriptions/s1', { method: 'PUT', headers: { ...JSON_HEADERS, 'If-Match': created.headers.etag as string }, body: JSON.stringify({ url: 'https://example.test/hook', events: ['*'] }) });
    assert.equal(replaced.status, 200);
    assert.equal(server.store.get(SECRET_SPACE, 's1')?.doc['secret'], SECRET, 'a replace without a secret keeps it');
    assert.equal((await request(server.url, '/$subscriptions/s1', { method: 'DELETE' })).status, 204);
    assert.equal(server.store.get(SECRET_SPACE, 's1'), undefined, 'the secret goes with it');
  });

  it('should never show the secret: not in the PUT answer, the item, or the listing', async () => {
    const created = await subscribe(server.url, 's2', 'http://127.0.0.1:9/hook');
    assert.deepEqual(created.json(), { id: 's2', url: 'http://127.0.0.1:9/hook', events: ['*'], status: 'active', secretOverlapS: 86400 });
    for (const res of [created, await request(server.url, '/$subscriptions/s2'), await request(server.url, '/$subscriptions')]) {
      assert.doesNotMatch(res.text, new RegExp(SECRET));
    }
  });

  it('should refuse a subscription that is malformed or points at this server, naming the member', async () => {
    const self = `${server.url}/webhooks`;
    const cases: readonly [JsonObject, string][] = [
      [{ url: 'ftp://example.test/', events: ['*'], secret: 'x' }, '/url'],
      [{ url: 'http://user:pw@example.test/', events: ['*'], secret: 'x' }, '/url'],
      [{ url: 'http://example.test/', events: [], secret: 'x' }, '/events'],
      [{ url: 'http://example.test/', events: ['products.updated'], secret: 'x' }, '/events'],
      [{ url: 'http://example.test/', events: ['*'], secret: '' }, '/secret'],
      [{ url: 'http://example.test/', events: ['*'], secret: 'x', colour: 'red' }, '/colour'],
      [{ url: self, events: ['*'], secret: 'x' }, '/url'],
      [{ url: self.replace('127.0.0.1', 'localhost'), events: ['*'], secret: 'x' }, '/url'],
    ];
    for (const [body, pointer] of cases) {
      const res = await request(server.url, '/$subscriptions/bad', { method: 'PUT', headers: { ...JSON_HEADERS, 'If-None-Match': '*' }, body: JSON.stringify(body) });
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.ok(problemOf(res).errors?.some((item) => (item as { pointer: string }).pointer === pointer), `${JSON.stringify(body)}: ${res.text}`);
    }
  });
});

describe('the transactional outbox', () => {
  const receiver = new Receiver();
  before(async () => {
    await receiver.start();
    receiver.answers = ['hold'];
  });
  const server = serverForSuite({ memory: true }, async (server) => {
    assert.equal((await subscribe(server.url, 'only-products', receiver.url, ['products.*'])).status, 201);
  });
  after(async () => {
    await receiver.stop(200);
  });

  it('should write the event and its delivery in the same commit as the change, and nothing for a change nobody wants', async () => {
    const versions: number[][] = [];
    const stop = server.store.watch((commit) => versions.push(commit.applied.map((applied) => applied.record?.version ?? commit.seq)));
    assert.equal((await create(server.url, '/products/p1', { name: 'Cup' })).status, 201);
    assert.equal((await create(server.url, '/orders/o1', { n: 1 })).status, 201);
    stop();
    const deliveries = server.store.scan(OUTBOX_SPACE);
    assert.equal(deliveries.length, 1);
    const delivery = deliveries[0];
    assert.equal(delivery?.doc['event'], 'products.created');
    assert.equal(delivery?.version, server.store.get('products', 'p1')?.version, 'one commit: the item and its delivery');
    assert.equal(server.store.get(OUTBOX_EVENT_SPACE, String(delivery?.doc['eventId']))?.version, delivery?.version, 'and its event body');
  });
});

describe('deliveries on the injected clock', () => {
  const clock = new ManualClock(Date.now());
  const receiver = new Receiver();
  const other = new Receiver();
  before(async () => {
    await receiver.start();
    await other.start();
  });
  // Receivers first (after() hooks run in the order they are registered): a delivery they still
  // hold then fails at once, and the server's drain (on the manual clock, which nobody advances
  // now) has nothing to wait for.
  after(async () => {
    await receiver.stop();
    await other.stop();
  });
  const server = serverForSuite({ memory: true, clock, random: halfway, outbox: { workers: 4, timeoutMs: 5000 } });
  beforeEach(() => {
    receiver.received.length = 0;
    receiver.answers = [];
  });

  it('should POST the event with its signature, timestamp and JSON type; the data carry the item and its ETag', async () => {
    assert.equal((await subscribe(server.url, 'main', receiver.url, ['things.*'])).status, 201);
    const created = await create(server.url, '/things/t1', { name: 'Lamp' });
    await receiver.got(1);
    const [first] = receiver.received;
    const body = JSON.parse((first as ReceivedRequest).body.toString()) as { id: string; event: string; type: string; occurredAt: string; data: JsonObject };
    assert.deepEqual(Object.keys(body), ['id', 'event', 'type', 'occurredAt', 'data']);
    assert.equal(body.event, 'things.created');
    assert.equal(body.type, 'things.created');
    const sequence = server.store.get('things', 't1')?.version;
    assert.deepEqual(body.data, { collection: 'things', id: 't1', etag: created.headers.etag as string, sequence, resource: { id: 't1', name: 'Lamp' } });
    assert.equal(first?.headers['content-type'], 'application/json');
    assert.equal(verifySignature((first as ReceivedRequest).body, [first?.headers['x-signature'] as string], [SECRET]), true);
    assert.match(first?.headers['x-signature'] as string, /^[0-9a-f]{64}$/);
    assert.equal(first?.headers['x-timestamp'], String(Math.floor(clock.now() / 1000)));
    const delivery = await recordWhere(server.store, OUTBOX_SPACE, server.store.scan(OUTBOX_SPACE)[0]?.id ?? '', (record) => record.doc['status'] === 'delivered');
    assert.equal(delivery.doc['lastStatus'], 200);
    await eventually('the delivered body to be dropped', () => server.store.get(OUTBOX_EVENT_SPACE, String(delivery.doc['eventId'])) === undefined);
  });

  it('should retry 5xx, 408, 429 and network errors with equal jitter, the same bytes and id each time, a fresh timestamp each time', async () => {
    receiver.answers = [503, 408, { status: 429, headers: { 'Retry-After': '120' } }, 500];
    const id = await changeAndDelivery(server, '/things/t2', { name: 'Desk' });
    // Equal jitter with the random source at one half: wait d/2 + d/4, d = min(6 h, 1 s × 3^n).
    const waits = [0.75 * 3000, 0.75 * 9000, 120_000, 0.75 * 81_000];
    for (const [index, wait] of waits.entries()) {
      const failed = await recordWhere(server.store, OUTBOX_SPACE, id, (record) => record.doc['attempts'] === index + 1);
      assert.equal(failed.doc['status'], 'failed');
      assert.equal(failed.dueAt, failed.modifiedAt + wait, `wait before attempt ${index + 2}`);
      clock.advance(wait);
    }
    await recordWhere(server.store, OUTBOX_SPACE, id, (record) => record.doc['status'] === 'delivered');
    assert.equal(receiver.received.length, 5);
    assert.equal(new Set(receiver.received.map((request) => request.body.toString())).size, 1, 'byte-identical every time');
    assert.equal(new Set(receiver.received.map((request) => request.headers['x-timestamp'])).size, 5, 'stamped at each attempt');
  });

  it('should make a delivery dead at once on another 4xx, with a dead letter, and send it again on $retry', async () => {
    receiver.answers = [400];
    const id = await changeAndDelivery(server, '/things/t3', {});
    const dead = await recordWhere(server.store, OUTBOX_SPACE, id, (record) => record.doc['status'] === 'dead');
    assert.equal(dead.doc['lastStatus'], 400);
    assert.deepEqual((await server.store.readSideLog('outbox-dead-letter')).map((line) => line['id']), [id]);
    const retried = await request(server.url, `/$outbox/${id}/$retry`, { method: 'PUT' });
    assert.equal(retried.status, 202);
    await recordWhere(server.store, OUTBOX_SPACE, id, (record) => record.doc['status'] === 'delivered');
    assert.equal((await request(server.url, `/$outbox/${id}/$retry`, { method: 'PUT' })).status, 409);
    const listed = (await request(server.url, `/$outbox?$filter=id eq '${id}'`)).json() as { value: JsonObject[] };
    assert.equal(listed.value[0]?.['status'], 'delivered');
  });

  it('should disable the subscription on 410 Gone, and write no more deliveries for it', async () => {
    assert.equal((await subscribe(server.url, 'gone', other.url, ['gone.*'])).status, 201);
    other.answers = [410];
    await create(server.url, '/gone/g1', {});
    await recordWhere(server.store, '$subscriptions', 'gone', (record) => record.doc['status'] === 'disabled');
    const before = server.store.scan(OUTBOX_SPACE).length;
    await create(server.url, '/gone/g2', {});
    assert.equal(server.store.scan(OUTBOX_SPACE).length, before);
    assert.equal(((await request(server.url, '/$subscriptions/gone')).json() as JsonObject)['status'], 'disabled');
  });

  it('should time out a receiver that does not answer, and retry it', async () => {
    receiver.answers = ['hold'];
    const id = await changeAndDelivery(server, '/things/t4', {});
    await receiver.got(1);
    clock.advance(5000);
    const failed = await recordWhere(server.store, OUTBOX_SPACE, id, (record) => record.doc['status'] === 'failed');
    assert.equal(failed.doc['lastError'], 'no answer within 5000 ms');
    receiver.release();
  });

  it('should keep delivering to one receiver while another holds every request it gets', async () => {
    await subscribe(server.url, 'stuck', other.url, ['slow.*']);
    await subscribe(server.url, 'quick', receiver.url, ['slow.*']);
    other.answers = Array.from({ length: 10 }, () => 'hold' as const);
    const heldBefore = other.received.length;
    const quickBefore = receiver.received.length;
    for (let n = 0; n < 6; n++) await create(server.url, `/slow/s${n}`, {});
    await receiver.got(quickBefore + 6);
    // Up to outbox.inFlight (16) of one subscription are in flight at once: all six are held.
    await other.got(heldBefore + 6);
    other.release();
  });
});
