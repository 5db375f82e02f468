// The browsable pages as pure text (lib/html/markup.ts, lib/html/views.ts): user data is escaped
// wherever it lands, and a page offers only the navigation that applies, so a first page has
// no previous link (CONVENTIONS.md#html-pages, CONVENTIONS.md#collection-envelope).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { anchor, escapeHtml } from '../../lib/html/markup.js';
import { itemPage, ListPage, listPage, type ListRow } from '../../lib/html/views.js';
import type { JsonObject, JsonValue } from '../../lib/json.js';
import { mulberry32 } from '../support/random.js';

const HOSTILE = `<script>alert(1)</script>"><img src=x onerror=alert(2)>'&`;

describe('escapeHtml', () => {
  it('should escape the five characters that can end text or a quoted attribute', () => {
    assert.equal(escapeHtml(`<a href="x" title='y'>&</a>`), '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;');
  });

  it('should leave other text alone', () => {
    assert.equal(escapeHtml('café 42 / ü'), 'café 42 / ü');
  });

  it('should escape the href and the label of an anchor', () => {
    assert.equal(anchor('item', '/a?b="c"', '<b>'), '<a rel="item" href="/a?b=&quot;c&quot;">&lt;b&gt;</a>');
  });
});

describe('itemPage', () => {
  const page = itemPage({ title: '/products/p1', nav: { home: '/', list: '/products' }, doc: { id: 'p1', name: HOSTILE }, facts: [{ name: 'ETag', value: '"abc"' }] });

  it('should show the JSON, escaped, and never a raw tag from the data', () => {
    assert.ok(!page.includes('<script>'));
    assert.ok(!page.includes('<img'));
    assert.ok(page.includes('&lt;script&gt;alert(1)&lt;/script&gt;'));
    assert.match(page, /<pre id="json">\{\n {2}&quot;id&quot;: &quot;p1&quot;,/);
  });

  it('should offer Home and List, and no paging links', () => {
    assert.ok(page.includes('<a rel="home" href="/">Home</a>'));
    assert.ok(page.includes('<a rel="collection" href="/products">List</a>'));
    assert.ok(!page.includes('rel="next"'));
    assert.ok(!page.includes('rel="prev"'));
  });

  it('should show a large document compactly, so a deep one cannot grow the page by its indentation', () => {
    let deep: unknown = Array.from({ length: 10_000 }, () => 0);
    for (let level = 0; level < 200; level++) deep = [deep];
    const large = itemPage({ title: '/t/deep', nav: {}, doc: { id: 'deep', deep: deep as number[] }, facts: [] });
    const json = JSON.stringify({ id: 'deep', deep });
    assert.ok(large.includes(`<pre id="json">${json.replace(/"/g, '&quot;')}</pre>`));
    assert.ok(large.length < json.length * 2);
  });

  it('should show the facts it is given', () => {
    assert.ok(page.includes('<dt>ETag</dt><dd>&quot;abc&quot;</dd>'));
  });

  it('should show its tables after the JSON, a row per object and a cell per named column, escaped and clipped', () => {
    const rows: JsonObject[] = [{ at: 't1', status: 503 }, { at: 't2', error: HOSTILE.repeat(10), extra: 'not a column' }];
    const tables = [{ id: 'attempts', heading: 'Attempt log', columns: ['at', 'status', 'error'], rows }];
    const withTable = itemPage({ title: '/$outbox/d1', nav: {}, doc: { id: 'd1' }, facts: [], tables });
    const table = withTable.slice(withTable.indexOf('</pre>'));
    assert.match(table, /<h2>Attempt log<\/h2>\n<table id="attempts">\n<thead><tr><th>at<\/th><th>status<\/th><th>error<\/th><\/tr><\/thead>/);
    assert.ok(table.includes('<tr><td>t1</td><td>503</td><td></td></tr>'));
    assert.ok(!table.includes('<script>') && !table.includes('not a column'));
    assert.ok(table.includes('&lt;script&gt;alert(1)') && table.includes('…</td></tr>'), 'escaped, and clipped to 120 characters');
  });
});

describe('listPage', () => {
  it('should give every row a Select link and a column per field, escaping names and values', () => {
    const page = listPage({
      title: '/things',
      nav: { home: '/' },
      rows: [
        { doc: { id: 'a', [HOSTILE]: 1 }, select: '/things/a' },
        { doc: { id: 'b', note: HOSTILE, nested: { deep: [1, 2] }, '@id': '/things/b' }, select: '/things/b' },
      ],
      facts: [],
    });
    assert.ok(!page.includes('<script>') && !page.includes('<img'));
    assert.equal(page.match(/<a rel="item" href="\/things\/[ab]">Select<\/a>/g)?.length, 2);
    assert.ok(page.includes('<td>{&quot;deep&quot;:[1,2]}</td>'));
    assert.ok(!page.includes('<th>@id</th>'), 'the select link is the Select column, not a field column');
  });

  it('should offer Next only when there is a next page, and never a previous link', () => {
    const rows = [{ doc: { id: 'a' }, select: '/t/a' }];
    const first = listPage({ title: '/t', nav: { home: '/', next: '/t?$skiptoken=x' }, rows, facts: [] });
    const last = listPage({ title: '/t', nav: { home: '/' }, rows, facts: [] });
    assert.ok(first.includes('<a rel="next" href="/t?$skiptoken=x">Next</a>'));
    assert.ok(!last.includes('rel="next"'));
    for (const page of [first, last]) assert.ok(!/rel="(prev|previous|last)"/.test(page));
  });

  it('should say so when a page is empty', () => {
    assert.ok(listPage({ title: '/t', nav: {}, rows: [], facts: [] }).includes('<p id="empty">'));
  });
});

/** Rows with what changes an HTML page's size: new columns, escaping (up to six bytes a character), long values. */
function randomRow(random: () => number, index: number): ListRow {
  const names = ['id', HOSTILE, 'é', '😀', '@id', 'x'.repeat(130), `${'y'.repeat(119)}😀z`, '&'];
  const values: (() => JsonValue)[] = [
    () => '',
    () => null,
    () => HOSTILE,
    () => '<'.repeat(200),
    () => `${'a'.repeat(119)}😀 cut inside the pair`,
    () => 42,
    () => ({ nested: [HOSTILE] }),
    () => '\ud800 lone',
  ];
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
  const doc: JsonObject = {};
  for (let member = Math.floor(random() * 4); member > 0; member--) doc[pick(names)] = pick(values)();
  return { doc, select: `/t/${index}?a=1&b="2"` };
}

describe('ListPage', () => {
  const frame = { title: `/t ${HOSTILE}`, nav: { home: '/', list: '/l' }, count: 7, facts: [{ name: 'Cache-Control', value: 'no-cache' }] };

  it('should know the UTF-8 bytes of its text, with and without Next, after every add and pop (property)', () => {
    const random = mulberry32(0x47a1);
    for (let run = 0; run < 300; run++) {
      const page = new ListPage(run % 2 === 0 ? frame : { title: 'resapi', nav: { related: [{ href: '/$inbox', label: '$inbox' }] }, facts: [] });
      const rows = Array.from({ length: Math.floor(random() * 6) }, (_, index) => randomRow(random, index));
      const check = (label: string): void => {
        for (const next of [undefined, '/t?$skiptoken=a&b']) {
          assert.equal(page.bytes(next), Buffer.byteLength(page.text(next)), `run ${run} ${label}: ${JSON.stringify(rows)}`);
        }
      };
      check('empty');
      for (const row of rows) {
        assert.equal(page.add(row), true);
        check(`after ${page.rowCount} rows`);
      }
      while (page.rowCount > 0) {
        page.pop();
        check(`popped to ${page.rowCount} rows`);
      }
    }
  });

  it('should write what listPage writes for the same rows', () => {
    const rows = [randomRow(mulberry32(1), 0), randomRow(mulberry32(2), 1), { doc: { id: 'z', more: 1 }, select: '/t/z' }];
    const page = new ListPage(frame);
    for (const row of rows) page.add(row);
    assert.equal(page.text('/next'), listPage({ ...frame, nav: { ...frame.nav, next: '/next' }, rows }));
  });

  it('should refuse a row that would pass the limit, counting the empty cells it adds to every row', () => {
    const page = new ListPage(frame);
    for (let index = 0; index < 10; index++) assert.equal(page.add({ doc: { id: `r${index}` }, select: `/t/r${index}` }), true);
    const before = page.bytes();
    const wide: ListRow = { doc: { id: 'w', fresh: 'v' }, select: '/t/w' };
    // `<th>fresh</th>`, an empty `<td></td>` in each of the ten rows, and the row itself with its LF.
    const row = Buffer.byteLength(`\n<tr><td>${anchor('item', '/t/w', 'Select')}</td><td>w</td><td>v</td></tr>`);
    const grows = '<th>fresh</th>'.length + 10 * '<td></td>'.length + row;
    assert.equal(page.add(wide, before + grows - 1), false);
    assert.equal(page.bytes(), before, 'a refused row leaves the page as it was');
    assert.ok(!page.text().includes('fresh'));
    assert.equal(page.add(wide, before + grows), true);
    assert.equal(page.bytes(), before + grows);
  });

  it('should clip a long column heading as it clips a cell, without splitting a surrogate pair', () => {
    const page = new ListPage(frame);
    page.add({ doc: { [`${'h'.repeat(119)}😀tail`]: `${'v'.repeat(119)}😀tail` }, select: '/t/1' });
    const text = page.text();
    assert.ok(text.includes(`<th>${'h'.repeat(119)}…</th>`));
    assert.ok(text.includes(`<td>${'v'.repeat(119)}…</td>`));
    assert.ok(!text.includes('\ufffd'));
  });

  it("should offer Home's links to the server's own listings as related links", () => {
    const page = new ListPage({ title: 'resapi', nav: { related: [{ href: '/$inbox', label: '$inbox' }] }, facts: [] });
    assert.ok(page.text().includes('<a rel="related" href="/$inbox">$inbox</a>'));
    assert.ok(!page.text().includes('rel="home"'));
  });
});
