// resapi in a real browser: Debian's headless Chromium against a real server on 127.0.0.1.
// - HTML pages (CONVENTIONS.md#html-pages): the DOM Chromium builds from the service document, a
//   collection page and an item has only the navigation links that apply (Home, List, Next, Select;
//   CONVENTIONS.md#collection-envelope), the item's JSON, and no element made from stored data: a stored
//   `<script>` or `"><img onerror=…>` ends up as text. A screenshot of an item page is a real PNG.
// - CORS (CONVENTIONS.md#cors; Fetch Standard §3.2): a page on another loopback origin
//   reads an item and its ETag, revalidates it (304), is refused a stale write (412, problem JSON
//   readable) and makes the write with the right ETag (200), all with an API key, so every request is
//   preflighted (Fetch §3.2.2) and every preflight must pass without the key (Fetch §4.8).
// Each test launches Chromium once or twice (launches cost seconds); each launch is bounded by the
// test's own timeout through `t.signal`.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { dumpDom, leftovers, openPage, screenshot } from '../support/chromium.js';
import { create, request } from '../support/http.js';
import { serverForSuite } from '../support/server.js';
import { tempDirsForSuite } from '../support/temp-dir.js';

const SCRIPT = '<script>document.title="owned"</script>';
const BREAKOUT = '"><img src=x onerror=alert(1)>';
const KEY = 'browser-test-key';
/** Per test: a cold Chromium start on a busy two-core machine takes several seconds. */
const BROWSER_TEST = { timeout: 90_000 };
const VIEWPORT = { width: 1200, height: 900 };

/** The links of a rendered page, as Chromium serializes them (attributes in source order). */
function links(dom: string): { rel: string; href: string; label: string }[] {
  return [...dom.matchAll(/<a rel="([^"]*)" href="([^"]*)">([^<]*)<\/a>/g)].map((match) => ({ rel: match[1] as string, href: (match[2] as string).replace(/&amp;/g, '&'), label: match[3] as string }));
}

/** The text of a serialized text node: the HTML serialization escapes only &, <, > and no-break space there. */
function textOf(serialized: string): string {
  return serialized.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&nbsp;/g, '\u00a0').replace(/&amp;/g, '&');
}

/** No element or event handler came from the data: everything hostile stayed text. */
function assertInert(dom: string): void {
  assert.ok(!dom.includes('<script'), 'no script element in the DOM');
  assert.ok(!dom.includes('<img'), 'no img element in the DOM');
  assert.ok(!/<[^>]*\son[a-z]+=/i.test(dom), 'no event handler attribute on any element');
}

/** PNG signature and IHDR (PNG, ISO/IEC 15948 §5.2 and §11.2.2): the first chunk, 13 bytes of header data. */
function pngHeader(png: Buffer): { width: number; height: number } {
  assert.ok(png.length > 24, 'long enough for a signature and an IHDR chunk');
  assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'PNG signature');
  assert.equal(png.readUInt32BE(8), 13, 'IHDR length');
  assert.equal(png.toString('latin1', 12, 16), 'IHDR');
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

describe('resapi pages in headless Chromium', () => {
  // A page size of 2 gives a Next link without Prefer, which a browser's navigation cannot send.
  const server = serverForSuite({ memory: true, pageSize: { default: 2 } }, async (server) => {
    for (let index = 1; index <= 3; index++) {
      assert.equal((await create(server.url, `/notes/n${index}`, { title: `${SCRIPT} ${index}`, [BREAKOUT]: BREAKOUT, rank: index })).status, 201);
    }
  });
  const screenshots = tempDirsForSuite('screens');

  it('should render the service document with a Select link per collection and no Home link', BROWSER_TEST, async (t) => {
    const dom = await dumpDom(`${server.url}/`, t.signal);
    const shown = links(dom);
    assert.deepEqual(shown.filter((link) => link.rel === 'item').map((link) => [link.label, link.href]), [['Select', '/notes']]);
    assert.deepEqual(shown.filter((link) => link.rel === 'related').map((link) => [link.label, link.href]), [['$inbox', '/$inbox'], ['$outbox', '/$outbox'], ['$subscriptions', '/$subscriptions']]);
    assert.equal(shown.find((link) => link.rel === 'home'), undefined, 'Home does not apply on Home');
    assertInert(dom);
  });

  it('should render a collection page with Home, Select links, Next, and the hostile values as text', BROWSER_TEST, async (t) => {
    const dom = await dumpDom(`${server.url}/notes`, t.signal);
    const shown = links(dom);
    assert.deepEqual(shown.filter((link) => link.rel === 'item').map((link) => link.href), ['/notes/n1', '/notes/n2']);
    assert.ok(shown.some((link) => link.rel === 'home' && link.href === '/'));
    const next = shown.find((link) => link.rel === 'next');
    assert.ok(next !== undefined && next.label === 'Next', 'a Next link while a next page exists');
    const json = await request(server.url, '/notes');
    assert.equal(next.href, (json.json() as { '@nextLink': string })['@nextLink'], 'Next leads where @nextLink does');
    assert.equal(shown.filter((link) => ['prev', 'previous', 'first'].includes(link.rel)).length, 0, 'the first page has no previous link');
    assertInert(dom);
    const table = /<table id="items">([\s\S]*?)<\/table>/.exec(dom)?.[1] ?? '';
    assert.ok(textOf(table).includes(`${SCRIPT} 1`), 'the stored <script> is shown as text');
    assert.ok(textOf(table).includes(BREAKOUT), 'the stored breakout is shown as text');
    assert.match(dom, /<title>\/notes<\/title>/, 'nothing ran that could set the title');
  });

  it('should render an item with Home, List, its JSON and its ETag, and screenshot it as a PNG', BROWSER_TEST, async (t) => {
    const dom = await dumpDom(`${server.url}/notes/n1`, t.signal);
    assert.deepEqual(links(dom).map((link) => [link.rel, link.label, link.href]), [['home', 'Home', '/'], ['collection', 'List', '/notes']]);
    assertInert(dom);
    const json = await request(server.url, '/notes/n1');
    const pre = /<pre id="json">([^<]*)<\/pre>/.exec(dom)?.[1];
    assert.ok(pre !== undefined, 'the JSON is shown');
    assert.deepEqual(JSON.parse(textOf(pre)), json.json());
    const facts = textOf(/<dl id="facts">([\s\S]*?)<\/dl>/.exec(dom)?.[1] ?? '');
    assert.ok(facts.includes(json.headers['etag'] as string), 'shows the ETag to send back in If-Match');
    assert.match(dom, /<title>\/notes\/n1<\/title>/);

    const file = join(screenshots(), 'item.png');
    await screenshot(`${server.url}/notes/n1`, file, VIEWPORT, t.signal);
    const png = await readFile(file);
    assert.deepEqual(pngHeader(png), VIEWPORT);
    // A blank 1200×900 PNG deflates to a few hundred bytes; text and table rules make it far larger.
    assert.ok(png.length > 10_000, `a screenshot with content (${png.length} bytes)`);
  });
});

/** What the cross-origin page's script saw, as it reports it. */
interface Seen {
  step?: string;
  error?: string;
  get?: { status: number; etag: string | null; body: unknown };
  conditional?: { status: number; etag: string | null };
  stale?: { status: number; contentType: string | null; body: { status?: number; type?: string; title?: string } };
  put?: { status: number; etag: string | null; contentLocation: string | null; body: unknown };
}

/** The app page: its own script, on its own origin, using resapi across origins with an API key. */
function appPage(api: string): string {
  const script = `
const api = ${JSON.stringify(api)};
const item = api + '/things/t1';
const auth = { Authorization: ${JSON.stringify(`Bearer ${KEY}`)} };
const seen = {};
async function run() {
  seen.step = 'get';
  const got = await fetch(item, { headers: auth });
  seen.get = { status: got.status, etag: got.headers.get('ETag'), body: await got.json() };
  const etag = seen.get.etag;
  seen.step = 'conditional';
  const again = await fetch(item, { headers: { ...auth, 'If-None-Match': etag } });
  seen.conditional = { status: again.status, etag: again.headers.get('ETag') };
  seen.step = 'stale';
  const write = { ...auth, 'Content-Type': 'application/json' };
  const stale = await fetch(item, { method: 'PUT', headers: { ...write, 'If-Match': '"stale"' }, body: JSON.stringify({ n: 2 }) });
  seen.stale = { status: stale.status, contentType: stale.headers.get('Content-Type'), body: await stale.json() };
  seen.step = 'put';
  const put = await fetch(item, { method: 'PUT', headers: { ...write, 'If-Match': etag }, body: JSON.stringify({ n: 2 }) });
  seen.put = { status: put.status, etag: put.headers.get('ETag'), contentLocation: put.headers.get('Content-Location'), body: await put.json() };
  seen.step = 'done';
}
run().catch((error) => { seen.error = String(error); }).then(() => {
  document.getElementById('results').textContent = JSON.stringify(seen);
  return fetch('/results', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(seen) });
});`;
  return `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>app</title></head><body><pre id="results"></pre><script>${script}</script></body></html>\n`;
}

describe('CORS from a page on another origin, in headless Chromium', () => {
  let app: Server;
  let origin: string;
  let reported: Promise<Seen>;
  before(async () => {
    let report: (seen: Seen) => void = () => {};
    reported = new Promise((resolve) => (report = resolve));
    app = createServer((req, res) => {
      if (req.method === 'GET' && req.url === '/') {
        res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' }).end(appPage(server.url));
        return;
      }
      if (req.method === 'POST' && req.url === '/results') {
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () => {
          res.writeHead(204).end();
          report(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Seen);
        });
        return;
      }
      res.writeHead(404).end(); // favicon.ico and anything else
    });
    app.listen(0, '127.0.0.1');
    await once(app, 'listening');
    // The exact serialized origin Chromium sends: 127.0.0.1 and localhost are different origins.
    origin = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
  });
  const server = serverForSuite(() => ({ memory: true, apiKeys: [KEY], cors: { origins: [origin] } }), async (server) => {
    const made = await request(server.url, '/things/t1', { method: 'PUT', headers: { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json', 'If-None-Match': '*' }, body: '{"n":1}' });
    assert.equal(made.status, 201);
  });
  after(async () => {
    app.closeAllConnections();
    app.close();
    await once(app, 'close');
  });

  it('should let the page read the ETag, revalidate (304), see a stale write refused (412) and write with the right ETag (200)', BROWSER_TEST, async (t) => {
    const original = await request(server.url, '/things/t1', { headers: { Authorization: `Bearer ${KEY}` } });
    const page = await openPage(`${origin}/`, t.signal);
    let seen: Seen;
    try {
      seen = await Promise.race([reported, page.failed]);
    } finally {
      await page.close();
    }
    assert.equal(seen.error, undefined, `the page's script failed at step ${String(seen.step)}: ${String(seen.error)}`);
    assert.equal(seen.get?.status, 200);
    assert.equal(seen.get.etag, original.headers['etag'], 'ETag is exposed to the script (Access-Control-Expose-Headers)');
    assert.deepEqual(seen.get.body, { id: 't1', n: 1 });
    // Fetch §4.5 (HTTP-network-or-cache fetch): a request carrying If-None-Match bypasses the browser's
    // cache, so the script sees the server's 304 itself.
    assert.equal(seen.conditional?.status, 304);
    assert.equal(seen.conditional.etag, original.headers['etag']);
    assert.equal(seen.stale?.status, 412);
    assert.equal(seen.stale.contentType, 'application/problem+json');
    assert.equal(seen.stale.body.status, 412, 'the problem body is readable across origins');
    assert.equal(seen.put?.status, 200);
    assert.deepEqual(seen.put.body, { id: 't1', n: 2 });
    const updated = await request(server.url, '/things/t1', { headers: { Authorization: `Bearer ${KEY}` } });
    assert.equal(seen.put.etag, updated.headers['etag'], 'the new ETag the script read is the one a GET returns');
    assert.equal(seen.put.contentLocation, '/things/t1');

    // Every one of those requests carried Authorization, so each was preceded by a preflight that
    // carried no key; resapi counted them as answered 204, not 401.
    const metrics = (await request(server.url, '/$metrics', { headers: { Authorization: `Bearer ${KEY}` } })).text;
    const preflights = [...metrics.matchAll(/^resapi_http_requests_total\{([^}]*)\} ([0-9]+)$/gm)].filter((line) => /method="OPTIONS"/.test(line[1] as string));
    assert.ok(preflights.length > 0, 'the browser sent preflights');
    for (const line of preflights) assert.match(line[1] as string, /status="204"/, 'every preflight was answered 204');
  });
});

describe('headless Chromium clean-up', () => {
  it('should leave no browser process running and no profile behind', () => {
    assert.deepEqual(leftovers(), { processes: [], profiles: [] });
  });
});
