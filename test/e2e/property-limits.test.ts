// End to end: a collection holds at most limits.maxPropertyNames.collection distinct property paths
// and a document at most limits.maxPropertyNames.document; a write beyond either is a 400 naming the
// limit and stores nothing, whichever path it comes by (PUT, POST, a bulk row, --seed); a store
// already beyond a lower limit opens and keeps serving, and only additions past it are refused
// (CONVENTIONS.md#limits, CONVENTIONS.md#filter-errors-and-budget).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { start, type ResapiServer, type StartOptions } from '../../lib/index.js';
import { silentLogger } from '../../lib/log.js';
import { create, JSON_HEADERS, problemOf, request, type TestResponse } from '../support/http.js';
import { serverForSuite, withServer } from '../support/server.js';
import { tempDirsForSuite } from '../support/temp-dir.js';

const INVALID_BODY = 'tag:resapi,2026:problem/invalid-body';
const CSV = { 'Content-Type': 'text/csv' } as const;

/** Asserts `res` is the 400 of the named limit. */
function assertRefusedFor(res: TestResponse, limit: 'collection' | 'document', context: string): void {
  assert.equal(res.status, 400, `${context}: ${res.text.slice(0, 300)}`);
  assert.match(String(res.headers['content-type']), /^application\/problem\+json/, context);
  const problem = problemOf(res);
  assert.equal(problem.type, INVALID_BODY, context);
  assert.match(problem.detail, new RegExp(`limits\\.maxPropertyNames\\.${limit}`), context);
}

/** Whether `name` is a property of `collection` as far as a query can tell (an unknown one is a 400). */
async function isKnown(base: string, collection: string, name: string): Promise<boolean> {
  const res = await request(base, `/${collection}?$filter=${name} eq 1`);
  assert.ok(res.status === 200 || res.status === 400, res.text);
  return res.status === 200;
}

async function count(base: string, collection: string): Promise<number> {
  const res = await request(base, `/${collection}?$count=true`);
  assert.equal(res.status, 200, res.text);
  return (res.json() as { '@count': number })['@count'];
}

/** Asserts that start() refuses `options` with a message matching `reason` (and closes a server that started). */
async function assertStartRefused(options: StartOptions, reason: RegExp): Promise<void> {
  let started: ResapiServer | undefined;
  await assert.rejects(async () => {
    started = await start({ port: 0, log: silentLogger, ...options });
  }, reason);
  await started?.close();
}

/** A document with `id` and one field per name. */
function docOf(names: readonly string[]): Record<string, number> {
  return Object.fromEntries(names.map((name) => [name, 1]));
}

describe('property name limits over HTTP', () => {
  const limits = { maxPropertyNames: { collection: 6, document: 4 } };
  const server = serverForSuite({ memory: true, limits });

  it('should refuse a PUT whose document carries more paths than maxPropertyNames.document, and store nothing', async () => {
    assert.equal((await create(server.url, '/docs/fits', { a: 1, b: { c: 1 } })).status, 201, 'id, a, b and b/c: 4 paths');
    const res = await create(server.url, '/docs/over', { a: 1, b: { c: 1, d: 1 } });
    assertRefusedFor(res, 'document', 'five paths');
    assert.equal((await request(server.url, '/docs/over')).status, 404);
    assert.equal(await isKnown(server.url, 'docs', 'b/d'), false, 'the refused path is not remembered');
    const posted = await request(server.url, '/docs', { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify(docOf(['p', 'q', 'r', 's'])) });
    assertRefusedFor(posted, 'document', 'a POST of id and four fields');
    assert.equal(await count(server.url, 'docs'), 1);
  });

  it('should count the fields of an array of objects once, as paths of the array name', async () => {
    const lines = Array.from({ length: 50 }, (_, n) => ({ qty: n, sku: `s${n}` }));
    assert.equal((await create(server.url, '/orders/o1', { lines })).status, 201, 'id, lines, lines/qty, lines/sku');
  });

  it('should refuse a write that brings a collection past maxPropertyNames.collection, and still take known names', async () => {
    assert.equal((await create(server.url, '/wide/w1', docOf(['a', 'b']))).status, 201);
    assert.equal((await create(server.url, '/wide/w2', docOf(['c', 'd']))).status, 201);
    assert.equal((await create(server.url, '/wide/w3', docOf(['e']))).status, 201, 'id and a-e: 6 paths, the limit');
    assertRefusedFor(await create(server.url, '/wide/w4', docOf(['f'])), 'collection', 'a seventh path by PUT');
    assert.equal((await request(server.url, '/wide/w4')).status, 404);
    const posted = await request(server.url, '/wide', { method: 'POST', headers: JSON_HEADERS, body: '{"g":1}' });
    assertRefusedFor(posted, 'collection', 'a seventh path by POST');
    assert.equal(await count(server.url, 'wide'), 3);
    assert.equal(await isKnown(server.url, 'wide', 'f'), false);
    assert.equal(await isKnown(server.url, 'wide', 'g'), false);
    assert.equal((await create(server.url, '/wide/w5', docOf(['a', 'e']))).status, 201, 'known names are still taken');
    assert.equal(await isKnown(server.url, 'wide', 'e'), true);
  });

  it('should refuse a bulk file whose row brings a new path past the limit, naming the row, and apply no row', async () => {
    for (const id of ['b1', 'b2']) assert.equal((await create(server.url, `/rows/${id}`, { n: { x: 1 } })).status, 201);
    assert.equal((await create(server.url, '/rows/b3', { b: 1, c: 1, d: 1 })).status, 201, 'id, n, n/x, b, c and d: 6 paths');
    const known = await request(server.url, '/rows/$bulk', { method: 'PUT', headers: CSV, body: 'id,currentN/x,newN/x\nb1,1,2\n' });
    assert.equal(known.status, 200, known.text);
    const res = await request(server.url, '/rows/$bulk', { method: 'PUT', headers: CSV, body: 'id,currentN/y,newN/y\nb2,,7\nb1,,8\n' });
    assertRefusedFor(res, 'collection', 'n/y by a bulk row');
    assert.deepEqual(problemOf(res).errors?.map((error) => (error as { row?: number }).row), [2]);
    assert.equal((await request(server.url, '/rows/b1')).text, '{"id":"b1","n":{"x":2}}', 'no row of the refused file applied');
    assert.equal((await request(server.url, '/rows/b2')).text, '{"id":"b2","n":{"x":1}}');
    assert.equal(await isKnown(server.url, 'rows', 'n/y'), false);
  });
});

describe('property name limits on disk: writes in flight, a store beyond a lower limit, --seed', () => {
  const tempDir = tempDirsForSuite('property-limits');

  // On disk, so the writes wait for their fsync together: each is checked while the others are in flight.
  it('should let exactly as many concurrent writes of new names through as the limit leaves room for', async () => {
    await withServer({ dataDir: tempDir(), limits: { maxPropertyNames: { collection: 6 } } }, async (server) => {
      assert.equal((await create(server.url, '/race/r0', {})).status, 201, 'one path: id');
      const names = Array.from({ length: 20 }, (_, n) => `f${n}`);
      const statuses = await Promise.all(names.map((name) => create(server.url, `/race/${name}`, { [name]: 1 }).then((res) => res.status)));
      assert.equal(statuses.filter((status) => status === 201).length, 5, statuses.join(','));
      assert.equal(statuses.filter((status) => status === 400).length, 15, statuses.join(','));
      const known: string[] = [];
      for (const name of names) if (await isKnown(server.url, 'race', name)) known.push(name);
      assert.equal(known.length, 5, 'exactly the names of the writes that were stored are known');
      for (const name of known) assert.equal((await request(server.url, `/race/${name}`)).status, 200, name);
      assert.equal(await count(server.url, 'race'), 6);
    });
  });

  it('should open a store beyond lower limits, serve it, take known names, and refuse only additions', async () => {
    const dataDir = tempDir();
    await withServer({ dataDir }, async (server) => {
      assert.equal((await create(server.url, '/old/a', docOf(['p1', 'p2', 'p3', 'p4', 'p5']))).status, 201);
      assert.equal((await create(server.url, '/old/b', docOf(['q1', 'q2']))).status, 201);
    });
    await withServer({ dataDir, limits: { maxPropertyNames: { collection: 3, document: 3 } } }, async (server) => {
      const a = await request(server.url, '/old/a');
      assert.equal(a.status, 200);
      assert.equal(a.text, '{"id":"a","p1":1,"p2":1,"p3":1,"p4":1,"p5":1}');
      assert.equal((await request(server.url, '/old?$filter=p5 eq 1&$select=id')).text.includes('"a"'), true);
      const etag = (await request(server.url, '/old/b')).headers.etag as string;
      const replaced = await request(server.url, '/old/b', { method: 'PUT', headers: { ...JSON_HEADERS, 'If-Match': etag }, body: '{"q1":2,"p1":3}' });
      assert.equal(replaced.status, 200, 'known names, within the document limit');
      assertRefusedFor(await create(server.url, '/old/c', { z: 1 }), 'collection', 'a new name');
      assertRefusedFor(await create(server.url, '/old/d', docOf(['p1', 'p2', 'p3'])), 'document', 'four known paths');
      assert.equal((await request(server.url, '/old/c')).status, 404);
      assert.equal(await isKnown(server.url, 'old', 'z'), false);
      assert.equal((await create(server.url, '/fresh/x', { y: 1 })).status, 201, 'another collection has room');
    });
    await withServer({ dataDir }, async (server) => {
      assert.equal(await isKnown(server.url, 'old', 'z'), false, 'nothing of the refused write came back after a restart');
      assert.equal(await isKnown(server.url, 'old', 'q2'), true);
      assert.equal(await isKnown(server.url, 'fresh', 'y'), true);
    });
  });

  it('should refuse to start with a --seed whose data passes a limit, naming it, and store nothing', async () => {
    const seedDir = tempDir();
    await writeFile(join(seedDir, 'items.json'), JSON.stringify([{ id: 'a', x: 1, y: 1 }, { id: 'b', z: 1 }]));
    await assertStartRefused({ memory: true, seed: seedDir, limits: { maxPropertyNames: { collection: 3 } } }, /limits\.maxPropertyNames\.collection/);
    await assertStartRefused({ memory: true, seed: seedDir, limits: { maxPropertyNames: { document: 2 } } }, /limits\.maxPropertyNames\.document/);
    const dataDir = join(tempDir(), 'data');
    await mkdir(dataDir);
    await assertStartRefused({ dataDir, seed: seedDir, limits: { maxPropertyNames: { collection: 3 } } }, /limits\.maxPropertyNames\.collection/);
    await withServer({ dataDir, seed: seedDir }, async (server) => {
      assert.equal(await count(server.url, 'items'), 2, 'the refused load stored nothing, so a later start loads the seed');
    });
  });
});
