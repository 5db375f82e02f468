// Preconditions on POST /{collection} are held against the representation a plain GET of the
// collection answers (CONVENTIONS.md#post-preconditions): the same paging flow builds both, so the
// ETag a client read is the one its If-Match is compared with, summaries and page sizes included.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { create, JSON_HEADERS, request } from '../support/http.js';
import { serverForSuite } from '../support/server.js';

describe('POST /{collection} with If-Match', () => {
  const server = serverForSuite({ memory: true, collections: { products: { summary: ['name'] } } }, async (started) => {
    assert.equal((await create(started.url, '/products/p1', { name: 'One', price: 5 })).status, 201);
    assert.equal((await create(started.url, '/notes/n1', { text: 'plain' })).status, 201);
  });

  // Regression: the POST's validators were built from whole items while GET lists summaries, so the
  // ETag GET /products answered never matched and every such POST was 412.
  it('should accept the ETag GET answered for a collection configured with a summary', async () => {
    const page = await request(server.url, '/products');
    assert.equal(page.status, 200);
    const etag = page.headers.etag as string;
    const posted = await request(server.url, '/products', { method: 'POST', headers: { ...JSON_HEADERS, 'If-Match': etag }, body: JSON.stringify({ name: 'Two' }) });
    assert.equal(posted.status, 201, posted.text);
  });

  it('should refuse with 412 once the collection changed since that GET', async () => {
    const etag = (await request(server.url, '/notes')).headers.etag as string;
    assert.equal((await create(server.url, '/notes/n2', { text: 'later' })).status, 201);
    const posted = await request(server.url, '/notes', { method: 'POST', headers: { ...JSON_HEADERS, 'If-Match': etag }, body: '{"text":"x"}' });
    assert.equal(posted.status, 412, posted.text);
  });

  it('should accept the current ETag of a collection without a summary', async () => {
    const etag = (await request(server.url, '/notes')).headers.etag as string;
    const posted = await request(server.url, '/notes', { method: 'POST', headers: { ...JSON_HEADERS, 'If-Match': etag }, body: '{"text":"y"}' });
    assert.equal(posted.status, 201, posted.text);
  });
});
