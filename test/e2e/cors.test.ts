// CORS over real HTTP (CONVENTIONS.md#cors; Fetch Standard §3.2): a preflight is answered without
// credentials even with API keys on, with the methods of the route and the request fields that
// conditional requests need; an allowed origin can read ETag and the other fields a conditional client uses; an
// origin that is not listed gets no CORS field; by default only loopback origins are allowed; JSON clients
// without Origin see what they always saw. Writes refused by Origin, PNA and the Host check: web-pages.test.ts.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { start, type ResapiServer } from '../../lib/index.js';
import { silentLogger } from '../../lib/log.js';
import { create, request } from '../support/http.js';
import { serverForSuite } from '../support/server.js';

const APP = 'http://127.0.0.1:5173';
const KEY = 'cors-test-key';

function preflight(server: ResapiServer, path: string, origin: string, method = 'PUT'): ReturnType<typeof request> {
  return request(server.url, path, {
    method: 'OPTIONS',
    headers: { Origin: origin, 'Access-Control-Request-Method': method, 'Access-Control-Request-Headers': 'authorization,content-type,if-match' },
  });
}

describe('CORS with API keys on and one listed origin', () => {
  const server = serverForSuite({ memory: true, apiKeys: [KEY], cors: { origins: [APP] } });

  it('should answer a preflight without credentials: 204, the route methods and the allowed request fields', async () => {
    const res = await preflight(server, '/things/t1', APP);
    assert.equal(res.status, 204);
    assert.equal(res.headers['access-control-allow-origin'], APP);
    assert.equal(res.headers['access-control-allow-methods'], 'GET, HEAD, PUT, DELETE, OPTIONS');
    const allowed = String(res.headers['access-control-allow-headers']).split(', ');
    for (const name of ['If-Match', 'If-None-Match', 'Idempotency-Key', 'Prefer', 'Authorization', 'Content-Type']) assert.ok(allowed.includes(name), name);
    assert.equal(res.headers['access-control-max-age'], '600');
    assert.match(String(res.headers['vary']), /Origin/);
  });

  it('should still ask a plain OPTIONS (not a preflight) for credentials', async () => {
    assert.equal((await request(server.url, '/things/t1', { method: 'OPTIONS' })).status, 401);
  });

  it('should let the listed origin read ETag and the other fields of an authenticated response', async () => {
    const auth = { Authorization: `Bearer ${KEY}` };
    const made = await request(server.url, '/things/t1', { method: 'PUT', headers: { ...auth, Origin: APP, 'Content-Type': 'application/json', 'If-None-Match': '*' }, body: '{"n":1}' });
    assert.equal(made.status, 201);
    assert.equal(made.headers['access-control-allow-origin'], APP);
    const exposed = String(made.headers['access-control-expose-headers']).split(', ');
    for (const name of ['ETag', 'Location', 'Link', 'Preference-Applied', 'Idempotent-Replayed', 'Retry-After', 'X-Request-Id']) assert.ok(exposed.includes(name), name);
    const read = await request(server.url, '/things/t1', { headers: { ...auth, Origin: APP } });
    assert.equal(read.headers['access-control-allow-origin'], APP);
    assert.equal(read.headers['vary'], 'Accept, Authorization, Origin');
    assert.equal(read.headers['access-control-allow-credentials'], undefined, 'the key travels in Authorization, never in cookies');
  });

  it('should give an origin that is not listed no CORS field, on a preflight or a request', async () => {
    const other = 'http://127.0.0.1:9999';
    const res = await preflight(server, '/things/t1', other);
    assert.equal(res.status, 204);
    assert.equal(res.headers['access-control-allow-origin'], undefined);
    const read = await request(server.url, '/things/t1', { headers: { Authorization: `Bearer ${KEY}`, Origin: other } });
    assert.equal(read.headers['access-control-allow-origin'], undefined);
    assert.match(String(read.headers['vary']), /Origin/, 'the answer depends on Origin, so caches must key on it');
  });

  it('should answer a preflight to an unknown path with 404, not 401', async () => {
    assert.equal((await preflight(server, '/$nothing', APP)).status, 404);
  });
});

describe('CORS by default with API keys off', () => {
  const server = serverForSuite({ memory: true }, async (server) => {
    assert.equal((await create(server.url, '/things/t1', { n: 1 })).status, 201);
  });

  it('should let a loopback origin read, naming it, with Vary: Origin', async () => {
    const read = await request(server.url, '/things/t1', { headers: { Origin: 'http://localhost:4200' } });
    assert.equal(read.headers['access-control-allow-origin'], 'http://localhost:4200');
    assert.equal(read.headers['vary'], 'Accept, Origin');
  });

  it('should give any other origin no CORS field (web-pages.test.ts has the rest)', async () => {
    const read = await request(server.url, '/things/t1', { headers: { Origin: 'https://app.example.org' } });
    assert.equal(read.headers['access-control-allow-origin'], undefined);
    assert.equal(read.headers['access-control-expose-headers'], undefined);
  });

  it('should send a client that sends no Origin what it always got: no CORS field, no Vary: Origin', async () => {
    const read = await request(server.url, '/things/t1');
    assert.equal(read.headers['access-control-allow-origin'], undefined);
    assert.equal(read.headers['access-control-expose-headers'], undefined);
    assert.equal(read.headers['vary'], 'Accept');
  });

  it('should expose the fields of an error too, so a script can read a 412 problem', async () => {
    const stale = await request(server.url, '/things/t1', { method: 'PUT', headers: { Origin: 'http://localhost:4200', 'Content-Type': 'application/json', 'If-Match': '"stale"' }, body: '{}' });
    assert.equal(stale.status, 412);
    assert.equal(stale.headers['access-control-allow-origin'], 'http://localhost:4200');
  });
});

describe('CORS with "*" configured and API keys off', () => {
  const server = serverForSuite({ memory: true, cors: { origins: ['*'] } });

  it('should let any origin read and write, with "*" and no Vary: Origin', async () => {
    const made = await request(server.url, '/things/t2', { method: 'PUT', headers: { Origin: 'https://app.example.org', 'Content-Type': 'application/json', 'If-None-Match': '*' }, body: '{}' });
    assert.equal(made.status, 201);
    assert.equal(made.headers['access-control-allow-origin'], '*');
    const read = await request(server.url, '/things/t2', { headers: { Origin: 'https://app.example.org' } });
    assert.equal(read.headers['access-control-allow-origin'], '*');
    assert.equal(read.headers['vary'], 'Accept');
  });
});

describe('CORS configuration', () => {
  it('should refuse to start with "*" while API keys are on', async () => {
    await assert.rejects(start({ port: 0, memory: true, log: silentLogger, apiKeys: [KEY], cors: { origins: ['*'] } }), /cors\.origins must list origins/);
  });

  it('should refuse an origin that a browser would never send', async () => {
    await assert.rejects(start({ port: 0, memory: true, log: silentLogger, cors: { origins: ['http://localhost:5173/'] } }), /cors\.origins\[0\]/);
  });
});
