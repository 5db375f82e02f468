// A web page the developer visits cannot use a local resapi (CONVENTIONS.md#cors, CONVENTIONS.md#host-check):
// - by default (no API keys, no cors.origins) only loopback origins may read responses, and an unsafe
//   method carrying any other Origin (`null` included) is refused with 403 before anything is done,
//   since a site's "simple" cross-site POST reaches the server without a preflight (Fetch §3.2.2);
// - a Private Network Access preflight is answered for allowed origins only;
// - listening on loopback, a request whose Host names none of the server's names is 421 (DNS
//   rebinding), except on the webhook receiver, which its signature authenticates.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { webhookSignature } from '../../lib/protocol/signature.js';
import { create, JSON_HEADERS, problemOf, request, type TestResponse } from '../support/http.js';
import { serverForSuite } from '../support/server.js';

const SITE = 'https://evil.example';
const LOOPBACK_ORIGINS = ['http://localhost:5173', 'http://app.localhost:3000', 'http://127.0.0.1:8080', 'http://[::1]:4200', 'https://localhost'];
/** Origins a page on the web can have, some dressed up as local ones. */
const WEB_ORIGINS = [SITE, 'http://evil.example:5173', 'http://localhost.evil.example', 'http://127.0.0.1.nip.io', 'http://192.168.1.20:3000'];
const SECRET = 'web-pages-test-secret';
const KEY = 'web-pages-test-key';

/** Every CORS response field a response carries (none means the browser keeps the response from the script). */
function corsFields(res: TestResponse): string[] {
  return Object.keys(res.headers).filter((name) => name.startsWith('access-control-'));
}

function preflight(base: string, path: string, origin: string, extra: Record<string, string> = {}): Promise<TestResponse> {
  return request(base, path, { method: 'OPTIONS', headers: { Origin: origin, 'Access-Control-Request-Method': 'PUT', ...extra } });
}

describe('a web page and a local server, by default (no API keys, no cors.origins)', () => {
  const server = serverForSuite({ memory: true, webhookSecrets: [SECRET] }, async (server) => {
    assert.equal((await create(server.url, '/things/kept', { n: 1 })).status, 201);
  });

  it('should let a page on a loopback origin, any port, read with its own origin named and Vary: Origin', async () => {
    for (const origin of LOOPBACK_ORIGINS) {
      const read = await request(server.url, '/things/kept', { headers: { Origin: origin } });
      assert.equal(read.status, 200, origin);
      assert.equal(read.headers['access-control-allow-origin'], origin, origin);
      assert.match(String(read.headers['access-control-expose-headers']), /ETag/, origin);
      assert.equal(read.headers['vary'], 'Accept, Origin', origin);
    }
  });

  it('should let a loopback origin write with every method, preflighted or not', async () => {
    const origin = 'http://localhost:5173';
    const pre = await preflight(server.url, '/things/local', origin);
    assert.equal(pre.status, 204);
    assert.equal(pre.headers['access-control-allow-origin'], origin);
    assert.equal(pre.headers['access-control-allow-methods'], 'GET, HEAD, PUT, DELETE, OPTIONS');
    const made = await request(server.url, '/things/local', { method: 'PUT', headers: { ...JSON_HEADERS, Origin: origin, 'If-None-Match': '*' }, body: '{"n":2}' });
    assert.equal(made.status, 201);
    assert.equal(made.headers['access-control-allow-origin'], origin);
    const posted = await request(server.url, '/things', { method: 'POST', headers: { ...JSON_HEADERS, Origin: origin }, body: '{"n":3}' });
    assert.equal(posted.status, 201);
    const deleted = await request(server.url, '/things/local', { method: 'DELETE', headers: { Origin: origin, 'If-Match': made.headers.etag as string } });
    assert.equal(deleted.status, 204);
  });

  it('should give a page on any other origin no CORS field at all, on a read or a preflight', async () => {
    for (const origin of [...WEB_ORIGINS, 'null']) {
      const read = await request(server.url, '/things/kept', { headers: { Origin: origin } });
      assert.equal(read.status, 200, origin);
      assert.deepEqual(corsFields(read), [], origin);
      assert.equal(read.headers['vary'], 'Accept, Origin', `${origin}: the answer depends on Origin`);
      const pre = await preflight(server.url, '/things/kept', origin);
      assert.deepEqual(corsFields(pre), [], origin);
    }
  });

  it('should refuse PUT, POST and DELETE from a web origin with 403 and store nothing', async () => {
    for (const origin of WEB_ORIGINS) {
      const put = await request(server.url, '/things/planted', { method: 'PUT', headers: { ...JSON_HEADERS, Origin: origin, 'If-None-Match': '*' }, body: '{"n":9}' });
      assert.equal(put.status, 403, origin);
      assert.equal(put.headers['content-type'], 'application/problem+json');
      assert.equal(problemOf(put).type, 'tag:resapi,2026:problem/origin-not-allowed');
      assert.match(problemOf(put).detail, /cors\.origins/, 'the detail says what to configure');
      assert.deepEqual(corsFields(put), [], origin);
      // A form or a fetch in no-cors mode sends a "simple" POST with no preflight at all.
      const simple = await request(server.url, '/things', { method: 'POST', headers: { 'Content-Type': 'text/plain', Origin: origin }, body: '{"n":9}' });
      assert.equal(simple.status, 403, origin);
      const post = await request(server.url, '/things', { method: 'POST', headers: { ...JSON_HEADERS, Origin: origin }, body: '{"n":9}' });
      assert.equal(post.status, 403, origin);
      const deleted = await request(server.url, '/things/kept', { method: 'DELETE', headers: { Origin: origin, 'If-Match': '*' } });
      assert.equal(deleted.status, 403, origin);
    }
    assert.equal((await request(server.url, '/things/planted')).status, 404, 'the PUT stored nothing');
    assert.equal((await request(server.url, '/things/kept')).status, 200, 'the DELETE deleted nothing');
    const page = (await request(server.url, '/things?$select=n')).json() as { value: { n: number }[] };
    assert.ok(page.value.every((item) => item.n !== 9), 'the POSTs created nothing');
  });

  it('should refuse a subscription PUT from a web origin, so a page cannot make the server send requests', async () => {
    const body = JSON.stringify({ url: 'http://169.254.169.254/latest', events: ['*'], secret: 'a-secret-of-some-length' });
    const put = await request(server.url, '/$subscriptions/probe', { method: 'PUT', headers: { ...JSON_HEADERS, Origin: SITE, 'If-None-Match': '*' }, body });
    assert.equal(put.status, 403);
    assert.equal((await request(server.url, '/$subscriptions/probe')).status, 404, 'no subscription was stored');
  });

  it('should refuse an unsafe method from the opaque origin "null" (a sandboxed frame, a file: page)', async () => {
    const put = await request(server.url, '/things/from-null', { method: 'PUT', headers: { ...JSON_HEADERS, Origin: 'null', 'If-None-Match': '*' }, body: '{}' });
    assert.equal(put.status, 403);
    assert.equal((await request(server.url, '/things/from-null')).status, 404);
  });

  it('should answer a Private Network Access preflight for a loopback origin only', async () => {
    const pna = { 'Access-Control-Request-Private-Network': 'true' };
    const allowed = await preflight(server.url, '/things/kept', 'http://localhost:5173', pna);
    assert.equal(allowed.status, 204);
    assert.equal(allowed.headers['access-control-allow-private-network'], 'true');
    assert.equal(allowed.headers['access-control-allow-origin'], 'http://localhost:5173');
    const plain = await preflight(server.url, '/things/kept', 'http://localhost:5173');
    assert.equal(plain.headers['access-control-allow-private-network'], undefined, 'only when asked');
    const refused = await preflight(server.url, '/things/kept', SITE, pna);
    assert.deepEqual(corsFields(refused), []);
  });

  it('should answer 421 to a Host that is not one of its names (DNS rebinding), and do nothing', async () => {
    const port = new URL(server.url).port;
    for (const host of ['evil.example', `evil.example:${port}`, `localhost.evil.example:${port}`, `127.0.0.1.nip.io:${port}`, '']) {
      const read = await request(server.url, '/things/kept', { headers: { Host: host } });
      assert.equal(read.status, 421, JSON.stringify(host));
      assert.equal(read.headers['content-type'], 'application/problem+json');
      assert.equal(problemOf(read).type, 'tag:resapi,2026:problem/misdirected-request');
      assert.match(problemOf(read).detail, /allowedHosts/, 'the detail says what to configure');
    }
    // Same-origin for the rebound name, so no Origin check would catch it: the Host check does.
    const put = await request(server.url, '/things/rebound', { method: 'PUT', headers: { ...JSON_HEADERS, Host: `evil.example:${port}`, 'If-None-Match': '*' }, body: '{}' });
    assert.equal(put.status, 421);
    assert.equal((await request(server.url, '/things/rebound')).status, 404, 'nothing was stored');
  });

  it('should answer a Host that names it: localhost, a *.localhost name, 127.0.0.1 or [::1], any port', async () => {
    const port = new URL(server.url).port;
    for (const host of [`localhost:${port}`, 'localhost', `app.localhost:${port}`, `LOCALHOST:${port}`, `127.0.0.1:${port}`, '[::1]:8080']) {
      assert.equal((await request(server.url, '/things/kept', { headers: { Host: host } })).status, 200, host);
    }
  });

  it('should still answer the webhook receiver whatever the Host, since a signature authenticates it', async () => {
    const body = JSON.stringify({ id: 'evt-tunnel', event: 'order.created' });
    const headers = { ...JSON_HEADERS, Host: 'abc123.tunnel.example', 'X-Signature': webhookSignature(body, SECRET) };
    const res = await request(server.url, '/webhooks', { method: 'POST', headers, body });
    assert.equal(res.status, 200);
    assert.equal((res.json() as { status: string }).status, 'accepted');
    assert.equal((await request(server.url, '/$inbox/evt-tunnel')).status, 200, 'the event was received');
  });
});

describe('a local server with allowedHosts and --base-url', () => {
  const server = serverForSuite({ memory: true, allowedHosts: ['resapi', 'MyApp.test'], baseUrl: 'https://api.example.test/v1' });

  it('should answer a Host named in allowedHosts (case-insensitively) or by the base URL, and 421 any other', async () => {
    const port = new URL(server.url).port;
    for (const host of ['resapi', `resapi:${port}`, 'myapp.test', 'api.example.test', 'api.example.test:443']) {
      assert.equal((await request(server.url, '/', { headers: { Host: host } })).status, 200, host);
    }
    for (const host of ['evil.example', 'resapi.evil.example', 'example.test']) {
      assert.equal((await request(server.url, '/', { headers: { Host: host } })).status, 421, host);
    }
  });
});

describe('a web page and a server with API keys and a listed origin', () => {
  const app = 'http://localhost:5173';
  const server = serverForSuite({ memory: true, apiKeys: [KEY], cors: { origins: [app] } });

  it('should refuse a write from an unlisted origin with 403 even when it carries a key, and store nothing', async () => {
    const auth = { Authorization: `Bearer ${KEY}` };
    for (const origin of ['http://localhost:5174', SITE]) {
      const put = await request(server.url, '/things/k1', { method: 'PUT', headers: { ...JSON_HEADERS, ...auth, Origin: origin, 'If-None-Match': '*' }, body: '{}' });
      assert.equal(put.status, 403, origin);
      assert.deepEqual(corsFields(put), [], origin);
    }
    assert.equal((await request(server.url, '/things/k1', { headers: auth })).status, 404);
    const listed = await request(server.url, '/things/k1', { method: 'PUT', headers: { ...JSON_HEADERS, ...auth, Origin: app, 'If-None-Match': '*' }, body: '{}' });
    assert.equal(listed.status, 201);
  });

  it('should answer a Private Network Access preflight for the listed origin only', async () => {
    const pna = { 'Access-Control-Request-Private-Network': 'true' };
    assert.equal((await preflight(server.url, '/things/k1', app, pna)).headers['access-control-allow-private-network'], 'true');
    assert.deepEqual(corsFields(await preflight(server.url, '/things/k1', 'http://localhost:5174', pna)), []);
  });
});
