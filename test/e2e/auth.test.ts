// End to end: optional API keys (CONVENTIONS.md#api-keys), and answers to a keyed request cached
// only privately, with Vary: Authorization (CONVENTIONS.md#cache-control, CONVENTIONS.md#vary).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { binaryForFile } from '../support/binary.js';
import { JSON_HEADERS, request } from '../support/http.js';

const KEY = 'test-key-aaaaaaaaaaaaaaaaaaaa';
const ROTATED = 'test-key-bbbbbbbbbbbbbbbbbbbb';
const server = binaryForFile(['--memory', '--seed', 'data/sample', '--config', 'data/config.json'], { RESAPI_API_KEYS: `${KEY}, ${ROTATED}` });

describe('API keys', () => {
  it('should answer 401 with WWW-Authenticate: Bearer without a key, with a wrong key, or with two', async () => {
    for (const authorization of [undefined, 'Bearer wrong', `Basic ${KEY}`, [`Bearer ${KEY}`, `Bearer ${KEY}`]]) {
      const headers: Record<string, string | string[]> = authorization === undefined ? {} : { Authorization: authorization };
      const res = await request(server.url, '/products/p-100', { headers });
      assert.equal(res.status, 401, String(authorization));
      assert.equal(res.headers['www-authenticate'], 'Bearer');
      assert.equal(res.headers['content-type'], 'application/problem+json');
      assert.equal(res.headers.vary, 'Authorization');
    }
  });

  it('should accept every configured key, with a case-insensitive scheme', async () => {
    assert.equal((await request(server.url, '/products/p-100', { headers: { Authorization: `Bearer ${KEY}` } })).status, 200);
    assert.equal((await request(server.url, '/products/p-100', { headers: { Authorization: `bearer ${ROTATED}` } })).status, 200);
  });

  it('should make authenticated responses private with Vary: Authorization', async () => {
    const item = await request(server.url, '/currencies/EUR', { headers: { Authorization: `Bearer ${KEY}` } });
    assert.equal(item.headers['cache-control'], 'private, max-age=86400');
    assert.equal(item.headers.vary, 'Accept, Authorization');
    const list = await request(server.url, '/products', { headers: { Authorization: `Bearer ${KEY}` } });
    assert.equal(list.headers['cache-control'], 'private, max-age=0, must-revalidate');
    assert.equal(list.headers.vary, 'Accept, Prefer, Authorization');
  });

  it('should exempt the webhook path, which has its own signature', async () => {
    const res = await request(server.url, '/webhooks', { method: 'POST', headers: JSON_HEADERS, body: '{"id":"e1","event":"x"}' });
    assert.notEqual(res.status, 401);
  });

  it('should scope idempotency keys to the API key', async () => {
    const send = (apiKey: string) =>
      request(server.url, '/scoped', { method: 'POST', headers: { ...JSON_HEADERS, Authorization: `Bearer ${apiKey}`, 'Idempotency-Key': 'same' }, body: '{}' });
    const first = await send(KEY);
    const second = await send(ROTATED);
    assert.equal(second.headers['idempotent-replayed'], undefined);
    assert.notEqual(second.headers.location, first.headers.location);
  });
});
