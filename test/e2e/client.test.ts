// End to end, in-process: the client library (CONVENTIONS.md#client-library) against a real resapi
// server on 127.0.0.1 port 0, seen through a small proxy written here that counts the requests
// reaching the origin ("origin hits") and injects faults: a 503 or 412 in place of the origin's
// answer, a socket destroyed before or after the request was forwarded, a body rewritten. So the
// tests prove black-box that the cache answers without the origin (CONVENTIONS.md#cache-control,
// CONVENTIONS.md#conditional-reads), that retries keep to the methods safe to repeat and their
// limits (CONVENTIONS.md#idempotent-methods), that update() never applies a change twice (412 →
// GET, merge, retry: CONVENTIONS.md#conditional-replace), that list() follows @nextLink and refuses
// a bare array (CONVENTIONS.md#collection-envelope), and that webhook signatures agree with the
// server's receiver (CONVENTIONS.md#webhook-signature).
//
// Time: the clients read a ManualClock, so a cached copy ages only when a test advances it. The
// waits a client awaits (backoff, Retry-After) are recorded and run at once: nothing here sleeps.
import { after, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Timer, TimerOptions } from '../../lib/clock.js';
import { ProtocolError, ResourceClient, signWebhook, verifyWebhook, type ResourceClientOptions } from '../../lib/client/index.js';
import type { JsonObject } from '../../lib/json.js';
import { ManualClock } from '../support/clock.js';
import { create, JSON_HEADERS, request } from '../support/http.js';
import { serverForSuite } from '../support/server.js';

/** What the proxy does with one request. */
type Action =
  | { readonly kind: 'forward' }
  /** Answers in the origin's place; the request never reaches it. */
  | { readonly kind: 'answer'; readonly status: number; readonly headers?: Readonly<Record<string, string>>; readonly body?: string }
  /** Destroys the client's socket; the request never reaches the origin. */
  | { readonly kind: 'drop' }
  /** Forwards, waits for the origin's whole answer, then destroys the client's socket: the outcome is lost. */
  | { readonly kind: 'forward-then-drop' }
  /** Forwards, then answers the client with this instead of the origin's answer. */
  | { readonly kind: 'forward-then-answer'; readonly status: number; readonly headers?: Readonly<Record<string, string>> }
  /** Forwards, then relays the origin's answer with its body rewritten, or some of its fields replaced. */
  | { readonly kind: 'rewrite'; readonly body?: (origin: Buffer) => string; readonly headers?: Readonly<Record<string, string>> };

interface Hit {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  /** The status the origin answered, when the request was forwarded. */
  originStatus?: number;
}

const FORWARD: Action = { kind: 'forward' };
/** Hop-by-hop fields (RFC 9110 §7.6.1) and the ones the proxy sets itself. */
const NOT_RELAYED = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'host']);

/** A proxy on 127.0.0.1 in front of `origin` that records every request and does what `rule` says. */
class Proxy {
  readonly hits: Hit[] = [];
  rule: (hit: Hit) => Action = () => FORWARD;
  url = '';
  private server: Server | undefined;

  constructor(private readonly origin: string) {}

  async start(): Promise<void> {
    this.server = createServer((req, res) => this.handle(req, res));
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }

  reset(): void {
    this.hits.length = 0;
    this.rule = () => FORWARD;
  }

  /** The hits with this method whose path (query included) starts with `path`. */
  on(method: string, path: string): Hit[] {
    return this.hits.filter((hit) => hit.method === method && hit.path.startsWith(path));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => void this.answer(req, res, Buffer.concat(chunks)));
  }

  private async answer(req: IncomingMessage, res: ServerResponse, body: Buffer): Promise<void> {
    const hit: Hit = { method: req.method ?? '', path: req.url ?? '', headers: req.headers };
    this.hits.push(hit);
    const action = this.rule(hit);
    if (action.kind === 'drop') return void req.socket.destroy();
    if (action.kind === 'answer') {
      res.writeHead(action.status, action.headers ?? {});
      return void res.end(action.body ?? '');
    }
    const origin = await this.forward(hit, body);
    hit.originStatus = origin.status;
    if (action.kind === 'forward-then-drop') return void req.socket.destroy();
    if (action.kind === 'forward-then-answer') {
      res.writeHead(action.status, action.headers ?? {});
      return void res.end();
    }
    const relayed = action.kind === 'rewrite' && action.body !== undefined ? Buffer.from(action.body(origin.body)) : origin.body;
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(origin.headers)) if (value !== undefined && !NOT_RELAYED.has(name)) headers[name] = value;
    if (action.kind === 'rewrite') for (const [name, value] of Object.entries(action.headers ?? {})) headers[name.toLowerCase()] = value;
    if (origin.status !== 304 && origin.status !== 204) headers['content-length'] = String(relayed.length);
    res.writeHead(origin.status, headers);
    res.end(origin.status === 304 || origin.status === 204 ? undefined : relayed);
  }

  private forward(hit: Hit, body: Buffer): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> {
    const target = new URL(this.origin);
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(hit.headers)) if (value !== undefined && !NOT_RELAYED.has(name)) headers[name] = value;
    headers['content-length'] = String(body.length);
    return new Promise((resolve, reject) => {
      const req = httpRequest({ host: target.hostname, port: target.port, method: hit.method, path: hit.path, headers, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(body);
    });
  }
}

/**
 * A ManualClock whose awaited waits (the client's backoff and Retry-After, the timers it sets with
 * keepAlive) are recorded and run at once; its other timers (the per-attempt timeout) never fire.
 * It starts in 2023, before the server's real Date, so every apparent age (RFC 9111 §4.2.3:
 * max(0, response_time - date_value)) is 0 and a cached copy's age is exactly what the test advanced.
 */
class TestClock extends ManualClock {
  readonly waits: number[] = [];

  constructor() {
    super(Date.UTC(2023, 10, 14));
  }

  override setTimer(ms: number, callback: () => void, options?: TimerOptions): Timer {
    if (options?.keepAlive !== true) return super.setTimer(ms, callback);
    this.waits.push(ms);
    const handle = setImmediate(callback);
    return { cancel: () => clearImmediate(handle) };
  }
}

const FAST_RETRY = { baseMs: 1, capMs: 5, attempts: 3 } as const;
const PROBLEM_HEADERS = { 'Content-Type': 'application/problem+json', 'Cache-Control': 'no-store' } as const;

function unavailable(retryAfter = '0'): Action {
  return { kind: 'answer', status: 503, headers: { ...PROBLEM_HEADERS, 'Retry-After': retryAfter }, body: JSON.stringify({ type: 'about:blank', title: 'Service Unavailable', status: 503, detail: 'injected' }) };
}

const INTERNAL_ERROR: Action = { kind: 'answer', status: 500, headers: PROBLEM_HEADERS, body: JSON.stringify({ type: 'about:blank', title: 'Internal Server Error', status: 500 }) };
const PRECONDITION_FAILED: Action = { kind: 'answer', status: 412, headers: PROBLEM_HEADERS, body: JSON.stringify({ type: 'about:blank', title: 'Precondition Failed', status: 412, detail: 'injected' }) };

/** A rule: `action` for the first `count` requests that `matches` accepts, then forward. */
function firstOnes(count: number, matches: (hit: Hit) => boolean, action: Action): (hit: Hit) => Action {
  let seen = 0;
  return (hit) => (matches(hit) && seen++ < count ? action : FORWARD);
}

function is(method: string, path: string): (hit: Hit) => boolean {
  return (hit) => hit.method === method && hit.path === path;
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}

let proxy: Proxy;
// The proxy stops before the server closes: after() hooks run in the order they are registered.
after(async () => {
  await proxy.stop();
});
const server = serverForSuite(
  {
    memory: true,
    webhookSecrets: ['s'],
    collections: {
      ref: { cacheControl: 'public, max-age=60' },
      brief: { cacheControl: 'max-age=1' },
      sie: { cacheControl: 'max-age=1, stale-if-error=60' },
      nostore: { cacheControl: 'no-store' },
    },
  },
  async (origin) => {
    proxy = new Proxy(origin.url);
    await proxy.start();
  },
);

beforeEach(() => proxy.reset());

function clientOf(options: ResourceClientOptions = {}): { client: ResourceClient; clock: TestClock } {
  const clock = new TestClock();
  return { client: new ResourceClient(proxy.url, { retry: FAST_RETRY, clock, ...options }), clock };
}

/** Creates `path` on the origin directly (no proxy, no client). */
async function seed(path: string, doc: JsonObject): Promise<string> {
  const res = await create(server.url, path, doc);
  assert.equal(res.status, 201, res.text);
  return res.headers.etag as string;
}

/** The stored representation, read from the origin directly. */
async function stored(path: string): Promise<{ etag: string; doc: JsonObject }> {
  const res = await request(server.url, path);
  assert.equal(res.status, 200, res.text);
  return { etag: res.headers.etag as string, doc: res.json() as JsonObject };
}

/** Replaces `path` on the origin directly, as another client would. */
async function replaceDirectly(path: string, doc: JsonObject): Promise<string> {
  const { etag } = await stored(path);
  const res = await request(server.url, path, { method: 'PUT', headers: { ...JSON_HEADERS, 'If-Match': etag }, body: JSON.stringify(doc) });
  assert.equal(res.status, 200, res.text);
  return res.headers.etag as string;
}

describe('ResourceClient cache against a resapi server', () => {
  it('should answer a max-age=60 item from the cache for 60 s, then revalidate it with If-None-Match (304)', async () => {
    const etag = await seed('/ref/a', { name: 'alpha' });
    const { client, clock } = clientOf();
    const first = await client.request('GET', '/ref/a');
    assert.deepEqual([first.status, first.cache, first.attempts, proxy.hits.length], [200, 'miss', 1, 1]);
    const second = await client.request('GET', '/ref/a');
    assert.deepEqual([second.status, second.cache, second.attempts, proxy.hits.length], [200, 'hit', 0, 1]);
    assert.deepEqual(second.json(), { id: 'a', name: 'alpha' });
    clock.advance(59_999);
    assert.equal((await client.request('GET', '/ref/a')).cache, 'hit');
    assert.equal(proxy.hits.length, 1);
    clock.advance(1);
    const third = await client.request('GET', '/ref/a');
    assert.deepEqual([third.status, third.cache, third.attempts, proxy.hits.length], [200, 'revalidated', 1, 2]);
    assert.equal(proxy.hits[1]?.headers['if-none-match'], etag);
    assert.equal(proxy.hits[1]?.originStatus, 304);
    assert.deepEqual(third.json(), { id: 'a', name: 'alpha' });
    // The 304 started the copy's age again: another 60 s from the origin's hands.
    clock.advance(59_000);
    const item = await client.get('ref', 'a');
    assert.deepEqual([item.data, item.etag, proxy.hits.length], [{ id: 'a', name: 'alpha' }, etag, 2]);
  });

  it('should revalidate a default (max-age=0, must-revalidate) item on every get, and see a change made by another client', async () => {
    const etag = await seed('/items/rv', { n: 1 });
    const { client } = clientOf();
    assert.deepEqual((await client.get('items', 'rv')).data, { id: 'rv', n: 1 });
    for (let i = 1; i <= 3; i++) {
      const response = await client.request('GET', '/items/rv');
      assert.deepEqual([response.status, response.cache, proxy.hits.length], [200, 'revalidated', 1 + i]);
      assert.equal(proxy.hits[i]?.headers['if-none-match'], etag);
      assert.equal(proxy.hits[i]?.originStatus, 304);
    }
    const changed = await replaceDirectly('/items/rv', { n: 2 });
    const response = await client.request('GET', '/items/rv');
    assert.deepEqual([response.status, response.cache, response.headers.get('etag'), proxy.hits.length], [200, 'miss', changed, 5]);
    assert.equal(proxy.hits[4]?.headers['if-none-match'], etag);
    assert.equal(proxy.hits[4]?.originStatus, 200);
    assert.deepEqual(response.json(), { id: 'rv', n: 2 });
    // The new representation replaced the old one: it is what the next revalidation names.
    const item = await client.get('items', 'rv');
    assert.deepEqual([item.data, item.etag, proxy.hits[5]?.headers['if-none-match'], proxy.hits[5]?.originStatus], [{ id: 'rv', n: 2 }, changed, changed, 304]);
  });

  it('should bypass the cache for a request no-store, and never store what a no-store collection answers', async () => {
    await seed('/ref/ns', { v: 1 });
    await seed('/nostore/ns', { v: 1 });
    const { client } = clientOf();
    for (let i = 1; i <= 2; i++) {
      const response = await client.request('GET', '/ref/ns', { cacheControl: 'no-store' });
      assert.deepEqual([response.status, response.cache, proxy.hits.length], [200, 'bypass', i]);
    }
    // Nothing was stored by those: this one is a miss, and the next a hit.
    assert.equal((await client.request('GET', '/ref/ns')).cache, 'miss');
    assert.equal((await client.request('GET', '/ref/ns')).cache, 'hit');
    // A request no-store goes to the origin even though a fresh copy is stored.
    assert.equal((await client.request('GET', '/ref/ns', { cacheControl: 'no-store' })).cache, 'bypass');
    assert.equal(proxy.on('GET', '/ref/ns').length, 4);
    assert.ok(proxy.on('GET', '/ref/ns').every((hit) => hit.headers['if-none-match'] === undefined));
    for (let i = 1; i <= 2; i++) assert.deepEqual((await client.get('nostore', 'ns')).data, { id: 'ns', v: 1 });
    const hits = proxy.on('GET', '/nostore/ns');
    assert.equal(hits.length, 2);
    assert.ok(hits.every((hit) => hit.headers['if-none-match'] === undefined && hit.originStatus === 200));
  });

  it('should serve a stale copy for a request max-stale only where the response allows stale use (not must-revalidate)', async () => {
    await seed('/brief/ms', { v: 1 });
    await seed('/items/ms', { v: 1 });
    const { client, clock } = clientOf();
    await client.get('brief', 'ms');
    await client.get('items', 'ms');
    clock.advance(5000);
    assert.equal(proxy.hits.length, 2);
    // max-age=1 and 5 s old: stale by 4 s.
    const stale = await client.request('GET', '/brief/ms', { cacheControl: 'max-stale=10' });
    assert.deepEqual([stale.status, stale.cache, stale.attempts, proxy.hits.length], [200, 'stale', 0, 2]);
    assert.deepEqual(stale.json(), { id: 'ms', v: 1 });
    assert.equal((await client.request('GET', '/brief/ms', { cacheControl: 'max-stale' })).cache, 'stale');
    assert.equal(proxy.hits.length, 2);
    const tooStale = await client.request('GET', '/brief/ms', { cacheControl: 'max-stale=2' });
    assert.deepEqual([tooStale.cache, proxy.hits.length], ['revalidated', 3]);
    // must-revalidate (the default policy): never stale, whatever the request accepts.
    const mustRevalidate = await client.request('GET', '/items/ms', { cacheControl: 'max-stale' });
    assert.deepEqual([mustRevalidate.cache, proxy.hits.length, proxy.hits[3]?.originStatus], ['revalidated', 4, 304]);
  });

  it('should answer with the stale copy when the revalidation fails (500, 503, no answer) and stale-if-error allows it', async () => {
    await seed('/sie/e', { v: 1 });
    const { client, clock } = clientOf();
    await client.get('sie', 'e');
    clock.advance(5000);
    for (const failure of [unavailable(), INTERNAL_ERROR, { kind: 'drop' } as const]) {
      proxy.reset();
      proxy.rule = () => failure;
      const response = await client.request('GET', '/sie/e');
      assert.deepEqual([response.status, response.cache, response.json()], [200, 'stale', { id: 'e', v: 1 }], failure.kind);
      // The revalidation was retried as any GET is, and the stale copy answered once every attempt failed.
      assert.equal(proxy.hits.length, FAST_RETRY.attempts, failure.kind);
      assert.ok(proxy.hits.every((hit) => hit.headers['if-none-match'] !== undefined));
    }
    // Past the window (stale by more than 60 s): the error is the answer.
    clock.advance(60_000);
    proxy.reset();
    proxy.rule = () => unavailable();
    const late = await client.request('GET', '/sie/e');
    assert.deepEqual([late.status, proxy.hits.length], [503, FAST_RETRY.attempts]);
    await assert.rejects(client.get('sie', 'e'), { name: 'ResourceError', status: 503 });
  });

  it('should honour a request stale-if-error, except for a must-revalidate response', async () => {
    await seed('/brief/rsie', { v: 1 });
    await seed('/items/rsie', { v: 1 });
    const { client, clock } = clientOf();
    await client.get('brief', 'rsie');
    await client.get('items', 'rsie');
    clock.advance(5000);
    proxy.reset();
    proxy.rule = () => unavailable();
    const allowed = await client.get('brief', 'rsie', { cacheControl: 'stale-if-error=60' });
    assert.deepEqual(allowed.data, { id: 'rsie', v: 1 });
    await assert.rejects(client.get('brief', 'rsie'), { name: 'ResourceError', status: 503 });
    await assert.rejects(client.get('items', 'rsie', { cacheControl: 'stale-if-error=60' }), { name: 'ResourceError', status: 503 });
    assert.equal(proxy.hits.length, 3 * FAST_RETRY.attempts);
  });

  it(
    'should not bring back a deleted item for a request max-stale once the revalidation was answered 404',
    async () => {
      await seed('/brief/gone', { v: 1 });
      const { client, clock } = clientOf();
      await client.get('brief', 'gone');
      clock.advance(5000);
      assert.equal((await request(server.url, '/brief/gone', { method: 'DELETE' })).status, 204);
      await assert.rejects(client.get('brief', 'gone'), { name: 'ResourceError', status: 404 });
      proxy.reset();
      const afterDelete = await client.request('GET', '/brief/gone', { cacheControl: 'max-stale' });
      assert.deepEqual([afterDelete.status, afterDelete.cache, proxy.hits.length], [404, 'miss', 1]);
    },
  );

  it(
    'should not mask a failure with a copy older than a no-store answer it already gave (risky deploys, CONVENTIONS.md#cache-control)',
    async () => {
      // During a risky deploy responses say `no-cache, no-store` "so that a cached success cannot mask
      // broken behaviour"; here the proxy marks the origin's answers so, as `--no-cache-mode` would.
      await seed('/sie/deploy', { v: 1 });
      const { client, clock } = clientOf();
      await client.get('sie', 'deploy');
      clock.advance(5000);
      await replaceDirectly('/sie/deploy', { v: 2 });
      proxy.rule = () => ({ kind: 'rewrite', headers: { 'Cache-Control': 'no-cache, no-store' } });
      assert.deepEqual((await client.get('sie', 'deploy')).data, { id: 'deploy', v: 2 });
      proxy.rule = () => INTERNAL_ERROR;
      await assert.rejects(client.get('sie', 'deploy'), { name: 'ResourceError', status: 500 });
    },
  );

  it('should forget a cached item once a PUT or DELETE through the client changed it', async () => {
    await seed('/ref/inv', { v: 1 });
    const { client } = clientOf();
    const read = await client.get('ref', 'inv');
    await client.get('ref', 'inv');
    assert.equal(proxy.hits.length, 1);
    const written = await client.replace('ref', 'inv', { v: 2 }, read.etag);
    const reread = await client.request('GET', '/ref/inv');
    assert.deepEqual([reread.cache, reread.json(), reread.headers.get('etag')], ['miss', { id: 'inv', v: 2 }, written.etag]);
    assert.equal(proxy.on('GET', '/ref/inv').length, 2);
    assert.equal(proxy.on('GET', '/ref/inv')[1]?.headers['if-none-match'], undefined);
    assert.equal((await client.request('GET', '/ref/inv')).cache, 'hit');
    await client.delete('ref', 'inv');
    await assert.rejects(client.get('ref', 'inv'), { name: 'ResourceError', status: 404 });
    assert.equal(proxy.on('GET', '/ref/inv').length, 3);
  });
});

describe('ResourceClient retries against a resapi server', () => {
  it('should retry GET, PUT and DELETE after k 503s (Retry-After: 0) and succeed with hit k+1', async () => {
    for (const k of [1, 2]) {
      const path = `/items/retry${k}`;
      const { client, clock } = clientOf();
      proxy.reset();
      proxy.rule = firstOnes(k, is('PUT', path), unavailable());
      const created = await client.create('items', `retry${k}`, { k });
      assert.deepEqual(created.data, { id: `retry${k}`, k });
      assert.equal(proxy.on('PUT', path).length, k + 1);
      assert.deepEqual(proxy.on('PUT', path).map((hit) => hit.originStatus), [...Array<undefined>(k).fill(undefined), 201]);

      proxy.reset();
      proxy.rule = firstOnes(k, is('GET', path), unavailable());
      const response = await client.request('GET', path);
      assert.deepEqual([response.status, response.attempts, proxy.hits.length], [200, k + 1, k + 1]);

      proxy.reset();
      proxy.rule = firstOnes(k, is('DELETE', path), unavailable());
      await client.delete('items', `retry${k}`);
      assert.equal(proxy.hits.length, k + 1);
      assert.equal((await request(server.url, path)).status, 404);
      // Retry-After: 0 was honoured: every wait was 0 ms.
      assert.deepEqual(clock.waits, Array<number>(3 * k).fill(0));
    }
  });

  it('should give up after exactly `attempts` hits when every answer is a 503', async () => {
    await seed('/items/down', { v: 1 });
    const { client } = clientOf();
    proxy.rule = () => unavailable();
    await assert.rejects(client.get('items', 'down'), { name: 'ResourceError', status: 503, problem: { type: 'about:blank', title: 'Service Unavailable', status: 503, detail: 'injected' } });
    assert.equal(proxy.hits.length, 3);
    const response = await client.request('GET', '/items/down');
    assert.deepEqual([response.status, response.attempts, proxy.hits.length], [503, 3, 6]);
    await assert.rejects(client.replace('items', 'down', { v: 2 }, '"x"'), { name: 'ResourceError', status: 503 });
    await assert.rejects(client.delete('items', 'down'), { name: 'ResourceError', status: 503 });
    assert.deepEqual([proxy.on('PUT', '/items/down').length, proxy.on('DELETE', '/items/down').length], [3, 3]);
    // Exactly `attempts` 503s: the client has given up before the one that would have succeeded.
    proxy.reset();
    proxy.rule = firstOnes(FAST_RETRY.attempts, () => true, unavailable());
    assert.deepEqual([(await client.request('GET', '/items/down')).status, proxy.hits.length], [503, 3]);
    assert.deepEqual([(await client.request('GET', '/items/down')).status, proxy.hits.length], [200, 4]);
    const { client: patient } = clientOf({ retry: { ...FAST_RETRY, attempts: 5 } });
    proxy.reset();
    proxy.rule = () => unavailable();
    assert.equal((await patient.request('GET', '/items/down')).attempts, 5);
    assert.equal(proxy.hits.length, 5);
  });

  it('should wait what Retry-After asks, and not wait for (nor retry) one longer than maxRetryAfterMs', async () => {
    await seed('/items/later', { v: 1 });
    const { client, clock } = clientOf();
    proxy.rule = firstOnes(1, () => true, unavailable('3'));
    assert.equal((await client.request('GET', '/items/later')).status, 200);
    assert.deepEqual([proxy.hits.length, clock.waits], [2, [3000]]);

    proxy.reset();
    proxy.rule = () => unavailable('120');
    const response = await client.request('GET', '/items/later');
    assert.deepEqual([response.status, response.attempts, proxy.hits.length, clock.waits], [503, 1, 1, [3000]]);

    const { client: impatient, clock: impatientClock } = clientOf({ maxRetryAfterMs: 1000 });
    proxy.reset();
    proxy.rule = () => unavailable('2');
    const short = await impatient.request('GET', '/items/later');
    assert.deepEqual([short.status, short.attempts, proxy.hits.length, impatientClock.waits], [503, 1, 1, []]);
  });

  it('should retry a GET after network errors (the proxy destroys the socket), up to `attempts`', async () => {
    await seed('/items/net', { v: 1 });
    const { client, clock } = clientOf();
    proxy.rule = firstOnes(2, () => true, { kind: 'drop' });
    assert.deepEqual((await client.get('items', 'net')).data, { id: 'net', v: 1 });
    assert.equal(proxy.hits.length, 3);
    // Without Retry-After the waits are the backoff: full jitter under min(capMs, baseMs × 2^n).
    assert.equal(clock.waits.length, 2);
    assert.ok(clock.waits.every((ms) => ms >= 0 && ms <= FAST_RETRY.capMs), String(clock.waits));
    proxy.reset();
    proxy.rule = () => ({ kind: 'drop' });
    const { client: fresh } = clientOf();
    await assert.rejects(fresh.get('items', 'net'), { name: 'NetworkError', attempts: 3 });
    assert.equal(proxy.hits.length, 3);
  });

  it('should send a POST without an Idempotency-Key exactly once, on a 503 and on a network error', async () => {
    const { client } = clientOf();
    proxy.rule = () => unavailable();
    await assert.rejects(client.add('posted', { v: 1 }), { name: 'ResourceError', status: 503 });
    assert.equal(proxy.hits.length, 1);
    const response = await client.request('POST', '/posted', { headers: JSON_HEADERS, body: '{"v":1}' });
    assert.deepEqual([response.status, response.attempts, proxy.hits.length], [503, 1, 2]);
    proxy.reset();
    proxy.rule = () => ({ kind: 'forward-then-drop' });
    await assert.rejects(client.add('posted', { v: 1 }), { name: 'NetworkError', attempts: 1 });
    assert.deepEqual(proxy.hits.map((hit) => [hit.method, hit.originStatus]), [['POST', 201]]);
    assert.ok(proxy.hits.every((hit) => hit.headers['idempotency-key'] === undefined));
    // The one POST that reached the origin created one item, and nothing was sent again.
    assert.equal(((await request(server.url, '/posted')).json() as { value: unknown[] }).value.length, 1);
  });

  it('should retry a POST with idempotencyKey: true under the same key, creating exactly one item', async () => {
    const { client } = clientOf();
    let posts = 0;
    // The first answer is lost after the origin created the item, the second never reaches it.
    proxy.rule = (hit) => {
      if (hit.method !== 'POST') return FORWARD;
      posts++;
      if (posts === 1) return { kind: 'forward-then-answer', status: 503, headers: { 'Retry-After': '0' } };
      if (posts === 2) return { kind: 'drop' };
      return FORWARD;
    };
    const item = await client.add('keyed', { v: 1 }, { idempotencyKey: true });
    assert.equal(proxy.hits.length, 3);
    const keys = proxy.hits.map((hit) => hit.headers['idempotency-key']);
    assert.ok(typeof keys[0] === 'string' && keys[0].length > 0);
    assert.deepEqual(keys, [keys[0], keys[0], keys[0]]);
    assert.deepEqual(proxy.hits.map((hit) => hit.originStatus), [201, undefined, 201]);
    const listed = (await request(server.url, '/keyed')).json() as { value: JsonObject[] };
    assert.deepEqual(listed.value, [item.data]);
    // A key the caller chose is sent as given.
    proxy.reset();
    proxy.rule = firstOnes(1, () => true, unavailable());
    await client.add('keyed', { v: 2 }, { idempotencyKey: 'order-7' });
    assert.deepEqual(proxy.hits.map((hit) => hit.headers['idempotency-key']), ['order-7', 'order-7']);
  });

  it('should never retry a 4xx (404, 412, 400, 428)', async () => {
    await seed('/items/four', { v: 1 });
    const { client } = clientOf();
    await assert.rejects(client.get('items', 'absent'), { name: 'ResourceError', status: 404 });
    await assert.rejects(client.replace('items', 'four', { v: 2 }, '"stale"'), { name: 'ResourceError', status: 412 });
    await assert.rejects(collect(client.list('items', { filter: 'nosuchfield eq 1' })), { name: 'ResourceError', status: 400 });
    const unconditional = await client.request('PUT', '/items/four', { headers: JSON_HEADERS, body: '{"v":3}' });
    assert.equal(unconditional.status, 428);
    assert.deepEqual(proxy.hits.map((hit) => [hit.method, hit.originStatus]), [['GET', 404], ['PUT', 412], ['GET', 400], ['PUT', 428]]);
  });
});

describe('ResourceClient.update against a resapi server', () => {
  it('should end at exactly N×k when N clients each run update() k times on one counter at once', async () => {
    const clients = 5;
    const rounds = 10;
    await seed('/counters/c', { n: 0 });
    // Every client's first change waits until all of them have read the counter, so at least
    // clients - 1 of their first PUTs are bound to meet a 412.
    let arrived = 0;
    let release: () => void = () => {};
    const allRead = new Promise<void>((resolve) => (release = resolve));
    const workers = Array.from({ length: clients }, async () => {
      const { client } = clientOf({ updateAttempts: 100 });
      let first = true;
      for (let round = 0; round < rounds; round++) {
        await client.update<{ n: number }>('counters', 'c', async (data) => {
          if (first) {
            first = false;
            if (++arrived === clients) release();
            await allRead;
          }
          return { ...data, n: data.n + 1 };
        });
      }
    });
    await Promise.all(workers);
    assert.deepEqual((await stored('/counters/c')).doc, { id: 'c', n: clients * rounds });
    const puts = proxy.on('PUT', '/counters/c');
    assert.equal(puts.filter((hit) => hit.originStatus === 200).length, clients * rounds);
    assert.ok(puts.filter((hit) => hit.originStatus === 412).length >= clients - 1);
  });

  it('should read again on a 412 and apply the change to what is there now', async () => {
    await seed('/counters/merge', { n: 0 });
    const { client } = clientOf();
    const seen: number[] = [];
    const result = await client.update<{ n: number }>('counters', 'merge', async (data) => {
      seen.push(data.n);
      if (seen.length === 1) await replaceDirectly('/counters/merge', { n: 100 });
      return { ...data, n: data.n + 1 };
    });
    assert.deepEqual(seen, [0, 100]);
    assert.deepEqual(result.data, { id: 'merge', n: 101 });
    assert.equal(result.etag, (await stored('/counters/merge')).etag);
    assert.deepEqual(proxy.on('PUT', '/counters/merge').map((hit) => hit.originStatus), [412, 200]);
  });

  it('should read past its own cache after a 412, even while the cached copy is fresh', async () => {
    await seed('/ref/counter', { n: 0 });
    const { client } = clientOf();
    assert.equal((await client.get('ref', 'counter')).data['n'], 0);
    await replaceDirectly('/ref/counter', { n: 5 });
    // The cached copy (max-age=60) is fresh but outdated: the first PUT names its ETag and meets a 412.
    const result = await client.update<{ n: number }>('ref', 'counter', (data) => ({ ...data, n: data.n + 1 }));
    assert.deepEqual(result.data, { id: 'counter', n: 6 });
    assert.deepEqual(proxy.on('PUT', '/ref/counter').map((hit) => hit.originStatus), [412, 200]);
    const reread = proxy.on('GET', '/ref/counter')[1];
    assert.deepEqual([reread?.headers['cache-control'], reread?.originStatus], ['no-cache', 200]);
  });

  it('should throw a ResourceError 412 after updateAttempts PUTs that all met a 412', async () => {
    await seed('/counters/stuck', { n: 0 });
    const { client, clock } = clientOf({ updateAttempts: 4 });
    proxy.rule = (hit) => (hit.method === 'PUT' ? PRECONDITION_FAILED : FORWARD);
    let calls = 0;
    await assert.rejects(
      client.update<{ n: number }>('counters', 'stuck', (data) => {
        calls++;
        return { ...data, n: data.n + 1 };
      }),
      { name: 'ResourceError', status: 412 },
    );
    assert.deepEqual([calls, proxy.on('PUT', '/counters/stuck').length, proxy.on('GET', '/counters/stuck').length], [4, 4, 4]);
    // It backed off (full jitter, within the retry policy's cap) before each read again.
    assert.equal(clock.waits.length, 3);
    assert.ok(clock.waits.every((ms) => ms >= 0 && ms <= FAST_RETRY.capMs), String(clock.waits));
    assert.deepEqual((await stored('/counters/stuck')).doc, { id: 'stuck', n: 0 });
  });

  it('should throw at once, without another attempt, when the PUT is refused with a 4xx other than 412', async () => {
    await seed('/counters/refused', { n: 0 });
    const { client } = clientOf();
    // A body whose id differs from the path's is 400 (CONVENTIONS.md#items): it will never be accepted.
    await assert.rejects(
      client.update<{ n: number }>('counters', 'refused', (data) => ({ ...data, id: 'another', n: data.n + 1 })),
      { name: 'ResourceError', status: 400 },
    );
    assert.deepEqual(proxy.on('PUT', '/counters/refused').map((hit) => hit.originStatus), [400]);
    assert.equal(proxy.on('GET', '/counters/refused').length, 1);
  });

  it('should not apply a change twice when the answer to its PUT is lost (no answer, or a 5xx): the outcome is unknown, and that is the error', async () => {
    const lost: readonly [string, Action, Record<string, unknown>][] = [
      ['dropped', { kind: 'forward-then-drop' }, { name: 'NetworkError', attempts: 1 }],
      ['unavailable', { kind: 'forward-then-answer', status: 503, headers: { 'Retry-After': '0' } }, { name: 'ResourceError', status: 503 }],
    ];
    for (const [name, failure, expected] of lost) {
      const path = `/counters/lost-${name}`;
      await seed(path, { n: 0 });
      const { client } = clientOf();
      proxy.reset();
      proxy.rule = firstOnes(1, (hit) => hit.method === 'PUT', failure);
      await assert.rejects(client.update<{ n: number }>('counters', `lost-${name}`, (data) => ({ ...data, n: data.n + 1 })), expected);
      // One PUT, which the origin applied; update() read the item again, saw it changed, and stopped.
      assert.deepEqual(proxy.on('PUT', path).map((hit) => hit.originStatus), [200], name);
      assert.equal(proxy.on('GET', path).length, 2, name);
      assert.deepEqual((await stored(path)).doc, { id: `lost-${name}`, n: 1 }, name);
    }
  });

  it('should apply the change once when its PUT failed before reaching the server (no answer, or a 503)', async () => {
    for (const failure of [{ kind: 'drop' } as const, unavailable()]) {
      const path = `/counters/early-${failure.kind}`;
      await seed(path, { n: 0 });
      const { client } = clientOf();
      proxy.reset();
      proxy.rule = firstOnes(1, (hit) => hit.method === 'PUT', failure);
      const result = await client.update<{ n: number }>('counters', `early-${failure.kind}`, (data) => ({ ...data, n: data.n + 1 }));
      assert.equal(result.data.n, 1);
      assert.deepEqual((await stored(path)).doc, { id: `early-${failure.kind}`, n: 1 });
      // update() sends its PUT once per attempt (never retried as a plain PUT would be).
      assert.deepEqual(proxy.on('PUT', path).map((hit) => hit.originStatus), [undefined, 200], failure.kind);
    }
  });
});

describe('ResourceClient collections and errors against a resapi server', () => {
  it('should follow @nextLink over pages (Prefer: maxpagesize) and yield every item once', async () => {
    const ids = ['p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7'];
    for (const id of ids) await seed(`/paged/${id}`, { id, n: Number(id.slice(1)) });
    const { client } = clientOf();
    const items = await collect(client.list<{ id: string; n: number }>('paged', { pageSize: 3 }));
    assert.deepEqual(items.map((item) => item.id).sort(), ids);
    const pages = proxy.on('GET', '/paged');
    assert.equal(pages.length, 3);
    assert.ok(pages.every((hit) => hit.headers['prefer'] === 'maxpagesize=3' && hit.originStatus === 200));
    assert.equal(pages[0]?.path, '/paged');
    assert.ok(pages.slice(1).every((hit) => hit.path.includes('$skiptoken=')));
    const filtered = await collect(client.list<{ id: string; n: number }>('paged', { filter: 'n ge 3 and n le 5', orderby: 'n desc', pageSize: 2 }));
    assert.deepEqual(filtered.map((item) => item.n), [5, 4, 3]);
  });

  it('should throw a ProtocolError when a collection answers with a bare array, or links to another origin', async () => {
    await seed('/bare/x', { v: 1 });
    const { client } = clientOf();
    proxy.rule = () => ({ kind: 'rewrite', body: (origin) => JSON.stringify((JSON.parse(origin.toString('utf8')) as { value: unknown[] }).value) });
    await assert.rejects(collect(client.list('bare')), ProtocolError);
    proxy.reset();
    proxy.rule = () => ({ kind: 'rewrite', body: (origin) => JSON.stringify({ ...(JSON.parse(origin.toString('utf8')) as JsonObject), '@nextLink': 'http://elsewhere.invalid/bare?$skiptoken=x' }) });
    await assert.rejects(collect(client.list('bare', { pageSize: 1 })), ProtocolError);
    assert.equal(proxy.hits.length, 1);
  });

  it('should run a query resource made with defineQuery() through query(), page after page', async () => {
    for (const [id, price] of [['q1', 9], ['q2', 2], ['q3', 4], ['q4', 1], ['q5', 7]] as const) await seed(`/goods/${id}`, { price });
    const { client } = clientOf();
    const definition = await client.defineQuery('goods', 'cheap', { filter: 'price lt 5', orderby: 'price' });
    assert.deepEqual(definition.data, { filter: 'price lt 5', orderby: 'price' });
    const results = await collect(client.query<{ id: string; price: number }>('goods', 'cheap', { pageSize: 2 }));
    assert.deepEqual(results.map((item) => item.id), ['q4', 'q2', 'q3']);
    assert.equal(proxy.on('GET', '/goods/$queries/cheap').length, 2);
  });

  it("should carry the server's problem document (type, title, status, detail) in a ResourceError", async () => {
    const etag = await seed('/items/prob', { v: 1 });
    const { client } = clientOf();
    const cases: [() => Promise<unknown>, string, Parameters<typeof request>[2]][] = [
      [() => client.get('items', 'nothing-here'), '/items/nothing-here', {}],
      [() => collect(client.list('items', { filter: 'v eq' })), '/items?$filter=v%20eq', {}],
      [() => client.replace('items', 'prob', { v: 2 }, '"other"'), '/items/prob', { method: 'PUT', headers: { ...JSON_HEADERS, 'If-Match': '"other"' }, body: '{"v":2}' }],
      [() => client.create('items', 'prob', { v: 2 }), '/items/prob', { method: 'PUT', headers: { ...JSON_HEADERS, 'If-None-Match': '*' }, body: '{"v":2}' }],
    ];
    for (const [call, path, raw] of cases) {
      const direct = await request(server.url, path, raw);
      const problem = direct.json() as JsonObject;
      assert.equal(typeof problem['type'], 'string');
      assert.equal(typeof problem['detail'], 'string');
      await assert.rejects(call(), { name: 'ResourceError', status: direct.status, problem });
    }
    assert.equal((await stored('/items/prob')).etag, etag);
  });
});

describe('signWebhook and verifyWebhook', () => {
  const body = '{"id":"evt-client-1","event":"order.created","data":{"b":1,"a":2}}';

  it("should sign a body that a resapi server's /webhooks accepts, and not a body changed after signing", async () => {
    const accepted = await request(server.url, '/webhooks', { method: 'POST', headers: { ...JSON_HEADERS, 'X-Signature': signWebhook(body, 's') }, body });
    assert.equal(accepted.status, 200, accepted.text);
    assert.deepEqual(accepted.json(), { status: 'accepted' });
    const tampered = body.replace('"a":2', '"a":3');
    const refused = await request(server.url, '/webhooks', { method: 'POST', headers: { ...JSON_HEADERS, 'X-Signature': signWebhook(body, 's') }, body: tampered });
    assert.equal(refused.status, 401);
    assert.match(signWebhook(Buffer.from(body), 's'), /^[0-9a-f]{64}$/);
    assert.equal(signWebhook(Buffer.from(body), 's'), signWebhook(body, 's'));
  });

  it('should accept the right secret among two (rotation), with or without sha256=, and refuse other secrets', () => {
    const signature = signWebhook(body, 'current');
    assert.equal(verifyWebhook(body, signature, ['current', 'previous']), true);
    assert.equal(verifyWebhook(Buffer.from(body), signature, ['previous', 'current']), true);
    assert.equal(verifyWebhook(body, `sha256=${signature}`, 'current'), true);
    assert.equal(verifyWebhook(body, signature, ['previous', 'other']), false);
    assert.equal(verifyWebhook(body, undefined, 'current'), false);
    assert.equal(verifyWebhook(body, null, 'current'), false);
  });

  it('should refuse a body parsed and encoded again, and an uppercase digest', () => {
    const signature = signWebhook(body, 'current');
    const reencoded = JSON.stringify(JSON.parse(body), null, 1);
    assert.deepEqual(JSON.parse(reencoded), JSON.parse(body));
    assert.equal(verifyWebhook(reencoded, signature, 'current'), false);
    assert.equal(verifyWebhook(JSON.stringify(JSON.parse(body)), signature, 'current'), true);
    assert.equal(verifyWebhook(body, signature.toUpperCase(), 'current'), false);
  });
});
