// End to end: memory is bounded under slow readers (CONVENTIONS.md#connections). Raw sockets that ask
// for a large page and never read hold its bytes in the server; past `limits.maxQueuedResponseBytes`
// a new page request is refused with 503 and Retry-After while /$health and an item are still
// answered, and a response that makes no progress for `limits.responseStallMs` is abandoned: the
// server closes its connection and the bytes it held are freed. Every wait is for an event (the
// queued-bytes gauge of /$metrics, a socket's 'close'), never for a time.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { eventually } from '../support/eventually.js';
import { create, problemOf, request } from '../support/http.js';
import { parseExposition, sampleValue } from '../support/prometheus.js';
import { withServer } from '../support/server.js';

const MIB = 1024 * 1024;
/**
 * The one item of the large page: far more than the kernel's socket buffers take from a client that
 * never reads (about 4 MiB on Linux), so the rest of the page waits in the server.
 */
const BIG_TEXT = 'x'.repeat(24 * MIB);
const CONFIG = { memory: true, maxBodyBytes: 32 * MIB };

/** A GET of `path` on a raw loopback socket that never reads what comes back. */
async function nonReadingGet(base: string, path: string): Promise<Socket> {
  const url = new URL(base);
  const socket = connect({ host: url.hostname, port: Number(url.port) });
  // A reset by the server surfaces as an error on the next write; the test waits for 'close'.
  socket.on('error', () => {});
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  socket.write(`GET ${path} HTTP/1.1\r\nHost: ${url.host}\r\nAccept: application/json\r\n\r\n`);
  return socket;
}

/** What /$metrics says is queued to sockets and not yet flushed, or undefined when it says nothing. */
async function queuedBytes(base: string): Promise<number | undefined> {
  const res = await request(base, '/$metrics');
  assert.equal(res.status, 200);
  const families = parseExposition(res.text);
  return sampleValue(families, 'resapi_http_queued_response_bytes', 'resapi_http_queued_response_bytes');
}

async function storeItems(base: string): Promise<void> {
  assert.equal((await create(base, '/big/a', { text: BIG_TEXT })).status, 201);
  assert.equal((await create(base, '/small/s', { n: 1 })).status, 201);
}

describe('slow readers', () => {
  it('should refuse a page with 503 and Retry-After while non-reading sockets hold the queued-bytes cap, and answer /$health and an item', async () => {
    await withServer({ ...CONFIG, limits: { maxQueuedResponseBytes: MIB } }, async (server) => {
      await storeItems(server.url);
      const reader = await nonReadingGet(server.url, '/big');
      try {
        await eventually('the large page to wait in the server', async () => ((await queuedBytes(server.url)) ?? 0) >= MIB);
        const refused = await request(server.url, '/small');
        assert.equal(refused.status, 503);
        assert.match(String(refused.headers['retry-after']), /^[1-9][0-9]*$/);
        assert.equal(refused.headers['content-type'], 'application/problem+json');
        assert.match(problemOf(refused).type, /\/send-queue-full$/);
        assert.match(problemOf(refused).detail, /maxQueuedResponseBytes/);
        // Cheap answers still go out.
        assert.equal((await request(server.url, '/$health')).status, 200);
        const item = await request(server.url, '/small/s');
        assert.equal(item.status, 200);
        assert.deepEqual(item.json(), { id: 's', n: 1 });
      } finally {
        reader.destroy();
      }
      await eventually('the queued bytes to be freed', async () => (await queuedBytes(server.url)) === 0);
      assert.equal((await request(server.url, '/small')).status, 200);
    });
  });

  it('should close a response that makes no progress for responseStallMs and free the bytes it held', async () => {
    await withServer({ ...CONFIG, limits: { responseStallMs: 1000 } }, async (server) => {
      await storeItems(server.url);
      const reader = await nonReadingGet(server.url, '/big');
      let closed = false;
      reader.once('close', () => {
        closed = true;
      });
      try {
        // A socket that never reads learns of the server's reset only when it next writes: an empty line
        // between requests, which a server ignores (RFC 9112 §2.2).
        await eventually('the server to close the stalled connection', () => {
          if (!closed) reader.write('\r\n');
          return closed;
        });
      } finally {
        reader.destroy();
      }
      await eventually('the queued bytes to be freed', async () => (await queuedBytes(server.url)) === 0);
    });
  });
});
