// Summaries by default: a collection configured with `summary` lists those fields and "@id", a link
// to the detail, on its pages unless the request's `$select` asks otherwise (CONVENTIONS.md#summaries).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { create, JSON_HEADERS, request } from '../support/http.js';
import { serverForSuite, withServer } from '../support/server.js';

interface Envelope {
  value: Record<string, unknown>[];
  '@nextLink'?: string;
}

describe('collections with a summary', () => {
  const server = serverForSuite({ memory: true, collections: { products: { summary: ['name', 'price', 'dims/width'] } } }, async (server) => {
    for (const [id, price] of [['p1', 5], ['p2', 12], ['p3', 30]] as const) {
      assert.equal((await create(server.url, `/products/${id}`, { name: `Product ${id}`, price, stock: 4, dims: { width: 2, depth: 3 } })).status, 201);
    }
  });

  it('should list the summary fields plus the @id select link on every page', async () => {
    const first = (await request(server.url, '/products', { headers: { Prefer: 'maxpagesize=2' } })).json() as Envelope;
    assert.deepEqual(first.value[0], { '@id': '/products/p1', name: 'Product p1', price: 5, dims: { width: 2 } });
    assert.ok(first['@nextLink'] !== undefined);
    const second = (await request(server.url, first['@nextLink'])).json() as Envelope;
    assert.deepEqual(second.value, [{ '@id': '/products/p3', name: 'Product p3', price: 30, dims: { width: 2 } }], 'a later page keeps the summary');
  });

  it('should lead from the select link to the full item', async () => {
    const page = (await request(server.url, '/products')).json() as Envelope;
    const detail = (await request(server.url, page.value[0]?.['@id'] as string)).json();
    assert.deepEqual(detail, { id: 'p1', name: 'Product p1', price: 5, stock: 4, dims: { width: 2, depth: 3 } });
  });

  it('should give way to the request\'s $select, and to $select=* for whole items', async () => {
    const chosen = (await request(server.url, '/products?$select=stock')).json() as Envelope;
    assert.deepEqual(chosen.value[0], { '@id': '/products/p1', stock: 4 });
    const whole = (await request(server.url, '/products?$select=*')).json() as Envelope;
    assert.deepEqual(whole.value[0], { id: 'p1', name: 'Product p1', price: 5, stock: 4, dims: { width: 2, depth: 3 } });
  });

  it('should filter and order as usual, listing summaries', async () => {
    const page = (await request(server.url, '/products?$filter=price gt 10&$orderby=price desc')).json() as Envelope;
    assert.deepEqual(page.value.map((item) => item['@id']), ['/products/p3', '/products/p2']);
  });

  it('should list summaries as CSV and in the HTML page, whose Select leads to the full item', async () => {
    const csv = await request(server.url, '/products', { headers: { Accept: 'text/csv' } });
    assert.equal(csv.text.split('\r\n')[0], '@id,name,price,dims/width');
    const html = await request(server.url, '/products', { headers: { Accept: 'text/html' } });
    assert.ok(html.text.includes('<a rel="item" href="/products/p1">Select</a>'));
    assert.ok(!html.text.includes('<th>stock</th>'));
  });

  it('should apply to a query resource without its own select', async () => {
    const made = await request(server.url, '/products/$queries/cheap', { method: 'PUT', headers: { ...JSON_HEADERS, 'If-None-Match': '*' }, body: JSON.stringify({ filter: 'price lt 20' }) });
    assert.equal(made.status, 201);
    const page = (await request(server.url, '/products/$queries/cheap')).json() as Envelope;
    assert.deepEqual(Object.keys(page.value[0] ?? {}), ['@id', 'name', 'price', 'dims']);
  });

  it('should accept a summary field that no item has yet: validity never depends on the items', async () => {
    await withServer({ memory: true, collections: { things: { summary: ['label'] } } }, async (empty) => {
      assert.equal((await request(empty.url, '/things')).status, 200);
      assert.equal((await create(empty.url, '/things/t1', { other: 1 })).status, 201);
      const page = (await request(empty.url, '/things')).json() as Envelope;
      assert.deepEqual(page.value, [{ '@id': '/things/t1', label: null }]);
    });
  });
});
