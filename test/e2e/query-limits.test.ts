// End to end: what a query is answered does not depend on which items exist at the moment, every
// @nextLink the server emits can be followed, pages are bounded in bytes, and query resources page
// themselves and refuse options they do not apply (CONVENTIONS.md#paging, CONVENTIONS.md#page-byte-budget,
// CONVENTIONS.md#query-resources).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FIELDS_SPACE } from '../../lib/writes/field-registry.js';
import { create, JSON_HEADERS, problemOf, request, type TestResponse } from '../support/http.js';
import { MAX_PAGES, walkPages } from '../support/pages.js';
import { serverForSuite } from '../support/server.js';

interface Envelope {
  readonly value: Record<string, unknown>[];
  readonly '@nextLink'?: string;
}

function envelope(res: TestResponse): Envelope {
  assert.equal(res.status, 200, res.text.slice(0, 300));
  return res.json() as Envelope;
}

describe('validity does not depend on the items that exist now', () => {
  const server = serverForSuite({ memory: true, collections: { typed: { schema: { name: 'string' } } } });

  it('should answer any well-formed filter on a collection that never held an item with 200 and an empty value', async () => {
    for (const query of ["$filter=colour eq 'red'", '$orderby=price desc', '$select=name', 'colour=red', '$filter=tags/any(t: t eq 1)']) {
      assert.deepEqual(envelope(await request(server.url, `/fresh?${query}`)).value, [], query);
    }
    assert.equal((await request(server.url, "/fresh?$filter=colour eq")).status, 400, 'a malformed filter is still a 400');
    assert.equal((await request(server.url, "/typed?$filter=colour eq 'red'")).status, 400, 'a declared schema defines the properties even before any item');
  });

  it('should remember nothing for made-up collection names', async () => {
    for (let n = 0; n < 300; n++) assert.equal((await request(server.url, `/madeup${n}?$filter=x eq 1&colour=red`)).status, 200);
    assert.deepEqual(server.store.scan(FIELDS_SPACE).map((record) => record.id).filter((id) => id.startsWith('madeup')), []);
    assert.equal(server.store.collections().some((name) => name.startsWith('madeup')), false);
  });

  it('should keep a property known after the last item having it is deleted, and still refuse a typo', async () => {
    assert.equal((await create(server.url, '/paints/p1', { colour: 'red' })).status, 201);
    assert.equal((await request(server.url, '/paints/p1', { method: 'DELETE' })).status, 204);
    assert.deepEqual(envelope(await request(server.url, "/paints?$filter=colour eq 'red'")).value, []);
    assert.equal((await create(server.url, '/paints/p2', { shade: 'dark' })).status, 201);
    const typo = await request(server.url, "/paints?$filter=colur eq 'red'");
    assert.equal(typo.status, 400);
    assert.match(problemOf(typo).detail, /colur/);
  });

  it('should finish a walk whose order field no item has any more, seeing every item that stayed exactly once', async () => {
    for (let n = 0; n < 6; n++) assert.equal((await create(server.url, `/walked/w${n}`, n === 0 ? { rank: 1, label: 'x' } : { label: `l${n}` })).status, 201);
    const first = envelope(await request(server.url, '/walked?$orderby=rank desc,label', { headers: { Prefer: 'maxpagesize=2' } }));
    assert.equal((await request(server.url, '/walked/w0', { method: 'DELETE' })).status, 204, 'the only item with rank goes');
    const rest = await walkPages(server.url, first['@nextLink'] as string);
    const seen = [...first.value, ...rest].map((item) => item['id']);
    assert.deepEqual(seen.filter((id) => id !== 'w0').sort(), ['w1', 'w2', 'w3', 'w4', 'w5']);
    assert.equal(new Set(seen).size, seen.length);
  });
});

describe('links the server emits can be followed', () => {
  const server = serverForSuite({ memory: true }, async (server) => {
    for (let n = 0; n < 5; n++) assert.equal((await create(server.url, `/long/l${n}`, { title: `${String(n).repeat(20_000)}`, tags: [`${'t'.repeat(20_000)}${n}`] })).status, 201);
  });

  it('should keep @nextLink under 8 KiB whatever the sort values weigh, and accept its own link', async () => {
    for (const order of ['title', 'tags desc', 'title desc,tags']) {
      let pages = 0;
      await walkPages(server.url, `/long?$orderby=${order}&$select=id`, { headers: { Prefer: 'maxpagesize=1' }, onPage: () => void pages++ });
      assert.equal(pages, 5, order);
      const res = await request(server.url, `/long?$orderby=${order}`, { headers: { Prefer: 'maxpagesize=1' } });
      const link = (res.json() as Envelope)['@nextLink'] as string;
      assert.ok(Buffer.byteLength(link) < 8192, `${order}: a ${Buffer.byteLength(link)}-byte link`);
      assert.ok(String(res.headers.link ?? '').length < 8192 + 20);
    }
  });

  it('should refuse up front, with 400, a query whose link could not stay under 8 KiB', async () => {
    const orderby = Array.from({ length: 1000 }, () => 'title').join(',');
    const res = await request(server.url, `/long?$orderby=${orderby}`);
    assert.equal(res.status, 400);
    assert.match(problemOf(res).detail, /too large to page through/);
    const filter = `title ne '${'y'.repeat(4000)}'`;
    assert.equal((await request(server.url, `/long?$filter=${filter}&$orderby=title,tags,title desc`)).status, 400);
  });
});

describe('pages bounded in bytes', () => {
  const server = serverForSuite({ memory: true }, async (server) => {
    const big = 'b'.repeat(900 * 1024);
    for (let n = 0; n < 12; n++) assert.equal((await create(server.url, `/heavy/h${String(n).padStart(2, '0')}`, { n, big })).status, 201);
  });

  it('should end a page once it passes its byte budget, with a @nextLink that goes on, in JSON and in CSV', async () => {
    for (const accept of ['application/json', 'text/csv']) {
      let next: string | undefined = '/heavy';
      const seen: string[] = [];
      let pages = 0;
      // Read here, not with walkPages: a CSV page has its next link only in the Link header.
      while (next !== undefined) {
        assert.ok(pages < MAX_PAGES, `${accept}: more than ${MAX_PAGES} pages`);
        const res = await request(server.url, next, { headers: { Prefer: 'maxpagesize=1000', Accept: accept } });
        assert.equal(res.status, 200);
        assert.ok(res.body.length < 6 * 1024 * 1024, `${accept}: a page of ${res.body.length} bytes`);
        pages++;
        if (accept === 'application/json') {
          const page = res.json() as Envelope;
          seen.push(...page.value.map((item) => item['id'] as string));
          next = page['@nextLink'];
        } else {
          seen.push(...res.text.split('\r\n').slice(1).filter((line) => line !== '').map((line) => line.split(',')[0] as string));
          next = /<([^>]+)>; rel="next"/.exec(String(res.headers.link ?? ''))?.[1];
        }
      }
      assert.ok(pages >= 3, `${accept}: ${pages} pages`);
      assert.deepEqual(seen, Array.from({ length: 12 }, (_, n) => `h${String(n).padStart(2, '0')}`), accept);
    }
  });
});

describe('query resources', () => {
  const server = serverForSuite({ memory: true, collections: { shop: { cacheControl: 'public, max-age=3600' } } }, async (server) => {
    for (let n = 0; n < 5; n++) assert.equal((await create(server.url, `/shop/s${n}`, { price: n, extra: n === 0 ? 'x' : null })).status, 201);
    const put = await request(server.url, '/shop/$queries/byprice', { method: 'PUT', headers: { ...JSON_HEADERS, 'If-None-Match': '*' }, body: '{"orderby":"extra desc,price"}' });
    assert.equal(put.status, 201);
  });

  it('should refuse options a query resource does not apply, naming them', async () => {
    for (const query of ['$top=1', '$foo=1', 'q=x', '$filter=price gt 1', 'price=1', '$skiptoken=garbage']) {
      const res = await request(server.url, `/shop/$queries/byprice?${query}`);
      assert.equal(res.status, 400, query);
    }
    assert.match(problemOf(await request(server.url, '/shop/$queries/byprice?$top=1')).detail, /'\$top' does not apply/);
  });

  it('should continue at the query resource, not the bare collection, and survive the field it orders by vanishing', async () => {
    const first = envelope(await request(server.url, '/shop/$queries/byprice', { headers: { Prefer: 'maxpagesize=2' } }));
    assert.match(first['@nextLink'] as string, /^\/shop\/\$queries\/byprice\?\$skiptoken=/);
    const itemEtag = (await request(server.url, '/shop/s0')).headers.etag as string;
    assert.equal((await request(server.url, '/shop/s0', { method: 'PUT', headers: { ...JSON_HEADERS, 'If-Match': itemEtag }, body: '{"price":0}' })).status, 200);
    const rest = await walkPages(server.url, first['@nextLink'] as string);
    const ids = [...first.value, ...rest].map((item) => item['id']);
    assert.deepEqual(ids, ['s0', 's1', 's2', 's3', 's4']);
    assert.equal((await request(server.url, `${first['@nextLink'] as string}`.replace('/shop/$queries/byprice', '/shop'))).status, 400, 'a query resource token does not page the bare collection');
  });

  it('should end a walk with 400 when the definition is replaced meanwhile', async () => {
    const first = envelope(await request(server.url, '/shop/$queries/byprice', { headers: { Prefer: 'maxpagesize=2' } }));
    const definition = await request(server.url, '/shop/$queries/byprice/$definition');
    const replaced = await request(server.url, '/shop/$queries/byprice', { method: 'PUT', headers: { ...JSON_HEADERS, 'If-Match': definition.headers.etag as string }, body: '{"orderby":"price desc"}' });
    assert.equal(replaced.status, 200);
    const next = await request(server.url, first['@nextLink'] as string);
    assert.equal(next.status, 400);
    assert.match(problemOf(next).detail, /replaced/);
  });

  it('should never cache a definition public, even when the collection is', async () => {
    assert.equal((await request(server.url, '/shop/s1')).headers['cache-control'], 'public, max-age=3600');
    assert.equal((await request(server.url, '/shop/$queries/byprice/$definition')).headers['cache-control'], 'max-age=0, must-revalidate');
  });

  it('should answer Preference-Applied on later pages when the client sends its preference again', async () => {
    const first = await request(server.url, '/shop?$orderby=price', { headers: { Prefer: 'odata.maxpagesize=2' } });
    assert.equal(first.headers['preference-applied'], 'odata.maxpagesize=2');
    const link = (first.json() as Envelope)['@nextLink'] as string;
    assert.equal((await request(server.url, link, { headers: { Prefer: 'odata.maxpagesize=2' } })).headers['preference-applied'], 'odata.maxpagesize=2');
    assert.equal((await request(server.url, link)).headers['preference-applied'], undefined);
  });
});
