// The deliveries' poster on its own thread (lib/webhooks/post-thread.ts) against raw receivers on
// 127.0.0.1 port 0: the answer comes back as post.ts reads it, the timeout is the injected clock's,
// a shutdown settles at once and drops the exchange on the thread, and a closed poster sends nothing.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { systemClock } from '../../lib/clock.js';
import type { PostRequest, PostResult } from '../../lib/webhooks/post.js';
import { ThreadPoster } from '../../lib/webhooks/post-thread.js';
import { ManualClock } from '../support/clock.js';
import { eventually } from '../support/eventually.js';
import { RawReceiver } from '../support/raw-receiver.js';

const TIMEOUT_MS = 5000;

describe('ThreadPoster', () => {
  const receiver = new RawReceiver();
  let url = '';
  before(async () => {
    url = await receiver.start();
  });
  after(async () => {
    await receiver.stop();
  });

  const request = (shutdown: AbortSignal, body = '{"id":"evt_1"}'): PostRequest => ({
    url, headers: { 'Content-Type': 'application/json' }, body, timeoutMs: TIMEOUT_MS,
    refusePrivateAddresses: false, shutdown,
  });

  it("should send the request's bytes and bring back the status and Retry-After, for many at once", async () => {
    receiver.answer = (socket) => socket.write('HTTP/1.1 503 Busy\r\nRetry-After: 7\r\nContent-Length: 2\r\n\r\nno');
    const poster = new ThreadPoster(systemClock);
    try {
      const before = receiver.requests.length;
      const shutdown = new AbortController().signal;
      const bodies = Array.from({ length: 20 }, (_, n) => `{"id":"evt_${n}"}`);
      const results = await Promise.all(bodies.map((body) => poster.post(request(shutdown, body))));
      for (const result of results) assert.deepEqual(result, { kind: 'answered', status: 503, retryAfter: '7' });
      const sent = receiver.requests.slice(before);
      assert.equal(sent.length, 20);
      for (const body of bodies) assert.ok(sent.some((text) => text.endsWith(`\r\n\r\n${body}`)), body);
      assert.match(sent[0] as string, /^POST \/hook\?x=1 HTTP\/1\.1\r\nHost: 127\.0\.0\.1:\d+\r\nContent-Type: application\/json\r\n/);
    } finally {
      poster.close();
    }
  });

  it('should time an attempt out on the injected clock, and drop its connection on the thread', async () => {
    receiver.answer = () => undefined;
    const clock = new ManualClock();
    const poster = new ThreadPoster(clock);
    try {
      const connections = receiver.connections.length;
      const sent = poster.post(request(new AbortController().signal));
      const socket = await eventually('the request on a new connection', () =>
        receiver.connections.length > connections && receiver.connections.at(-1));
      let result: PostResult | undefined;
      void sent.then((settled) => (result = settled));
      clock.advance(TIMEOUT_MS - 1);
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(result, undefined);
      clock.advance(1);
      assert.deepEqual(await eventually('the attempt settled', () => result), { kind: 'timeout' });
      await eventually('the connection closed by the thread', () => socket.destroyed || socket.readableEnded);
    } finally {
      poster.close();
    }
  });

  it('should settle as stopped when the shutdown signal aborts, and drop the exchange on the thread', async () => {
    receiver.answer = () => undefined;
    const poster = new ThreadPoster(systemClock);
    try {
      const connections = receiver.connections.length;
      const shutdown = new AbortController();
      const sent = poster.post(request(shutdown.signal));
      const socket = await eventually('the request on a new connection', () =>
        receiver.connections.length > connections && receiver.connections.at(-1));
      shutdown.abort();
      assert.deepEqual(await sent, { kind: 'stopped' });
      await eventually('the connection closed by the thread', () => socket.destroyed || socket.readableEnded);
      assert.deepEqual(await poster.post(request(shutdown.signal)), { kind: 'stopped' });
    } finally {
      poster.close();
    }
  });

  it('should settle what is under way as stopped when closed, and send nothing after', async () => {
    receiver.answer = () => undefined;
    const poster = new ThreadPoster(systemClock);
    const shutdown = new AbortController().signal;
    const received = receiver.requests.length;
    const sent = poster.post(request(shutdown));
    await eventually('the request at the receiver', () => receiver.requests.length > received);
    poster.close();
    assert.deepEqual(await sent, { kind: 'stopped' });
    const before = receiver.requests.length;
    assert.deepEqual(await poster.post(request(shutdown)), { kind: 'stopped' });
    assert.equal(receiver.requests.length, before);
  });
});
