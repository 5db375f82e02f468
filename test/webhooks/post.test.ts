// One delivery's POST (lib/webhooks/post.ts) against raw receivers on 127.0.0.1 port 0: the request's
// bytes, the connection kept for the next delivery only when the answer allows it, and what a cut,
// a silence or an answer that is not HTTP comes to.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { Socket } from 'node:net';
import { systemClock } from '../../lib/clock.js';
import { WebhookPoster, type PostRequest } from '../../lib/webhooks/post.js';
import { RawReceiver } from '../support/raw-receiver.js';

/** Waits until the receiver has read one more request than it had when called. */
async function eventuallyReceived(receiver: RawReceiver): Promise<void> {
  const count = receiver.requests.length;
  while (receiver.requests.length === count) await new Promise((resolve) => setImmediate(resolve));
}

describe('WebhookPoster', () => {
  const receiver = new RawReceiver();
  const poster = new WebhookPoster(systemClock);
  let url = '';
  before(async () => {
    url = await receiver.start();
  });
  after(async () => {
    poster.close();
    await receiver.stop();
  });
  const request = (body: string, timeoutMs = 5000): PostRequest => ({
    url,
    body,
    headers: { 'Content-Type': 'application/json', 'X-Signature': 'abc' },
    timeoutMs,
    refusePrivateAddresses: false,
    shutdown: new AbortController().signal,
  });

  it('should send the request line, Host, the fields, Content-Length and keep-alive, then the body', async () => {
    receiver.requests.length = 0;
    assert.deepEqual(await poster.post(request('{"a":"ü"}')), { kind: 'answered', status: 200, retryAfter: undefined });
    const host = new URL(url).host;
    assert.equal(receiver.requests[0], `POST /hook?x=1 HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\n`
      + 'X-Signature: abc\r\nContent-Length: 10\r\nConnection: keep-alive\r\n\r\n{"a":"ü"}'.replace('ü', 'Ã¼'));
  });

  it('should carry the next delivery on the same connection once an answer has ended, chunked or not', async () => {
    const before = receiver.connections.length;
    receiver.answer = (socket) => socket.write('HTTP/1.1 202 Accepted\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n');
    for (let n = 0; n < 3; n++) assert.deepEqual(await poster.post(request('{}')), { kind: 'answered', status: 202, retryAfter: undefined });
    assert.ok(receiver.connections.length <= before + 1, 'one connection at most for three deliveries');
  });

  it('should open a new connection after an answer that closes it, and report Retry-After', async () => {
    receiver.answer = (socket) => socket.end('HTTP/1.1 503 Busy\r\nRetry-After: 7\r\nConnection: close\r\n\r\n');
    const before = receiver.connections.length;
    assert.deepEqual(await poster.post(request('{}')), { kind: 'answered', status: 503, retryAfter: '7' });
    receiver.answer = (socket) => socket.write('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n');
    assert.deepEqual(await poster.post(request('{}')), { kind: 'answered', status: 200, retryAfter: undefined });
    assert.equal(receiver.connections.length, before + 1);
  });

  it('should call a connection cut before the answer ECONNRESET, and bytes that are not HTTP by their parser code', async () => {
    receiver.answer = (socket) => socket.destroy();
    assert.deepEqual(await poster.post(request('{}')), { kind: 'failed', error: 'ECONNRESET', failure: 'refused' });
    receiver.answer = (socket) => socket.write('SSH-2.0-OpenSSH_9\r\n\r\n');
    assert.deepEqual(await poster.post(request('{}')), { kind: 'failed', error: 'HPE_INVALID_CONSTANT', failure: 'unreachable' });
  });

  it('should time out a receiver that does not answer', async () => {
    receiver.answer = () => undefined;
    assert.deepEqual(await poster.post(request('{}', 50)), { kind: 'timeout' });
  });

  it('should stop a request in flight when its shutdown signal aborts, and keep neither it nor its connection', async () => {
    receiver.answer = () => undefined;
    const shutdown = new AbortController();
    const posted = poster.post({ ...request('{}'), shutdown: shutdown.signal });
    await eventuallyReceived(receiver);
    const connection = receiver.connections.at(-1) as Socket;
    shutdown.abort();
    assert.deepEqual(await posted, { kind: 'stopped' });
    await once(connection, 'close');
    receiver.answer = (socket) => socket.write('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n');
    assert.deepEqual(await poster.post(request('{}')), { kind: 'answered', status: 200, retryAfter: undefined });
  });

  it('should refuse a field that would break the head, sending nothing', async () => {
    const sent = receiver.requests.length;
    const bad = { ...request('{}'), headers: { 'X-A': 'one\r\nX-B: two' } };
    assert.deepEqual(await poster.post(bad), { kind: 'failed', error: 'ERR_INVALID_CHAR', failure: 'unreachable' });
    assert.equal(receiver.requests.length, sent);
  });
});
