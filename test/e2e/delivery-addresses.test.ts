// End to end: what a delivery's outcome tells about the network (CONVENTIONS.md#deliveries,
// CONVENTIONS.md#outbox, CONVENTIONS.md#subscriptions). With `outbox.refusePrivateAddresses` the
// address a delivery would connect to, after DNS, is checked first: a loopback receiver is never
// contacted, and the delivery is dead with "address not allowed" and nothing more. With
// `outbox.errorDetail: "class"` a `lastError` says only timeout, refused, unreachable or the HTTP
// status. A subscription whose URL reaches this server under another spelling of its address
// (0.0.0.0, ::, IPv4-mapped IPv6) is refused like one that names it. Every connection is to loopback.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { StoredRecord } from '../../lib/store/types.js';
import { OUTBOX_SPACE } from '../../lib/webhooks/events.js';
import { ManualClock } from '../support/clock.js';
import { eventually } from '../support/eventually.js';
import { create, JSON_HEADERS, problemOf, request } from '../support/http.js';
import { closedPort, Receiver } from '../support/receiver.js';
import { serverForSuite } from '../support/server.js';
import { recordWhere } from '../support/store.js';

const SECRET = 'subscriber-secret-0123';

function subscribe(base: string, id: string, url: string, events: string[]): ReturnType<typeof request> {
  const body = JSON.stringify({ url, events, secret: SECRET });
  return request(base, `/$subscriptions/${id}`, { method: 'PUT', headers: { ...JSON_HEADERS, 'If-None-Match': '*' }, body });
}

/** Subscribes `id` to `<id>.*` at `url`, writes one item, and returns that change's one delivery. */
async function oneDelivery(base: string, server: { store: { scan(space: string): StoredRecord[] } }, id: string, url: string): Promise<string> {
  assert.equal((await subscribe(base, id, url, [`${id}.*`])).status, 201);
  assert.equal((await create(base, `/${id}/item`, { n: 1 })).status, 201);
  const delivery = server.store.scan(OUTBOX_SPACE).find((record) => record.doc['subscription'] === id);
  assert.ok(delivery !== undefined);
  return delivery.id;
}

describe('outbox.refusePrivateAddresses', () => {
  const receiver = new Receiver();
  before(() => receiver.start());
  after(() => receiver.stop());
  const server = serverForSuite({ memory: true, outbox: { refusePrivateAddresses: true } });

  for (const [name, host] of [['literal', '127.0.0.1'], ['name', 'localhost'], ['mapped', '[::ffff:127.0.0.1]']] as const) {
    it(`should make a delivery to a loopback receiver (${name} ${host}) dead with "address not allowed", without contacting it`, async () => {
      const id = await oneDelivery(server.url, server, name, `http://${host}:${receiver.port}/hook`);
      const dead = await recordWhere(server.store, OUTBOX_SPACE, id, (record) => ['dead', 'delivered'].includes(String(record.doc['status'])));
      assert.equal(dead.doc['status'], 'dead');
      assert.equal(dead.doc['lastError'], 'address not allowed');
      assert.equal(dead.doc['lastStatus'], null);
      assert.equal(dead.doc['attempts'], 1);
      assert.equal(receiver.received.length, 0, 'the receiver never got a request');
    });
  }
});

describe('outbox.errorDetail "class"', () => {
  const clock = new ManualClock(Date.now());
  const receiver = new Receiver();
  let closed = 0;
  const server = serverForSuite({ memory: true, clock, outbox: { errorDetail: 'class', timeoutMs: 5000 } });
  // Taken once the server listens, so the port let go cannot become the server's own.
  before(async () => {
    await receiver.start();
    closed = await closedPort();
  });
  after(() => receiver.stop());

  it('should say "refused" for a port that refuses connections', async () => {
    const id = await oneDelivery(server.url, server, 'closed', `http://127.0.0.1:${closed}/hook`);
    const failed = await recordWhere(server.store, OUTBOX_SPACE, id, (record) => record.doc['attempts'] === 1);
    assert.deepEqual([failed.doc['status'], failed.doc['lastError'], failed.doc['lastStatus']], ['failed', 'refused', null]);
  });

  it('should say "HTTP 404" for a receiver that answers 404', async () => {
    receiver.answers = [404];
    const id = await oneDelivery(server.url, server, 'missing', `http://127.0.0.1:${receiver.port}/hook`);
    const dead = await recordWhere(server.store, OUTBOX_SPACE, id, (record) => record.doc['status'] === 'dead');
    assert.deepEqual([dead.doc['lastError'], dead.doc['lastStatus']], ['HTTP 404', 404]);
  });

  it('should say "timeout" for a receiver that does not answer in time', async () => {
    receiver.answers = ['hold'];
    const before = receiver.received.length;
    const id = await oneDelivery(server.url, server, 'silent', `http://127.0.0.1:${receiver.port}/hook`);
    await eventually('the held request to arrive', () => receiver.received.length > before);
    clock.advance(5000);
    const failed = await recordWhere(server.store, OUTBOX_SPACE, id, (record) => record.doc['attempts'] === 1);
    assert.deepEqual([failed.doc['status'], failed.doc['lastError']], ['failed', 'timeout']);
  });
});

describe('outbox.errorDetail "class" after the last attempt', () => {
  const receiver = new Receiver();
  before(() => receiver.start());
  after(() => receiver.stop());
  const server = serverForSuite({ memory: true, outbox: { errorDetail: 'class', retry: { attempts: 1 } } });

  it('should say only the class, without "gave up after"', async () => {
    receiver.answers = [503];
    const id = await oneDelivery(server.url, server, 'failing', `http://127.0.0.1:${receiver.port}/hook`);
    const dead = await recordWhere(server.store, OUTBOX_SPACE, id, (record) => record.doc['status'] === 'dead');
    assert.deepEqual([dead.doc['lastError'], dead.doc['lastStatus']], ['HTTP 503', 503]);
    const [line] = await server.store.readSideLog('outbox-dead-letter');
    assert.equal(line?.['lastError'], 'HTTP 503', 'the dead letter says no more');
  });
});

describe('outbox.errorDetail by default ("full")', () => {
  let closed = 0;
  const server = serverForSuite({ memory: true });
  // Taken once the server listens, so the port let go cannot become the server's own (a subscription to itself is a 400).
  before(async () => {
    closed = await closedPort();
  });

  it('should name the network error', async () => {
    const id = await oneDelivery(server.url, server, 'closed', `http://127.0.0.1:${closed}/hook`);
    const failed = await recordWhere(server.store, OUTBOX_SPACE, id, (record) => record.doc['attempts'] === 1);
    assert.equal(failed.doc['lastError'], 'ECONNREFUSED');
  });
});

describe('a subscription that points at this server', () => {
  const server = serverForSuite({ memory: true });

  it('should be refused whatever spelling of the address its URL uses', async () => {
    const port = new URL(server.url).port;
    const spellings = ['127.0.0.1', '0.0.0.0', '[::]', '[::ffff:127.0.0.1]', '[::ffff:7f00:1]', '[0:0:0:0:0:ffff:127.0.0.1]', 'localhost', '127.1'];
    for (const host of spellings) {
      const res = await subscribe(server.url, 'self', `http://${host}:${port}/items`, ['*']);
      assert.equal(res.status, 400, host);
      assert.deepEqual(problemOf(res).errors, [{ pointer: '/url', detail: 'points at this server' }], host);
    }
    assert.equal((await request(server.url, '/$subscriptions/self')).status, 404);
  });

  it('should accept the same addresses on another port', async () => {
    const other = Number(new URL(server.url).port) === 9 ? 10 : 9;
    assert.equal((await subscribe(server.url, 'elsewhere', `http://0.0.0.0:${other}/hook`, ['nothing.*'])).status, 201);
  });
});
