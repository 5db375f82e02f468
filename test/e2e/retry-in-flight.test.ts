// End to end, in process: `$retry` never starts an event or a delivery twice
// (CONVENTIONS.md#inbox-retries-and-dead-letters, CONVENTIONS.md#delivery-retries). It queues again
// only what waits for a retry (`failed`) or is `dead`; anything else, a handler still running or a
// request still open at the receiver included, is a 409 whose detail names the status, and the work
// in flight runs once. On a manual clock nobody advances: nothing times out, no retry comes due.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ResapiServer } from '../../lib/index.js';
import { PROBLEM_TYPE_PREFIX } from '../../lib/protocol/problem.js';
import { webhookSignature } from '../../lib/protocol/signature.js';
import { OUTBOX_SPACE } from '../../lib/webhooks/events.js';
import { INBOX_SPACE } from '../../lib/webhooks/inbox.js';
import { ManualClock } from '../support/clock.js';
import { Gate, holdingReceiver, letGo } from '../support/holding.js';
import { create, JSON_HEADERS, problemOf, request, type TestResponse } from '../support/http.js';
import { serverForSuite } from '../support/server.js';
import { recordWhere } from '../support/store.js';

const SECRET = 'retry-in-flight-secret';

function deliver(base: string, id: string, event: string): Promise<TestResponse> {
  const body = JSON.stringify({ id, event });
  return request(base, '/webhooks', { method: 'POST', headers: { ...JSON_HEADERS, 'X-Signature': webhookSignature(body, SECRET) }, body });
}

function retry(base: string, path: string): Promise<TestResponse> {
  return request(base, `${path}/$retry`, { method: 'PUT' });
}

/** Asserts a 409 conflict whose detail names `status`. */
function assertRefused(res: TestResponse, status: string): void {
  assert.equal(res.status, 409, res.text);
  assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
  const problem = problemOf(res);
  assert.equal(problem.type, `${PROBLEM_TYPE_PREFIX}conflict`);
  assert.match(problem.detail, new RegExp(`\\bis ${status}\\b`), problem.detail);
}

describe('PUT /$inbox/{id}/$retry while the event is in flight', () => {
  const gate = new Gate();
  let flakyRuns = 0;
  // Registered ahead of the server's: whatever the test did, the gate opens before it closes.
  after(() => gate.open());
  const server = serverForSuite({
    memory: true,
    clock: new ManualClock(Date.now()),
    webhookSecrets: [SECRET],
    webhookHandlers: {
      'hold.kind': () => gate.pass(),
      'flaky.kind': () => {
        flakyRuns++;
        if (flakyRuns === 1) throw new Error('the first run fails');
      },
    },
  });

  it('should answer 409 "running" while the handler runs, and run the handler once', async () => {
    assert.equal((await deliver(server.url, 'held-1', 'hold.kind')).status, 200);
    await gate.reached(1);
    for (let trial = 0; trial < 3; trial++) assertRefused(await retry(server.url, '/$inbox/held-1'), 'running');
    assert.equal(server.store.get(INBOX_SPACE, 'held-1')?.doc['status'], 'accepted', 'nothing was written');
    gate.open();
    const done = await recordWhere(server.store, INBOX_SPACE, 'held-1', (record) => record.doc['status'] === 'processed');
    assert.equal(done.doc['attempts'], 1);
    assert.equal(gate.arrived, 1, 'the handler ran once');
    assertRefused(await retry(server.url, '/$inbox/held-1'), 'processed');
    assert.equal(gate.arrived, 1);
  });

  it('should answer 409 "accepted" for an event that waits for its first run', async () => {
    assert.equal((await deliver(server.url, 'parked-1', 'nobody.kind')).status, 200);
    await recordWhere(server.store, INBOX_SPACE, 'parked-1', (record) => record.dueAt === undefined);
    assertRefused(await retry(server.url, '/$inbox/parked-1'), 'accepted');
  });

  it('should queue a failed event that waits for its next attempt (202) and run it now', async () => {
    assert.equal((await deliver(server.url, 'flaky-1', 'flaky.kind')).status, 200);
    const failed = await recordWhere(server.store, INBOX_SPACE, 'flaky-1', (record) => record.doc['status'] === 'failed');
    assert.ok((failed.dueAt ?? 0) > failed.modifiedAt, 'a later attempt is due');
    const retried = await retry(server.url, '/$inbox/flaky-1');
    assert.equal(retried.status, 202, retried.text);
    const done = await recordWhere(server.store, INBOX_SPACE, 'flaky-1', (record) => record.doc['status'] === 'processed');
    assert.equal(done.doc['attempts'], 2);
    assert.equal(flakyRuns, 2);
  });
});

describe('PUT /$outbox/{id}/$retry while the delivery is in flight', () => {
  const receiver = holdingReceiver();
  before(() => receiver.start());
  // The receiver first (after() hooks run in the order they are registered): a request it still
  // holds then ends, and the server's drain has nothing to wait for.
  after(() => receiver.stop(200));
  // One delivery of a subscription in flight at a time, so the next one waits, pending, behind it.
  const outbox = { workers: 4, inFlight: 1 };
  const server: ResapiServer = serverForSuite({ memory: true, clock: new ManualClock(Date.now()), outbox });

  it('should answer 409 "running" while the receiver holds the request, 409 "pending" for the next, and send each once', async () => {
    const subscribed = await request(server.url, '/$subscriptions/held', {
      method: 'PUT',
      headers: { ...JSON_HEADERS, 'If-None-Match': '*' },
      body: JSON.stringify({ url: receiver.url, events: ['things.*'], secret: SECRET }),
    });
    assert.equal(subscribed.status, 201);
    assert.equal((await create(server.url, '/things/t1', { n: 1 })).status, 201);
    await receiver.got(1);
    const [first] = server.store.scan(OUTBOX_SPACE);
    const path = `/$outbox/${first?.id ?? ''}`;
    for (let trial = 0; trial < 3; trial++) assertRefused(await retry(server.url, path), 'running');
    // outbox.inFlight 1: the next delivery to it waits, `pending`, behind the one held.
    assert.equal((await create(server.url, '/things/t2', { n: 2 })).status, 201);
    const second = server.store.scan(OUTBOX_SPACE).find((record) => record.id !== first?.id);
    assert.equal(second?.doc['status'], 'pending');
    assertRefused(await retry(server.url, `/$outbox/${second?.id ?? ''}`), 'pending');
    letGo(receiver);
    for (const id of [first?.id ?? '', second?.id ?? '']) {
      await recordWhere(server.store, OUTBOX_SPACE, id, (record) => record.doc['status'] === 'delivered');
    }
    assert.equal(receiver.received.length, 2, 'each delivery was sent once');
    assertRefused(await retry(server.url, path), 'delivered');
  });
});
