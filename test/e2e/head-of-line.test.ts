// End to end, in process: no head-of-line blocking in the job queue (CONVENTIONS.md#webhook-handlers,
// CONVENTIONS.md#deliveries). One event kind holds at most a quarter of the handler workers (at least
// one), one subscription at most `outbox.inFlight` requests: with two kinds (two receivers) hung, a
// third is still served while they hang. The hung work waits at a gate (a held request) the test opens
// itself, on a manual clock nobody advances, so nothing times out: the test asserts who was served,
// never how fast.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { webhookSignature } from '../../lib/protocol/signature.js';
import { OUTBOX_SPACE } from '../../lib/webhooks/events.js';
import { INBOX_SPACE } from '../../lib/webhooks/inbox.js';
import { ManualClock } from '../support/clock.js';
import { eventually } from '../support/eventually.js';
import { Gate } from '../support/holding.js';
import { Receiver } from '../support/receiver.js';
import { create, JSON_HEADERS, request } from '../support/http.js';
import { serverForSuite } from '../support/server.js';

const SECRET = 'head-of-line-secret';
const WORKERS = 4;

async function deliver(base: string, id: string, event: string): Promise<void> {
  const body = JSON.stringify({ id, event });
  const res = await request(base, '/webhooks', { method: 'POST', headers: { ...JSON_HEADERS, 'X-Signature': webhookSignature(body, SECRET) }, body });
  assert.equal(res.status, 200, res.text);
}

async function statusOf(base: string, path: string): Promise<unknown> {
  const res = await request(base, path);
  return res.status === 200 ? (res.json() as { status?: unknown }).status : res.status;
}

describe('handlers: two kinds hung, a third still served', () => {
  const hungA = new Gate();
  const hungB = new Gate();
  const served: string[] = [];
  // Registered ahead of the server's: whatever the test did, the gates open before it closes.
  after(() => {
    hungA.open();
    hungB.open();
  });
  const server = serverForSuite({
    memory: true,
    clock: new ManualClock(Date.now()),
    webhookSecrets: [SECRET],
    webhooks: { workers: WORKERS },
    webhookHandlers: {
      'hung.a': () => hungA.pass(),
      'hung.b': () => hungB.pass(),
      'quick.c': (event) => void served.push(String(event['id'])),
    },
  });

  it('should run the third kind while four events of each hung kind wait, each hung kind on one worker of four', async () => {
    for (let n = 0; n < WORKERS; n++) await deliver(server.url, `a-${n}`, 'hung.a');
    for (let n = 0; n < WORKERS; n++) await deliver(server.url, `b-${n}`, 'hung.b');
    await hungA.reached(1);
    await hungB.reached(1);
    await deliver(server.url, 'c-0', 'quick.c');
    await eventually('the third kind processed while the others hang', async () => (await statusOf(server.url, '/$inbox/c-0')) === 'processed');
    assert.deepEqual(served, ['c-0']);
    assert.deepEqual([hungA.arrived, hungB.arrived], [1, 1], 'a kind holds a quarter of the workers while other kinds wait');
    const waiting = server.store.scan(INBOX_SPACE).filter((record) => record.doc['status'] === 'accepted').length;
    assert.equal(waiting, 2 * WORKERS, 'every hung event is still unprocessed');
    hungA.open();
    hungB.open();
    await eventually('every event processed', () => server.store.scan(INBOX_SPACE).every((record) => record.doc['status'] === 'processed'));
    assert.deepEqual([hungA.arrived, hungB.arrived], [WORKERS, WORKERS], 'each hung event ran once');
  });
});

describe('deliveries: two receivers hung, a third still served', () => {
  const IN_FLIGHT = 3;
  /** The requests each stuck receiver holds, answered when the test says. */
  const holding = [[], []] as ((status: number) => void)[][];
  const stuck = [new Receiver(), new Receiver()];
  const healthy = new Receiver();
  const receivers = [...stuck, healthy];
  before(async () => {
    for (const [index, receiver] of stuck.entries()) {
      receiver.otherwise = () => new Promise<number>((resolve) => holding[index]?.push(resolve));
    }
    for (const receiver of receivers) await receiver.start();
  });
  // Receivers first (after() hooks run in the order they are registered): what they hold then ends.
  after(async () => {
    for (const answer of holding.flat()) answer(200);
    for (const receiver of receivers) await receiver.stop(200);
  });
  const outbox = { workers: WORKERS, inFlight: IN_FLIGHT };
  const server = serverForSuite({ memory: true, clock: new ManualClock(Date.now()), outbox });

  it('should hold exactly outbox.inFlight requests to a hung receiver, and serve the healthy one at once', async () => {
    for (const [name, receiver] of [['stuck-1', stuck[0]], ['stuck-2', stuck[1]], ['healthy', healthy]] as const) {
      const body = JSON.stringify({ url: receiver?.url, events: ['hol.*'], secret: SECRET });
      const res = await request(server.url, `/$subscriptions/${name}`, { method: 'PUT', headers: { ...JSON_HEADERS, 'If-None-Match': '*' }, body });
      assert.equal(res.status, 201, res.text);
    }
    const items = 5;
    for (let n = 0; n < items; n++) assert.equal((await create(server.url, `/hol/i${n}`, { n })).status, 201);
    await healthy.got(items);
    for (const receiver of stuck) await receiver.got(IN_FLIGHT);
    assert.deepEqual(stuck.map((receiver) => receiver.received.length), [IN_FLIGHT, IN_FLIGHT], 'outbox.inFlight each');
    // Deliveries of one subscription start in the order they come due (they may arrive in another).
    const itemsAt = (receiver: Receiver | undefined): string[] => (receiver?.bodies() ?? []).map((body) => (body['data'] as { id: string }).id);
    for (const receiver of stuck) assert.deepEqual(itemsAt(receiver).sort(), ['i0', 'i1', 'i2']);
    // Only the hung subscriptions' deliveries: the healthy one's last outcome may still be being written.
    const pending = server.store
      .scan(OUTBOX_SPACE)
      .filter((record) => record.doc['subscription'] !== 'healthy' && record.doc['status'] === 'pending').length;
    assert.equal(pending, 2 * items, 'the hung subscriptions still have all of theirs to deliver');

    // One answer lets exactly one more go: the fourth arrives, and three are in flight again.
    holding[0]?.shift()?.(200);
    await stuck[0]?.got(IN_FLIGHT + 1);
    assert.equal(itemsAt(stuck[0])[IN_FLIGHT], 'i3');
    // A change delivered to the healthy one alone comes after the look that answer asked for.
    const body = JSON.stringify({ url: healthy.url, events: ['solo.*'], secret: SECRET });
    const solo = await request(server.url, '/$subscriptions/solo', { method: 'PUT', headers: { ...JSON_HEADERS, 'If-None-Match': '*' }, body });
    assert.equal(solo.status, 201, solo.text);
    assert.equal((await create(server.url, '/solo/s1', {})).status, 201);
    await healthy.got(items + 1);
    assert.deepEqual(stuck.map((receiver) => receiver.received.length), [IN_FLIGHT + 1, IN_FLIGHT], 'one more for the one answer');

    for (const answer of holding.flat()) answer(200);
    for (const [index, receiver] of stuck.entries()) {
      holding[index]?.splice(0);
      receiver.otherwise = () => 200;
    }
    await eventually('every delivery delivered', () => server.store.scan(OUTBOX_SPACE).every((record) => record.doc['status'] === 'delivered'));
    assert.deepEqual(stuck.map((receiver) => receiver.received.length), [items, items], 'each sent once');
  });
});
