// End to end: the protocol edges a stranger (or an unusual client) reaches, each answered as the RFC
// says and as a problem with a request id: Host (RFC 9112 §3.2), methods nobody implements (RFC 9110
// §15.6.2), OPTIONS * (RFC 9112 §3.2.4), Expect: 100-continue (RFC 9110 §10.1.1), bodies over the cap
// on routes that read none (CONVENTIONS.md#body-cap), preconditions on POST (RFC 9110 §13.1.1), 406 and Vary
// (RFC 9110 §12.5.5), and an empty If-None-Match list (RFC 9110 §5.6.1).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { request as httpRequest } from 'node:http';
import { create, JSON_HEADERS, problemOf, request } from '../support/http.js';
import { serverForSuite } from '../support/server.js';

const MIB = 1024 * 1024;

/** Sends `text` as it is and resolves with everything the server wrote until it closed. */
function rawExchange(base: string, text: string): Promise<string> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname, () => socket.write(text));
    let data = '';
    socket.on('data', (chunk) => (data += chunk.toString('latin1')));
    socket.on('end', () => resolve(data));
    socket.on('error', reject);
  });
}

/** A chunked body of `size` bytes sent with `method`; resolves with the status (the server may close early). */
function chunkedUpload(base: string, method: string, path: string, size: number): Promise<number> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, path, method, agent: false, headers: { 'Transfer-Encoding': 'chunked', 'Content-Type': 'application/json' } });
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', (error: NodeJS.ErrnoException) => (error.code === 'EPIPE' || error.code === 'ECONNRESET' ? undefined : reject(error)));
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    let sent = 0;
    const pump = (): void => {
      while (sent < size) {
        sent += chunk.length;
        if (!req.write(chunk)) {
          req.once('drain', pump);
          return;
        }
      }
      req.end();
    };
    pump();
  });
}

describe('protocol edges', () => {
  const server = serverForSuite({ memory: true }, async (server) => {
    assert.equal((await create(server.url, '/things/a', { name: 'a' })).status, 201);
  });

  it('should answer an HTTP/1.1 request without Host, or with two, 400 as a problem with a request id (RFC 9112 §3.2)', async () => {
    for (const head of ['GET /things/a HTTP/1.1\r\n', 'GET /things/a HTTP/1.1\r\nHost: a\r\nHost: b\r\n', 'GET /things/a HTTP/1.1\r\nHost: a b\r\n']) {
      const text = await rawExchange(server.url, `${head}\r\n`);
      assert.match(text, /^HTTP\/1\.1 400 /, head);
      assert.match(text, /\r\nContent-Type: application\/problem\+json\r\n/i, head);
      assert.match(text, /\r\nX-Request-Id: \S+\r\n/i, head);
      assert.match(text, /Host header field/, head);
    }
  });

  it('should serve an HTTP/1.0 request without Host, which RFC 9112 allows', async () => {
    const text = await rawExchange(server.url, 'GET /things/a HTTP/1.0\r\n\r\n');
    assert.match(text, /^HTTP\/1\.1 200 /);
  });

  it('should answer a method no resource supports 501, as a problem with a request id (RFC 9110 §15.6.2)', async () => {
    const brew = await rawExchange(server.url, 'BREW /things/a HTTP/1.1\r\nHost: localhost\r\n\r\n');
    assert.match(brew, /^HTTP\/1\.1 501 /);
    assert.match(brew, /application\/problem\+json/);
    assert.match(brew, /\r\nX-Request-Id: \S+\r\n/i);
    for (const method of ['PATCH', 'PROPFIND']) {
      const res = await request(server.url, '/things/a', { method });
      assert.equal(res.status, 501, method);
      assert.equal(problemOf(res).type, 'tag:resapi,2026:problem/not-implemented');
    }
    assert.equal((await request(server.url, '/things/a', { method: 'POST' })).status, 405, 'a method some route takes stays 405');
  });

  it('should answer OPTIONS * with 204 and every method the server implements (RFC 9112 §3.2.4)', async () => {
    const text = await rawExchange(server.url, 'OPTIONS * HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
    assert.match(text, /^HTTP\/1\.1 204 /);
    assert.match(text, /\r\nAllow: GET, HEAD, POST, PUT, DELETE, OPTIONS\r\n/);
  });

  it('should answer Expect: 100-continue with a Content-Length over the cap 413, never 100 first', async () => {
    const text = await rawExchange(server.url, `PUT /things/big HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nIf-None-Match: *\r\nContent-Length: ${2 * MIB}\r\nExpect: 100-continue\r\n\r\n`);
    assert.match(text, /^HTTP\/1\.1 413 /);
    assert.doesNotMatch(text, /100 Continue/);
  });

  it('should invite the body with 100 Continue once the checks pass, and only then', async () => {
    const body = '{"name":"b"}';
    const refused = await rawExchange(server.url, `PUT /things/b HTTP/1.1\r\nHost: localhost\r\nContent-Type: text/plain\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`);
    assert.match(refused, /^HTTP\/1\.1 415 /, 'a 415 comes without 100 Continue');
    const url = new URL(server.url);
    const text = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(url.port), url.hostname, () =>
        socket.write(`PUT /things/b HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nIf-None-Match: *\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`),
      );
      let data = '';
      socket.on('data', (chunk) => {
        data += chunk.toString('latin1');
        // The body goes only after the interim response, as a careful client sends it.
        if (data.startsWith('HTTP/1.1 100 Continue\r\n\r\n') && !data.includes('201')) socket.write(body);
      });
      socket.on('end', () => resolve(data));
      socket.on('error', reject);
    });
    assert.match(text, /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 201 /);
  });

  it('should answer 413 to a chunked body over the cap on routes that read no content: GET, DELETE, $undoDelete', async () => {
    for (const [method, path] of [['GET', '/things/a'], ['DELETE', '/things/a'], ['PUT', '/things/a/$undoDelete']] as const) {
      assert.equal(await chunkedUpload(server.url, method, path, 3 * MIB), 413, `${method} ${path}`);
    }
    assert.equal((await request(server.url, '/things/a')).status, 200, 'the DELETE with an oversized body did nothing');
  });

  it('should evaluate If-Match and If-None-Match on POST against the collection (RFC 9110 §13.1.1-2)', async () => {
    const post = (headers: Record<string, string>): ReturnType<typeof request> => request(server.url, '/posted', { method: 'POST', headers: { ...JSON_HEADERS, ...headers }, body: '{"n":1}' });
    assert.equal((await post({ 'If-Match': '"stale"' })).status, 412);
    assert.equal((await post({ 'If-None-Match': '*' })).status, 412, 'the collection always has a representation');
    assert.deepEqual(((await request(server.url, '/posted')).json() as { value: unknown[] }).value, [], 'nothing was created');
    const etag = (await request(server.url, '/posted')).headers.etag as string;
    assert.equal((await post({ 'If-Match': etag })).status, 201);
    assert.equal((await post({ 'If-Match': etag })).status, 412, 'the first POST changed the collection');
    assert.equal((await post({ 'If-Match': '*' })).status, 201);
  });

  it('should send Vary: Accept with a 406, since Accept chose it', async () => {
    const res = await request(server.url, '/things/a', { headers: { Accept: 'image/png' } });
    assert.equal(res.status, 406);
    assert.equal(res.headers.vary, 'Accept');
  });

  it('should read If-None-Match: , as an empty list that matches nothing (RFC 9110 §5.6.1), not as a 400', async () => {
    assert.equal((await request(server.url, '/things/a', { headers: { 'If-None-Match': ',' } })).status, 200);
    const put = await request(server.url, '/things/c', { method: 'PUT', headers: { ...JSON_HEADERS, 'If-None-Match': ' , ' }, body: '{}' });
    assert.equal(put.status, 428, 'an empty list guards nothing, so the PUT still needs a precondition');
  });
});
