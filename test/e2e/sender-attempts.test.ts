// End to end, in-process: what the sender tells and the limits it keeps (CONVENTIONS.md#attempt-log,
// CONVENTIONS.md#rate-limits-and-timeouts, CONVENTIONS.md#ping). A delivery keeps its last 15
// attempts, oldest first, in `/$outbox/{id}` and its HTML page; a subscription's `rateLimit` spaces
// its deliveries on the injected clock without losing or reordering any, and holds up no other
// subscription; `POST /$subscriptions/{id}/$ping` sends a signed `ping` at once and stores nothing.
// Every receiver is on 127.0.0.1, port 0; the retry schedule and the clock are injected.
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { systemClock, type Random } from '../../lib/clock.js';
import type { ResapiServer } from '../../lib/index.js';
import type { JsonObject } from '../../lib/json.js';
import { verifySignature } from '../../lib/protocol/signature.js';
import { standardSignature } from '../../lib/protocol/standard-signature.js';
import { OUTBOX_EVENT_SPACE, OUTBOX_SPACE } from '../../lib/webhooks/events.js';
import { ManualClock } from '../support/clock.js';
import { eventually } from '../support/eventually.js';
import { create, JSON_HEADERS, problemOf, request } from '../support/http.js';
import { closedPort, Receiver, type ReceivedRequest } from '../support/receiver.js';
import { serverForSuite } from '../support/server.js';
import { recordWhere } from '../support/store.js';

const SECRET = 'attempts-test-secret-0123';
/** Jitter pinned at one half; ids stay random (they must be unique). */
const halfway: Random = { bytes: (size) => randomBytes(size), fraction: () => 0.5 };

function subscribe(base: string, id: string, url: string, events: string[], extra: JsonObject = {}): ReturnType<typeof request> {
  const body = JSON.stringify({ url, events, secret: SECRET, ...extra });
  return request(base, `/$subscriptions/${id}`, { method: 'PUT', headers: { ...JSON_HEADERS, 'If-None-Match': '*' }, body });
}

function ping(base: string, id: string, body = '{}', headers: Readonly<Record<string, string>> = {}): ReturnType<typeof request> {
  return request(base, `/$subscriptions/${id}/$ping`, { method: 'POST', headers: { ...JSON_HEADERS, ...headers }, body });
}

/** The one delivery a subscription has. */
function deliveryOf(server: ResapiServer, subscription: string): string {
  const found = server.store.scan(OUTBOX_SPACE).filter((record) => record.doc['subscription'] === subscription);
  assert.equal(found.length, 1, `one delivery for ${subscription}`);
  return (found[0] as { id: string }).id;
}

interface Attempt {
  readonly at: string;
  readonly status?: number | null;
  readonly error?: string;
  readonly durationMs: number;
}

async function attemptLog(base: string, id: string): Promise<Attempt[]> {
  const res = await request(base, `/$outbox/${id}`);
  assert.equal(res.status, 200);
  const log = (res.json() as JsonObject)['attemptLog'];
  assert.ok(Array.isArray(log), `attemptLog of ${res.text}`);
  return log as unknown as Attempt[];
}

describe('the attempt log', () => {
  const clock = new ManualClock(Date.now());
  const receiver = new Receiver({ clock: clock });
  before(() => receiver.start());
  after(() => receiver.stop());
  const retry = { baseMs: 1000, factor: 1, capMs: 1000, attempts: 20 };
  const server = serverForSuite({ memory: true, clock, random: halfway, outbox: { timeoutMs: 5000, retry } });
  /** Equal jitter at one half of d = 1 s. */
  const WAIT = 750;

  it('should keep each attempt, oldest first: a status when the receiver answered, the error when it did not, the time it took', async () => {
    assert.equal((await subscribe(server.url, 'flaky', receiver.url, ['flaky.*'])).status, 201);
    receiver.answers = ['reset', 'hold', 503, ...Array.from({ length: 14 }, () => 503), 200];
    const start = clock.now();
    assert.equal((await create(server.url, '/flaky/f1', { n: 1 })).status, 201);
    const id = deliveryOf(server, 'flaky');
    await recordWhere(server.store, OUTBOX_SPACE, id, (record) => record.doc['attempts'] === 1);
    clock.advance(WAIT);
    await receiver.got(2);
    clock.advance(5000);
    await recordWhere(server.store, OUTBOX_SPACE, id, (record) => record.doc['attempts'] === 2);
    clock.advance(WAIT);
    await recordWhere(server.store, OUTBOX_SPACE, id, (record) => record.doc['attempts'] === 3);
    const three = await attemptLog(server.url, id);
    assert.deepEqual(three, [
      { at: new Date(start).toISOString(), error: 'ECONNRESET', durationMs: 0 },
      { at: new Date(start + WAIT).toISOString(), error: 'no answer within 5000 ms', durationMs: 5000 },
      { at: new Date(start + WAIT + 5000 + WAIT).toISOString(), status: 503, durationMs: 0 },
    ]);
    for (let attempt = 4; attempt <= 18; attempt++) {
      clock.advance(WAIT);
      await recordWhere(server.store, OUTBOX_SPACE, id, (record) => record.doc['attempts'] === attempt);
    }
    const delivered = server.store.get(OUTBOX_SPACE, id);
    assert.equal(delivered?.doc['status'], 'delivered');
    const log = await attemptLog(server.url, id);
    assert.equal(log.length, 15, 'the last 15 attempts');
    assert.deepEqual(log.at(-1), { at: new Date(clock.now()).toISOString(), status: 200, durationMs: 0 });
    assert.ok(log.slice(0, -1).every((entry) => entry.status === 503 && entry.error === undefined));
    const times = log.map((entry) => Date.parse(entry.at));
    assert.deepEqual(times, [...times].sort((a, b) => a - b), 'oldest first');
    assert.equal(times[0], start + WAIT + 5000 + WAIT * 2, 'the first three attempts dropped out: the fourth is the oldest');
  });

  it('should leave the log out of the listing, and show it as a table on the delivery\'s HTML page', async () => {
    const id = deliveryOf(server, 'flaky');
    const listed = (await request(server.url, `/$outbox?$filter=id eq '${id}'`)).json() as { value: JsonObject[] };
    assert.equal(listed.value.length, 1);
    assert.equal(listed.value[0]?.['status'], 'delivered');
    assert.equal(Object.hasOwn(listed.value[0] as JsonObject, 'attemptLog'), false);
    const page = await request(server.url, `/$outbox/${id}`, { headers: { Accept: 'text/html' } });
    assert.equal(page.status, 200);
    const table = /<table id="attempts">([\s\S]*?)<\/table>/.exec(page.text)?.[1];
    assert.ok(table !== undefined, page.text);
    assert.match(table, /<th>at<\/th><th>status<\/th><th>error<\/th><th>durationMs<\/th>/);
    const rows = table.match(/<tr><td>/g) ?? [];
    assert.equal(rows.length, 15);
    assert.match(table, /<td>503<\/td>/);
    assert.match(table, /<td>200<\/td>/);
  });

  it('should keep the log when a dead delivery is sent again', async () => {
    assert.equal((await subscribe(server.url, 'refusing', receiver.url, ['refusing.*'])).status, 201);
    receiver.answers = [400];
    assert.equal((await create(server.url, '/refusing/r1', {})).status, 201);
    const id = deliveryOf(server, 'refusing');
    await recordWhere(server.store, OUTBOX_SPACE, id, (record) => record.doc['status'] === 'dead');
    const [line] = (await server.store.readSideLog('outbox-dead-letter')).filter((entry) => entry['id'] === id);
    assert.deepEqual((line as JsonObject)['attemptLog'], [{ at: new Date(clock.now()).toISOString(), status: 400, durationMs: 0 }]);
    assert.equal((await request(server.url, `/$outbox/${id}/$retry`, { method: 'PUT' })).status, 202);
    await recordWhere(server.store, OUTBOX_SPACE, id, (record) => record.doc['status'] === 'delivered');
    assert.deepEqual((await attemptLog(server.url, id)).map((entry) => entry.status), [400, 200]);
  });
});

describe('the attempt log with outbox.errorDetail "class"', () => {
  const clock = new ManualClock(Date.now());
  let closed = 0;
  before(async () => {
    closed = await closedPort();
  });
  const server = serverForSuite({ memory: true, clock, outbox: { errorDetail: 'class' } });

  it('should tell only the class of an error, like lastError', async () => {
    assert.equal((await subscribe(server.url, 'closed', `http://127.0.0.1:${closed}/hook`, ['closed.*'])).status, 201);
    assert.equal((await create(server.url, '/closed/c1', {})).status, 201);
    const id = deliveryOf(server, 'closed');
    await recordWhere(server.store, OUTBOX_SPACE, id, (record) => record.doc['attempts'] === 1);
    assert.deepEqual((await attemptLog(server.url, id)).map((entry) => entry.error), ['refused']);
    const pinged = await ping(server.url, 'closed');
    assert.equal(pinged.status, 200);
    const answer = pinged.json() as JsonObject;
    assert.deepEqual([answer['status'], answer['error']], [null, 'refused']);
  });
});

describe('rateLimit', () => {
  const clock = new ManualClock(Date.now());
  const paced = new Receiver({ clock: clock });
  const free = new Receiver({ clock: clock });
  before(async () => {
    await paced.start();
    await free.start();
  });
  after(async () => {
    await paced.stop();
    await free.stop();
  });
  // Time moves only when the test moves it; no answer can time out meanwhile. Up to three deliveries
  // of a subscription may be in flight at once (CONVENTIONS.md#deliveries): the pace still holds.
  const server = serverForSuite({ memory: true, clock, outbox: { workers: 4, inFlight: 3, timeoutMs: 3_600_000 } });

  it('should space a subscription\'s deliveries by its rate on the injected clock, in order, none lost, others not held up', async () => {
    assert.equal((await subscribe(server.url, 'paced', paced.url, ['ticks.*'], { rateLimit: 2 })).status, 201);
    assert.equal((await subscribe(server.url, 'free', free.url, ['ticks.*', 'others.*'])).status, 201);
    // The paced receiver answers nothing until all five arrived, so they are in flight together, three at most.
    const answers: ((status: number) => void)[] = [];
    paced.otherwise = () => new Promise<number>((resolve) => answers.push(resolve));
    const start = clock.now();
    for (let n = 0; n < 5; n++) assert.equal((await create(server.url, `/ticks/t${n}`, { n })).status, 201);
    // The clock has not moved: the subscription without a limit gets all five now, the paced one its first.
    await free.got(5);
    await paced.got(1);
    assert.ok(free.received.every((one) => one.at === start));
    assert.equal(paced.received.length, 1, 'the paced receiver waits for the clock');
    await eventually('three paced deliveries in flight', () => {
      clock.advance(100);
      return paced.received.length >= 3;
    });
    // A fourth waits for an answer, whatever the clock says: three are in flight. The change of
    // another collection, delivered to `free` only, comes after the look the clock's move asked for.
    clock.advance(5000);
    assert.equal((await create(server.url, '/others/o1', {})).status, 201);
    await free.got(6);
    assert.equal(paced.received.length, 3, 'three in flight at most');
    for (const answer of answers.splice(0)) answer(200);
    paced.otherwise = () => 200;
    await eventually('five paced deliveries', () => {
      clock.advance(100);
      return paced.received.length >= 5;
    });
    await eventually('every delivery delivered', () => server.store.scan(OUTBOX_SPACE).every((record) => record.doc['status'] === 'delivered'));
    // When each attempt started, as the sender recorded it: in the order of the changes, never less
    // than 500 ms apart (2 per second), though three were in flight at once.
    const itemOf = new Map(paced.received.map((one) => [one.headers['webhook-id'], ((JSON.parse(one.body.toString()) as { data: JsonObject }).data['id'])]));
    const started: { at: number; item: unknown }[] = [];
    for (const record of server.store.scan(OUTBOX_SPACE).filter((one) => one.doc['subscription'] === 'paced')) {
      const [first] = await attemptLog(server.url, record.id);
      started.push({ at: Date.parse((first as Attempt).at), item: itemOf.get(String(record.doc['eventId'])) });
    }
    started.sort((a, b) => a.at - b.at);
    assert.deepEqual(started.map((one) => one.item), ['t0', 't1', 't2', 't3', 't4'], 'in the order of the changes');
    assert.equal(started[0]?.at, start);
    for (let n = 1; n < started.length; n++) {
      const apart = (started[n]?.at as number) - (started[n - 1]?.at as number);
      assert.ok(apart >= 500, `attempts ${n} and ${n + 1}: ${started.map((one) => one.at).join(', ')}`);
    }
    assert.equal(paced.received.length, 5, 'each sent once');
  });

  it('should not limit a ping', async () => {
    const before = paced.received.length;
    for (let n = 0; n < 3; n++) assert.equal((await ping(server.url, 'paced')).status, 200);
    assert.equal(paced.received.length, before + 3);
  });
});

describe('POST /$subscriptions/{id}/$ping', () => {
  const clock = new ManualClock(Date.now());
  const receiver = new Receiver({ clock: clock });
  before(() => receiver.start());
  after(() => receiver.stop());
  const server = serverForSuite({ memory: true, clock, outbox: { timeoutMs: 5000 } });
  beforeEach(() => {
    receiver.received.length = 0;
    receiver.answers = [];
  });

  it('should send a signed ping at once and answer with the receiver\'s status; nothing is stored', async () => {
    assert.equal((await subscribe(server.url, 'pinged', receiver.url, ['things.created'])).status, 201);
    const res = await ping(server.url, 'pinged');
    assert.equal(res.status, 200);
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.deepEqual(res.json(), { status: 200, durationMs: 0 });
    assert.equal(receiver.received.length, 1);
    const [sent] = receiver.received as [ReceivedRequest];
    const body = JSON.parse(sent.body.toString()) as JsonObject;
    assert.deepEqual(Object.keys(body), ['id', 'event', 'type', 'occurredAt', 'data']);
    assert.equal(body['event'], 'ping');
    assert.equal(body['type'], 'ping');
    assert.equal(body['occurredAt'], new Date(clock.now()).toISOString());
    assert.deepEqual(body['data'], { subscription: 'pinged' });
    assert.equal(sent.headers['content-type'], 'application/json');
    assert.equal(verifySignature(sent.body, [sent.headers['x-signature'] as string], [SECRET]), true);
    assert.equal(sent.headers['x-timestamp'], String(Math.floor(clock.now() / 1000)));
    // Standard Webhooks' fields too, as on every delivery: the ping's id, the same second.
    assert.equal(sent.headers['webhook-id'], body['id']);
    assert.equal(sent.headers['webhook-timestamp'], sent.headers['x-timestamp']);
    const expected = standardSignature(body['id'] as string, sent.headers['x-timestamp'] as string, sent.body, [SECRET]);
    assert.equal(sent.headers['webhook-signature'], expected);
    assert.equal(server.store.scan(OUTBOX_SPACE).length, 0, 'no delivery');
    assert.equal(server.store.scan(OUTBOX_EVENT_SPACE).length, 0, 'no event');
    const listed = (await request(server.url, '/$outbox')).json() as { value: unknown[] };
    assert.deepEqual(listed.value, []);
  });

  it('should answer 200 with whatever the receiver answered, and a fresh id each time', async () => {
    receiver.answers = [503];
    const res = await ping(server.url, 'pinged');
    assert.equal(res.status, 200);
    assert.deepEqual(res.json(), { status: 503, durationMs: 0 });
    await ping(server.url, 'pinged');
    const ids = receiver.bodies().map((body) => body['id']);
    assert.equal(new Set(ids).size, 2);
  });

  it('should answer with the error and no status when the receiver does not answer in time', async () => {
    receiver.answers = ['hold'];
    const pending = ping(server.url, 'pinged');
    await receiver.got(1);
    clock.advance(5000);
    const res = await pending;
    assert.equal(res.status, 200);
    assert.deepEqual(res.json(), { status: null, error: 'no answer within 5000 ms', durationMs: 5000 });
  });

  it('should refuse any body but {} with a problem, and send nothing', async () => {
    for (const body of ['{"x":1}', '[]', 'null', '']) {
      const res = await ping(server.url, 'pinged', body);
      assert.equal(res.status, 400, body);
      assert.equal(res.headers['content-type'], 'application/problem+json');
    }
    assert.equal((await request(server.url, '/$subscriptions/pinged/$ping', { method: 'POST', body: '{}' })).status, 415);
    assert.equal(receiver.received.length, 0);
  });

  it('should answer 404 for an unknown subscription and 409 for a disabled one', async () => {
    const missing = await ping(server.url, 'nobody');
    assert.equal(missing.status, 404);
    assert.match(problemOf(missing).detail, /nobody/);
    const current = await request(server.url, '/$subscriptions/pinged');
    const body = JSON.stringify({ url: receiver.url, events: ['things.created'], status: 'disabled' });
    const disabled = await request(server.url, '/$subscriptions/pinged', { method: 'PUT', headers: { ...JSON_HEADERS, 'If-Match': current.headers.etag as string }, body });
    assert.equal(disabled.status, 200);
    const refused = await ping(server.url, 'pinged');
    assert.equal(refused.status, 409);
    assert.match(problemOf(refused).detail, /disabled/);
    assert.equal(receiver.received.length, 0);
  });

  it('should refuse a ping from a web page of another origin, or through a name that is not the server\'s', async () => {
    assert.equal((await subscribe(server.url, 'guarded', receiver.url, ['things.created'])).status, 201);
    assert.equal((await ping(server.url, 'guarded', '{}', { Origin: 'https://attacker.example' })).status, 403);
    assert.equal((await ping(server.url, 'guarded', '{}', { Host: 'attacker.example' })).status, 421);
    assert.equal(receiver.received.length, 0);
  });
});

describe('POST /$subscriptions/{id}/$ping with API keys', () => {
  const receiver = new Receiver({ clock: systemClock });
  before(() => receiver.start());
  after(() => receiver.stop());
  const server = serverForSuite({ memory: true, apiKeys: ['ping-test-key-0123456789'] });

  it('should ask for a key', async () => {
    const auth = { Authorization: 'Bearer ping-test-key-0123456789' };
    const body = JSON.stringify({ url: receiver.url, events: ['*'], secret: SECRET });
    const created = await request(server.url, '/$subscriptions/keyed', { method: 'PUT', headers: { ...JSON_HEADERS, ...auth, 'If-None-Match': '*' }, body });
    assert.equal(created.status, 201);
    assert.equal((await ping(server.url, 'keyed')).status, 401);
    assert.equal(receiver.received.length, 0);
    assert.equal((await ping(server.url, 'keyed', '{}', auth)).status, 200);
    assert.equal(receiver.received.length, 1);
  });
});

describe('POST /$subscriptions/{id}/$ping with outbox.refusePrivateAddresses', () => {
  const receiver = new Receiver({ clock: systemClock });
  before(() => receiver.start());
  after(() => receiver.stop());
  const server = serverForSuite({ memory: true, outbox: { refusePrivateAddresses: true } });

  it('should refuse a ping to loopback with "address not allowed", without contacting it', async () => {
    assert.equal((await subscribe(server.url, 'local', receiver.url, ['*'])).status, 201);
    const res = await ping(server.url, 'local');
    assert.equal(res.status, 200);
    const answer = res.json() as JsonObject;
    assert.deepEqual([answer['status'], answer['error']], [null, 'address not allowed']);
    assert.equal(typeof answer['durationMs'], 'number');
    assert.equal(receiver.received.length, 0);
  });
});
