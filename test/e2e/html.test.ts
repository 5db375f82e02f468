// Browsable HTML (CONVENTIONS.md#html-pages): what a browser's Accept gets on the service document, a
// collection page, an item, a query resource and the inbox; what a JSON client gets is unchanged;
// user data is inert wherever it lands (fields, and event ids, which may hold any character).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ResapiServer } from '../../lib/index.js';
import { webhookSignature } from '../../lib/protocol/signature.js';
import { create, JSON_HEADERS, request } from '../support/http.js';
import { serverForSuite } from '../support/server.js';

/** What Chromium and Firefox send for a page load. */
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';
const SECRET = 'html-test-secret';
const SCRIPT = '<script>document.title="owned"</script>';
const BREAKOUT = '"><img src=x onerror=alert(1)>';

function browse(server: ResapiServer, path: string, headers: Record<string, string> = {}): ReturnType<typeof request> {
  return request(server.url, path, { headers: { Accept: BROWSER_ACCEPT, ...headers } });
}

/** Every link target on a page: what a person can follow from it. */
function links(html: string): { rel: string; href: string; label: string }[] {
  return [...html.matchAll(/<a rel="([^"]*)" href="([^"]*)">([^<]*)<\/a>/g)].map((match) => ({ rel: match[1] as string, href: (match[2] as string).replace(/&amp;/g, '&'), label: match[3] as string }));
}

function assertInert(html: string): void {
  assert.ok(!html.includes('<script'), 'no script element from the data');
  assert.ok(!html.includes('<img'), 'no img element from the data');
  assert.ok(!/<[^>]*\son[a-z]+=/i.test(html), 'no event handler attribute inside a tag');
}

describe('HTML pages for browsers', () => {
  const server = serverForSuite({ memory: true, webhookSecrets: [SECRET], collections: { notes: { cacheControl: 'max-age=60' } } }, async (server) => {
    for (let index = 1; index <= 3; index++) {
      assert.equal((await create(server.url, `/notes/n${index}`, { title: `${SCRIPT} ${index}`, [BREAKOUT]: BREAKOUT, rank: index })).status, 201);
    }
    const query = { filter: 'rank ge 2', orderby: 'rank desc' };
    assert.equal((await request(server.url, '/notes/$queries/top', { method: 'PUT', headers: { ...JSON_HEADERS, 'If-None-Match': '*' }, body: JSON.stringify(query) })).status, 201);
    const event = JSON.stringify({ id: `evt-${SCRIPT}${BREAKOUT}`, event: 'demo.happened' });
    assert.equal((await request(server.url, '/webhooks', { method: 'POST', headers: { ...JSON_HEADERS, 'X-Signature': webhookSignature(event, SECRET) }, body: event })).status, 200);
  });

  it('should answer a browser with a page of the item: its JSON, the JSON ETag and Cache-Control, Home and List', async () => {
    const json = await request(server.url, '/notes/n1');
    const page = await browse(server, '/notes/n1');
    assert.equal(page.status, 200);
    assert.equal(page.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(page.headers['vary'], 'Accept');
    assert.equal(page.headers['cache-control'], 'max-age=60');
    assert.match(String(page.headers['content-security-policy']), /default-src 'none'/);
    assert.notEqual(page.headers['etag'], json.headers['etag'], 'the page is a representation of its own (CONVENTIONS.md#etags)');
    assert.ok(page.text.includes(`<dd>${(json.headers['etag'] as string).replace(/"/g, '&quot;')}</dd>`), 'shows the ETag to send back in If-Match');
    assert.ok(page.text.includes('<dd>max-age=60</dd>'));
    assert.deepEqual(links(page.text).map((link) => [link.label, link.href]), [['Home', '/'], ['List', '/notes']]);
    assertInert(page.text);
    const shown = /<pre id="json">([^<]*)<\/pre>/.exec(page.text)?.[1] ?? '';
    const unescaped = shown.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&');
    assert.deepEqual(JSON.parse(unescaped), json.json());
  });

  it('should revalidate the page with its own ETag (304), and not with the JSON one', async () => {
    const page = await browse(server, '/notes/n1');
    const json = await request(server.url, '/notes/n1');
    assert.equal((await browse(server, '/notes/n1', { 'If-None-Match': page.headers['etag'] as string })).status, 304);
    assert.equal((await browse(server, '/notes/n1', { 'If-None-Match': json.headers['etag'] as string })).status, 200);
  });

  it('should leave what a JSON client gets unchanged, byte for byte', async () => {
    const plain = await request(server.url, '/notes/n1');
    for (const accept of ['application/json', '*/*', 'application/json, text/html;q=0.5']) {
      const res = await request(server.url, '/notes/n1', { headers: { Accept: accept } });
      assert.equal(res.headers['content-type'], 'application/json');
      assert.deepEqual(res.body, plain.body);
      assert.equal(res.headers['etag'], plain.headers['etag']);
    }
    assert.equal(plain.headers['content-security-policy'], undefined);
  });

  it('should list a collection page with a Select link per row and Next only while there is a next page', async () => {
    const first = await browse(server, '/notes', { Prefer: 'maxpagesize=2' });
    assert.equal(first.status, 200);
    assert.equal(first.headers['vary'], 'Accept, Prefer');
    assertInert(first.text);
    const firstLinks = links(first.text);
    assert.deepEqual(firstLinks.filter((link) => link.rel === 'item').map((link) => link.href), ['/notes/n1', '/notes/n2']);
    assert.equal(firstLinks.filter((link) => ['prev', 'previous', 'first'].includes(link.rel)).length, 0, 'the first page has no previous link');
    const next = firstLinks.find((link) => link.rel === 'next');
    assert.ok(next !== undefined);
    assert.equal(`<${next.href}>; rel="next"`, first.headers['link']);
    const second = await browse(server, next.href);
    assert.equal(second.status, 200);
    assert.deepEqual(links(second.text).filter((link) => link.rel === 'item').map((link) => link.href), ['/notes/n3']);
    assert.equal(links(second.text).find((link) => link.rel === 'next'), undefined);
  });

  it('should render a query resource with a List link to its collection', async () => {
    const page = await browse(server, '/notes/$queries/top');
    assert.equal(page.status, 200);
    const shown = links(page.text);
    assert.deepEqual(shown.filter((link) => link.rel === 'item').map((link) => link.href), ['/notes/n3', '/notes/n2']);
    assert.ok(shown.some((link) => link.rel === 'collection' && link.href === '/notes'));
    assertInert(page.text);
  });

  it('should render the service document with the collections and the server listings', async () => {
    const page = await browse(server, '/');
    assert.equal(page.status, 200);
    assert.deepEqual(links(page.text).filter((link) => link.rel === 'item').map((link) => link.href), ['/notes']);
    assert.deepEqual(links(page.text).filter((link) => link.rel === 'related').map((link) => link.href), ['/$inbox', '/$outbox', '/$subscriptions']);
    assert.equal(links(page.text).find((link) => link.rel === 'home'), undefined, 'Home does not apply on Home');
  });

  it('should render the inbox and a received event whose id is hostile markup, inert', async () => {
    const inbox = await browse(server, '/$inbox');
    assert.equal(inbox.status, 200);
    assertInert(inbox.text);
    const select = links(inbox.text).find((link) => link.rel === 'item');
    assert.ok(select !== undefined && select.href.startsWith('/$inbox/evt-%3Cscript%3E'));
    const event = await browse(server, select.href);
    assert.equal(event.status, 200);
    assertInert(event.text);
    assert.ok(event.text.includes('evt-&lt;script&gt;'));
    assert.ok(links(event.text).some((link) => link.rel === 'collection' && link.href === '/$inbox'));
    assert.equal((await browse(server, '/$outbox')).status, 200);
  });

  it('should still refuse what it cannot render (406), and keep CSV where CSV is offered', async () => {
    assert.equal((await request(server.url, '/notes/n1', { headers: { Accept: 'text/csv' } })).status, 406);
    assert.equal((await request(server.url, '/$health', { headers: { Accept: 'text/html' } })).status, 406);
    assert.match((await request(server.url, '/notes', { headers: { Accept: 'text/csv' } })).headers['content-type'] ?? '', /^text\/csv/);
  });
});
