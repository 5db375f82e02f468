// End to end: what goes wrong says so in the log (CONVENTIONS.md#metrics): a handler that fails, an
// event that goes dead and a delivery that goes dead each write one line with their ids and why,
// never a secret or a body. (A subscription disabled: auto-disable.test.ts.)
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { webhookSignature } from '../../lib/protocol/signature.js';
import { OUTBOX_SPACE } from '../../lib/webhooks/events.js';
import { INBOX_SPACE } from '../../lib/webhooks/inbox.js';
import { create, JSON_HEADERS, request } from '../support/http.js';
import { capturingLogger, type LogLine } from '../support/log-lines.js';
import { Receiver } from '../support/receiver.js';
import { serverForSuite } from '../support/server.js';
import { recordWhere } from '../support/store.js';

const SECRET = 'failure-log-lines-secret';
const SUBSCRIBER_SECRET = 'failure-log-lines-subscriber-secret';
/** Written into every body here: no log line may carry it. */
const MARKER = 'body-marker-7c1f';

describe('log lines of failures', () => {
  const lines: LogLine[] = [];
  const log = capturingLogger(lines);
  const refusing = new Receiver();
  before(async () => {
    // Every delivery answered 400: dead at once (CONVENTIONS.md#delivery-retries).
    refusing.otherwise = () => 400;
    await refusing.start();
  });
  after(() => refusing.stop());
  const server = serverForSuite({
    memory: true,
    log,
    webhookSecrets: [SECRET],
    webhookHandlers: { '*': async () => Promise.reject(new Error('the handler failed on purpose')) },
    webhooks: { retry: { baseMs: 0, factor: 1, capMs: 0, attempts: 2 } },
  });

  it('should write one line for each failed handler run and one for the event gone dead', async () => {
    const body = JSON.stringify({ id: 'evt-log-1', event: 'order.created', data: { note: MARKER } });
    const res = await request(server.url, '/webhooks', { method: 'POST', headers: { ...JSON_HEADERS, 'X-Signature': webhookSignature(body, SECRET) }, body });
    assert.equal(res.status, 200, res.text);
    await recordWhere(server.store, INBOX_SPACE, 'evt-log-1', (record) => record.doc['status'] === 'dead');
    const failed = lines.filter((line) => line.message === 'webhook handlers: a handler failed');
    assert.deepEqual(failed.map((line) => [line.level, line.fields['id'], line.fields['event'], line.fields['attempt']]), [
      ['warn', 'evt-log-1', 'order.created', 1],
      ['warn', 'evt-log-1', 'order.created', 2],
    ]);
    assert.equal(failed[0]?.fields['error'], 'Error: the handler failed on purpose');
    const dead = lines.filter((line) => line.message === 'webhook handlers: the event is dead');
    assert.equal(dead.length, 1, JSON.stringify(dead));
    assert.equal(dead[0]?.level, 'error');
    assert.equal(dead[0]?.fields['id'], 'evt-log-1');
    assert.equal(dead[0]?.fields['event'], 'order.created');
    assert.equal(dead[0]?.fields['attempts'], 2);
    assert.equal(dead[0]?.fields['lastError'], 'Error: the handler failed on purpose');
  });

  it('should write one line for a delivery gone dead, with its ids', async () => {
    const url = refusing.url;
    const subscription = JSON.stringify({ url, events: ['things.*'], secret: SUBSCRIBER_SECRET });
    const put = await request(server.url, '/$subscriptions/refused', { method: 'PUT', headers: { ...JSON_HEADERS, 'If-None-Match': '*' }, body: subscription });
    assert.equal(put.status, 201);
    assert.equal((await create(server.url, '/things/t1', { note: MARKER })).status, 201);
    const delivery = server.store.scan(OUTBOX_SPACE)[0];
    assert.ok(delivery !== undefined);
    await recordWhere(server.store, OUTBOX_SPACE, delivery.id, (record) => record.doc['status'] === 'dead');
    const dead = lines.filter((line) => line.message === 'webhook deliveries: the delivery is dead');
    assert.equal(dead.length, 1, JSON.stringify(dead));
    assert.equal(dead[0]?.level, 'error');
    assert.deepEqual(dead[0]?.fields, {
      id: delivery.id,
      eventId: delivery.doc['eventId'],
      subscription: 'refused',
      event: 'things.created',
      attempts: 1,
      lastError: 'the receiver answered 400, which a retry would not change',
    });
  });

  it('should never write a secret or a body', () => {
    const text = JSON.stringify(lines);
    for (const secret of [SECRET, SUBSCRIBER_SECRET, MARKER]) assert.equal(text.includes(secret), false, `${secret} in ${text}`);
  });
});
