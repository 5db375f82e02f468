// The browsable pages as pure text (lib/html/markup.ts, lib/html/views.ts): user data is escaped
// wherever it lands, and a page offers only the navigation that applies, so a first page has
// no previous link (CONVENTIONS.md#html-pages, CONVENTIONS.md#collection-envelope).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { anchor, escapeHtml } from '../../lib/html/markup.js';
import { itemPage, listPage } from '../../lib/html/views.js';

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
