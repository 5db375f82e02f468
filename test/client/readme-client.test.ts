// The README's client reference ("The client", CONVENTIONS.md#client-library) held against the client
// itself, so the two cannot drift apart:
// - its table lists exactly the public members of ResourceClient and the functions 'resapi/client'
//   exports (a member added to the client and not to the table fails here, and so does a row for a
//   member that is gone);
// - each row's "returns" names what the declarations say (MEMBERS and FUNCTIONS are checked by the
//   compiler against the real types), and each member, run against a real server, returns that shape;
// - each status of the "notable ResourceErrors" column is provoked against the server and thrown as a
//   ResourceError with that status, and no status is provoked here that the table does not name;
// - every exported type, every option and every shape written as `{ a, b }` is named as it is.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as clientModule from '../../lib/client/index.js';
import {
  ResourceClient,
  ResourceError,
  type BulkReport,
  type ClientResponse,
  type Item,
  type ListOptions,
  type QueryDefinition,
  type ResourceClientOptions,
} from '../../lib/client/index.js';
import { REPO } from '../support/binary.js';
import { serverForSuite } from '../support/server.js';

/** What a member gives back, as the README's "returns" column names it (its first word). */
type Kind = 'Item' | 'void' | 'AsyncIterable' | 'BulkReport' | 'ClientResponse' | 'string' | 'boolean' | 'class';
type KindOf<M> = M extends abstract new (...args: never[]) => unknown
  ? 'class'
  : M extends (...args: never[]) => infer R
    ? ResultKind<R>
    : M extends string
      ? 'string'
      : never;
type ResultKind<R> = R extends AsyncIterable<unknown>
  ? 'AsyncIterable'
  : Awaited<R> extends Item
    ? 'Item'
    : Awaited<R> extends BulkReport
      ? 'BulkReport'
      : Awaited<R> extends ClientResponse
        ? 'ClientResponse'
        : Awaited<R> extends void
          ? 'void'
          : R extends string
            ? 'string'
            : R extends boolean
              ? 'boolean'
              : never;

// Every public member, and every export: a new one does not compile until it is listed here.
const MEMBERS: { readonly [K in keyof ResourceClient]: KindOf<ResourceClient[K]> } = {
  baseUrl: 'string',
  request: 'ClientResponse',
  get: 'Item',
  create: 'Item',
  add: 'Item',
  replace: 'Item',
  update: 'Item',
  delete: 'void',
  undoDelete: 'Item',
  list: 'AsyncIterable',
  bulk: 'BulkReport',
  defineQuery: 'Item',
  query: 'AsyncIterable',
};
const EXPORTS: { readonly [K in keyof typeof clientModule]: KindOf<(typeof clientModule)[K]> } = {
  ResourceClient: 'class',
  ResourceError: 'class',
  NetworkError: 'class',
  ProtocolError: 'class',
  signWebhook: 'string',
  verifyWebhook: 'boolean',
};
const OPTIONS: { readonly [K in keyof ResourceClientOptions]-?: true } = {
  apiKey: true, headers: true, cache: true, retry: true, maxRetryAfterMs: true, timeoutMs: true,
  updateAttempts: true, fetch: true, clock: true, random: true,
};
// The shapes the README writes as `{ a, b }`, in its order: each must be written exactly so.
const SHAPES: readonly (readonly string[])[] = [
  shape<Item>({ data: 'data', etag: 'etag', url: 'url' }),
  shape<BulkReport>({ applied: 'applied', skipped: 'skipped', conflicts: 'conflicts', notFound: 'notFound' }),
  shape<ClientResponse>({
    status: 'status', url: 'url', headers: 'headers', body: 'body', cache: 'cache', attempts: 'attempts',
    text: 'text()', json: 'json()',
  }),
  shape<ListOptions>({ filter: 'filter?', select: 'select?', orderby: 'orderby?', pageSize: 'pageSize?', top: 'top?' }),
  shape<QueryDefinition>({ filter: 'filter?', orderby: 'orderby?', select: 'select?' }),
];

interface Row {
  readonly name: string;
  readonly returns: string;
  readonly statuses: readonly number[];
}

const README = readFileSync(join(REPO, 'README.md'), 'utf8');
const SECTION = clientSection(README);
const ROWS = tableRows(SECTION);

describe("the README's client reference", () => {
  it('should list every public member of ResourceClient and every exported function, and nothing else', () => {
    const documented = ROWS.map((row) => row.name).sort();
    const functions = Object.keys(EXPORTS).filter((name) => EXPORTS[name as keyof typeof EXPORTS] !== 'class');
    assert.deepEqual(documented, [...Object.keys(MEMBERS), ...functions].sort());
    for (const name of Object.keys(MEMBERS)) {
      assert.ok(name in ResourceClient.prototype || name === 'baseUrl', `${name} is not on ResourceClient`);
    }
    // The classes are named in the prose: the client, and the three errors.
    for (const name of Object.keys(EXPORTS)) assert.ok(named(name), `${name} is not named`);
  });

  it('should say what each member returns as the declarations do', () => {
    const declared: Record<string, Kind> = { ...MEMBERS, ...EXPORTS };
    for (const row of ROWS) assert.equal(row.returns, declared[row.name], `the "returns" of ${row.name}`);
  });

  it("should name every type the client exports, every option, and each shape's fields as they are", () => {
    const index = readFileSync(join(REPO, 'lib/client/index.ts'), 'utf8');
    const types = [...index.matchAll(/export type \{([^}]*)\}/g)].flatMap((match) =>
      (match[1] as string).split(',').map((name) => name.trim()).filter((name) => name !== ''),
    );
    assert.ok(types.length >= 10, `exported types: ${types.join(', ')}`);
    for (const name of types) assert.ok(named(name), `the type ${name} is not named`);
    for (const name of Object.keys(OPTIONS)) assert.ok(named(name), `the option ${name} is not named`);
    for (const fields of SHAPES) {
      const written = `{ ${fields.join(', ')} }`;
      assert.ok(SECTION.includes(written), `${written} is not written so`);
    }
  });
});

describe('the client, as its README reference says', () => {
  const server = serverForSuite();
  const client = (options: ResourceClientOptions = {}): ResourceClient => new ResourceClient(server.url, options);

  it('should return from each member what the "returns" column names', async () => {
    const c = client();
    // Run in this order against one collection; every member once.
    const runs: { readonly [K in keyof ResourceClient]: () => unknown } = {
      baseUrl: () => c.baseUrl,
      create: () => c.create('shapes', 's1', { id: 's1', n: 1 }),
      get: () => c.get('shapes', 's1'),
      replace: async () => c.replace('shapes', 's1', { id: 's1', n: 2 }, (await c.get('shapes', 's1')).etag),
      update: () => c.update('shapes', 's1', (data) => ({ ...data, n: 3 })),
      add: () => c.add('shapes', { n: 4 }, { idempotencyKey: true }),
      list: () => c.list('shapes', { filter: 'n ge 3', pageSize: 1 }),
      bulk: () => c.bulk('shapes', 'id,currentN,newN\ns1,3,5\n'),
      defineQuery: () => c.defineQuery('shapes', 'big', { filter: 'n gt 3', orderby: 'n' }),
      query: () => c.query('shapes', 'big'),
      request: () => c.request('GET', '/shapes/s1'),
      delete: () => c.delete('shapes', 's1'),
      undoDelete: () => c.undoDelete('shapes', 's1'),
    };
    const documented = new Map(ROWS.map((row) => [row.name, row.returns]));
    for (const [name, run] of Object.entries(runs)) {
      await assertReturns(documented.get(name), await run(), name, server.url);
    }
    await assertReturns(documented.get('signWebhook'), clientModule.signWebhook('{}', 'a-secret'), 'signWebhook', '');
    const valid = clientModule.verifyWebhook('{}', clientModule.signWebhook('{}', 'a-secret'), ['a-secret']);
    assert.equal(valid, true);
    await assertReturns(documented.get('verifyWebhook'), valid, 'verifyWebhook', '');
  });

  it('should throw a ResourceError with each status the table names, and the table should name each one provoked', async () => {
    const c = client();
    await c.create('errors', 'e1', { id: 'e1', n: 1 });
    const stale = (await c.get('errors', 'e1')).etag;
    await c.replace('errors', 'e1', { id: 'e1', n: 2 }, stale);
    const provoke: Record<string, () => Promise<unknown>> = {
      'get 404': () => c.get('errors', 'absent'),
      'create 412': () => c.create('errors', 'e1', { id: 'e1' }),
      'add 422': async () => {
        await c.add('errors', { n: 1 }, { idempotencyKey: 'key-1' });
        return c.add('errors', { n: 2 }, { idempotencyKey: 'key-1' });
      },
      'replace 412': () => c.replace('errors', 'e1', { id: 'e1', n: 3 }, stale),
      'update 404': () => c.update('errors', 'absent', (data) => data),
      // Someone else writes between the client's read and its PUT, on its only attempt.
      'update 412': () =>
        client({ updateAttempts: 1 }).update('errors', 'e1', async (data) => {
          const current = await c.get('errors', 'e1', { cacheControl: 'no-cache' });
          await c.replace('errors', 'e1', { ...current.data, other: true }, current.etag);
          return { ...data, n: 9 };
        }),
      'delete 412': () => c.delete('errors', 'e1', { etag: stale }),
      'undoDelete 404': () => c.undoDelete('errors', 'never-deleted'),
      'undoDelete 409': async () => {
        await c.create('errors', 'e2', { id: 'e2' });
        await c.delete('errors', 'e2');
        await c.create('errors', 'e2', { id: 'e2', again: true });
        return c.undoDelete('errors', 'e2');
      },
      'list 400': async () => {
        for await (const item of c.list('errors', { filter: 'n eq' })) assert.fail(`an item: ${JSON.stringify(item)}`);
      },
      'bulk 400': () => c.bulk('errors', 'id,increment\ne1,2\n'),
      'defineQuery 412': async () => {
        await c.defineQuery('errors', 'twice', { filter: 'n gt 1' });
        return c.defineQuery('errors', 'twice', { filter: 'n gt 2' });
      },
      'defineQuery 400': () => c.defineQuery('errors', 'bad', { filter: 'n gt' }),
      'query 404': async () => {
        for await (const item of c.query('errors', 'unknown')) assert.fail(`an item: ${JSON.stringify(item)}`);
      },
    };
    const documented = ROWS.flatMap((row) => row.statuses.map((status) => `${row.name} ${status}`));
    assert.deepEqual([...documented].sort(), Object.keys(provoke).sort());
    for (const [what, run] of Object.entries(provoke)) {
      const status = Number(what.split(' ')[1]);
      await assert.rejects(run(), (error: unknown) => {
        assert.ok(error instanceof ResourceError, `${what}: ${String(error)}`);
        assert.equal(error.status, status, what);
        assert.equal(error.problem.status, status, what);
        return true;
      });
    }
  });
});

/** A type's fields in the README's order and spelling; the compiler holds the list complete. */
function shape<T>(fields: { readonly [K in keyof T]-?: string }): readonly string[] {
  return Object.values(fields);
}

/** Is `name` in one of the section's code spans, as a whole word? */
function named(name: string): boolean {
  const word = new RegExp(`\\b${name}\\b`);
  return [...SECTION.matchAll(/`([^`\n]+)`/g)].some((span) => word.test(span[1] as string));
}

/** The README from "### The client" to the next heading of its level. */
function clientSection(readme: string): string {
  const start = readme.indexOf('### The client\n');
  assert.ok(start !== -1, 'the README has no "### The client" section');
  const end = readme.indexOf('\n### ', start + 1);
  return readme.slice(start, end === -1 ? undefined : end);
}

/** The rows of the section's member table: `name(...)` | `Returns` … | statuses. */
function tableRows(section: string): Row[] {
  const rows: Row[] = [];
  for (const line of section.split('\n')) {
    const cells = line.split('|').slice(1, -1).map((cell) => cell.trim());
    const name = /^`([A-Za-z]+)/.exec(cells[0] ?? '')?.[1];
    if (cells.length !== 3 || name === undefined) continue;
    const returns = /^`([A-Za-z]+)/.exec(cells[1] as string)?.[1];
    assert.ok(returns !== undefined, `the row of ${name} names no type first`);
    const statuses = [...(cells[2] as string).matchAll(/\b([45]\d\d)\b/g)].map((match) => Number(match[1]));
    rows.push({ name, returns, statuses });
  }
  assert.ok(rows.length >= 10, `the member table has ${rows.length} rows`);
  return rows;
}

async function assertReturns(kind: string | undefined, value: unknown, name: string, base: string): Promise<void> {
  switch (kind) {
    case 'Item': {
      const item = value as Item;
      assert.deepEqual(Object.keys(item).sort(), ['data', 'etag', 'url'], name);
      assert.equal(typeof item.data, 'object', name);
      assert.match(item.etag, /^"/, `${name}: a strong ETag`);
      assert.ok(item.url.startsWith(`${base}/`), `${name}: ${item.url}`);
      return;
    }
    case 'void':
      assert.equal(value, undefined, name);
      return;
    case 'AsyncIterable': {
      const items: unknown[] = [];
      for await (const item of value as AsyncIterable<unknown>) items.push(item);
      assert.ok(items.length > 0, `${name}: no items`);
      for (const item of items) assert.equal(typeof item, 'object', name);
      return;
    }
    case 'BulkReport':
      assert.deepEqual(Object.keys(value as BulkReport), ['applied', 'skipped', 'conflicts', 'notFound'], name);
      return;
    case 'ClientResponse': {
      const response = value as ClientResponse;
      assert.equal(response.status, 200, name);
      assert.equal(typeof response.json(), 'object', name);
      return;
    }
    case 'string':
    case 'boolean':
      assert.equal(typeof value, kind, name);
      return;
    default:
      assert.fail(`${name}: the README says it returns ${String(kind)}`);
  }
}
