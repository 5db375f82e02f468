// Preconditions on POST /{collection} are held against the representation a plain GET of the
// collection answers (CONVENTIONS.md#post-preconditions): the same paging flow builds both, so the
// ETag a client read is the one its If-Match is compared with, summaries and page sizes included.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { create, JSON_HEADERS, request, type TestResponse } from '../support/http.js';
import { serverForSuite } from '../support/server.js';
import { tempDirsForSuite } from '../support/temp-dir.js';

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

// Regression: the precondition was checked, then the item written, with nothing holding the collection
// in between, so ten POSTs carrying one ETag all passed their check and all created (10 × 201).
describe('POST /{collection} with If-Match, ten at once (CONVENTIONS.md#post-preconditions)', () => {
  const dataDir = tempDirsForSuite('post-if-match');
  const server = serverForSuite(() => ({ dataDir: dataDir(), pageSize: { default: 3, max: 1000 } }), async (started) => {
    for (const id of ['a1', 'a2']) assert.equal((await create(started.url, `/small/${id}`, { n: id })).status, 201);
    // Server-chosen ids start with the time (`01…`), so these four sort before every new one.
    for (const id of ['00a', '00b', '00c', '00d']) assert.equal((await create(started.url, `/large/${id}`, { n: id })).status, 201);
  });

  function conditionalPost(path: string, etag: string, n: number): Promise<TestResponse> {
    return request(server.url, path, { method: 'POST', headers: { ...JSON_HEADERS, 'If-Match': etag }, body: JSON.stringify({ n }) });
  }

  it('should create exactly one item and refuse nine with 412 when each new item lands on the page the ETag is of', async () => {
    const etag = (await request(server.url, '/small')).headers.etag as string;
    const answers = await Promise.all(Array.from({ length: 10 }, (_, n) => conditionalPost('/small', etag, n)));
    const statuses = answers.map((answer) => answer.status).sort();
    assert.deepEqual(statuses, [201, 412, 412, 412, 412, 412, 412, 412, 412, 412], answers.map((answer) => answer.text).join('\n'));
    for (const refused of answers.filter((answer) => answer.status === 412)) {
      assert.equal(refused.headers['content-type'], 'application/problem+json');
    }
    const listed = (await request(server.url, '/small?$select=id', { headers: { Prefer: 'maxpagesize=100' } })).json() as { value: { id: string }[] };
    assert.equal(listed.value.length, 3, JSON.stringify(listed));
    const created = answers.find((answer) => answer.status === 201)?.json() as { id: string };
    assert.ok(listed.value.some((item) => item.id === created.id));
  });

  it('should let at most one of ten conditional POSTs in while ten unconditional ones land among them', async () => {
    const etag = (await request(server.url, '/mixed')).headers.etag as string;
    const plain = (n: number) => request(server.url, '/mixed', { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify({ n }) });
    const answers = await Promise.all(Array.from({ length: 20 }, (_, n) => (n % 2 === 0 ? conditionalPost('/mixed', etag, n) : plain(n))));
    const conditional = answers.filter((_, n) => n % 2 === 0).map((answer) => answer.status);
    assert.ok(conditional.every((status) => status === 201 || status === 412), JSON.stringify(conditional));
    const admitted = conditional.filter((status) => status === 201).length;
    assert.ok(admitted <= 1, JSON.stringify(conditional));
    assert.deepEqual(answers.filter((_, n) => n % 2 === 1).map((answer) => answer.status), Array.from({ length: 10 }, () => 201));
    const listed = (await request(server.url, '/mixed?$count=true&$top=0')).json() as { '@count': number };
    assert.equal(listed['@count'], 10 + admitted);
  });

  it('should create all ten, one after another, when the new items land after the page the ETag is of', async () => {
    const etag = (await request(server.url, '/large')).headers.etag as string;
    const answers = await Promise.all(Array.from({ length: 10 }, (_, n) => conditionalPost('/large', etag, n)));
    assert.deepEqual(answers.map((answer) => answer.status), Array.from({ length: 10 }, () => 201), answers.map((answer) => answer.text).join('\n'));
    assert.equal((await request(server.url, '/large')).headers.etag, etag);
    const listed = (await request(server.url, '/large?$count=true&$top=0')).json() as { '@count': number };
    assert.equal(listed['@count'], 14);
  });
});
