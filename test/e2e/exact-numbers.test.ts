// End to end: numbers are stored exactly or refused on every write path over HTTP: a number JSON
// cannot carry exactly through a parse and a serialize is a 400, whichever path it comes by
// (CONVENTIONS.md#json-bodies); and a bulk CSV updates nested members by their text/csv column
// names (CONVENTIONS.md#bulk-updates).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { create, JSON_HEADERS, problemOf, request } from '../support/http.js';
import { serverForSuite } from '../support/server.js';

const CSV = { 'Content-Type': 'text/csv' } as const;
const INEXACT = ['9007199254740993', '1e-400', '123456789012345678901234567890'];
/** A PUT that creates (a PUT is conditional: CONVENTIONS.md#conditional-create). */
const CREATE = { ...JSON_HEADERS, 'If-None-Match': '*' } as const;

describe('exact numbers over HTTP', () => {
  const server = serverForSuite({ memory: true }, async (server) => {
    assert.equal((await create(server.url, '/prices/kept', { price: 5 })).status, 201);
  });

  async function count(collection: string): Promise<number> {
    const res = await request(server.url, `/${collection}?$count=true`);
    assert.equal(res.status, 200);
    return (res.json() as { '@count': number })['@count'];
  }

  it('should answer 400 with the pointer to a PUT of a number a double does not hold, and store nothing', async () => {
    for (const literal of INEXACT) {
      const res = await request(server.url, '/exact/p1', { method: 'PUT', headers: CREATE, body: `{"name":"Cup","price":${literal}}` });
      assert.equal(res.status, 400, literal);
      const problem = problemOf(res);
      assert.equal(problem.type, 'tag:resapi,2026:problem/invalid-body', literal);
      assert.deepEqual(problem.errors, [{ pointer: '/price', detail: 'number cannot be stored exactly' }], literal);
      assert.equal((await request(server.url, '/exact/p1')).status, 404, literal);
    }
  });

  it('should answer 400 with the pointer to a POST of such a number, and create nothing', async () => {
    for (const literal of INEXACT) {
      const res = await request(server.url, '/posted', { method: 'POST', headers: JSON_HEADERS, body: `{"sizes":[1,{"w":${literal}}]}` });
      assert.equal(res.status, 400, literal);
      assert.deepEqual(problemOf(res).errors, [{ pointer: '/sizes/1/w', detail: 'number cannot be stored exactly' }], literal);
    }
    assert.equal(await count('posted'), 0);
  });

  it('should replace a stored number with such a number nowhere: the PUT is refused and the old value stays', async () => {
    const etag = (await request(server.url, '/prices/kept')).headers.etag as string;
    const res = await request(server.url, '/prices/kept', { method: 'PUT', headers: { ...JSON_HEADERS, 'If-Match': etag }, body: '{"price":9007199254740993}' });
    assert.equal(res.status, 400);
    assert.equal((await request(server.url, '/prices/kept')).text, '{"id":"kept","price":5}');
  });

  it('should store exact spellings as the number they write and read them back in shortest form', async () => {
    const put = await request(server.url, '/exact/p2', { method: 'PUT', headers: CREATE, body: '{"a":1.0,"b":1e2,"c":9007199254740992}' });
    assert.equal(put.status, 201);
    assert.equal((await request(server.url, '/exact/p2')).text, '{"id":"p2","a":1,"b":100,"c":9007199254740992}');
    const post = await request(server.url, '/exact', { method: 'POST', headers: JSON_HEADERS, body: '{"a":1.0,"b":1e2}' });
    assert.equal(post.status, 201);
    const location = new URL(post.headers.location as string, server.url).pathname;
    assert.deepEqual((await request(server.url, location)).json(), { id: location.split('/')[2], a: 1, b: 100 });
  });

  it("should describe malformed JSON in resapi's words with the offset, never the body's text", async () => {
    const res = await request(server.url, '/exact/p3', { method: 'PUT', headers: CREATE, body: '{"secret-token-abc": }' });
    assert.equal(res.status, 400);
    assert.equal(problemOf(res).detail, 'The body is not valid JSON: unexpected character at offset 21.');
    assert.doesNotMatch(res.text, /secret|Unexpected token/);
  });
});

describe('bulk CSV over HTTP: exact numbers and nested columns', () => {
  const server = serverForSuite({ memory: true }, async (server) => {
    for (const [id, price] of [['a', 10], ['b', 20]] as const) assert.equal((await create(server.url, `/goods/${id}`, { price, dimensions: { width: price, height: 1 } })).status, 201);
  });

  it('should answer 400 naming the row to a file with a new value a double does not hold, and apply no row', async () => {
    for (const literal of [...INEXACT, '1e400']) {
      const res = await request(server.url, '/goods/$bulk', { method: 'PUT', headers: CSV, body: `id,currentPrice,newPrice\na,10,11\nb,20,${literal}\n` });
      assert.equal(res.status, 400, literal);
      const problem = problemOf(res);
      assert.equal(problem.detail, `row 3: new value "${literal}" for price cannot be stored exactly as a number`, literal);
      assert.deepEqual((problem.errors as { row: number }[]).map((item) => item.row), [3], literal);
    }
    assert.deepEqual((await request(server.url, '/goods/a')).json(), { id: 'a', price: 10, dimensions: { width: 10, height: 1 } });
    assert.deepEqual((await request(server.url, '/goods/b')).json(), { id: 'b', price: 20, dimensions: { width: 20, height: 1 } });
  });

  it('should update a nested member from its a/b column, and skip every row on a second send', async () => {
    // The column names are the ones the text/csv representation of the collection writes.
    const download = await request(server.url, '/goods', { headers: { Accept: 'text/csv' } });
    assert.match(download.text.split('\r\n')[0] ?? '', /(^|,)dimensions\/width(,|$)/);
    const file = 'id,currentDimensions/width,newDimensions/width\na,10,12\nb,99,30\n';
    const first = await request(server.url, '/goods/$bulk', { method: 'PUT', headers: CSV, body: file });
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(first.json(), { applied: 1, skipped: 0, conflicts: [{ row: 3, id: 'b', actual: { 'dimensions/width': 20 } }], notFound: [] });
    assert.deepEqual((await request(server.url, '/goods/a')).json(), { id: 'a', price: 10, dimensions: { width: 12, height: 1 } });
    const etag = (await request(server.url, '/goods/a')).headers.etag;
    const fixed = 'id,currentDimensions/width,newDimensions/width\na,10,12\nb,20,30\n';
    assert.deepEqual((await request(server.url, '/goods/$bulk', { method: 'PUT', headers: CSV, body: fixed })).json(), { applied: 1, skipped: 1, conflicts: [], notFound: [] });
    const again = await request(server.url, '/goods/$bulk', { method: 'PUT', headers: CSV, body: fixed });
    assert.deepEqual(again.json(), { applied: 0, skipped: 2, conflicts: [], notFound: [] });
    assert.equal((await request(server.url, '/goods/a')).headers.etag, etag, 'a skipped row is not rewritten');
    assert.deepEqual((await request(server.url, '/goods/b')).json(), { id: 'b', price: 20, dimensions: { width: 30, height: 1 } });
  });

  it('should answer 400 naming the row when the nested path runs through a member that is not an object', async () => {
    assert.equal((await create(server.url, '/goods/c', { dimensions: 'large' })).status, 201);
    const res = await request(server.url, '/goods/$bulk', { method: 'PUT', headers: CSV, body: 'id,currentDimensions/width,newDimensions/width\na,12,13\nc,,5\n' });
    assert.equal(res.status, 400);
    assert.equal(problemOf(res).detail, 'row 3: "dimensions/width" cannot be set: "dimensions" holds a string, not an object');
    assert.deepEqual((await request(server.url, '/goods/a')).json(), { id: 'a', price: 10, dimensions: { width: 12, height: 1 } });
  });
});
