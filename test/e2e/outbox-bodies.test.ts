// End to end: an event's body is stored once, however many deliveries it has
// (CONVENTIONS.md#transactional-outbox). With 100 subscriptions (the default limit) a 50 KB write
// adds less than three times the bytes on disk of the same write that nobody subscribed to, as
// /$metrics reports them (`resapi_store_disk_bytes`: a size, not a timing). The deliveries of one
// event all send its one body; it is kept while one of them may still be sent (a dead one can be
// retried) and dropped once every one is delivered. A data dir written when each delivery kept its
// own copy of the body still opens and delivers those copies.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { JsonObject } from '../../lib/json.js';
import { silentLogger } from '../../lib/log.js';
import { openFileStore } from '../../lib/store/file.js';
import type { Mutation } from '../../lib/store/types.js';
import { OUTBOX_BODY_SPACE, OUTBOX_SPACE } from '../../lib/webhooks/events.js';
import { SECRET_SPACE, SUBSCRIPTION_SPACE } from '../../lib/webhooks/subscriptions.js';
import { FIELDS_SPACE } from '../../lib/writes/field-registry.js';
import { eventually } from '../support/eventually.js';
import { create, JSON_HEADERS, request } from '../support/http.js';
import { parseExposition, sampleValue } from '../support/prometheus.js';
import { Receiver } from '../support/receiver.js';
import { withServer } from '../support/server.js';
import { recordWhere } from '../support/store.js';
import { withTempDir } from '../support/temp-dir.js';

const SECRET = 'subscriber-secret-0123';

/** The bodies a receiver got, as text, in order. */
function texts(receiver: Receiver): string[] {
  return receiver.received.map((request) => request.body.toString('utf8'));
}

function subscribe(base: string, id: string, url: string, events: string[]): ReturnType<typeof request> {
  const body = JSON.stringify({ url, events, secret: SECRET });
  return request(base, `/$subscriptions/${id}`, { method: 'PUT', headers: { ...JSON_HEADERS, 'If-None-Match': '*' }, body });
}

async function diskBytes(base: string): Promise<number> {
  const families = parseExposition((await request(base, '/$metrics')).text);
  const bytes = sampleValue(families, 'resapi_store_disk_bytes', 'resapi_store_disk_bytes');
  assert.ok(bytes !== undefined && bytes > 0, 'the file store reports its bytes on disk');
  return bytes;
}

/** About 50 KB of JSON: 500 properties of 90 characters each. */
function fiftyKilobytes(): JsonObject {
  const doc: JsonObject = {};
  for (let n = 0; n < 500; n++) doc[`field${n}`] = `value ${n} `.padEnd(90, 'abcdefghij');
  return doc;
}

describe('an event body stored once', () => {
  it('should write less than 3× the bytes of an unsubscribed 50 KB write with 100 subscriptions', async () => {
    await withTempDir('outbox-bodies', async (dir) => {
      const receiver = new Receiver();
      await receiver.start();
      // Every delivery is held: no outcome is written while the bytes are measured.
      receiver.answers = Array.from({ length: 100 }, () => 'hold' as const);
      try {
        await withServer({ dataDir: dir, outbox: { timeoutMs: 600_000 } }, async (server) => {
          for (let n = 0; n < 100; n++) assert.equal((await subscribe(server.url, `s${n}`, receiver.url, ['watched.*'])).status, 201);
          const doc = fiftyKilobytes();
          assert.ok(JSON.stringify(doc).length >= 50_000);
          const start = await diskBytes(server.url);
          assert.equal((await create(server.url, '/plain/a', doc)).status, 201);
          const plain = (await diskBytes(server.url)) - start;
          assert.equal((await create(server.url, '/watched/a', doc)).status, 201);
          const watched = (await diskBytes(server.url)) - start - plain;
          assert.equal(server.store.count(OUTBOX_SPACE), 100, 'one delivery per subscription');
          assert.ok(watched < 3 * plain, `the subscribed write took ${watched} bytes, the unsubscribed one ${plain}`);
          await eventually('a delivery to reach the receiver', () => texts(receiver).length > 0);
          const sent = JSON.parse(texts(receiver)[0] as string) as { data: { resource: JsonObject } };
          assert.deepEqual(sent.data.resource, { id: 'a', ...doc });
        });
      } finally {
        await receiver.stop();
      }
    });
  });

  it('should send one body to every subscription, keep it while a delivery is dead, and drop it once all are delivered', async () => {
    const receiver = new Receiver();
    await receiver.start();
    try {
      await withServer({ memory: true }, async (server) => {
        for (const id of ['s1', 's2', 's3']) assert.equal((await subscribe(server.url, id, receiver.url, ['shared.*'])).status, 201);
        // Whichever delivery arrives second is refused (4xx: dead at once); the others are delivered.
        receiver.answers = [200, 400, 200];
        const before = new Set(server.store.collections());
        assert.equal((await create(server.url, '/shared/one', { note: 'once' })).status, 201);
        const deliveries = server.store.scan(OUTBOX_SPACE);
        assert.equal(deliveries.length, 3);
        const eventId = deliveries[0]?.doc['eventId'];
        assert.ok(deliveries.every((delivery) => delivery.doc['eventId'] === eventId), 'one event');
        const spaces = server.store.collections().filter((space) => !before.has(space) && ![OUTBOX_SPACE, FIELDS_SPACE, 'shared'].includes(space));
        const holding = (): number => spaces.reduce((total, space) => total + server.store.count(space), 0);
        assert.equal(holding(), 1, `one record holds the body, whatever the deliveries (${spaces.join(', ')})`);
        for (const delivery of deliveries) {
          await recordWhere(server.store, OUTBOX_SPACE, delivery.id, (record) => ['delivered', 'dead'].includes(String(record.doc['status'])));
        }
        assert.equal(new Set(texts(receiver)).size, 1, 'every delivery sent the same bytes');
        assert.equal(holding(), 1, 'the body is kept while a dead delivery may be retried');
        const dead = server.store.scan(OUTBOX_SPACE).find((record) => record.doc['status'] === 'dead');
        assert.ok(dead !== undefined);
        const [line] = await server.store.readSideLog('outbox-dead-letter');
        assert.equal(line?.['body'], texts(receiver)[0], 'the dead letter carries the body');
        assert.equal((await request(server.url, `/$outbox/${dead.id}/$retry`, { method: 'PUT' })).status, 202);
        await recordWhere(server.store, OUTBOX_SPACE, dead.id, (record) => record.doc['status'] === 'delivered');
        await eventually('the body to be dropped once every delivery is delivered', () => holding() === 0);
        assert.equal(texts(receiver).length, 4);
        assert.equal(new Set(texts(receiver)).size, 1);
      });
    } finally {
      await receiver.stop();
    }
  });
});

/** A delivery as the outbox wrote it when each kept its own body: its item, and its body under its own id. */
function formerDelivery(id: string, eventId: string, item: JsonObject, body: string, now: number, due: boolean): Mutation[] {
  const expiresAt = now + 30 * 86_400_000;
  const doc = { id, eventId, subscription: 'former', event: 'things.created', createdAt: new Date(now).toISOString(), ...item };
  return [
    { kind: 'put', collection: OUTBOX_SPACE, id, doc, expiresAt, ...(due ? { dueAt: now } : {}) },
    { kind: 'put', collection: OUTBOX_BODY_SPACE, id, doc: { body }, expiresAt },
  ];
}

describe('a data dir written when each delivery kept its own body', () => {
  it('should open, send each delivery its own stored bytes, keep a dead one\'s for $retry, and drop them once delivered', async () => {
    await withTempDir('outbox-former', async (dir) => {
      const receiver = new Receiver();
      await receiver.start();
      try {
        const now = Date.now();
        const waitingBody = JSON.stringify({ id: 'e-waiting', event: 'things.created', data: { n: 1 } });
        const deadBody = JSON.stringify({ id: 'e-dead', event: 'things.created', data: { n: 2 } });
        const opened = await openFileStore({ dir, log: silentLogger, progress: () => {} });
        assert.ok(opened.ok);
        const written = await opened.store.commit({
          mutations: [
            { kind: 'put', collection: SUBSCRIPTION_SPACE, id: 'former', doc: { id: 'former', url: receiver.url, events: ['*'], status: 'active' } },
            { kind: 'put', collection: SECRET_SPACE, id: 'former', doc: { secret: SECRET } },
            ...formerDelivery('d-waiting', 'e-waiting', { status: 'pending', attempts: 0 }, waitingBody, now, true),
            ...formerDelivery('d-dead', 'e-dead', { status: 'dead', attempts: 1, lastStatus: 400 }, deadBody, now, false),
          ],
        });
        assert.ok(written.ok);
        await opened.store.close();

        await withServer({ dataDir: dir }, async (server) => {
          await recordWhere(server.store, OUTBOX_SPACE, 'd-waiting', (record) => record.doc['status'] === 'delivered');
          assert.deepEqual(texts(receiver), [waitingBody]);
          await eventually('the delivered copy to be dropped', () => server.store.get(OUTBOX_BODY_SPACE, 'd-waiting') === undefined);
          assert.equal(server.store.get(OUTBOX_BODY_SPACE, 'd-dead')?.doc['body'], deadBody, 'a dead delivery keeps its copy');
          assert.equal((await request(server.url, '/$outbox/d-dead/$retry', { method: 'PUT' })).status, 202);
          await recordWhere(server.store, OUTBOX_SPACE, 'd-dead', (record) => record.doc['status'] === 'delivered');
          assert.deepEqual(texts(receiver), [waitingBody, deadBody]);
          await eventually('every copy to be dropped', () => server.store.count(OUTBOX_BODY_SPACE) === 0);
        });
      } finally {
        await receiver.stop();
      }
    });
  });
});
