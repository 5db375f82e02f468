// GET /$openapi (CONVENTIONS.md#openapi) against a real server: the description is checked structurally (every
// $ref resolves, every operation has responses, every route of the table is listed), then against
// the server itself: every documented path and method answers through its route with a status
// documented for it, and statuses cheap to provoke (201, 304, 404, 405, 406, 412, 413, 415, 428,
// 401) come back documented for the operation that gave them, with the header fields documented.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { parseConfig, type Config } from '../../lib/config.js';
import type { JsonObject } from '../../lib/json.js';
import { isJsonObject } from '../../lib/json.js';
import { webhookSignature } from '../../lib/protocol/signature.js';
import { endpointFor, routeTable } from '../../lib/routes.js';
import { create, JSON_HEADERS, request, type TestResponse } from '../support/http.js';
import { documentedHeaders, documentedStatuses, methodsOf, objectAt, pathItem, refsOf, resolve } from '../support/openapi.js';
import { serverForSuite } from '../support/server.js';
import type { ConfigOptions } from '../../lib/index.js';

const SECRET = 'openapi-test-secret';
const KEY = 'openapi-test-key';
const CONFIG_INPUT: ConfigOptions = {
  collections: { products: { schema: { name: 'string', price: 'number', tags: 'array' } } },
};
/** Fields every response may carry that no operation lists: they belong to the exchange, not the resource. */
const EXCHANGE_FIELDS = new Set(['x-request-id', 'date', 'content-type', 'content-length', 'connection', 'keep-alive']);

function configOf(input: Record<string, unknown>): Config {
  const parsed = parseConfig(input);
  if (!parsed.ok) throw new TypeError(parsed.message);
  return parsed.config;
}

async function describeServer(base: string, headers: Readonly<Record<string, string>> = {}): Promise<{ res: TestResponse; document: JsonObject }> {
  const res = await request(base, '/$openapi', { headers });
  assert.equal(res.status, 200);
  const document: unknown = res.json();
  assert.ok(isJsonObject(document));
  return { res, document };
}

/**
 * The answer came from the operation's route and is documented for it: its status, and (for a
 * success) every resource header field it carries. A 404 from the router would name no resource.
 */
function assertDocumented(document: JsonObject, path: string, method: string, res: TestResponse): void {
  const what = `${method} ${path} → ${res.status}`;
  assert.ok(documentedStatuses(document, path, method).includes(res.status), `${what} is not documented`);
  if (res.status === 404) assert.doesNotMatch(res.text, /No resource is addressed/, `${what}: the router found no route`);
  const documented = documentedHeaders(document, path, method, res.status);
  for (const name of Object.keys(res.headers)) {
    if (EXCHANGE_FIELDS.has(name)) continue;
    assert.ok(documented.includes(name), `${what}: header ${name} is not documented`);
  }
}

/** Sends headers declaring a body over the cap, and no body (the answer must come without it). */
function declaredTooLarge(base: string, method: string, path: string, length: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const url = new URL(base);
    const req = httpRequest({ host: url.hostname, port: url.port, path, method, agent: false, headers: { 'Content-Length': String(length), 'Content-Type': 'application/json' } });
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
      req.destroy();
    });
    req.on('error', reject);
    req.flushHeaders();
  });
}

describe('GET /$openapi', () => {
  const config = configOf(CONFIG_INPUT);
  let document: JsonObject;
  /** Values for path parameters that name things that exist, so reads answer 200. */
  const sample: Record<string, string> = { collection: 'products', id: 'p1', name: 'cheap', eventId: 'e1', deliveryId: '' };
  const server = serverForSuite({ webhookSecrets: [SECRET], ...CONFIG_INPUT }, async (server) => {
    assert.equal((await create(server.url, '/products/p1', { name: 'Pen', price: 2, tags: ['office'] })).status, 201);
    assert.equal((await create(server.url, '/products/$queries/cheap', { filter: 'price lt 5' })).status, 201);
    // A subscription makes a delivery of the next change; it goes nowhere (port 9), which is fine here.
    assert.equal((await create(server.url, '/$subscriptions/p1', { url: 'http://127.0.0.1:9/hook', events: ['*'], secret: 's' })).status, 201);
    assert.equal((await create(server.url, '/products/p3', { name: 'Ink', price: 9 })).status, 201);
    const event = JSON.stringify({ id: 'e1', event: 'order.created' });
    assert.equal((await request(server.url, '/webhooks', { method: 'POST', headers: { ...JSON_HEADERS, 'X-Signature': webhookSignature(event, SECRET) }, body: event })).status, 200);
    const outbox = (await request(server.url, '/$outbox')).json() as { value: { id: string }[] };
    sample['deliveryId'] = outbox.value[0]?.id ?? '';
    assert.notEqual(sample['deliveryId'], '');
    ({ document } = await describeServer(server.url));
  });

  it('should answer JSON with an ETag, 304 on revalidation, and HEAD without content', async () => {
    const { res } = await describeServer(server.url);
    assert.equal(res.headers['content-type'], 'application/json');
    assert.match(res.headers.etag ?? '', /^"[^"]+"$/);
    const again = await request(server.url, '/$openapi', { headers: { 'If-None-Match': res.headers.etag ?? '' } });
    assert.equal(again.status, 304);
    assert.equal(again.headers.etag, res.headers.etag);
    assert.equal(again.body.length, 0);
    const head = await request(server.url, '/$openapi', { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.headers.etag, res.headers.etag);
    assert.equal(head.body.length, 0);
  });

  it('should be OpenAPI 3.1 naming this server, and every $ref should resolve', () => {
    assert.equal(document['openapi'], '3.1.0');
    assert.deepEqual(document['servers'], [{ url: server.url }]);
    for (const { ref, at } of refsOf(document)) assert.notEqual(resolve(document, ref), undefined, `${ref} at ${at}`);
  });

  it('should give every operation of every path item at least one response', () => {
    const paths = objectAt(document['paths'], 'paths');
    for (const path of Object.keys(paths)) {
      const methods = methodsOf(pathItem(document, path));
      assert.ok(methods.length > 0, path);
      for (const method of methods) assert.ok(documentedStatuses(document, path, method).length > 0, `${method} ${path}`);
    }
  });

  it('should list every route of the route table with each of its methods, HEAD wherever GET', () => {
    for (const entry of routeTable(config)) {
      const methods = methodsOf(pathItem(document, entry.path));
      for (const declared of Object.keys(entry.methods)) assert.ok(methods.includes(declared), `${declared} ${entry.path}`);
      assert.equal(methods.includes('HEAD'), entry.methods.GET !== undefined, entry.path);
      for (const method of methods) assert.ok(method === 'OPTIONS' || endpointFor(entry, method) !== undefined, `${method} ${entry.path} is not in the table`);
    }
  });

  it('should type the items of a collection with a declared schema as the server stores them', async () => {
    const typed = objectAt(resolve(document, '#/components/schemas/Item.products'), 'Item.products');
    const properties = objectAt(typed['properties'], 'properties');
    const item = (await request(server.url, '/products/p1')).json() as Record<string, unknown>;
    for (const [field, value] of Object.entries(item)) {
      const schema = objectAt(properties[field], `the schema of ${field}`);
      const type = Array.isArray(value) ? 'array' : typeof value;
      assert.ok(schema['type'] === type || (Array.isArray(schema['type']) && schema['type'].includes(type)), `${field}: ${type}`);
    }
  });

  it('should answer every documented path and method through its route, with a documented status', async () => {
    const paths = objectAt(document['paths'], 'paths');
    // Writes come last, and only ones that change nothing (a stale If-Match, no precondition, a bad signature).
    const order = ['OPTIONS', 'GET', 'HEAD', 'POST', 'PUT', 'DELETE'];
    let sent = 0;
    for (const method of order) {
      for (const path of Object.keys(paths)) {
        if (!methodsOf(pathItem(document, path)).includes(method)) continue;
        const concrete = path.replace(/\{([A-Za-z]+)\}/g, (_, name: string) => encodeURIComponent(sample[name] ?? 'x'));
        const operation = objectAt(pathItem(document, path)[method.toLowerCase()], `${method} ${path}`);
        const body = isJsonObject(operation['requestBody'] ?? null) ? objectAt(operation['requestBody'], 'requestBody') : undefined;
        const media = body === undefined ? undefined : Object.keys(objectAt(body['content'], 'content'))[0];
        const headers: Record<string, string> = method === 'DELETE' ? { 'If-Match': '"stale"' } : {};
        if (media !== undefined) headers['Content-Type'] = media;
        const content = media === undefined ? undefined : media === 'text/csv' ? 'id,currentPrice,newPrice\r\np1,2,2\r\n' : '{}';
        const res = await request(server.url, concrete, { method, headers, ...(content === undefined ? {} : { body: content }) });
        assertDocumented(document, path, method, res);
        sent++;
      }
    }
    assert.ok(sent > 60, `${sent} requests`);
  });

  it('should document 201, 304, 404, 412 and 428 where the item route gives them, with their header fields', async () => {
    const item = '/products/{id}';
    const created = await create(server.url, '/products/p2', { name: 'Pad', price: 3 });
    assert.equal(created.status, 201);
    assertDocumented(document, item, 'PUT', created);
    assert.ok(created.headers.location !== undefined && created.headers.etag !== undefined);
    const read = await request(server.url, '/products/p2');
    assertDocumented(document, item, 'GET', read);
    const revalidated = await request(server.url, '/products/p2', { headers: { 'If-None-Match': read.headers.etag ?? '' } });
    assert.equal(revalidated.status, 304);
    assertDocumented(document, item, 'GET', revalidated);
    const missing = await request(server.url, '/products/nope');
    assert.equal(missing.status, 404);
    assertDocumented(document, item, 'GET', missing);
    const stale = await request(server.url, '/products/p2', { method: 'PUT', headers: { ...JSON_HEADERS, 'If-Match': '"stale"' }, body: '{}' });
    assert.equal(stale.status, 412);
    assertDocumented(document, item, 'PUT', stale);
    const unconditional = await request(server.url, '/products/p2', { method: 'PUT', headers: JSON_HEADERS, body: '{}' });
    assert.equal(unconditional.status, 428);
    assertDocumented(document, item, 'PUT', unconditional);
  });

  it('should document 406, 413 and 415 on the operations that give them', async () => {
    const refused = await request(server.url, '/products/p1', { headers: { Accept: 'image/png' } });
    assert.equal(refused.status, 406);
    assertDocumented(document, '/products/{id}', 'GET', refused);
    const csv = await request(server.url, '/products/p1', { method: 'PUT', headers: { 'Content-Type': 'text/plain', 'If-None-Match': '*' }, body: 'x' });
    assert.equal(csv.status, 415);
    assertDocumented(document, '/products/{id}', 'PUT', csv);
    const status = await declaredTooLarge(server.url, 'POST', '/products', config.maxBodyBytes + 1);
    assert.equal(status, 413);
    assert.ok(documentedStatuses(document, '/products', 'POST').includes(413));
    assert.ok(documentedStatuses(document, '/{collection}/$bulk', 'PUT').includes(415));
  });

  it('should list in each path item exactly the methods a 405 allows', async () => {
    for (const [path, concrete] of [['/products/{id}', '/products/p1'], ['/$openapi', '/$openapi'], ['/webhooks', '/webhooks'], ['/{collection}/$bulk', '/things/$bulk']] as const) {
      const listed = methodsOf(pathItem(document, path));
      // A method some other route takes (one that none takes is 501, RFC 9110 §15.6.2).
      const method = ['DELETE', 'POST', 'PUT', 'GET'].find((candidate) => !listed.includes(candidate)) as string;
      const res = await request(server.url, concrete, { method });
      assert.equal(res.status, 405, `${method} ${concrete}`);
      assert.deepEqual((res.headers.allow ?? '').split(', ').sort(), listed.sort(), path);
    }
    assert.notEqual(resolve(document, '#/components/responses/Problem405'), undefined);
  });
});

describe('GET /$openapi with API keys', () => {
  let document: JsonObject;
  const auth = { Authorization: `Bearer ${KEY}` };
  const server = serverForSuite({ apiKeys: [KEY], ...CONFIG_INPUT }, async (server) => {
    ({ document } = await describeServer(server.url, auth));
  });

  it('should itself require the key', async () => {
    const res = await request(server.url, '/$openapi');
    assert.equal(res.status, 401);
    assertDocumented(document, '/$openapi', 'GET', res);
  });

  it('should document the 401 a route gives without a key, and no 401 on the public routes', async () => {
    const res = await request(server.url, '/products/p1');
    assert.equal(res.status, 401);
    assertDocumented(document, '/products/{id}', 'GET', res);
    const health = await request(server.url, '/$health');
    assert.equal(health.status, 200);
    assertDocumented(document, '/$health', 'GET', health);
    assert.ok(!documentedStatuses(document, '/$health', 'GET').includes(401));
    assert.deepEqual(document['security'], [{ bearer: [] }]);
  });

  it('should document the private, Vary: Authorization answers of a keyed read', async () => {
    assert.equal((await request(server.url, '/products/k1', { method: 'PUT', headers: { ...JSON_HEADERS, ...auth, 'If-None-Match': '*' }, body: '{"name":"Key"}' })).status, 201);
    const res = await request(server.url, '/products/k1', { headers: auth });
    assert.equal(res.status, 200);
    assert.match(res.headers.vary ?? '', /Authorization/);
    assertDocumented(document, '/products/{id}', 'GET', res);
  });
});
