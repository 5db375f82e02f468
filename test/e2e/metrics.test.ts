// GET /$metrics (CONVENTIONS.md#metrics; README, Performance) from a real server on a data dir, read by a strict
// reader of the Prometheus text format 0.0.4: requests by route, method and status with their
// latency, group commits and their fdatasync time, received events and deliveries by status (a dead
// one of each, made here), live records and bytes on disk; with --memory, no bytes and no syncs.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ResapiServer } from '../../lib/index.js';
import { webhookSignature } from '../../lib/protocol/signature.js';
import { INBOX_SPACE } from '../../lib/webhooks/inbox.js';
import { OUTBOX_SPACE } from '../../lib/webhooks/events.js';
import { create, JSON_HEADERS, request } from '../support/http.js';
import { parseExposition, sampleValue, type MetricFamily } from '../support/prometheus.js';
import { Receiver } from '../support/receiver.js';
import { serverForSuite, withServer } from '../support/server.js';
import { recordWhere } from '../support/store.js';
import { tempDirsForSuite } from '../support/temp-dir.js';

const SECRET = 'metrics-test-secret';

async function scrape(server: ResapiServer): Promise<Map<string, MetricFamily>> {
  const res = await request(server.url, '/$metrics');
  assert.equal(res.status, 200);
  assert.equal(res.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
  assert.equal(res.headers['cache-control'], 'no-store');
  return parseExposition(res.text);
}

describe('GET /$metrics', () => {
  const refusing = new Receiver();
  before(async () => {
    // A receiver that refuses every delivery: 400 is dead at once (CONVENTIONS.md#delivery-retries).
    refusing.otherwise = () => 400;
    await refusing.start();
  });
  const server = serverForSuite(() => ({
    dataDir: dataDir(),
    webhookSecrets: [SECRET],
    webhookHandlers: { '*': async () => Promise.reject(new Error('this handler always fails')) },
    webhooks: { retry: { baseMs: 1, factor: 1, capMs: 1, attempts: 1 } },
  }));
  // Made in the server's before(); registered after it, so removed once the server has closed.
  const dataDir = tempDirsForSuite('metrics');
  after(() => refusing.stop());

  it('should count requests by route, method and status, with a latency histogram per route', async () => {
    assert.equal((await create(server.url, '/things/a', { id: 'a', n: 1 })).status, 201);
    assert.equal((await request(server.url, '/things/a')).status, 200);
    assert.equal((await request(server.url, '/things/a')).status, 200);
    assert.equal((await request(server.url, '/things/nope')).status, 404);
    assert.equal((await request(server.url, '/things/a', { method: 'PUT', headers: { ...JSON_HEADERS, 'If-Match': '"stale"' }, body: '{"id":"a"}' })).status, 412);
    assert.equal((await request(server.url, '/things/a', { method: 'PROPFIND' })).status, 501);
    const families = await scrape(server);
    const count = (labels: Record<string, string>): number | undefined => sampleValue(families, 'resapi_http_requests_total', 'resapi_http_requests_total', labels);
    assert.equal(count({ route: 'item', method: 'GET', status: '200' }), 2);
    assert.equal(count({ route: 'item', method: 'GET', status: '404' }), 1);
    assert.equal(count({ route: 'item', method: 'PUT', status: '201' }), 1);
    assert.equal(count({ route: 'item', method: 'PUT', status: '412' }), 1);
    assert.equal(count({ route: 'none', method: 'other', status: '501' }), 1);
    assert.equal(sampleValue(families, 'resapi_http_request_duration_seconds', 'resapi_http_request_duration_seconds_count', { route: 'item' }), 5);
  });

  it('should report group commits, records and bytes on disk', async () => {
    const families = await scrape(server);
    const groups = sampleValue(families, 'resapi_store_group_batches', 'resapi_store_group_batches_count') ?? 0;
    assert.ok(groups >= 1, `${groups} group commits`);
    assert.equal(sampleValue(families, 'resapi_store_sync_duration_seconds', 'resapi_store_sync_duration_seconds_count'), groups);
    assert.ok((sampleValue(families, 'resapi_store_written_bytes_total', 'resapi_store_written_bytes_total') ?? 0) > 0);
    assert.ok((sampleValue(families, 'resapi_store_records', 'resapi_store_records') ?? 0) >= 1);
    assert.ok((sampleValue(families, 'resapi_store_disk_bytes', 'resapi_store_disk_bytes') ?? 0) > 0);
    assert.ok((sampleValue(families, 'resapi_process_resident_memory_bytes', 'resapi_process_resident_memory_bytes') ?? 0) > 0);
  });

  it('should count received events and deliveries by status, the dead ones included', async () => {
    const body = JSON.stringify({ id: 'evt-metrics-1', event: 'demo.happened' });
    const accepted = await request(server.url, '/webhooks', { method: 'POST', headers: { ...JSON_HEADERS, 'X-Signature': webhookSignature(body, SECRET) }, body });
    assert.equal(accepted.status, 200);
    await recordWhere(server.store, INBOX_SPACE, 'evt-metrics-1', (record) => record.doc['status'] === 'dead');
    const subscription = { url: refusing.url, events: ['things.*'], secret: 's' };
    assert.equal((await request(server.url, '/$subscriptions/refused', { method: 'PUT', headers: { ...JSON_HEADERS, 'If-None-Match': '*' }, body: JSON.stringify(subscription) })).status, 201);
    assert.equal((await create(server.url, '/things/b', { id: 'b' })).status, 201);
    const deliveryId = server.store.scan(OUTBOX_SPACE)[0]?.id as string;
    await recordWhere(server.store, OUTBOX_SPACE, deliveryId, (record) => record.doc['status'] === 'dead');
    const families = await scrape(server);
    assert.equal(sampleValue(families, 'resapi_inbox_events', 'resapi_inbox_events', { status: 'dead' }), 1);
    assert.equal(sampleValue(families, 'resapi_inbox_events', 'resapi_inbox_events', { status: 'processed' }), 0);
    assert.equal(sampleValue(families, 'resapi_outbox_deliveries', 'resapi_outbox_deliveries', { status: 'dead' }), 1);
    assert.equal(sampleValue(families, 'resapi_outbox_deliveries', 'resapi_outbox_deliveries', { status: 'pending' }), 0);
  });
});

describe('GET /$metrics: dead is dead now', () => {
  const receiver = new Receiver();
  before(async () => {
    // 400 the first time (dead at once), 200 after.
    receiver.answers = [400];
    await receiver.start();
  });
  after(() => receiver.stop());
  const server = serverForSuite({ memory: true });

  it('should count the deliveries dead now (a $retry takes one out; the dead-letter line stays), and each cause of disabling from 0', async () => {
    const subscription = { url: receiver.url, events: ['things.*'], secret: 's' };
    assert.equal((await request(server.url, '/$subscriptions/once-refused', { method: 'PUT', headers: { ...JSON_HEADERS, 'If-None-Match': '*' }, body: JSON.stringify(subscription) })).status, 201);
    assert.equal((await create(server.url, '/things/c', { id: 'c' })).status, 201);
    const deliveryId = server.store.scan(OUTBOX_SPACE)[0]?.id as string;
    await recordWhere(server.store, OUTBOX_SPACE, deliveryId, (record) => record.doc['status'] === 'dead');
    const dead = (families: Map<string, MetricFamily>): number | undefined => sampleValue(families, 'resapi_outbox_deliveries', 'resapi_outbox_deliveries', { status: 'dead' });
    const before = await scrape(server);
    assert.equal(dead(before), 1);
    for (const cause of ['gone', 'failing']) assert.equal(sampleValue(before, 'resapi_subscriptions_disabled_total', 'resapi_subscriptions_disabled_total', { cause }), 0);
    assert.equal((await request(server.url, `/$outbox/${deliveryId}/$retry`, { method: 'PUT' })).status, 202);
    await recordWhere(server.store, OUTBOX_SPACE, deliveryId, (record) => record.doc['status'] === 'delivered');
    assert.equal(dead(await scrape(server)), 0);
    assert.equal((await server.store.readSideLog('outbox-dead-letter')).length, 1);
  });
});

describe('GET /$metrics with --memory', () => {
  it('should report no bytes on disk and no group commits', async () => {
    await withServer({ memory: true }, async (server) => {
      assert.equal((await create(server.url, '/things/a', { id: 'a' })).status, 201);
      const families = await scrape(server);
      assert.equal(sampleValue(families, 'resapi_store_disk_bytes', 'resapi_store_disk_bytes'), 0);
      assert.equal(families.get('resapi_store_sync_duration_seconds')?.samples.length, 0);
    });
  });
});
