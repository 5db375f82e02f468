// End to end: a page answered from the page cache, through its prepared answers
// (lib/resources/prepared-reads.ts), is byte for byte the answer its build gave (the Date aside):
// first pages and later ones, with and without Prefer, 200, 304 and HEAD, with CORS fields, and again
// after a write changed the collection (CONVENTIONS.md#paging, #conditional-reads, #page-size, #cors).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { create } from '../support/http.js';
import { serverForSuite } from '../support/server.js';

const APP = 'https://app.example';

/** Sends one request on a connection of its own; resolves with the whole answer, its Date line taken out. */
function exchange(base: string, method: string, target: string, fields: Readonly<Record<string, string>> = {}): Promise<string> {
  const url = new URL(base);
  const lines = [`${method} ${target} HTTP/1.1`, `Host: ${url.host}`, 'Connection: close'];
  for (const [name, value] of Object.entries(fields)) lines.push(`${name}: ${value}`);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname, () => socket.write(`${lines.join('\r\n')}\r\n\r\n`));
    let data = '';
    socket.on('data', (chunk) => (data += chunk.toString('latin1')));
    socket.on('end', () => resolve(data.replace(/\r\nDate: [^\r]*/, '')));
    socket.on('error', reject);
  });
}

function field(answer: string, name: string): string | undefined {
  return new RegExp(`\\r\\n${name}: ([^\\r]*)`, 'i').exec(answer)?.[1];
}

/** The target of the answer's next link. */
function next(answer: string): string {
  const link = field(answer, 'Link');
  assert.ok(link !== undefined, 'the page has a next link');
  const url = new URL(/^<([^>]*)>/.exec(link)?.[1] as string, 'http://resapi.test');
  return url.pathname + url.search;
}

describe('prepared reads', () => {
  const server = serverForSuite({ memory: true, pageSize: { default: 2 }, cors: { origins: [APP] } });
  let collections = 0;

  /** A new collection of five items, so its first answer is built. */
  async function fresh(): Promise<string> {
    const name = `prepared${collections++}`;
    for (let n = 0; n < 5; n++) assert.equal((await create(server.url, `/${name}/i${n}`, { n })).status, 201);
    return `/${name}`;
  }

  it('should answer a kept first page and a kept later page as their builds did', async () => {
    const path = await fresh();
    const built = await exchange(server.url, 'GET', path);
    assert.match(built, /^HTTP\/1\.1 200 OK\r\n/);
    assert.equal(await exchange(server.url, 'GET', path), built);
    const later = next(built);
    const builtLater = await exchange(server.url, 'GET', later);
    assert.equal(await exchange(server.url, 'GET', later), builtLater);
    assert.equal(await exchange(server.url, 'HEAD', later), builtLater.slice(0, builtLater.indexOf('\r\n\r\n') + 4));
  });

  it('should answer each Prefer spelling with its own Preference-Applied, a later page with its token size', async () => {
    const path = await fresh();
    const plain = await exchange(server.url, 'GET', path);
    const spelled = await exchange(server.url, 'GET', path, { Prefer: 'odata.maxpagesize=2' });
    assert.equal(field(spelled, 'Preference-Applied'), 'odata.maxpagesize=2');
    assert.equal(spelled.replace(/\r\nPreference-Applied: [^\r]*/, ''), plain);
    assert.equal(await exchange(server.url, 'GET', path, { Prefer: 'odata.maxpagesize=2' }), spelled);
    const later = await exchange(server.url, 'GET', next(plain), { Prefer: 'maxpagesize=4' });
    assert.equal(field(later, 'Preference-Applied'), 'maxpagesize=2', 'the token names the page size');
    assert.equal(await exchange(server.url, 'GET', next(plain), { Prefer: 'maxpagesize=4' }), later);
  });

  it('should answer a kept page 304 and 412 as a build does, and with CORS fields', async () => {
    const path = await fresh();
    const etag = field(await exchange(server.url, 'GET', `${path}?n=1`), 'ETag') as string;
    const revalidated = await exchange(server.url, 'GET', `${path}?n=1`, { 'If-None-Match': etag });
    assert.match(revalidated, /^HTTP\/1\.1 304 Not Modified\r\n/);
    assert.equal(field(revalidated, 'Content-Type'), undefined);
    const failed = await exchange(server.url, 'GET', `${path}?n=1`, { 'If-Match': '"other"' });
    assert.match(failed, /^HTTP\/1\.1 412 /);
    const cors = { Origin: APP, 'If-None-Match': etag };
    const fromPage = await exchange(server.url, 'GET', `${path}?n=2`, { Origin: APP });
    assert.equal(await exchange(server.url, 'GET', `${path}?n=2`, { Origin: APP }), fromPage);
    assert.equal(field(fromPage, 'Vary'), 'Accept, Prefer, Origin');
    assert.equal(field(fromPage, 'Access-Control-Allow-Origin'), APP);
    const corsRevalidated = await exchange(server.url, 'GET', `${path}?n=1`, cors);
    assert.equal(field(corsRevalidated, 'Vary'), 'Accept, Prefer, Origin');
    assert.equal(corsRevalidated.replace(/\r\nVary: [^\r]*|\r\nAccess-Control-[^\r]*/g, ''), revalidated.replace(/\r\nVary: [^\r]*/, ''));
  });

  it('should answer the new page once a write changed the collection', async () => {
    const path = await fresh();
    const before = await exchange(server.url, 'GET', path);
    assert.equal((await create(server.url, `${path}/a0`, { n: -1 })).status, 201);
    const after = await exchange(server.url, 'GET', path);
    assert.notEqual(field(after, 'ETag'), field(before, 'ETag'));
    assert.match(after, /"id":"a0"/);
    assert.equal(await exchange(server.url, 'GET', path), after);
  });
});
