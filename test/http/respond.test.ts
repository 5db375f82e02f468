// Tests for lib/http/respond.ts's listed replies: a read's fields listed once, in the order they are
// sent, the common fields added by send; a kept reply, sent again and again, is never changed by it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { systemClock } from '../../lib/clock.js';
import { keptReply, listedReply, send, type RequestFields, type ServerFields } from '../../lib/http/respond.js';
import { SendQueue } from '../../lib/http/send-queue.js';

const SERVER: ServerFields = {
  cacheControl: 'no-store',
  forceCacheControl: false,
  vary: undefined,
  varyWithOrigin: 'Origin',
  exposeHeaders: 'ETag',
};
const REQUEST: RequestFields = {
  requestId: 'r1',
  echoRequestId: false,
  date: 'Thu, 26 Nov 2026 23:00:00 GMT',
  varyOrigin: false,
  allowOrigin: undefined,
};
const FIELDS = ['Content-Type', 'application/json', 'ETag', '"e"', 'Cache-Control', 'max-age=0', 'Vary', 'Accept'];

/** Sends `reply` to a response that records the fields writeHead got. */
function sent(reply: ReturnType<typeof listedReply>, request: RequestFields = REQUEST): string[] {
  let written: string[] = [];
  const res = {
    headersSent: false,
    writableLength: 0,
    writeHead(_status: number, fields: string[]) {
      written = [...fields];
      return this;
    },
    end() {},
  } as unknown as ServerResponse;
  const req = { method: 'GET' } as IncomingMessage;
  send(req, res, reply, systemClock, SERVER, request, new SendQueue(systemClock, { maxQueuedResponseBytes: 1e6, responseStallMs: 1000 }));
  return written;
}

describe('listedReply', () => {
  it('should send its fields in order, then Date and Content-Length, and give them as headers too', () => {
    const reply = listedReply(200, [...FIELDS], Buffer.from('{}'));
    assert.deepEqual(reply.headers, Object.fromEntries([['Content-Type', 'application/json'], ['ETag', '"e"'], ['Cache-Control', 'max-age=0'], ['Vary', 'Accept']]));
    // Sent once: the list is this answer's own, and send adds the common fields to it.
    assert.deepEqual(sent(reply), [...FIELDS, 'Date', REQUEST.date, 'Content-Length', '2']);
  });

  it('should leave Content-Type out of a 304 (RFC 9110 §15.4.5)', () => {
    assert.deepEqual(sent(listedReply(304, [...FIELDS])), [...FIELDS.slice(2), 'Date', REQUEST.date]);
  });

  it('should add Origin to its Vary when the answer names one origin', () => {
    const fields = sent(listedReply(200, [...FIELDS], Buffer.from('{}')), { ...REQUEST, varyOrigin: true });
    assert.equal(fields[fields.indexOf('Vary') + 1], 'Accept, Origin');
  });
});

describe('keptReply', () => {
  it('should send the same fields every time, its own list untouched', () => {
    const kept = keptReply(listedReply(304, [...FIELDS.slice(2)]));
    const first = sent(kept);
    assert.deepEqual(sent(kept), first);
    assert.deepEqual(sent(kept, { ...REQUEST, echoRequestId: true }), [...first.slice(0, 6), 'X-Request-Id', 'r1', 'Date', REQUEST.date]);
    assert.deepEqual(sent(kept), first);
    assert.deepEqual(kept.prepared?.fields, FIELDS.slice(2));
  });
});
