// End to end: no request can stall the server: every filter runs under a work budget, and one that
// would exceed it is a 400 that says so (CONVENTIONS.md#filter-errors-and-budget). The worst filters the
// limits allow are answered 400 quickly, and a long scan lets a concurrent GET /$health through:
// asserted by the order the answers arrive in, never by a time.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { create, JSON_HEADERS, problemOf, request } from '../support/http.js';
import { serverForSuite } from '../support/server.js';

const TRIPLE_LAMBDA = 'tags/any(a:tags/any(b:tags/any(c:c eq -1)))';

/** A GET that resolves `started` once the server began handling it (100 Continue), and `done` with its status. */
function runningGet(base: string, path: string): { started: Promise<void>; done: Promise<number> } {
  const url = new URL(base);
  const req = httpRequest({ host: url.hostname, port: url.port, path: path.replace(/ /g, '%20'), method: 'GET', agent: false, headers: { Expect: '100-continue' } });
  const started = new Promise<void>((resolve, reject) => {
    req.once('continue', resolve);
    req.once('error', reject);
  });
  const done = new Promise<number>((resolve, reject) => {
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
  });
  req.flushHeaders();
  void started.then(() => req.end());
  return { started, done };
}

describe('filter work budget', () => {
  const server = serverForSuite({ memory: true }, async (server) => {
    const thousand = Array.from({ length: 1000 }, (_, n) => n);
    for (const id of ['a', 'b']) assert.equal((await create(server.url, `/wide/${id}`, { tags: thousand })).status, 201);
    assert.equal((await create(server.url, '/text/t', { body: 'x'.repeat(1024 * 1024 - 64) })).status, 201);
    const three = Array.from({ length: 300 }, (_, n) => n);
    for (let n = 0; n < 300; n++) assert.equal((await create(server.url, `/slow/s${String(n).padStart(3, '0')}`, { tags: three })).status, 201);
  });

  it('should answer a nested lambda whose cost grows as n^depth with 400 saying the filter needs too much work', async () => {
    const res = await request(server.url, `/wide?$filter=${TRIPLE_LAMBDA}`);
    assert.equal(res.status, 400);
    assert.match(problemOf(res).detail, /more work/);
    assert.deepEqual(problemOf(res).errors?.map((item) => (item as { parameter: string }).parameter), ['$filter']);
  });

  it('should answer a concat tree over a 1 MB string with 400 rather than building hundreds of megabytes', async () => {
    // Fifty nested concats, each a megabyte longer than the one inside it: ~1.3 GB built per row.
    let tree = 'body';
    for (let level = 0; level < 50; level++) tree = `concat(${tree},body)`;
    const res = await request(server.url, `/text?$filter=length(${tree}) gt 0`);
    assert.equal(res.status, 400);
    assert.match(problemOf(res).detail, /\$filter/);
  });

  it('should give a stored query the same budget when a plain GET runs it', async () => {
    const put = await request(server.url, '/wide/$queries/worst', { method: 'PUT', headers: { ...JSON_HEADERS, 'If-None-Match': '*' }, body: JSON.stringify({ filter: TRIPLE_LAMBDA }) });
    assert.equal(put.status, 201);
    assert.equal((await request(server.url, '/wide/$queries/worst')).status, 400);
  });

  it('should answer GET /$health while a long filtered scan is running, before the scan ends', async () => {
    // Each item costs a few hundred thousand steps (under the per-item limit); the scan runs until the
    // request's budget is spent, giving the event loop a turn every couple of hundred thousand steps.
    const scan = runningGet(server.url, '/slow?$filter=tags/any(a:tags/any(b:b eq -1))&$count=true');
    await scan.started;
    const order: string[] = [];
    const health = request(server.url, '/$health').then((res) => order.push(`health ${res.status}`));
    const filtered = scan.done.then((status) => order.push(`scan ${status}`));
    await Promise.all([health, filtered]);
    assert.equal(order[0], 'health 200', order.join(', '));
    assert.match(order[1] as string, /^scan (200|400)$/);
  });
});
