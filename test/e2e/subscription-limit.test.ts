// End to end: subscriptions are bounded (CONVENTIONS.md#subscriptions, CONVENTIONS.md#limits). Past
// `limits.maxSubscriptions` a create is refused with a 409 problem naming the limit and nothing is
// stored (neither the subscription nor its secret); a replace at the limit still works, a delete
// makes room again, and concurrent creates that would pass the limit are decided one at a time, so
// exactly as many succeed as there is room for.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { JsonObject } from '../../lib/json.js';
import { SECRET_SPACE, SUBSCRIPTION_SPACE } from '../../lib/webhooks/subscriptions.js';
import { JSON_HEADERS, problemOf, request, type TestResponse } from '../support/http.js';
import { serverForSuite } from '../support/server.js';

const SECRET = 'subscriber-secret-0123';
/** Nothing listens there; no delivery is written anyway, since nothing changes in `watched`. */
const URL_NOWHERE = 'http://127.0.0.1:9/hook';

function createSubscription(base: string, id: string, extra: JsonObject = {}): Promise<TestResponse> {
  const body = JSON.stringify({ url: URL_NOWHERE, events: ['watched.*'], secret: SECRET, ...extra });
  return request(base, `/$subscriptions/${id}`, { method: 'PUT', headers: { ...JSON_HEADERS, 'If-None-Match': '*' }, body });
}

describe('limits.maxSubscriptions', () => {
  const server = serverForSuite({ memory: true, limits: { maxSubscriptions: 3 } });

  it('should refuse a create past the limit with a 409 problem naming it, and store nothing', async () => {
    for (const id of ['s1', 's2', 's3']) assert.equal((await createSubscription(server.url, id)).status, 201);
    const refused = await createSubscription(server.url, 's4');
    assert.equal(refused.status, 409);
    assert.equal(refused.headers['content-type'], 'application/problem+json');
    assert.equal(problemOf(refused).type, 'tag:resapi,2026:problem/conflict');
    assert.match(problemOf(refused).detail, /limits\.maxSubscriptions/);
    assert.match(problemOf(refused).detail, /\b3\b/);
    assert.equal((await request(server.url, '/$subscriptions/s4')).status, 404);
    assert.equal(server.store.get(SECRET_SPACE, 's4'), undefined, 'no secret is kept for a refused create');
    assert.equal(server.store.count(SUBSCRIPTION_SPACE), 3);
  });

  it('should still replace a subscription at the limit, and create again once one is deleted', async () => {
    const current = await request(server.url, '/$subscriptions/s1');
    const body = JSON.stringify({ url: URL_NOWHERE, events: ['watched.created'] });
    const replaced = await request(server.url, '/$subscriptions/s1', { method: 'PUT', headers: { ...JSON_HEADERS, 'If-Match': current.headers.etag as string }, body });
    assert.equal(replaced.status, 200);
    assert.equal((await request(server.url, '/$subscriptions/s3', { method: 'DELETE' })).status, 204);
    assert.equal((await createSubscription(server.url, 's5')).status, 201);
    assert.equal((await createSubscription(server.url, 's6')).status, 409);
  });

  it('should let exactly as many concurrent creates through as there is room for', async () => {
    assert.equal((await request(server.url, '/$subscriptions/s5', { method: 'DELETE' })).status, 204);
    const ids = Array.from({ length: 8 }, (_, n) => `race-${n}`);
    const statuses = (await Promise.all(ids.map((id) => createSubscription(server.url, id)))).map((res) => res.status);
    assert.deepEqual(statuses.filter((status) => status === 201).length, 1, `statuses: ${statuses.join(', ')}`);
    assert.deepEqual(statuses.filter((status) => status === 409).length, 7, `statuses: ${statuses.join(', ')}`);
    assert.equal(server.store.count(SUBSCRIPTION_SPACE), 3);
    assert.equal(server.store.count(SECRET_SPACE), 3);
  });
});

describe('limits.maxSubscriptions by default', () => {
  const server = serverForSuite({ memory: true });

  it('should hold 100 subscriptions and refuse the 101st', async () => {
    for (let n = 0; n < 100; n++) assert.equal((await createSubscription(server.url, `d${n}`)).status, 201);
    const refused = await createSubscription(server.url, 'd100');
    assert.equal(refused.status, 409);
    assert.match(problemOf(refused).detail, /limits\.maxSubscriptions \(100\)/);
    assert.equal(server.store.count(SUBSCRIPTION_SPACE), 100);
  });
});
