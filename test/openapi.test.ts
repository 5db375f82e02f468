// The OpenAPI 3.1 description (lib/openapi.ts) as a pure function of the configuration and the route
// table: typed schemas from declared collection schemas, statuses derived from the pipeline and the
// handler, every route present, every $ref resolvable, security only with API keys.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_CONFIG, parseConfig, type Config } from '../lib/config.js';
import type { JsonObject } from '../lib/json.js';
import { openApiDocument, operationStatuses } from '../lib/openapi.js';
import { PROBLEM_TYPE_PREFIX, PROBLEM_TYPES } from '../lib/protocol/problem.js';
import { allowedMethods, endpointFor, routeTable, type Endpoint, type RouteEntry, type RouteName } from '../lib/routes.js';
import { documentedStatuses, methodsOf, objectAt, pathItem, refsOf, resolve } from './support/openapi.js';

function configOf(input: Record<string, unknown>): Config {
  const parsed = parseConfig(input);
  if (!parsed.ok) throw new TypeError(parsed.message);
  return parsed.config;
}

const CONFIG = configOf({
  collections: { products: { schema: { name: 'string', price: 'number', onSale: 'boolean', dimensions: 'object', tags: 'array' } }, notes: { cacheControl: 'max-age=60' } },
  webhooks: { path: '/in/hooks' },
});
const OPTIONS = { version: '9.9.9', serverUrl: 'http://127.0.0.1:1234', apiKeys: false };

function operationIds(document: JsonObject): string[] {
  const paths = objectAt(document['paths'], 'paths');
  return Object.keys(paths).flatMap((path) =>
    methodsOf(pathItem(document, path)).map((method) => String(objectAt(pathItem(document, path)[method.toLowerCase()], method)['operationId'])),
  );
}

function entryOf(table: readonly RouteEntry[], name: RouteName): RouteEntry {
  const entry = table.find((candidate) => candidate.name === name);
  assert.ok(entry !== undefined, name);
  return entry;
}

function endpointOf(table: readonly RouteEntry[], name: RouteName, method: string): Endpoint {
  const endpoint = endpointFor(entryOf(table, name), method);
  assert.ok(endpoint !== undefined, `${method} ${name}`);
  return endpoint;
}

describe('openApiDocument', () => {
  const table = routeTable(CONFIG);
  const document = openApiDocument(CONFIG, table, OPTIONS);
  const schemas = objectAt(objectAt(document['components'], 'components')['schemas'], 'schemas');

  it('should declare OpenAPI 3.1.0 with the title, the version given and the server URL', () => {
    assert.equal(document['openapi'], '3.1.0');
    assert.deepEqual({ ...objectAt(document['info'], 'info'), description: '' }, { title: 'resapi', version: '9.9.9', description: '' });
    assert.deepEqual(document['servers'], [{ url: 'http://127.0.0.1:1234' }]);
  });

  it('should type a collection with a declared schema: its fields, each of its type or null, and id; nothing else', () => {
    assert.deepEqual(schemas['Item.products'], {
      type: 'object',
      description: 'An item of products (its declared schema).',
      required: ['id'],
      additionalProperties: false,
      properties: {
        id: objectAt(objectAt(schemas['Item'], 'Item')['properties'], 'Item properties')['id'] ?? null,
        name: { type: ['string', 'null'] },
        price: { type: ['number', 'null'] },
        onSale: { type: ['boolean', 'null'] },
        dimensions: { type: ['object', 'null'] },
        tags: { type: ['array', 'null'] },
      },
    });
    assert.equal(schemas['Item.notes'], undefined, 'a collection without a schema has no typed component');
  });

  it('should give a typed collection its own paths, whose bodies are its typed item', () => {
    const put = objectAt(pathItem(document, '/products/{id}')['put'], 'put');
    assert.deepEqual(put['requestBody'], { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/Item.products' } } } });
    const page = JSON.stringify(objectAt(pathItem(document, '/products')['get'], 'get')['responses']);
    assert.match(page, /Item\.products/);
    assert.ok(!Object.hasOwn(objectAt(document['paths'], 'paths'), '/notes'), 'no concrete path for a schemaless collection');
  });

  it('should list every route of the table with exactly the methods Allow derives, at the configured webhook path', () => {
    for (const entry of table) assert.deepEqual(methodsOf(pathItem(document, entry.path)).sort(), allowedMethods(entry).sort(), entry.path);
    assert.deepEqual(methodsOf(pathItem(document, '/in/hooks')), ['POST', 'OPTIONS']);
    assert.ok(!Object.hasOwn(objectAt(document['paths'], 'paths'), '/webhooks'));
  });

  it('should give every operation an operationId of its own (OpenAPI 3.1 §4.8.10.1: unique)', () => {
    const ids = operationIds(document);
    assert.ok(ids.length > 50, `${ids.length} operations`);
    assert.equal(new Set(ids).size, ids.length);
  });

  it('should resolve every $ref inside the document', () => {
    const refs = refsOf(document);
    assert.ok(refs.length > 100, `${refs.length} references`);
    for (const { ref, at } of refs) assert.notEqual(resolve(document, ref), undefined, `${ref} at ${at}`);
  });

  it('should name every problem type with its title and status', () => {
    const listed = objectAt(schemas['Problem'], 'Problem')['x-problem-types'];
    assert.deepEqual(
      listed,
      Object.entries(PROBLEM_TYPES).map(([type, { title, status }]) => ({ type: PROBLEM_TYPE_PREFIX + type, title, status })),
    );
  });

  it('should describe the collection envelope (CONVENTIONS.md#collection-envelope): value, @count, @nextLink, only value required', () => {
    const envelope = objectAt(schemas['Envelope'], 'Envelope');
    assert.deepEqual(envelope['required'], ['value']);
    assert.deepEqual(Object.keys(objectAt(envelope['properties'], 'properties')), ['@count', 'value', '@nextLink']);
  });

  it('should have no security without API keys', () => {
    assert.equal(document['security'], undefined);
    assert.equal(objectAt(document['components'], 'components')['securitySchemes'], undefined);
    assert.ok(!documentedStatuses(document, '/{collection}/{id}', 'GET').includes(401));
  });
});

describe('operationStatuses', () => {
  const table = routeTable(DEFAULT_CONFIG);

  it("should add the pipeline's statuses to the handler's: 400, 413, 421 and 500 everywhere, 403 on writes, 406 with media, 415 with a body", () => {
    assert.deepEqual(operationStatuses(DEFAULT_CONFIG, entryOf(table, 'item'), endpointOf(table, 'item', 'PUT'), { apiKeys: false }), [200, 201, 400, 403, 406, 412, 413, 415, 421, 428, 500, 503]);
    assert.deepEqual(operationStatuses(DEFAULT_CONFIG, entryOf(table, 'item'), endpointOf(table, 'item', 'GET'), { apiKeys: false }), [200, 304, 400, 404, 406, 412, 413, 421, 500]);
    // DELETE offers no representation and reads no body: no 406, no 415.
    assert.deepEqual(operationStatuses(DEFAULT_CONFIG, entryOf(table, 'item'), endpointOf(table, 'item', 'DELETE'), { apiKeys: false }), [204, 400, 403, 412, 413, 421, 500, 503]);
    assert.deepEqual(operationStatuses(DEFAULT_CONFIG, entryOf(table, 'bulk'), endpointOf(table, 'bulk', 'PUT'), { apiKeys: false }), [200, 400, 403, 406, 413, 415, 421, 500, 503]);
  });

  it('should not document 403 or 421 on the webhook receiver, which its signature alone authenticates (CONVENTIONS.md#host-check)', () => {
    const statuses = operationStatuses(DEFAULT_CONFIG, entryOf(table, 'webhook'), endpointOf(table, 'webhook', 'POST'), { apiKeys: false });
    assert.ok(!statuses.includes(403) && !statuses.includes(421), String(statuses));
  });

  it('should add 401 with API keys on every route but the public ones', () => {
    assert.ok(operationStatuses(DEFAULT_CONFIG, entryOf(table, 'item'), endpointOf(table, 'item', 'GET'), { apiKeys: true }).includes(401));
    assert.ok(!operationStatuses(DEFAULT_CONFIG, entryOf(table, 'health'), endpointOf(table, 'health', 'GET'), { apiKeys: true }).includes(401));
    // The receiver's own 401 (a bad signature) is there with or without keys.
    assert.ok(operationStatuses(DEFAULT_CONFIG, entryOf(table, 'webhook'), endpointOf(table, 'webhook', 'POST'), { apiKeys: false }).includes(401));
  });

  it('should drop 428 when unconditional PUTs are allowed (an upsert never asks for a precondition)', () => {
    const upsert = configOf({ allowUnconditionalPut: true });
    const statuses = operationStatuses(upsert, entryOf(table, 'item'), endpointOf(table, 'item', 'PUT'), { apiKeys: false });
    assert.ok(!statuses.includes(428));
    assert.ok(statuses.includes(412));
  });

  it('should only ever document statuses some problem type or success has, on every operation', () => {
    const problems = new Set<number>(Object.values(PROBLEM_TYPES).map(({ status }) => status));
    for (const entry of table) {
      for (const method of allowedMethods(entry)) {
        const endpoint = endpointFor(entry, method);
        if (endpoint === undefined) continue;
        for (const status of operationStatuses(DEFAULT_CONFIG, entry, endpoint, { apiKeys: true })) {
          assert.ok(status < 400 ? [200, 201, 202, 204, 304].includes(status) : problems.has(status), `${status} on ${method} ${entry.path}`);
        }
      }
    }
  });
});

describe('openApiDocument with API keys', () => {
  const table = routeTable(DEFAULT_CONFIG);
  const document: JsonObject = openApiDocument(DEFAULT_CONFIG, table, { ...OPTIONS, apiKeys: true });

  it('should require the bearer scheme everywhere but on public routes, which opt out', () => {
    assert.deepEqual(objectAt(document['components'], 'components')['securitySchemes'], {
      bearer: { type: 'http', scheme: 'bearer', description: 'An API key as an RFC 6750 bearer token.' },
    });
    assert.deepEqual(document['security'], [{ bearer: [] }]);
    assert.deepEqual(objectAt(pathItem(document, '/$health')['get'], 'get')['security'], []);
    assert.deepEqual(objectAt(pathItem(document, '/webhooks')['post'], 'post')['security'], []);
    assert.equal(objectAt(pathItem(document, '/$openapi')['get'], 'get')['security'], undefined);
    assert.ok(documentedStatuses(document, '/{collection}/{id}', 'GET').includes(401));
    assert.ok(!documentedStatuses(document, '/$health', 'GET').includes(401));
  });
});
