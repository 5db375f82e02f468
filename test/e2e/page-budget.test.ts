// End to end: every representation of a page ends by the same byte budget, `limits.pageBytes`
// (CONVENTIONS.md#page-byte-budget): JSON, CSV and HTML pages of wide items are cut short with a next link
// that goes on, a CSV's columns count before any row is built, a page that cannot hold even its first
// item is refused with a problem naming the limit, and the service document pages like any collection
// (CONVENTIONS.md#service-document).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseCsv } from '../../lib/csv/parse.js';
import { create, problemOf, request, type TestResponse } from '../support/http.js';
import { MAX_PAGES, walkPages } from '../support/pages.js';
import { serverForSuite } from '../support/server.js';

const PAGE_BYTES = 16 * 1024;
/** 60 items of 40 properties each, no two items sharing a property: every page's table is wide. */
const ITEMS = 60;
const PROPERTIES = 40;
const IDS = Array.from({ length: ITEMS }, (_, n) => `w${String(n).padStart(2, '0')}`);
const HTML_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

function wideItem(n: number): Record<string, unknown> {
  return Object.fromEntries(Array.from({ length: PROPERTIES }, (_, j) => [`p${n}_${j}`, `value ${n}.${j} <&>`]));
}

interface ReadPage {
  readonly ids: readonly string[];
  readonly bytes: number;
  readonly next: string | undefined;
}

/** One page as CSV: the ids of its rows, and its next link, which CSV carries in Link only. */
function csvPage(res: TestResponse): ReadPage {
  const parsed = parseCsv(res.text);
  assert.ok(parsed.ok, res.text.slice(0, 300));
  const [header, ...rows] = parsed.rows;
  const idColumn = (header ?? []).indexOf('id');
  assert.ok(idColumn >= 0, 'an id column');
  const next = /<([^>]+)>; rel="next"/.exec(String(res.headers.link ?? ''))?.[1];
  return { ids: rows.map((row) => row[idColumn] as string), bytes: res.body.length, next };
}

/** One page as HTML: the items its Select links lead to, and its Next link (the same as its Link field). */
function htmlPage(res: TestResponse): ReadPage {
  const anchors = [...res.text.matchAll(/<a rel="([^"]*)" href="([^"]*)">/g)].map((match) => ({
    rel: match[1] as string,
    href: (match[2] as string).replaceAll('&amp;', '&'),
  }));
  const ids = anchors.filter((anchor) => anchor.rel === 'item').map((anchor) => anchor.href.slice(anchor.href.lastIndexOf('/') + 1));
  const next = anchors.find((anchor) => anchor.rel === 'next')?.href;
  assert.equal(next, /<([^>]+)>; rel="next"/.exec(String(res.headers.link ?? ''))?.[1], 'Next and Link agree');
  return { ids, bytes: res.body.length, next };
}

/** Follows every next link from `path` as `accept`, as a client of that media type does. */
async function walk(base: string, path: string, accept: string, read: (res: TestResponse) => ReadPage): Promise<ReadPage[]> {
  const pages: ReadPage[] = [];
  for (let next: string | undefined = path; next !== undefined; next = pages.at(-1)?.next) {
    assert.ok(pages.length < MAX_PAGES, `${accept}: more than ${MAX_PAGES} pages`);
    const res = await request(base, next, { headers: { Accept: accept, Prefer: 'maxpagesize=1000' } });
    assert.equal(res.status, 200, `${accept} ${next}: ${res.text.slice(0, 300)}`);
    pages.push(read(res));
  }
  return pages;
}

function assertWithinBudget(pages: readonly ReadPage[], label: string): void {
  assert.ok(pages.length >= 3, `${label}: ${pages.length} pages`);
  for (const [index, page] of pages.entries()) {
    assert.ok(page.bytes <= PAGE_BYTES, `${label}: page ${index} is ${page.bytes} bytes, over ${PAGE_BYTES}`);
  }
  assert.deepEqual(pages.flatMap((page) => page.ids), IDS, `${label}: every item exactly once, in order`);
}

describe('page byte budget for every representation', () => {
  const server = serverForSuite({ memory: true, limits: { pageBytes: PAGE_BYTES } }, async (server) => {
    for (const [n, id] of IDS.entries()) assert.equal((await create(server.url, `/wide/${id}`, wideItem(n))).status, 201);
  });

  it('should end a CSV page of wide items by the budget, its columns counted, with a Link that goes on', async () => {
    assertWithinBudget(await walk(server.url, '/wide', 'text/csv', csvPage), 'text/csv');
  });

  it('should end an HTML page of wide items by the budget of the bytes sent, with a Next link that goes on', async () => {
    assertWithinBudget(await walk(server.url, '/wide', HTML_ACCEPT, htmlPage), 'text/html');
  });

  it('should end a JSON page by the configured budget, its envelope and @nextLink included', async () => {
    const sizes: number[] = [];
    const items = await walkPages<{ id: string }>(server.url, '/wide', {
      headers: { Prefer: 'maxpagesize=1000' },
      onPage: (page) => {
        sizes.push(page.response.body.length);
      },
    });
    assert.ok(sizes.length >= 3, `${sizes.length} pages`);
    for (const size of sizes) assert.ok(size <= PAGE_BYTES, `a JSON page of ${size} bytes`);
    assert.deepEqual(items.map((item) => item.id), IDS);
  });

  it('should keep the budget on a query that selects, orders and filters, in every representation', async () => {
    const path = "/wide?$orderby=id desc&$filter=id ne 'w07'";
    const expected = IDS.filter((id) => id !== 'w07').reverse();
    for (const [accept, read] of [['text/csv', csvPage], [HTML_ACCEPT, htmlPage]] as const) {
      const pages = await walk(server.url, path, accept, read);
      for (const page of pages) assert.ok(page.bytes <= PAGE_BYTES, `${accept}: a page of ${page.bytes} bytes`);
      assert.deepEqual(pages.flatMap((page) => page.ids), expected, accept);
    }
  });
});

describe('a page whose first item alone passes the budget', () => {
  const server = serverForSuite({ memory: true, limits: { pageBytes: PAGE_BYTES } }, async (server) => {
    // 900 properties with long names: the CSV header alone is about 24 KB, the JSON item about 35 KB.
    const huge = Object.fromEntries(Array.from({ length: 900 }, (_, j) => [`a_rather_long_property_name_${String(j).padStart(4, '0')}`, j]));
    assert.equal((await create(server.url, '/huge/h1', huge)).status, 201);
    assert.equal((await create(server.url, '/huge/h2', { small: true })).status, 201);
  });

  it('should refuse it as CSV or HTML with a problem naming limits.pageBytes and suggesting $select', async () => {
    for (const accept of ['text/csv', HTML_ACCEPT]) {
      const res = await request(server.url, '/huge', { headers: { Accept: accept } });
      assert.equal(res.status, 400, `${accept}: ${res.text.slice(0, 300)}`);
      assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
      const { detail } = problemOf(res);
      assert.match(detail, /limits\.pageBytes/);
      assert.match(detail, /\$select/);
    }
  });

  it('should answer the same page with $select, and JSON with the item alone on its page', async () => {
    const selected = await request(server.url, '/huge?$select=small', { headers: { Accept: 'text/csv' } });
    assert.equal(selected.status, 200, selected.text.slice(0, 300));
    assert.ok(selected.body.length <= PAGE_BYTES);
    const pages: number[] = [];
    const items = await walkPages<{ id: string }>(server.url, '/huge', { onPage: (page) => void pages.push(page.value.length) });
    assert.deepEqual(items.map((item) => item.id), ['h1', 'h2']);
    assert.deepEqual(pages, [1, 1], 'the over-budget item alone on its page, then the rest');
  });
});

describe('the service document pages', () => {
  const COLLECTIONS = 200;
  const names = Array.from({ length: COLLECTIONS }, (_, n) => `c${String(n).padStart(3, '0')}`);
  const server = serverForSuite({ memory: true, limits: { pageBytes: 4096 }, collections: { zconfigured: {} } }, async (server) => {
    for (const name of names) assert.equal((await create(server.url, `/${name}/x`, { n: 1 })).status, 201);
  });
  const everyName = [...names, 'zconfigured'];

  it('should page GET / by the default page size, with @nextLink and Link, listing every collection once', async () => {
    const first = await request(server.url, '/');
    assert.equal(first.status, 200);
    const body = first.json() as { value: { name: string }[]; '@nextLink'?: string };
    assert.equal(body.value.length, 50, 'the default page size');
    assert.ok(body['@nextLink'] !== undefined, 'a @nextLink');
    assert.equal(first.headers.link, `<${body['@nextLink']}>; rel="next"`);
    const listed = await walkPages<{ name: string; url: string }>(server.url, '/');
    assert.deepEqual(listed.map((entry) => entry.name), everyName);
    assert.ok(listed.every((entry) => entry.url === `/${entry.name}`));
  });

  it('should end a page of GET / by the byte budget, in JSON and in HTML', async () => {
    const sizes: number[] = [];
    const listed = await walkPages<{ name: string }>(server.url, '/', {
      headers: { Prefer: 'maxpagesize=1000' },
      onPage: (page) => void sizes.push(page.response.body.length),
    });
    assert.deepEqual(listed.map((entry) => entry.name), everyName);
    assert.ok(sizes.length >= 2 && sizes.every((size) => size <= 4096), `JSON pages of ${sizes.join(', ')} bytes`);
    const pages = await walk(server.url, '/', HTML_ACCEPT, htmlPage);
    assert.ok(pages.length >= 2 && pages.every((page) => page.bytes <= 4096), `HTML pages of ${pages.map((page) => page.bytes).join(', ')} bytes`);
    assert.deepEqual(pages.flatMap((page) => page.ids), everyName);
  });
});
