// End to end: bad input never loses or corrupts data and always gets a clear problem
// (CONVENTIONS.md#body-cap, CONVENTIONS.md#json-bodies, CONVENTIONS.md#problem-details).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { binaryForFile } from '../support/binary.js';
import { JSON_HEADERS, problemOf, request } from '../support/http.js';
import { peakRss, streamBody, type StreamResult } from '../support/streams.js';

const MIB = 1024 * 1024;
const server = binaryForFile(['--memory']);

function put(path: string, body: string | Buffer, headers: Record<string, string> = {}) {
  return request(server.url, path, { method: 'PUT', headers: { ...JSON_HEADERS, 'If-None-Match': '*', ...headers }, body });
}

describe('malformed bodies', () => {
  it('should answer 400 to malformed JSON and store nothing', async () => {
    const res = await put('/bad/j1', '{"a": ');
    assert.equal(res.status, 400);
    assert.equal(res.headers['content-type'], 'application/problem+json');
    assert.equal(problemOf(res).type, 'tag:resapi,2026:problem/invalid-json');
    assert.equal((await request(server.url, '/bad/j1')).status, 404);
  });

  it('should answer 400 to JSON values that are not objects', async () => {
    for (const body of ['[1,2]', '"text"', '42', 'null', 'true']) {
      const res = await put('/bad/j2', body);
      assert.equal(res.status, 400, body);
      assert.equal(problemOf(res).type, 'tag:resapi,2026:problem/invalid-body', body);
    }
  });

  it('should answer 400 to invalid UTF-8 and to numbers JSON cannot round-trip', async () => {
    assert.equal((await put('/bad/j3', Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]))).status, 400);
    assert.equal((await put('/bad/j3', '{"big": 1e400}')).status, 400);
    assert.equal((await request(server.url, '/bad/j3')).status, 404);
  });

  it('should answer 400 to a body id that differs from the path, and keep the old value', async () => {
    const created = await put('/bad/j4', '{"n":1}');
    const res = await request(server.url, '/bad/j4', { method: 'PUT', headers: { ...JSON_HEADERS, 'If-Match': created.headers.etag as string }, body: '{"id":"other","n":2}' });
    assert.equal(res.status, 400);
    assert.deepEqual(problemOf(res).errors, [{ pointer: '/id', detail: 'must be "j4"' }]);
    assert.deepEqual((await request(server.url, '/bad/j4')).json(), { id: 'j4', n: 1 });
    assert.equal((await put('/bad/j5', '{"id":5}')).status, 400);
  });

  it('should store __proto__ and constructor keys as plain data and pollute no prototype', async () => {
    const doc = '{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}},"n":1}';
    const res = await put('/bad/proto', doc);
    assert.equal(res.status, 201);
    const stored = JSON.parse((await request(server.url, '/bad/proto')).text) as Record<string, unknown>;
    assert.deepEqual(Object.keys(stored), ['id', '__proto__', 'constructor', 'n']);
    assert.equal((await request(server.url, '/bad/proto')).text, `{"id":"proto",${doc.slice(1)}`);
    const other = await put('/bad/clean', '{}');
    assert.deepEqual(other.json(), { id: 'clean' });
    const listed = (await request(server.url, '/bad')).json() as { value: Record<string, unknown>[] };
    assert.deepEqual(Object.keys(listed.value.find((item) => item['id'] === 'proto') ?? {}), ['id', '__proto__', 'constructor', 'n']);
  });
});

describe('media types', () => {
  it('should answer 415 to a missing, non-JSON or non-UTF-8 Content-Type, and to a content coding', async () => {
    const cases: Record<string, string>[] = [{}, { 'Content-Type': 'text/plain' }, { 'Content-Type': 'application/json; charset=latin1' }, { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' }];
    for (const headers of cases) {
      const res = await request(server.url, '/bad/m1', { method: 'PUT', headers: { 'If-None-Match': '*', ...headers }, body: '{}' });
      assert.equal(res.status, 415, JSON.stringify(headers));
    }
    assert.equal((await request(server.url, '/bad/m1')).status, 404);
  });

  it('should accept +json media types and a utf-8 charset', async () => {
    assert.equal((await put('/bad/m2', '{}', { 'Content-Type': 'application/merge-patch+json' })).status, 201);
    assert.equal((await put('/bad/m3', '{}', { 'Content-Type': 'application/json; charset=UTF-8' })).status, 201);
  });
});

describe('headers', () => {
  it('should answer 431 as a problem to an oversized header section', async () => {
    const res = await request(server.url, '/bad/h1', { headers: { 'X-Big': 'x'.repeat(20_000) } });
    assert.equal(res.status, 431);
    assert.equal(problemOf(res).status, 431);
  });

  it('should answer 400 as a problem to a request that is not HTTP', async () => {
    const url = new URL(server.url);
    const text = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(url.port), url.hostname, () => socket.write('HELLO\r\n\r\n'));
      let data = '';
      socket.on('data', (chunk) => (data += chunk.toString()));
      socket.on('end', () => resolve(data));
      socket.on('error', reject);
    });
    assert.match(text, /^HTTP\/1\.1 400 /);
    assert.match(text, /application\/problem\+json/);
  });
});

describe('the body cap', () => {
  it('should answer 413 to a declared Content-Length over 1 MiB before reading the body', async () => {
    const res = await streamUpload('/bad/cap1', 50 * MIB, true);
    assert.equal(res.status, 413);
    assert.equal(res.connection, 'close');
    assert.equal((await request(server.url, '/bad/cap1')).status, 404);
  });

  it('should cut a chunked body at the cap with 413 and Connection: close, readable by the client', async () => {
    const res = await streamUpload('/bad/cap2', 3 * MIB, false);
    assert.equal(res.status, 413);
    assert.equal(res.connection, 'close');
    assert.equal(res.problemStatus, 413);
  });

  it('should accept a body of exactly 1 MiB', async () => {
    const filler = 'x'.repeat(MIB - '{"f":""}'.length);
    assert.equal((await put('/bad/cap3', `{"f":"${filler}"}`)).status, 201);
  });

  it('should not grow its memory with a 50 MiB chunked body', async () => {
    const pid = server.child.pid as number;
    await streamUpload('/bad/warm', 2 * MIB, false);
    const before = peakRss(pid);
    const res = await streamUpload('/bad/cap4', 50 * MIB, false);
    assert.equal(res.status, 413);
    const growth = peakRss(pid) - before;
    assert.ok(growth < 16 * MIB, `peak RSS grew by ${(growth / MIB).toFixed(1)} MiB while 50 MiB were sent`);
    assert.ok(res.sent >= 2 * MIB, 'the client kept sending after the cut (the server drained instead of resetting)');
  });
});


/** Sends `total` bytes as the body of a PUT (declared or chunked) and resolves with the response. */
function streamUpload(path: string, total: number, declared: boolean): Promise<StreamResult> {
  const url = new URL(server.url);
  const headers: Record<string, string | number> = { ...JSON_HEADERS, 'If-None-Match': '*' };
  if (declared) headers['Content-Length'] = total;
  const req = httpRequest({ host: url.hostname, port: url.port, path, method: 'PUT', headers, agent: false });
  const chunk = Buffer.alloc(64 * 1024, 0x20);
  return streamBody(req, { chunk, chunks: Math.ceil(total / chunk.length) });
}
