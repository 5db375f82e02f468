// End to end: one write path (lib/writes/writer.ts). A document the server would refuse from a PUT
// is refused the same way on every other path that stores documents: a bulk CSV row (400 naming the
// row, nothing applied) and the --seed data (the start is refused, naming the file and item).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { start } from '../../lib/index.js';
import { silentLogger } from '../../lib/log.js';
import { MemoryStore } from '../../lib/store/memory.js';
import { create, problemOf, request } from '../support/http.js';
import { serverForSuite, withServer } from '../support/server.js';
import { withTempDir } from '../support/temp-dir.js';

const CSV = { 'Content-Type': 'text/csv' } as const;

function nestedArrayText(depth: number): string {
  return '['.repeat(depth) + ']'.repeat(depth);
}

describe('bulk rows go through the write path', () => {
  const server = serverForSuite({ memory: true, collections: { priced: { schema: { name: 'string', price: 'number', tags: 'array' } } } }, async (server) => {
    assert.equal((await create(server.url, '/priced/p1', { name: 'Cup', price: null, tags: [] })).status, 201);
    assert.equal((await create(server.url, '/priced/p2', { name: 'Mug', price: 5, tags: [] })).status, 201);
    assert.equal((await create(server.url, '/loose/l1', { tags: [] })).status, 201);
  });

  it('should refuse a row whose new value breaks the schema, naming the row, as a PUT of that document is refused', async () => {
    const put = await request(server.url, '/priced/p1', { method: 'PUT', headers: { 'Content-Type': 'application/json', 'If-Match': (await request(server.url, '/priced/p1')).headers.etag as string }, body: '{"name":"Cup","price":"cheap","tags":[]}' });
    assert.equal(put.status, 400);
    const bulk = await request(server.url, '/priced/$bulk', { method: 'PUT', headers: CSV, body: 'id,currentPrice,newPrice\np2,5,6\np1,,cheap\n' });
    assert.equal(bulk.status, 400);
    const problem = problemOf(bulk);
    assert.match(problem.detail, /^row 3: /);
    assert.deepEqual(problem.errors, [{ pointer: '/price', row: 3, detail: 'row 3: must be number' }]);
    assert.deepEqual((await request(server.url, '/priced/p2')).json(), { id: 'p2', name: 'Mug', price: 5, tags: [] }, 'nothing of the file is applied');
    assert.deepEqual(problemOf(put).errors, [{ pointer: '/price', detail: 'must be number' }]);
  });

  it('should refuse a row whose new value nests deeper than a PUT allows', async () => {
    const bulk = await request(server.url, '/loose/$bulk', { method: 'PUT', headers: CSV, body: `id,currentTags,newTags\nl1,[],"${nestedArrayText(300)}"\n` });
    assert.equal(bulk.status, 400);
    assert.match(problemOf(bulk).detail, /^row 2: nested deeper than 256 levels/);
    const item = await request(server.url, '/loose/l1');
    assert.equal(item.status, 200, 'the item can still be read');
    assert.deepEqual(item.json(), { id: 'l1', tags: [] });
  });

  it('should refuse a row whose new value holds a number JSON cannot carry, instead of storing null', async () => {
    const bulk = await request(server.url, '/loose/$bulk', { method: 'PUT', headers: CSV, body: 'id,currentTags,newTags\nl1,[],[1e400]\n' });
    assert.equal(bulk.status, 400);
    assert.deepEqual(problemOf(bulk).errors, [{ pointer: '/tags/0', row: 2, detail: 'row 2: number out of range' }]);
    assert.deepEqual((await request(server.url, '/loose/l1')).json(), { id: 'l1', tags: [] });
  });
});

describe('bulk files under contention', () => {
  it('should take turns with other files over the same collection, each row applied once, all answered 200', async () => {
    // Durable: each commit waits for its fsync, so files decided at the same time would race for real.
    await withTempDir('bulk-race', (dataDir) =>
      withServer({ dataDir }, async (server) => {
        const ids = Array.from({ length: 20 }, (_, n) => `r${n}`);
        for (const id of ids) assert.equal((await create(server.url, `/rows/${id}`, { price: 1 })).status, 201);
        const file = `id,currentPrice,newPrice\n${ids.map((id) => `${id},1,2`).join('\n')}\n`;
        const answers = await Promise.all(Array.from({ length: 20 }, () => request(server.url, '/rows/$bulk', { method: 'PUT', headers: CSV, body: file })));
        assert.deepEqual(answers.map((res) => res.status), answers.map(() => 200));
        const reports = answers.map((res) => res.json() as { applied: number; skipped: number });
        assert.equal(reports.reduce((sum, report) => sum + report.applied, 0), 20, 'each row applied by exactly one file');
        assert.equal(reports.reduce((sum, report) => sum + report.skipped, 0), 19 * 20);
      }),
    );
  });

  it('should decide the file again, not answer 503 or log a store failure, while single-item writes keep changing its rows', async () => {
    const logged: string[] = [];
    const store = new MemoryStore();
    const commit = store.commit.bind(store);
    let interferences = 0;
    // A neighbour rewrites a row between the file's decision and its commit, seven times running.
    store.commit = (batch) => {
      const row = batch.mutations.find((mutation) => mutation.kind === 'put' && mutation.collection === 'rows' && mutation.expect !== undefined && 'version' in mutation.expect);
      if (row !== undefined && interferences < 7) {
        interferences++;
        const current = store.get('rows', row.id);
        void commit({ mutations: [{ kind: 'put', collection: 'rows', id: row.id, doc: current?.doc ?? {} }] });
      }
      return commit(batch);
    };
    await withServer({ store, log: (_level, message) => void logged.push(message) }, async (server) => {
      assert.equal((await create(server.url, '/rows/r1', { price: 1 })).status, 201);
      const res = await request(server.url, '/rows/$bulk', { method: 'PUT', headers: CSV, body: 'id,currentPrice,newPrice\nr1,1,2\n' });
      assert.equal(res.status, 200, res.text);
      assert.equal((res.json() as { applied: number }).applied, 1);
      assert.equal(interferences, 7);
      assert.deepEqual(logged.filter((message) => message.includes('store write failed')), []);
    });
  });
});

describe('--seed goes through the write path', () => {
  it('should refuse to start on a seed document a PUT would refuse, naming the file and item', async () => {
    await withTempDir('seed-write', async (dir) => {
      await writeFile(join(dir, 'priced.json'), JSON.stringify([{ id: 'a', price: 1 }, { id: 'b', price: 'free' }]));
      await assert.rejects(
        start({ port: 0, memory: true, log: silentLogger, seed: dir, collections: { priced: { schema: { price: 'number' } } } }),
        (error: Error) => error.message.includes(`seed ${join(dir, 'priced.json')}: priced[1]`) && /\/price must be number/.test(error.message),
      );
    });
  });
});
