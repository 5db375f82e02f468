// End to end: starting, configuring and stopping the server (CONVENTIONS.md#command-line,
// CONVENTIONS.md#configuration-file, CONVENTIONS.md#embedding, CONVENTIONS.md#shutdown).
import { describe, it } from 'node:test';
import { once } from 'node:events';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { start, type StartOptions } from '../../lib/index.js';
import { runBinary, startBinary } from '../support/binary.js';
import { eventually } from '../support/eventually.js';
import { JSON_HEADERS, request, startSlowRequest } from '../support/http.js';
import { silentLogger } from '../../lib/log.js';
import { MemoryStore } from '../../lib/store/memory.js';
import { ManualClock } from '../support/clock.js';
import { withServer } from '../support/server.js';
import { withTempDir } from '../support/temp-dir.js';

describe('resapi serve', () => {
  it('should print "listening on http://HOST:PORT" first and serve on that port', async () => {
    const server = await startBinary(['--memory']);
    try {
      assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+$/);
      assert.equal((await request(server.url, '/$health')).status, 200);
    } finally {
      assert.equal(await server.stop(), 0);
    }
  });

  it('should refuse to start with exit 1 naming an unknown config key or a wrong type', async () => {
    await withTempDir('config', async (dir) => {
      const unknown = join(dir, 'unknown.json');
      writeFileSync(unknown, '{"pageSize":{"default":50,"maxx":10}}');
      const wrongType = join(dir, 'wrong-type.json');
      writeFileSync(wrongType, '{"webhooks":{"retry":{"factor":"two"}}}');
      const first = await runBinary(['serve', '--memory', '--port', '0', '--config', unknown]);
      assert.equal(first.code, 1);
      assert.match(first.stderr, /pageSize\.maxx/);
      assert.equal(first.stdout, '');
      const second = await runBinary(['serve', '--memory', '--port', '0', '--config', wrongType]);
      assert.equal(second.code, 1);
      assert.match(second.stderr, /webhooks\.retry\.factor/);
    });
  });

  it('should refuse unknown flags with exit 2 and the usage', async () => {
    const result = await runBinary(['serve', '--bogus']);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /unknown option '--bogus'/);
    assert.match(result.stderr, /Usage:/);
  });

  it('should finish an in-flight request on SIGTERM, then exit 0', async () => {
    const server = await startBinary(['--memory']);
    const slow = await startSlowRequest(server.url, '/drain/one', { method: 'PUT', headers: { ...JSON_HEADERS, 'If-None-Match': '*' }, firstPart: '{"half":' });
    const exited = once(server.child, 'exit');
    server.child.kill('SIGTERM');
    // The body is finished only once the server has logged the signal, so the drain is what is tested.
    await eventually('the server to log the SIGTERM', () => /SIGTERM/.test(server.stderr()), { detail: () => `stderr so far: ${server.stderr()}` });
    assert.equal(await slow.finish('true}'), 201);
    assert.deepEqual(await exited, [0, null]);
  });

  it('should print --no-cache-mode as Cache-Control: no-cache, no-store on every response', async () => {
    const server = await startBinary(['--memory', '--seed', 'data/sample', '--config', 'data/config.json', '--no-cache-mode']);
    try {
      for (const path of ['/', '/products', '/currencies/EUR', '/products/none']) {
        assert.equal((await request(server.url, path)).headers['cache-control'], 'no-cache, no-store', path);
      }
    } finally {
      await server.stop();
    }
  });

  it('should make links absolute with --base-url, never from the Host header', async () => {
    const server = await startBinary(['--memory', '--base-url', 'https://api.example.test/v1/']);
    try {
      // A Host the server answers (CONVENTIONS.md#host-check) that is not the base URL's.
      const host = 'app.localhost:8080';
      const res = await request(server.url, '/things/a', { method: 'PUT', headers: { ...JSON_HEADERS, 'If-None-Match': '*', Host: host }, body: '{}' });
      assert.equal(res.headers.location, 'https://api.example.test/v1/things/a');
      const doc = (await request(server.url, '/', { headers: { Host: host } })).json() as { value: { url: string }[] };
      assert.deepEqual(doc.value.map((c) => c.url), ['https://api.example.test/v1/things']);
    } finally {
      await server.stop();
    }
  });
});

describe('start() (library)', () => {
  it('should listen on port 0, serve, and close', async () => {
    const server = await start({ port: 0, memory: true, log: silentLogger, collections: { tags: { cacheControl: 'public, max-age=60' } } });
    const created = await request(server.url, '/tags/t1', { method: 'PUT', headers: { ...JSON_HEADERS, 'If-None-Match': '*' }, body: '{}' });
    assert.equal(created.status, 201);
    assert.equal((await request(server.url, '/tags/t1')).headers['cache-control'], 'public, max-age=60');
    await server.close();
    await assert.rejects(request(server.url, '/tags/t1'), { code: 'ECONNREFUSED' });
  });

  it('should take the time from the injected clock: Date, Last-Modified and the tombstone window', async () => {
    const clock = new ManualClock(Date.UTC(2031, 0, 2, 3, 4, 5));
    await withServer({ memory: true, clock, tombstoneDays: 1 }, async (server) => {
      const created = await request(server.url, '/things/a', { method: 'PUT', headers: { ...JSON_HEADERS, 'If-None-Match': '*' }, body: '{}' });
      assert.equal(created.headers.date, 'Thu, 02 Jan 2031 03:04:05 GMT');
      assert.equal(created.headers['last-modified'], 'Thu, 02 Jan 2031 03:04:05 GMT');
      assert.equal((await request(server.url, '/things/a', { method: 'DELETE' })).status, 204);
      clock.advance(86_400_000);
      const undo = await request(server.url, '/things/a/$undoDelete', { method: 'PUT' });
      assert.equal(undo.status, 404, 'a day later on the injected clock the tombstone is gone');
      assert.equal(undo.headers.date, 'Fri, 03 Jan 2031 03:04:05 GMT');
    });
  });

  it('should close the store only after the requests in flight are answered', async () => {
    const store = new MemoryStore();
    let closes = 0;
    const close = store.close.bind(store);
    store.close = async () => {
      closes++;
      await close();
    };
    await withServer({ store }, async (server) => {
      const slow = await startSlowRequest(server.url, '/drain/one', { method: 'PUT', headers: { ...JSON_HEADERS, 'If-None-Match': '*' }, firstPart: '{"half":' });
      const closed = server.close();
      // The write commits after close() began: a store closed first would have answered 503.
      assert.equal(await slow.finish('true}'), 201);
      await closed;
    });
    assert.equal(closes, 1);
    assert.deepEqual(store.get('drain', 'one')?.doc, { id: 'one', half: true });
  });

  it('should throw a TypeError naming an invalid option', async () => {
    // A JavaScript caller's mistake: TypeScript refuses the string, so it is cast through unknown.
    const options = { port: 0, memory: true, log: silentLogger, tombstoneDays: 'soon' } as unknown as StartOptions;
    await assert.rejects(start(options), { name: 'TypeError', message: /tombstoneDays/ });
  });
});

describe('slow clients', () => {
  it('should answer 408 as a problem and close when the header section is too slow', async () => {
    await withServer({ memory: true, headersTimeoutMs: 300, requestTimeoutMs: 600 }, async (server) => {
      const url = new URL(server.url);
      const started = Date.now();
      const text = await new Promise<string>((resolve, reject) => {
        const socket = connect(Number(url.port), url.hostname, () => socket.write('GET / HTTP/1.1\r\nHost: x\r\nX-Slow: '));
        let data = '';
        socket.on('data', (chunk) => (data += chunk.toString()));
        socket.on('close', () => resolve(data));
        socket.on('error', reject);
      });
      assert.match(text, /^HTTP\/1\.1 408 /);
      assert.match(text, /application\/problem\+json/);
      assert.ok(Date.now() - started < 5_000);
    });
  });
});
