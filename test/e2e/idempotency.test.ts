// End to end: POST with Idempotency-Key (CONVENTIONS.md#post-creates, CONVENTIONS.md#idempotency-keys).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { binaryForFile } from '../support/binary.js';
import { JSON_HEADERS, problemOf, request, startSlowRequest } from '../support/http.js';

const server = binaryForFile(['--memory']);

function post(path: string, body: string, key?: string | string[]) {
  const headers: Record<string, string | string[]> = { ...JSON_HEADERS };
  if (key !== undefined) headers['Idempotency-Key'] = key;
  return request(server.url, path, { method: 'POST', headers, body });
}

async function count(collection: string): Promise<number> {
  return ((await request(server.url, `/${collection}`)).json() as { value: unknown[] }).value.length;
}

describe('POST /{collection}', () => {
  it('should create with a server-chosen id → 201, Location, ETag and the stored body', async () => {
    const res = await post('/orders', '{"total":5}');
    assert.equal(res.status, 201);
    const doc = res.json() as { id: string; total: number };
    assert.match(doc.id, /^[0-9a-z]{26}$/);
    assert.equal(res.headers.location, `/orders/${doc.id}`);
    assert.equal(res.headers['cache-control'], 'no-store');
    const get = await request(server.url, res.headers.location as string);
    assert.equal(get.headers.etag, res.headers.etag);
  });

  it('should create a new item for every POST without a key (not idempotent)', async () => {
    await post('/plain', '{"n":1}');
    await post('/plain', '{"n":1}');
    assert.equal(await count('plain'), 2);
  });

  it('should refuse a body that carries an id', async () => {
    assert.equal((await post('/orders', '{"id":"mine"}')).status, 400);
  });
});

describe('Idempotency-Key', () => {
  it('should replay the first response with Idempotent-Replayed: true and create nothing more', async () => {
    const first = await post('/keyed', '{"n":1}', 'key-1');
    const again = await post('/keyed', '{"n":1}', 'key-1');
    assert.equal(first.status, 201);
    assert.equal(again.status, 201);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(first.headers['idempotent-replayed'], undefined);
    assert.equal(again.text, first.text);
    assert.equal(again.headers.location, first.headers.location);
    assert.equal(again.headers.etag, first.headers.etag);
    assert.equal(again.headers['last-modified'], first.headers['last-modified']);
    assert.equal(await count('keyed'), 1);
  });

  it('should treat "abc" and abc as the same key', async () => {
    const first = await post('/quoted', '{"n":1}', 'abc');
    const again = await post('/quoted', '{"n":1}', '"abc"');
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.headers.location, first.headers.location);
    assert.equal(await count('quoted'), 1);
  });

  it('should answer 422 to the same key with a different body or path', async () => {
    await post('/reuse', '{"n":1}', 'key-2');
    const otherBody = await post('/reuse', '{"n":2}', 'key-2');
    assert.equal(otherBody.status, 422);
    assert.equal(problemOf(otherBody).type, 'tag:resapi,2026:problem/idempotency-key-reused');
    assert.equal((await post('/reuse-elsewhere', '{"n":1}', 'key-2')).status, 422);
    assert.equal(await count('reuse'), 1);
    assert.equal(await count('reuse-elsewhere'), 0);
  });

  it('should answer 400 to the header sent twice, and to a key over 255 characters', async () => {
    assert.equal((await post('/twice', '{}', ['a', 'b'])).status, 400);
    assert.equal((await post('/twice', '{}', 'k'.repeat(256))).status, 400);
    assert.equal((await post('/twice', '{}', 'k'.repeat(255))).status, 201);
    assert.equal(await count('twice'), 1);
  });

  it('should store a deterministic 400 and replay it', async () => {
    const first = await post('/det', '{broken', 'key-3');
    assert.equal(first.status, 400);
    const again = await post('/det', '{broken', 'key-3');
    assert.equal(again.status, 400);
    assert.equal(again.headers['idempotent-replayed'], 'true');
  });

  it('should answer 409 to a repeat while the first request is still in flight', async () => {
    // The first request sends its headers and half a body, then waits: it is in flight.
    const slow = await startSlowRequest(server.url, '/flight', { method: 'POST', headers: { ...JSON_HEADERS, 'Idempotency-Key': 'key-4' }, firstPart: '{"n":' });
    const repeat = await post('/flight', '{"n":1}', 'key-4');
    assert.equal(repeat.status, 409);
    assert.equal(problemOf(repeat).type, 'tag:resapi,2026:problem/idempotency-key-in-flight');
    assert.equal(await slow.finish('1}'), 201);
    const replay = await post('/flight', '{"n":1}', 'key-4');
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(await count('flight'), 1);
  });

  it('should deduplicate many concurrent retries of one keyed request into one item', async () => {
    const results = await Promise.all(Array.from({ length: 8 }, () => post('/burst', '{"n":1}', 'key-5')));
    assert.ok(results.every((res) => res.status === 201 || res.status === 409));
    assert.equal(await count('burst'), 1);
  });
});
