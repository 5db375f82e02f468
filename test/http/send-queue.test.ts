// Tests for lib/http/send-queue.ts: bodies counted until the kernel has them, room for pages refused
// at the cap, and a response without progress for responseStallMs abandoned
// (CONVENTIONS.md#connections). A node:http server on loopback and a manual clock: time passes only
// when the test moves it, and every other wait is for an event.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { SendQueue } from '../../lib/http/send-queue.js';
import { eventually } from '../support/eventually.js';
import { ManualClock } from '../support/clock.js';

const MIB = 1024 * 1024;
const STALL_MS = 30_000;
/** Far more than the kernel takes from a client that never reads, so most of it waits in the server. */
const BODY = Buffer.alloc(24 * MIB, 0x61);

describe('SendQueue.reserve', () => {
  it('should give room while what is reserved is under the cap, and take it back once, however often released', () => {
    const queue = new SendQueue(new ManualClock(), { maxQueuedResponseBytes: 10, responseStallMs: STALL_MS });
    const first = queue.reserve(6);
    const second = queue.reserve(6);
    assert.ok(first !== undefined && second !== undefined);
    assert.equal(queue.reserve(1), undefined);
    first();
    first();
    // 6 of 10 are still reserved by the second: room for one more, had the double release counted once.
    assert.ok(queue.reserve(5) !== undefined);
    assert.equal(queue.reserve(1), undefined);
  });
});

describe('SendQueue.end', () => {
  const clock = new ManualClock();
  const queue = new SendQueue(clock, { maxQueuedResponseBytes: MIB, responseStallMs: STALL_MS });
  let server: Server;
  let port = 0;
  before(async () => {
    server = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'Content-Length': String(BODY.length) });
      queue.end(res, BODY);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  /** A GET whose answer is not read until the test says so; `received` counts what was read. */
  async function get(): Promise<{ socket: Socket; received: () => number; closed: () => boolean }> {
    const socket = connect({ host: '127.0.0.1', port });
    socket.on('error', () => {});
    let received = 0;
    let closed = false;
    socket.on('close', () => {
      closed = true;
    });
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    socket.write('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    // Paused before a 'data' listener is added, which then leaves it paused until resume().
    socket.pause();
    socket.on('data', (chunk: Buffer) => {
      received += chunk.length;
    });
    return { socket, received: () => received, closed: () => closed };
  }

  it('should count a body until the client has read it, and never abandon a response that finished', async () => {
    const client = await get();
    await eventually('the body to be counted', () => queue.queuedBytes === BODY.length);
    clock.advance(STALL_MS - 1);
    client.socket.resume();
    await eventually('the body to be read', () => client.received() > BODY.length);
    await eventually('the count to be freed', () => queue.queuedBytes === 0);
    clock.advance(STALL_MS * 2);
    assert.equal(queue.abandoned, 0);
    assert.equal(client.closed(), false);
    client.socket.destroy();
  });

  it('should reset the connection of a response without progress for responseStallMs and free its count', async () => {
    const client = await get();
    await eventually('the body to be counted', () => queue.queuedBytes === BODY.length);
    clock.advance(STALL_MS - 1);
    assert.equal(queue.abandoned, 0);
    clock.advance(1);
    assert.equal(queue.abandoned, 1);
    assert.equal(queue.queuedBytes, 0);
    // A paused socket learns of the reset when it next writes.
    await eventually('the client to see the reset', () => {
      if (!client.closed()) client.socket.write('\r\n');
      return client.closed();
    });
    assert.ok(client.received() < BODY.length);
  });
});
