// End to end: collections, paging, filtering, query resources, bulk CSV (CONVENTIONS.md#collections,
// CONVENTIONS.md#bulk-updates).
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { binaryForFile, startBinary } from '../support/binary.js';
import { eventually } from '../support/eventually.js';
import { create, JSON_HEADERS, problemOf, request, type TestResponse } from '../support/http.js';
import { walkPages } from '../support/pages.js';

const server = binaryForFile(['--memory', '--seed', 'data/sample', '--config', 'data/config.json']);

interface Envelope {
  value: Record<string, unknown>[];
  '@nextLink'?: string;
  '@count'?: number;
}

function envelope(res: TestResponse): Envelope {
  return res.json() as Envelope;
}

function ids(res: TestResponse): string[] {
  return envelope(res).value.map((item) => item['id'] as string);
}

/** Follows @nextLink to the end, returning every page's ids in order; each Link header names the same next page. */
async function walk(first: string, headers: Record<string, string> = {}, between?: () => Promise<void>): Promise<string[]> {
  const items = await walkPages(server.url, first, {
    headers,
    onPage: async ({ response, nextLink }) => {
      if (nextLink !== undefined) assert.equal(response.headers.link, `<${nextLink}>; rel="next"`);
      await between?.();
    },
  });
  return items.map((item) => item['id'] as string);
}

describe('the envelope and paging', () => {
  before(async () => {
    await Promise.all(Array.from({ length: 120 }, (_, n) => create(server.url, `/many/m${String(n).padStart(3, '0')}`, { n, even: n % 2 === 0 })));
  });

  it('should answer 50 items by default with @nextLink only when a next page exists', async () => {
    const res = await request(server.url, '/many');
    const body = envelope(res);
    assert.equal(body.value.length, 50);
    assert.match(body['@nextLink'] ?? '', /^\/many\?\$skiptoken=[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    const last = await request(server.url, '/many?$filter=n ge 100');
    assert.equal(envelope(last).value.length, 20);
    assert.equal('@nextLink' in envelope(last), false);
    assert.equal(last.headers.link, undefined);
  });

  it('should walk every item exactly once, keeping the page size and query in the link', async () => {
    const seen = await walk('/many?$filter=even eq true&$orderby=n desc', { Prefer: 'maxpagesize=7' });
    assert.equal(seen.length, 60);
    assert.equal(new Set(seen).size, 60);
    assert.equal(seen[0], 'm118');
    assert.equal(seen[59], 'm000');
  });

  it('should see every item that exists for the whole walk exactly once while others come and go', async () => {
    const stable = new Set(await walk('/many'));
    // A writer inserts items before and after the cursor and deletes them again, concurrently with
    // the walk, until it ends; the walk reads its next page only once the writer has made another
    // round of changes.
    let writing = true;
    let rounds = 0;
    const writer = (async () => {
      for (let n = 0; writing; n++) {
        await Promise.all([create(server.url, `/many/a${n}`, { n: -n, even: true }), create(server.url, `/many/z${n}`, { n: 1000 + n, even: true })]);
        await Promise.all([request(server.url, `/many/a${n}`, { method: 'DELETE' }), n % 2 === 0 ? request(server.url, `/many/z${n}`, { method: 'DELETE' }) : Promise.resolve()]);
        rounds++;
      }
    })();
    const anotherRound = async (): Promise<void> => {
      const done = rounds;
      await eventually('another round of changes by the writer', () => rounds > done);
    };
    const seen = await walk('/many', { Prefer: 'maxpagesize=9' }, anotherRound);
    writing = false;
    await writer;
    const seenStable = seen.filter((id) => stable.has(id));
    assert.equal(seenStable.length, stable.size);
    assert.equal(new Set(seenStable).size, stable.size);
    assert.equal(new Set(seen).size, seen.length, 'no item twice');
  });

  it('should honour Prefer: maxpagesize and odata.maxpagesize, clamp to 1000, and say so', async () => {
    const small = await request(server.url, '/many', { headers: { Prefer: 'odata.maxpagesize=5' } });
    assert.equal(envelope(small).value.length, 5);
    assert.equal(small.headers['preference-applied'], 'odata.maxpagesize=5');
    const huge = await request(server.url, '/many', { headers: { Prefer: 'maxpagesize=5000' } });
    assert.equal(huge.headers['preference-applied'], 'maxpagesize=1000');
    assert.equal('@nextLink' in envelope(huge), false);
    assert.equal((await request(server.url, '/many')).headers['preference-applied'], undefined);
    assert.equal(small.headers.vary, 'Accept, Prefer');
  });

  it('should cap the total across pages with $top and count all matches with $count=true', async () => {
    const seen = await walk('/many?$top=12&$count=true', { Prefer: 'maxpagesize=5' });
    assert.equal(seen.length, 12);
    const first = envelope(await request(server.url, '/many?$top=12&$count=true', { headers: { Prefer: 'maxpagesize=5' } }));
    assert.ok((first['@count'] ?? 0) >= 120);
  });

  it('should answer 400 to a tampered token, a token of another collection, and a token with other options', async () => {
    const link = envelope(await request(server.url, '/many', { headers: { Prefer: 'maxpagesize=3' } }))['@nextLink'] as string;
    const token = link.slice(link.indexOf('=') + 1);
    const [payload, mac] = token.split('.') as [string, string];
    const flipped = `${payload.slice(0, -2)}${payload.endsWith('A') ? 'B' : 'A'}${payload.slice(-1)}.${mac}`;
    for (const path of [`/many?$skiptoken=${flipped}`, `/products?$skiptoken=${token}`, `/many?$skiptoken=garbage`, `/many?$skiptoken=${token}&$top=1`]) {
      const res = await request(server.url, path);
      assert.equal(res.status, 400, path);
      assert.equal(res.headers['content-type'], 'application/problem+json');
    }
  });

  it('should refuse a token from another server (its own HMAC key)', async () => {
    const other = await startBinary(['--memory']);
    try {
      await Promise.all(['a', 'b', 'c'].map((id) => create(other.url, `/many/${id}`, {})));
      const link = envelope(await request(other.url, '/many', { headers: { Prefer: 'maxpagesize=1' } }))['@nextLink'] as string;
      assert.equal((await request(server.url, link)).status, 400);
    } finally {
      await other.stop();
    }
  });

  it('should give every page a strong ETag and 304 on revalidation', async () => {
    const res = await request(server.url, '/products?$orderby=price');
    assert.match(res.headers.etag ?? '', /^"[A-Za-z0-9_-]+"$/);
    assert.equal((await request(server.url, '/products?$orderby=price', { headers: { 'If-None-Match': res.headers.etag as string } })).status, 304);
  });
});

describe('filters, $select and $orderby', () => {
  it('should filter with $filter and answer 200 with an empty value when nothing matches', async () => {
    assert.deepEqual(ids(await request(server.url, "/products?$filter=category eq 'office' and price gt 10")), ['p-105', 'p-106']);
    assert.deepEqual(ids(await request(server.url, "/products?$filter=tags/any(t: t eq 'sale')")), ['p-100', 'p-103', 'p-108']);
    assert.deepEqual(ids(await request(server.url, "/products?$filter=origin/country eq 'GR'")), ['p-109']);
    const none = await request(server.url, '/products?$filter=price gt 100000');
    assert.equal(none.status, 200);
    assert.deepEqual(envelope(none).value, []);
  });

  it('should answer 400 naming the offset for a syntax error, and for unknown properties and functions', async () => {
    const syntax = await request(server.url, '/products?$filter=price gt');
    assert.equal(syntax.status, 400);
    assert.match(problemOf(syntax).detail, /offset \d+/);
    assert.equal((await request(server.url, '/products?$filter=colour eq 1')).status, 400);
    assert.equal((await request(server.url, "/products?$filter=frobnicate(name) eq 'x'")).status, 400);
    assert.equal((await request(server.url, `/products?$filter=${'('.repeat(70)}true${')'.repeat(70)}`)).status, 400);
    assert.equal((await request(server.url, `/products?$filter=${encodeURIComponent(`name eq '${'x'.repeat(5000)}'`)}`)).status, 400);
  });

  it('should AND simple field=value pairs: contains for strings, membership for arrays, equality for numbers', async () => {
    assert.deepEqual(ids(await request(server.url, '/products?name=PRESS')), ['p-100', 'p-101']);
    assert.deepEqual(ids(await request(server.url, '/products?tags=electric&currency=USD')), ['p-106']);
    assert.deepEqual(ids(await request(server.url, '/products?price=34')), ['p-101']);
    assert.equal((await request(server.url, '/products?colour=red')).status, 400);
  });

  it('should refuse q and query, unknown $ options and $skip, naming $filter', async () => {
    for (const path of ['/products?q=mug', '/products?query=mug']) {
      const res = await request(server.url, path);
      assert.equal(res.status, 400);
      assert.match(problemOf(res).detail, /\$filter/);
    }
    assert.equal((await request(server.url, '/products?$expand=x')).status, 400);
    assert.equal((await request(server.url, '/products?$skip=10')).status, 400);
  });

  it('should return $select summaries with an @id select link, nested paths as objects', async () => {
    const res = await request(server.url, '/products?$select=name,origin/country&$filter=id eq \'p-109\'');
    assert.deepEqual(envelope(res).value, [{ '@id': '/products/p-109', name: 'Olive oil 1 l', origin: { country: 'GR' } }]);
    assert.equal((await request(server.url, '/products?$select=nope')).status, 400);
    assert.equal((await request(server.url, '/products?$orderby=nope')).status, 400);
  });

  it('should order by several keys with id as the final tiebreaker', async () => {
    const res = await request(server.url, '/products?$orderby=currency desc,price&$select=currency,price');
    const rows = envelope(res).value.map((item) => `${item['currency'] as string}:${item['price'] as number}`);
    assert.deepEqual(rows.slice(0, 3), ['USD:7.25', 'USD:9.5', 'USD:75']);
  });

  it('should serve a page as text/csv with its own ETag', async () => {
    const json = await request(server.url, '/currencies');
    const csv = await request(server.url, '/currencies', { headers: { Accept: 'text/csv' } });
    assert.equal(csv.status, 200);
    assert.equal(csv.headers['content-type'], 'text/csv; charset=utf-8; header=present');
    assert.equal(csv.text.split('\r\n')[0], 'id,name,symbol,decimals');
    assert.notEqual(csv.headers.etag, json.headers.etag);
    assert.equal((await request(server.url, '/currencies', { headers: { Accept: 'text/csv', 'If-None-Match': csv.headers.etag as string } })).status, 304);
    assert.equal((await request(server.url, '/currencies', { headers: { Accept: 'text/csv', 'If-None-Match': json.headers.etag as string } })).status, 200);
  });
});

describe('query resources', () => {
  const definition = { filter: 'price lt 10', orderby: 'price desc', select: ['name', 'price'] };

  it('should create with If-None-Match: *, run on GET with an ETag and 304, and show its definition', async () => {
    const put = await request(server.url, '/products/$queries/cheap', { method: 'PUT', headers: { ...JSON_HEADERS, 'If-None-Match': '*' }, body: JSON.stringify(definition) });
    assert.equal(put.status, 201);
    assert.equal(put.headers.location, '/products/$queries/cheap');
    assert.equal(put.headers['content-location'], '/products/$queries/cheap/$definition');
    const run = await request(server.url, '/products/$queries/cheap');
    assert.equal(run.status, 200);
    assert.deepEqual(envelope(run).value.map((item) => item['name']), ['Tea tin "Assam"', 'Honey jar', 'Notebook A5']);
    assert.equal(run.headers['cache-control'], 'max-age=0, must-revalidate');
    assert.equal((await request(server.url, '/products/$queries/cheap', { headers: { 'If-None-Match': run.headers.etag as string } })).status, 304);
    const shown = await request(server.url, '/products/$queries/cheap/$definition');
    assert.deepEqual(shown.json(), definition);
    assert.equal(shown.headers.etag, put.headers.etag);
  });

  it('should validate at PUT (a bad filter is 400 then) and require a precondition (428)', async () => {
    const bad = await request(server.url, '/products/$queries/broken', { method: 'PUT', headers: { ...JSON_HEADERS, 'If-None-Match': '*' }, body: '{"filter":"price lt"}' });
    assert.equal(bad.status, 400);
    assert.equal((await request(server.url, '/products/$queries/broken')).status, 404);
    const unconditional = await request(server.url, '/products/$queries/x', { method: 'PUT', headers: JSON_HEADERS, body: '{}' });
    assert.equal(unconditional.status, 428);
    const unknownMember = await request(server.url, '/products/$queries/y', { method: 'PUT', headers: { ...JSON_HEADERS, 'If-None-Match': '*' }, body: '{"where":"x"}' });
    assert.equal(unknownMember.status, 400);
  });

  it('should replace with If-Match and delete', async () => {
    const put = await request(server.url, '/products/$queries/r', { method: 'PUT', headers: { ...JSON_HEADERS, 'If-None-Match': '*' }, body: '{"filter":"price gt 100"}' });
    const replaced = await request(server.url, '/products/$queries/r', { method: 'PUT', headers: { ...JSON_HEADERS, 'If-Match': put.headers.etag as string }, body: '{"filter":"price gt 50"}' });
    assert.equal(replaced.status, 200);
    assert.deepEqual(ids(await request(server.url, '/products/$queries/r')), ['p-102', 'p-103', 'p-106']);
    assert.equal((await request(server.url, '/products/$queries/r', { method: 'DELETE' })).status, 204);
    assert.equal((await request(server.url, '/products/$queries/r')).status, 404);
  });
});

describe('PUT /{collection}/$bulk', () => {
  const csv = (text: string) => ({ method: 'PUT', headers: { 'Content-Type': 'text/csv' }, body: text });

  before(async () => {
    await Promise.all([
      create(server.url, '/prices/a', { price: 10 }),
      create(server.url, '/prices/b', { price: 20 }),
      create(server.url, '/prices/c', { price: 30 }),
    ]);
  });

  it('should apply, skip, report conflicts and unknown ids, and change nothing on a second send', async () => {
    const file = '\ufeffproductId,currentPrice,newPrice\r\na,10,11\r\nb,99,21\r\nzzz,1,2\r\n';
    const first = await request(server.url, '/prices/$bulk', csv(file));
    assert.equal(first.status, 200);
    assert.deepEqual(first.json(), { applied: 1, skipped: 0, conflicts: [{ row: 3, id: 'b', actual: { price: 20 } }], notFound: [{ row: 4, id: 'zzz' }] });
    const etag = (await request(server.url, '/prices/a')).headers.etag;
    const second = await request(server.url, '/prices/$bulk', csv(file));
    assert.deepEqual(second.json(), { applied: 0, skipped: 1, conflicts: [{ row: 3, id: 'b', actual: { price: 20 } }], notFound: [{ row: 4, id: 'zzz' }] });
    assert.equal((await request(server.url, '/prices/a')).headers.etag, etag);
    assert.deepEqual((await request(server.url, '/prices/a')).json(), { id: 'a', price: 11 });
  });

  it('should answer 400 naming the row for unknown columns and malformed files, and apply nothing', async () => {
    const increment = await request(server.url, '/prices/$bulk', csv('id,increment\nc,5\n'));
    assert.equal(increment.status, 400);
    assert.deepEqual((problemOf(increment).errors as { row: number }[])[0]?.row, 1);
    const malformed = await request(server.url, '/prices/$bulk', csv('id,currentPrice,newPrice\nc,30,31\nc"x,1,2\n'));
    assert.equal(malformed.status, 400);
    assert.deepEqual((problemOf(malformed).errors as { row: number }[])[0]?.row, 3);
    assert.deepEqual((await request(server.url, '/prices/c')).json(), { id: 'c', price: 30 });
  });

  it('should answer 413 to a bulk file over the body cap, before reading it', async () => {
    const big = `id,currentPrice,newPrice\n${'a,10,11\n'.repeat(150_000)}`;
    const res = await request(server.url, '/prices/$bulk', csv(big));
    assert.equal(res.status, 413);
    assert.deepEqual((await request(server.url, '/prices/c')).json(), { id: 'c', price: 30 });
  });

  it('should answer 415 to a body that is not text/csv', async () => {
    assert.equal((await request(server.url, '/prices/$bulk', { method: 'PUT', headers: JSON_HEADERS, body: '{}' })).status, 415);
  });
});
