// Checks of collections (CONVENTIONS.md#collections and its subsections): pages sized by
// `Prefer: maxpagesize`, an opaque `@nextLink` (also a Link field) that visits every item once, is
// never built from the request's Host and cannot be altered, `$filter` and simple query strings that
// return exactly the matching items, a 4xx for what is not a valid query (an unknown property, a
// syntax error, `q`, a page number), `$orderby`, `$select` summaries with their select link, `$count`,
// `$top` and query resources. They read the run's shared listing (LISTING_ITEMS items,
// lib/check/types.ts), made once by the setup check paging/listing, and never change it; those about
// links, tokens and page sizes need max-page-size's second page first.
import type { JsonObject } from '../../json.js';
import { check, JSON_CREATE_ONLY } from '../define.js';
import {
  expectEnvelope,
  expectHeader,
  expectObject,
  expectProblem,
  expectStatus,
  expectThat,
  seen,
} from '../expect.js';
import type { ProbeResponse } from '../probe.js';
import { LISTING_ITEMS, listingItem, type Check, type CheckContext } from '../types.js';

const PAGE_OF_5 = { Prefer: 'maxpagesize=5' } as const;
/** The largest page a client may ask for; larger asks are clamped to it (CONVENTIONS.md#page-size). */
const MAX_PAGE_SIZE = 1000;
/** A walk of the listing in pages of 5 takes 3 pages; one that goes on longer is following a loop. */
const MAX_PAGES = 2 * Math.ceil(LISTING_ITEMS / 5);
const FOREIGN_HOST = 'evil.example';

export const PAGING_CHECKS: readonly Check[] = [
  // The listing, made once: the collection every check of this section reads (the prerequisite `listing`).
  // These checks are about reading collections, so a server that cannot create with PUT (a POST-only
  // server, as many are) still gets them: the items are POSTed with their ids. Where that does not
  // keep the ids either, the listing is blocked by resources/put-create.
  check('paging', 'listing', { anchor: 'conditional-create' },
    `Setup: ${LISTING_ITEMS} items created with PUT and If-None-Match: * (else POST) in a collection of the run's own`,
    async (c) => {
      await c.makeListing((await c.holds('item')) ? 'PUT' : 'POST');
    }),

  // The prerequisite `pages`: without a next page, no check of links, tokens or page sizes can judge.
  check('paging', 'max-page-size', { anchor: 'page-size', rfc: 'RFC 7240', needs: ['listing'] },
    'Prefer: maxpagesize=5 gives a page of 5 items with "@nextLink"',
    async (c) => {
      const listing = c.listing();
      const first = await page(c, `/${listing}`, PAGE_OF_5);
      const size = first.value.length;
      expectThat(size === 5, `${size} items on a page asked to hold 5: ${seen(first.response)}`);
      const paged = first.next !== undefined;
      expectThat(paged, `no "@nextLink" on a page of 5 of ${LISTING_ITEMS} items: ${seen(first.response)}`);
    }),

  check('paging', 'preference-applied', { anchor: 'page-size', rfc: 'RFC 7240 §3', needs: ['listing', 'pages'] },
    'The page size a page was given is announced as Preference-Applied: maxpagesize=5',
    async (c) => {
      const first = await page(c, `/${c.listing()}`, PAGE_OF_5);
      const applied = expectHeader(first.response, 'preference-applied');
      const five = /(^|[\s,;])(odata\.)?maxpagesize\s*=\s*"?5"?(\s*[,;]|\s*$)/i.test(applied);
      expectThat(five, `Preference-Applied: ${applied}`);
    }),

  check('paging', 'next-link-walk', { anchor: 'paging', needs: ['listing', 'pages'] },
    'Following "@nextLink" visits every item exactly once, and the last page has no "@nextLink"',
    async (c) => {
      const listing = c.listing();
      // How many items each page holds is page-size-kept's rule: this one judges which come back.
      const pages = await walk(c, `/${listing}`, PAGE_OF_5);
      expectIds(pages.flatMap(({ value }) => value), listingIds(), 'the walk', false);
    }),

  check('paging', 'page-size-kept', { anchor: 'page-size', needs: ['listing', 'pages'] },
    'A page reached through "@nextLink" keeps the page size asked for on the first page',
    async (c) => {
      const listing = c.listing();
      const first = await page(c, `/${listing}`, PAGE_OF_5);
      const second = await page(c, nextOf(first));
      expectThat(
        second.value.length === 5,
        `the second page, requested without Prefer, holds ${second.value.length} items: ${seen(second.response)}`,
      );
    }),

  check('paging', 'next-link-header', { anchor: 'collection-envelope', rfc: 'RFC 8288', needs: ['listing', 'pages'] },
    'The next page is also announced as Link: <...>; rel="next", the same URL as "@nextLink"',
    async (c) => {
      const listing = c.listing();
      const first = await page(c, `/${listing}`, PAGE_OF_5);
      const next = nextOf(first);
      const link = expectHeader(first.response, 'link');
      const target = /<([^>]*)>[^,]*;\s*rel\s*=\s*"?next"?/i.exec(link)?.[1];
      expectThat(target !== undefined, `no rel="next" in Link: ${link}`);
      expectThat(
        new URL(target as string, first.response.url).href === next,
        `Link names ${String(target)}, "@nextLink" is ${String(first.next)}`,
      );
    }),

  check('paging', 'next-link-not-from-host', { anchor: 'skip-tokens', needs: ['listing', 'pages'] },
    '"@nextLink" is never built from the request\'s Host field ' +
      '(a forged Host must not steer the next request elsewhere)',
    async (c) => {
      const listing = c.listing();
      const headers = { ...PAGE_OF_5, Host: FOREIGN_HOST };
      const response = await c.send({ method: 'GET', path: `/${listing}`, headers });
      // Refusing a Host the server does not serve (400, 421) builds no link from it either.
      if (response.status >= 400 && response.status < 500) return;
      expectStatus(response, 200);
      const { next } = expectEnvelope(response);
      expectThat(next !== undefined, `no "@nextLink" on a page of 5 of ${LISTING_ITEMS} items: ${seen(response)}`);
      const steered = (next as string).toLowerCase().includes(FOREIGN_HOST);
      expectThat(!steered, `with Host: ${FOREIGN_HOST}, "@nextLink" is ${String(next)}`);
      const link = response.header('link') ?? '';
      expectThat(!link.toLowerCase().includes(FOREIGN_HOST), `with Host: ${FOREIGN_HOST}, Link is ${link}`);
    }),

  check('paging', 'skiptoken-tampered', { anchor: 'skip-tokens', needs: ['listing', 'pages'] },
    'A $skiptoken altered by the client is refused with 400',
    async (c) => {
      const listing = c.listing();
      const first = await page(c, `/${listing}`, PAGE_OF_5);
      const url = new URL(nextOf(first));
      const token = url.searchParams.get('$skiptoken');
      const expected = '/{collection}?$skiptoken=<opaque>';
      expectThat(
        token !== null && token !== '',
        `"@nextLink" ${String(first.next)} carries no $skiptoken (expected ${expected})`,
      );
      const altered = alter(token as string);
      const path = `${url.origin}${url.pathname}?$skiptoken=${encodeURIComponent(altered)}`;
      const response = await c.send({ method: 'GET', path });
      await expectProblem(c, response, 400);
    }),

  check('paging', 'skiptoken-foreign', { anchor: 'skip-tokens', needs: ['listing', 'pages'] },
    'A $skiptoken issued for another collection is refused with 400',
    async (c) => {
      const listing = c.listing();
      const first = await page(c, `/${listing}`, PAGE_OF_5);
      const path = `/${c.collection}${new URL(nextOf(first)).search}`;
      const response = await c.send({ method: 'GET', path });
      await expectProblem(c, response, 400);
    }),

  check('paging', 'default-page-size', { anchor: 'page-size', needs: ['listing'] },
    'Without a preference the page size is about 50: all 12 items on one page, no "@nextLink"',
    async (c) => {
      const listing = c.listing();
      const only = await page(c, `/${listing}`);
      expectThat(
        only.next === undefined,
        `"@nextLink" on a listing of ${LISTING_ITEMS} items without Prefer: ${String(only.next)}`,
      );
      expectIds(only.value, listingIds(), 'the page', false);
    }),

  // A server that ignores maxpagesize (max-page-size failed) has nothing to clamp.
  check('paging', 'max-page-size-clamped', { anchor: 'page-size', needs: ['listing', 'pages'] },
    'A maxpagesize above the maximum is clamped, not refused: Preference-Applied names at most 1000',
    async (c) => {
      const listing = c.listing();
      const only = await page(c, `/${listing}`, { Prefer: 'maxpagesize=5000' });
      expectIds(only.value, listingIds(), 'the page', false);
      const applied = expectHeader(only.response, 'preference-applied');
      const size = /maxpagesize\s*=\s*"?(\d+)/i.exec(applied)?.[1];
      const clamped = size !== undefined && Number(size) <= MAX_PAGE_SIZE;
      expectThat(clamped, `Preference-Applied: ${applied} after asking for 5000`);
    }),

  // The prerequisite `filter`: a server that ignores $filter fails here once, and every other check
  // of a filter (its errors, its operators, $count over matches) is blocked by it.
  check('paging', 'filter-eq', { anchor: 'filter-expressions', rfc: 'OData 4.01 Part 2 §5.1.1', needs: ['listing'] },
    "$filter=category eq 'c3' returns exactly the items whose category is c3",
    async (c) => {
      const listing = c.listing();
      await expectQuery(c, listing, { $filter: "category eq 'c3'" }, listingIds(3, 6, 9, 12));
    }),

  check('paging', 'filter-no-match', { anchor: 'filter-expressions', needs: ['listing', 'filter'] },
    'A well-formed filter with no match answers 200 with an empty "value"',
    async (c) => {
      const listing = c.listing();
      const only = await page(c, query(listing, { $filter: "category eq 'none'" }));
      const empty = only.value.length === 0 && only.next === undefined;
      expectThat(empty, `expected "value": [] and no "@nextLink", got ${seen(only.response)}`);
    }),

  check('paging', 'filter-unknown-property', { anchor: 'filter-errors-and-budget', needs: ['listing', 'filter'] },
    'A non-existent property in a filter is refused with a 4xx problem',
    async (c) => {
      const listing = c.listing();
      const response = await c.send({ method: 'GET', path: query(listing, { $filter: 'nosuchfield eq 1' }) });
      expectThat(response.status >= 400 && response.status < 500, `expected a 4xx, got ${seen(response)}`);
      await expectProblem(c, response, response.status);
    }),

  check('paging', 'filter-syntax-error', { anchor: 'filter-errors-and-budget', needs: ['listing', 'filter'] },
    'A filter that is not well-formed is refused with 400',
    async (c) => {
      const listing = c.listing();
      for (const filter of ['category eq', "(category eq 'c1'"]) {
        await expectProblem(c, await c.send({ method: 'GET', path: query(listing, { $filter: filter }) }), 400);
      }
    }),

  check('paging', 'no-q-parameter', { anchor: 'refused-parameters', needs: ['listing'] },
    'A full query string in q or query is refused with 400, pointing to $filter',
    async (c) => {
      const listing = c.listing();
      for (const name of ['q', 'query']) {
        const response = await c.send({ method: 'GET', path: query(listing, { [name]: "category eq 'c1'" }) });
        await expectProblem(c, response, 400);
        const pointed = response.text.includes('$filter');
        expectThat(pointed, `the problem for ${name}= does not name $filter: ${seen(response)}`);
      }
    }),

  check('paging', 'simple-query', { anchor: 'simple-query-strings', needs: ['listing'] },
    'A simple query string matches by contains (strings) or membership (arrays), and & means AND',
    async (c) => {
      const listing = c.listing();
      await expectQuery(c, listing, { name: 'ITEM 1' }, listingIds(1, 10, 11, 12));
      await expectQuery(c, listing, { category: 'c1', tags: 'even' }, listingIds(4, 10));
    }),

  check('paging', 'orderby', { anchor: 'select-and-orderby', needs: ['listing'] },
    '$orderby=price desc returns the items by descending price',
    async (c) => {
      const listing = c.listing();
      const only = await page(c, query(listing, { $orderby: 'price desc' }));
      expectIds(only.value, listingIds().reverse(), 'the page', true);
    }),

  check('paging', 'select', { anchor: 'select-and-orderby', needs: ['listing'] },
    '$select=name returns summaries holding exactly the selected field plus "@id", ' +
      'the select link to the detail',
    async (c) => {
      const listing = c.listing();
      const only = await page(c, query(listing, { $select: 'name' }));
      const count = only.value.length;
      expectThat(count === LISTING_ITEMS, `${count} summaries of ${LISTING_ITEMS} items: ${seen(only.response)}`);
      const details: string[] = [];
      for (const summary of only.value) {
        const members = Object.keys(summary).sort().join(',');
        const exact = members === '@id,name';
        expectThat(exact, `a summary holds ${members}, not exactly @id and name: ${JSON.stringify(summary)}`);
        const detail = new URL(String(summary['@id']), only.response.url);
        const id = detail.pathname.slice(detail.pathname.lastIndexOf('/') + 1);
        const linked =
          detail.pathname.endsWith(`/${listing}/${id}`) && summary['name'] === listingItem(Number(id.slice(1)))['name'];
        expectThat(linked, `the summary ${JSON.stringify(summary)} does not link to its item`);
        details.push(detail.href);
      }
      const item = await c.send({ method: 'GET', path: details[0] as string });
      expectStatus(item, 200);
      expectThat(
        typeof expectObject(item)['category'] === 'string',
        `the select link ${String(details[0])} does not give the full record: ${seen(item)}`,
      );
    }),

  check('paging', 'count', { anchor: 'count-and-top', needs: ['listing', 'pages', 'filter'] },
    '$count=true adds "@count", the number of all matches, not of the page',
    async (c) => {
      const listing = c.listing();
      const path = query(listing, { $filter: "category eq 'c1'", $count: 'true' });
      const first = await page(c, path, { Prefer: 'maxpagesize=2' });
      const size = first.value.length;
      expectThat(size === 2, `${size} items on a page asked to hold 2: ${seen(first.response)}`);
      expectThat(first.body['@count'] === 4, `"@count" is ${JSON.stringify(first.body['@count'])} for 4 matches`);
    }),

  // Pages that skip or repeat items (next-link-walk failed) cannot show what $top caps.
  check('paging', 'top', { anchor: 'count-and-top', needs: ['listing', 'pages', 'walk'] },
    '$top=3 caps the total across pages: 2 items, then 1, then no "@nextLink"',
    async (c) => {
      const listing = c.listing();
      const pages = await walk(c, query(listing, { $top: '3' }), { Prefer: 'maxpagesize=2' });
      const sizes = pages.map(({ value }) => value.length).join(', ');
      expectThat(sizes === '2, 1', `pages of ${sizes} items for $top=3 in pages of 2`);
    }),

  check('paging', 'filter-in',
    { anchor: 'filter-expressions', rfc: 'OData 4.01 Part 2 §5.1.1.1', needs: ['listing', 'filter'] },
    "$filter with in (...) matches any of the listed values",
    async (c) => {
      const listing = c.listing();
      const expected = listingIds(1, 3, 4, 6, 7, 9, 10, 12);
      await expectQuery(c, listing, { $filter: "category in ('c1','c3')" }, expected);
    }),

  check('paging', 'filter-logic',
    { anchor: 'filter-grammar', rfc: 'OData 4.01 Part 2 §5.1.1', needs: ['listing', 'filter'] },
    '$filter combines and, or and not with OData precedence (not, then and, then or)',
    async (c) => {
      const listing = c.listing();
      const filter = "price gt 30 and not (category eq 'c1') or id eq 'i01'";
      await expectQuery(c, listing, { $filter: filter }, listingIds(1, 5, 6, 8, 9, 11, 12));
    }),

  check('paging', 'filter-functions',
    { anchor: 'filter-expressions', rfc: 'OData 4.01 Part 2 §5.1.1', needs: ['listing', 'filter'] },
    '$filter supports string functions and any() over arrays',
    async (c) => {
      const listing = c.listing();
      const filter = "startswith(name,'item 1') and tags/any(t: t eq 'even')";
      await expectQuery(c, listing, { $filter: filter }, listingIds(10, 12));
    }),

  check('paging', 'no-jump-to-page', { anchor: 'paging', needs: ['listing'] },
    'Jumping to an arbitrary page ($skip, a page number) is refused with 400',
    async (c) => {
      const listing = c.listing();
      const jumps: readonly Readonly<Record<string, string>>[] = [{ $skip: '5' }, { _page: '2' }];
      for (const params of jumps) {
        await expectProblem(c, await c.send({ method: 'GET', path: query(listing, params) }), 400);
      }
    }),

  check('paging', 'query-resource', { anchor: 'query-resources', needs: ['item'] },
    'A query resource created with PUT runs on GET: ' +
      'a cacheable envelope (with an ETag) of exactly the matching items',
    async (c) => {
      const match = await c.newItem({ shade: 'query-match' });
      await c.newItem({ shade: 'other' });
      const path = `/${c.collection}/$queries/${c.newQueryName()}`;
      const body = JSON.stringify({ filter: "shade eq 'query-match'" });
      const created = await c.send({ method: 'PUT', path, headers: JSON_CREATE_ONLY, body });
      expectStatus(created, 201);
      const run = await page(c, path);
      expectIds(run.value, [match.id], 'the query resource', false);
      expectHeader(run.response, 'etag');
    }),
];

interface Page {
  readonly response: ProbeResponse;
  readonly value: JsonObject[];
  readonly next: string | undefined;
  readonly body: JsonObject;
}

/**
 * GET of a collection page: 200 with an envelope. When resources/envelope found the server answers
 * bare arrays, a bare array is read as a page without "@nextLink": the check still judges its own rule
 * (which items, in which order) and the envelope is failed once, there.
 */
async function page(c: CheckContext, path: string, headers?: Readonly<Record<string, string>>): Promise<Page> {
  const response = await c.send({ method: 'GET', path, headers });
  expectStatus(response, 200);
  const body = response.json();
  if (Array.isArray(body) && !(await c.holds('envelope'))) {
    return { response, value: body as JsonObject[], next: undefined, body: {} };
  }
  return { response, ...expectEnvelope(response) };
}

/** Every page from `path` on, following "@nextLink" (resolved against the page's URL, RFC 3986 §5). */
async function walk(c: CheckContext, path: string, headers: Readonly<Record<string, string>>): Promise<Page[]> {
  const pages: Page[] = [];
  let target: string | undefined = path;
  while (target !== undefined) {
    expectThat(pages.length < MAX_PAGES, `still a "@nextLink" after ${MAX_PAGES} pages: ${target}`);
    const current: Page = await page(c, target, headers);
    pages.push(current);
    target = current.next === undefined ? undefined : new URL(current.next, current.response.url).href;
  }
  return pages;
}

/** The absolute URL of a page's "@nextLink"; fails when it has none. */
function nextOf(current: Page): string {
  expectThat(
    current.next !== undefined,
    `no "@nextLink" on a page of ${current.value.length} of ${LISTING_ITEMS} items: ${seen(current.response)}`,
  );
  return new URL(current.next as string, current.response.url).href;
}

/** A listing path with query parameters, names as written (`$filter`), values percent-encoded. */
function query(listing: string, params: Readonly<Record<string, string>>): string {
  const pairs = Object.entries(params).map(([name, value]) => `${name}=${encodeURIComponent(value)}`);
  return `/${listing}?${pairs.join('&')}`;
}

async function expectQuery(
  c: CheckContext,
  listing: string,
  params: Readonly<Record<string, string>>,
  expected: readonly string[],
): Promise<void> {
  const path = query(listing, params);
  const only = await page(c, path);
  expectThat(only.next === undefined, `"@nextLink" on a page of ${only.value.length} matches: ${path}`);
  expectIds(only.value, expected, path, false);
}

/** The listing's ids for item numbers `numbers` (all of them when none are given). */
function listingIds(...numbers: number[]): string[] {
  const all = numbers.length > 0 ? numbers : Array.from({ length: LISTING_ITEMS }, (_, i) => i + 1);
  return all.map((n) => String(listingItem(n)['id']));
}

function expectIds(items: readonly JsonObject[], expected: readonly string[], what: string, ordered: boolean): void {
  const got = items.map((item) => String(item['id']));
  const same = ordered
    ? got.join(',') === expected.join(',')
    : [...got].sort().join(',') === [...expected].sort().join(',');
  expectThat(same, `${what} gave ${got.join(', ') || 'nothing'}; expected ${expected.join(', ')}`);
}

/** The token with its middle character changed to another of the same kind (digit, letter case). */
function alter(token: string): string {
  const at = Math.floor(token.length / 2);
  const char = token[at] as string;
  let replacement: string;
  if (/[0-9]/.test(char)) replacement = char === '1' ? '2' : '1';
  else if (/[a-z]/.test(char)) replacement = char === 'a' ? 'b' : 'a';
  else replacement = char === 'A' ? 'B' : 'A';
  return `${token.slice(0, at)}${replacement}${token.slice(at + 1)}`;
}
