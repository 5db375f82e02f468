// End to end: the real binary, one resource at a time: read, create, replace, delete and undo the
// delete (CONVENTIONS.md#routes, CONVENTIONS.md#items, CONVENTIONS.md#conditional-requests-and-caching).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { binaryForFile } from '../support/binary.js';
import { create, JSON_HEADERS, problemOf, request } from '../support/http.js';

const server = binaryForFile(['--memory', '--seed', 'data/sample', '--config', 'data/config.json']);

describe('GET /{collection}/{id}', () => {
  it('should answer 200 with JSON, a strong ETag and Last-Modified', async () => {
    const res = await request(server.url, '/products/p-100');
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-type'], 'application/json');
    assert.match(res.headers.etag ?? '', /^"[A-Za-z0-9_-]{22}"$/);
    assert.ok(!Number.isNaN(Date.parse(res.headers['last-modified'] ?? '')));
    assert.equal((res.json() as { id: string }).id, 'p-100');
    assert.equal(res.headers['cache-control'], 'max-age=0, must-revalidate');
    assert.equal(res.headers.vary, 'Accept');
    assert.equal(res.headers['x-request-id'], undefined, 'a success carries no request id unless the client sent one');
  });

  it("should echo the client's X-Request-Id on a success, and name its own on an error", async () => {
    const traced = await request(server.url, '/products/p-100', { headers: { 'X-Request-Id': 'trace-42' } });
    assert.equal(traced.headers['x-request-id'], 'trace-42');
    const missing = await request(server.url, '/products/no-such-item');
    assert.equal(missing.status, 404);
    assert.match(String(missing.headers['x-request-id']), /^[0-9a-f]{12}-[0-9a-z]+$/);
    // Each request has its own id, whether or not the ones between named their own.
    await request(server.url, '/products/p-100', { headers: { 'X-Request-Id': 'trace-43' } });
    const again = await request(server.url, '/products/no-such-item');
    assert.match(String(again.headers['x-request-id']), /^[0-9a-f]{12}-[0-9a-z]+$/);
    assert.notEqual(again.headers['x-request-id'], missing.headers['x-request-id']);
  });

  it('should answer 304 with no body and the validators when If-None-Match matches', async () => {
    const first = await request(server.url, '/products/p-101');
    const res = await request(server.url, '/products/p-101', { headers: { 'If-None-Match': `"nope", ${first.headers.etag}` } });
    assert.equal(res.status, 304);
    assert.equal(res.body.length, 0);
    assert.equal(res.headers.etag, first.headers.etag);
    assert.equal(res.headers['cache-control'], first.headers['cache-control']);
    assert.equal(res.headers.vary, 'Accept');
    assert.equal(res.headers['last-modified'], first.headers['last-modified']);
    assert.ok(res.headers.date);
  });

  it('should match a weak If-None-Match against the strong ETag (weak comparison, RFC 9110 §13.1.2)', async () => {
    const first = await request(server.url, '/products/p-101');
    const res = await request(server.url, '/products/p-101', { headers: { 'If-None-Match': `W/${first.headers.etag}` } });
    assert.equal(res.status, 304);
  });

  it('should answer 200 when If-None-Match does not match', async () => {
    const res = await request(server.url, '/products/p-101', { headers: { 'If-None-Match': '"stale"' } });
    assert.equal(res.status, 200);
  });

  it('should honour If-Modified-Since only when If-None-Match is absent', async () => {
    const first = await request(server.url, '/products/p-102');
    const modified = first.headers['last-modified'] as string;
    const ims = await request(server.url, '/products/p-102', { headers: { 'If-Modified-Since': modified } });
    assert.equal(ims.status, 304);
    const earlier = new Date(Date.parse(modified) - 1000).toUTCString();
    assert.equal((await request(server.url, '/products/p-102', { headers: { 'If-Modified-Since': earlier } })).status, 200);
    const both = await request(server.url, '/products/p-102', { headers: { 'If-Modified-Since': modified, 'If-None-Match': '"other"' } });
    assert.equal(both.status, 200);
  });

  it('should ignore If-Modified-Since sent twice (RFC 9110 §13.1.3)', async () => {
    const first = await request(server.url, '/products/p-102');
    const date = first.headers['last-modified'] as string;
    const res = await request(server.url, '/products/p-102', { headers: { 'If-Modified-Since': [date, date] } });
    assert.equal(res.status, 200);
  });

  it('should answer HEAD with the GET headers and no body', async () => {
    const get = await request(server.url, '/products/p-103');
    const head = await request(server.url, '/products/p-103', { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.body.length, 0);
    assert.equal(head.headers.etag, get.headers.etag);
    assert.equal(head.headers['content-length'], String(get.body.length));
  });

  it('should answer 404 as a problem for a missing resource', async () => {
    const res = await request(server.url, '/products/none');
    assert.equal(res.status, 404);
    assert.equal(res.headers['content-type'], 'application/problem+json');
    assert.equal(res.headers['cache-control'], 'no-store');
    const p = problemOf(res);
    assert.equal(p.status, 404);
    assert.equal(p.type, 'tag:resapi,2026:problem/not-found');
  });

  it('should serve reference data with its configured long max-age', async () => {
    const res = await request(server.url, '/currencies/EUR');
    assert.equal(res.headers['cache-control'], 'public, max-age=86400');
  });

  it('should answer 406 when Accept allows neither JSON nor HTML, and JSON for */* and q-values', async () => {
    assert.equal((await request(server.url, '/products/p-100', { headers: { Accept: 'text/csv' } })).status, 406);
    assert.equal((await request(server.url, '/products/p-100', { headers: { Accept: 'application/json;q=0, text/html;q=0' } })).status, 406);
    const preferred = await request(server.url, '/products/p-100', { headers: { Accept: 'text/csv, */*;q=0.1' } });
    assert.equal(preferred.status, 200);
    assert.equal(preferred.headers['content-type'], 'application/json', 'JSON is the default among what */* allows');
    assert.equal((await request(server.url, '/products/p-100', { headers: { Accept: 'application/*' } })).status, 200);
  });
});

describe('PUT /{collection}/{id}', () => {
  it('should create with If-None-Match: * → 201, Location, Content-Location, the stored body and its ETag', async () => {
    const res = await create(server.url, '/things/a1', { name: 'first' });
    assert.equal(res.status, 201);
    assert.equal(res.headers.location, '/things/a1');
    assert.equal(res.headers['content-location'], '/things/a1');
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.deepEqual(res.json(), { id: 'a1', name: 'first' });
    const get = await request(server.url, '/things/a1');
    assert.equal(get.headers.etag, res.headers.etag);
    assert.equal(get.text, res.text);
  });

  it('should answer 412 to If-None-Match: * when the resource exists', async () => {
    await create(server.url, '/things/a2', { n: 1 });
    const res = await create(server.url, '/things/a2', { n: 2 });
    assert.equal(res.status, 412);
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.equal((await request(server.url, '/things/a2')).json() instanceof Object, true);
    assert.deepEqual((await request(server.url, '/things/a2')).json(), { id: 'a2', n: 1 });
  });

  it('should replace with a current If-Match → 200 and a new ETag', async () => {
    const created = await create(server.url, '/things/a3', { n: 1 });
    const res = await request(server.url, '/things/a3', { method: 'PUT', headers: { ...JSON_HEADERS, 'If-Match': created.headers.etag as string }, body: '{"n":2}' });
    assert.equal(res.status, 200);
    assert.notEqual(res.headers.etag, created.headers.etag);
    assert.equal(res.headers.location, undefined);
    assert.equal(res.headers['content-location'], '/things/a3');
    assert.deepEqual(res.json(), { id: 'a3', n: 2 });
    assert.equal((await request(server.url, '/things/a3')).headers.etag, res.headers.etag);
  });

  it('should answer 412 to a stale If-Match and keep the stored value', async () => {
    const created = await create(server.url, '/things/a4', { n: 1 });
    await request(server.url, '/things/a4', { method: 'PUT', headers: { ...JSON_HEADERS, 'If-Match': created.headers.etag as string }, body: '{"n":2}' });
    const res = await request(server.url, '/things/a4', { method: 'PUT', headers: { ...JSON_HEADERS, 'If-Match': created.headers.etag as string }, body: '{"n":3}' });
    assert.equal(res.status, 412);
    assert.deepEqual((await request(server.url, '/things/a4')).json(), { id: 'a4', n: 2 });
  });

  it('should not accept a weak ETag in If-Match (strong comparison)', async () => {
    const created = await create(server.url, '/things/a5', { n: 1 });
    const res = await request(server.url, '/things/a5', { method: 'PUT', headers: { ...JSON_HEADERS, 'If-Match': `W/${created.headers.etag}` }, body: '{"n":2}' });
    assert.equal(res.status, 412);
  });

  it('should answer 412 to If-Match on an absent resource', async () => {
    const res = await request(server.url, '/things/absent', { method: 'PUT', headers: { ...JSON_HEADERS, 'If-Match': '*' }, body: '{}' });
    assert.equal(res.status, 412);
    assert.equal((await request(server.url, '/things/absent')).status, 404);
  });

  it('should answer 428 with no-store and a problem naming both headers when unconditional', async () => {
    const res = await request(server.url, '/things/a6', { method: 'PUT', headers: JSON_HEADERS, body: '{}' });
    assert.equal(res.status, 428);
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.match(problemOf(res).detail, /If-None-Match: \*/);
    assert.match(problemOf(res).detail, /If-Match/);
    assert.equal((await request(server.url, '/things/a6')).status, 404);
  });

  it('should evaluate preconditions before parsing the body: stale If-Match + malformed JSON → 412', async () => {
    await create(server.url, '/things/a7', { n: 1 });
    const res = await request(server.url, '/things/a7', { method: 'PUT', headers: { ...JSON_HEADERS, 'If-Match': '"stale"' }, body: '{not json' });
    assert.equal(res.status, 412);
  });

  it('should answer 400 to a malformed If-Match', async () => {
    const res = await request(server.url, '/things/a8', { method: 'PUT', headers: { ...JSON_HEADERS, 'If-Match': 'no-quotes' }, body: '{}' });
    assert.equal(res.status, 400);
  });

  it('should let exactly one of many concurrent creates win', async () => {
    const results = await Promise.all(Array.from({ length: 10 }, (_, n) => create(server.url, '/things/race', { n })));
    assert.equal(results.filter((r) => r.status === 201).length, 1);
    assert.equal(results.filter((r) => r.status === 412).length, 9);
  });
});

describe('DELETE and $undoDelete', () => {
  it('should answer 204 whether or not the resource existed', async () => {
    await create(server.url, '/things/d1', { n: 1 });
    const first = await request(server.url, '/things/d1', { method: 'DELETE' });
    assert.equal(first.status, 204);
    assert.equal(first.body.length, 0);
    assert.equal(first.headers['cache-control'], 'no-store');
    assert.equal((await request(server.url, '/things/d1')).status, 404);
    assert.equal((await request(server.url, '/things/d1', { method: 'DELETE' })).status, 204);
  });

  it('should answer 412 to DELETE with a stale If-Match or on an absent resource', async () => {
    await create(server.url, '/things/d2', { n: 1 });
    assert.equal((await request(server.url, '/things/d2', { method: 'DELETE', headers: { 'If-Match': '"stale"' } })).status, 412);
    assert.equal((await request(server.url, '/things/d2')).status, 200);
    assert.equal((await request(server.url, '/things/none', { method: 'DELETE', headers: { 'If-Match': '*' } })).status, 412);
  });

  it('should restore a deleted resource with the ETag the next GET returns, and 200 again on repeat', async () => {
    const created = await create(server.url, '/things/u1', { keep: true });
    await request(server.url, '/things/u1', { method: 'DELETE' });
    const undo = await request(server.url, '/things/u1/$undoDelete', { method: 'PUT' });
    assert.equal(undo.status, 200);
    assert.deepEqual(undo.json(), { id: 'u1', keep: true });
    assert.equal(undo.headers.etag, created.headers.etag);
    const get = await request(server.url, '/things/u1');
    assert.equal(get.headers.etag, undo.headers.etag);
    const again = await request(server.url, '/things/u1/$undoDelete', { method: 'PUT' });
    assert.equal(again.status, 200);
    assert.equal(again.headers.etag, undo.headers.etag);
  });

  it('should answer 404 to an undo with no tombstone and 409 when something else recreated it', async () => {
    assert.equal((await request(server.url, '/things/never/$undoDelete', { method: 'PUT' })).status, 404);
    await create(server.url, '/things/u2', { v: 1 });
    await request(server.url, '/things/u2', { method: 'DELETE' });
    await create(server.url, '/things/u2', { v: 2 });
    const res = await request(server.url, '/things/u2/$undoDelete', { method: 'PUT' });
    assert.equal(res.status, 409);
    assert.deepEqual((await request(server.url, '/things/u2')).json(), { id: 'u2', v: 2 });
  });
});

describe('collections and the service document', () => {
  it('should list collections in the service document', async () => {
    const res = await request(server.url, '/');
    assert.equal(res.status, 200);
    const names = (res.json() as { value: { name: string; url: string }[] }).value.map((c) => c.name);
    assert.ok(names.includes('products') && names.includes('currencies'));
    assert.ok(!names.some((name) => name.startsWith('$')));
  });

  it('should answer a collection as an envelope, never a bare array, with an ETag and Vary: Accept, Prefer', async () => {
    const res = await request(server.url, '/currencies');
    assert.equal(res.status, 200);
    const body = res.json() as { value: unknown[] };
    assert.ok(!Array.isArray(body));
    assert.equal(body.value.length, 4);
    assert.equal(res.headers.vary, 'Accept, Prefer');
    assert.equal(res.headers['cache-control'], 'public, max-age=86400');
    const again = await request(server.url, '/currencies', { headers: { 'If-None-Match': res.headers.etag as string } });
    assert.equal(again.status, 304);
  });

  it('should answer an empty envelope for a collection with no items', async () => {
    const res = await request(server.url, '/emptyness');
    assert.equal(res.status, 200);
    assert.deepEqual(res.json(), { value: [] });
  });

  it('should answer GET /$health with 200', async () => {
    const res = await request(server.url, '/$health');
    assert.equal(res.status, 200);
    assert.equal(res.headers['cache-control'], 'no-store');
  });
});

describe('routing', () => {
  it('should answer 405 with Allow for a method the route does not allow', async () => {
    const res = await request(server.url, '/products/p-100', { method: 'POST', headers: JSON_HEADERS, body: '{}' });
    assert.equal(res.status, 405);
    assert.equal(res.headers.allow, 'GET, HEAD, PUT, DELETE, OPTIONS');
    const collection = await request(server.url, '/products', { method: 'DELETE' });
    assert.equal(collection.status, 405);
    assert.equal(collection.headers.allow, 'GET, HEAD, POST, OPTIONS');
    const undo = await request(server.url, '/products/p-100/$undoDelete', { method: 'GET' });
    assert.equal(undo.headers.allow, 'PUT, OPTIONS');
  });

  it('should answer OPTIONS with 204 and Allow', async () => {
    const res = await request(server.url, '/products', { method: 'OPTIONS' });
    assert.equal(res.status, 204);
    assert.equal(res.headers.allow, 'GET, HEAD, POST, OPTIONS');
  });

  it('should answer 400 for invalid names and 404 for unknown routes', async () => {
    for (const path of ['/products/a%2Fb', '/products/..', '/products/%2e%2e', `/products/${'x'.repeat(129)}`, '/9lives', '/prod%20ucts', '/products/%ZZ']) {
      const res = await request(server.url, path);
      assert.equal(res.status, 400, path);
      assert.equal(res.headers['content-type'], 'application/problem+json', path);
    }
    assert.equal((await request(server.url, `/products/${'x'.repeat(128)}`)).status, 404);
    for (const path of ['/products/p-100/extra', '/a/b/c/d', '/$nothing', '/products/', '//x']) {
      assert.equal((await request(server.url, path)).status, 404, path);
    }
  });
});
