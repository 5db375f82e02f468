// End to end: what the route table (lib/routes.ts) derives for every route, including routes added
// later, without a line of handler code: Allow and 405, OPTIONS, HEAD wherever GET, 406, 413 and 415,
// in the order of CONVENTIONS.md#precondition-order (405, then 406, then 413, then 415).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { DEFAULT_CONFIG } from '../../lib/config.js';
import { allowedMethods, endpointFor, routeTable, serverMethods, type RouteEntry } from '../../lib/routes.js';
import { request } from '../support/http.js';
import { serverForSuite } from '../support/server.js';

const SAMPLE: Readonly<Record<string, string>> = { collection: 'things', id: 'x1', name: 'q1', eventId: 'e1', deliveryId: 'd1' };
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
const CAP = DEFAULT_CONFIG.maxBodyBytes;

/** A path the entry's pattern matches, with sample values for its parameters. */
function samplePath(entry: RouteEntry): string {
  return entry.path.replace(/\{([A-Za-z]+)\}/g, (_, name: string) => SAMPLE[name] ?? 'x');
}

/** Sends headers declaring a body over the cap, and no body: the answer must come without it. */
function declaredTooLarge(base: string, method: string, path: string): Promise<{ status: number; connection: string | undefined }> {
  return new Promise((resolve, reject) => {
    const url = new URL(base);
    const req = httpRequest({ host: url.hostname, port: url.port, path, method, agent: false, headers: { 'Content-Length': String(CAP + 1), 'Content-Type': 'application/json' } });
    req.on('response', (res) => {
      res.resume();
      resolve({ status: res.statusCode ?? 0, connection: res.headers.connection });
      req.destroy();
    });
    req.on('error', reject);
    req.flushHeaders();
  });
}

describe('the route table', () => {
  const server = serverForSuite();
  const table = routeTable(DEFAULT_CONFIG);

  it('should answer 405 with the derived Allow for every method a route does not declare, and OPTIONS with 204', async () => {
    const known = serverMethods(table);
    for (const entry of table) {
      const path = samplePath(entry);
      const allow = allowedMethods(entry).join(', ');
      const options = await request(server.url, path, { method: 'OPTIONS' });
      assert.equal(options.status, 204, path);
      assert.equal(options.headers.allow, allow, path);
      for (const method of METHODS) {
        if (allowedMethods(entry).includes(method)) continue;
        const res = await request(server.url, path, { method });
        // RFC 9110 §15.6.2: a method no route takes is 501; one some other route takes is 405 here.
        assert.equal(res.status, known.includes(method) ? 405 : 501, `${method} ${path}`);
        if (res.status === 405) assert.equal(res.headers.allow, allow, `${method} ${path}`);
      }
    }
  });

  it('should answer HEAD wherever GET is declared, with the GET headers and no content', async () => {
    for (const entry of table.filter((candidate) => candidate.methods.GET !== undefined)) {
      const path = samplePath(entry);
      const [get, head] = [await request(server.url, path), await request(server.url, path, { method: 'HEAD' })];
      assert.equal(head.status, get.status, path);
      assert.equal(head.headers['content-type'], get.headers['content-type'], path);
      assert.equal(head.body.length, 0, path);
    }
  });

  it('should answer 406 wherever a route offers representations the Accept header excludes, before 413 and 415', async () => {
    for (const entry of table) {
      for (const method of METHODS) {
        const endpoint = endpointFor(entry, method);
        if (endpoint === undefined || endpoint.produces.length === 0) continue;
        const res = await request(server.url, samplePath(entry), { method, headers: { Accept: 'image/png', 'Content-Type': 'text/plain' }, body: method === 'GET' || method === 'HEAD' ? undefined : 'x' });
        assert.equal(res.status, 406, `${method} ${entry.path}`);
      }
    }
  });

  it('should answer 415 wherever a route reads content of another media type', async () => {
    let checked = 0;
    for (const entry of table) {
      for (const method of METHODS) {
        const endpoint = endpointFor(entry, method);
        if (endpoint?.body === undefined) continue;
        const res = await request(server.url, samplePath(entry), { method, headers: { 'Content-Type': 'text/plain', 'If-None-Match': '*' }, body: 'x' });
        assert.equal(res.status, 415, `${method} ${entry.path}`);
        assert.match(res.text, new RegExp(`Send the body as ${endpoint.body.name.replace(/[()+]/g, '\\$&')}`));
        checked++;
      }
    }
    assert.ok(checked >= 4, `${checked} routes read content`);
  });

  it('should answer 413 before reading a byte wherever a declared Content-Length passes the cap, on every method', async () => {
    for (const entry of table) {
      for (const method of METHODS) {
        if (endpointFor(entry, method) === undefined || method === 'HEAD') continue;
        const res = await declaredTooLarge(server.url, method, samplePath(entry));
        assert.equal(res.status, 413, `${method} ${entry.path}`);
        assert.equal(res.connection, 'close', `${method} ${entry.path}`);
      }
    }
  });
});
