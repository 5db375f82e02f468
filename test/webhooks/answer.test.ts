// A receiver's answer read from its bytes (lib/webhooks/answer.ts): the status and Retry-After of the
// final head, the body's end by Content-Length, chunks or the close, whether the connection may carry
// the next delivery, and what is not an answer. Bytes are fed whole and one at a time: a connection
// hands them over in any pieces.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AnswerReader, HEAD_LIMIT, type AnswerState } from '../../lib/webhooks/answer.js';

/** Feeds `text` in pieces of `step` bytes; the state after the last piece (or the first that is not 'more'). */
function read(text: string, step = text.length): { reader: AnswerReader; state: AnswerState } {
  const reader = new AnswerReader();
  const bytes = Buffer.from(text, 'latin1');
  let state: AnswerState = 'more';
  for (let at = 0; at < bytes.length && state === 'more'; at += step) state = reader.push(bytes.subarray(at, at + step));
  return { reader, state };
}

describe('AnswerReader', () => {
  it('should end an answer at its Content-Length and keep the connection, whatever the pieces', () => {
    for (const step of [1, 7, 1000]) {
      const { reader, state } = read('HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A: b\r\n\r\nhello', step);
      assert.deepEqual([state, reader.status, reader.reusable, reader.bodyBytes], ['done', 200, true, 5], `step ${step}`);
    }
  });

  it('should read the status at the head, before the body has come', () => {
    const { reader, state } = read('HTTP/1.1 503 Busy\r\nRetry-After: 120\r\nRetry-After: 5\r\nContent-Length: 10\r\n\r\nabc');
    assert.deepEqual([state, reader.status, reader.retryAfter], ['more', 503, '120']);
  });

  it('should end a chunked body at its last chunk and trailer, and skip chunk extensions', () => {
    const text = 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\nA\r\n0123456789\r\n0\r\nT: 1\r\n\r\n';
    for (const step of [1, 5, 1000]) {
      const { reader, state } = read(text, step);
      assert.deepEqual([state, reader.status, reader.reusable], ['done', 200, true], `step ${step}`);
    }
  });

  it('should skip interim 1xx heads and read the final one', () => {
    const { reader, state } = read('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n');
    assert.deepEqual([state, reader.status, reader.reusable], ['done', 204, true]);
  });

  it('should read a body without a length to the close, and not keep that connection', () => {
    const { reader, state } = read('HTTP/1.1 200 OK\r\n\r\nsome bytes');
    assert.deepEqual([state, reader.status, reader.bodyBytes], ['more', 200, 10]);
    assert.equal(reader.end(), 'done');
    assert.equal(reader.reusable, false);
  });

  it('should not keep a connection the receiver closes, nor one of HTTP/1.0, nor one with bytes after the answer', () => {
    assert.equal(read('HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n').reader.reusable, false);
    assert.equal(read('HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n').reader.reusable, false);
    const extra = read('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\nHTTP/1.1 200 OK\r\n');
    assert.deepEqual([extra.state, extra.reader.reusable], ['done', false]);
  });

  it('should let Transfer-Encoding win over Content-Length, reading a body that is not chunked to the close', () => {
    const { reader, state } = read('HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nContent-Length: 2\r\n\r\nabcdef');
    assert.deepEqual([state, reader.bodyBytes, reader.reusable], ['more', 6, false]);
  });

  it('should call an answer that ends before its body did an error', () => {
    const { reader } = read('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc');
    assert.equal(reader.end(), 'error');
    assert.equal(new AnswerReader().end(), 'error', 'nothing at all');
  });

  it('should refuse what is not HTTP/1.x framing, naming it as node:http does', () => {
    for (const text of ['SSH-2.0-OpenSSH\r\n\r\n', 'HTTP/2 200\r\n\r\n', 'HTTP/1.1 200 OK\r\nno colon\r\n\r\n', 'HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n']) {
      const { reader, state } = read(text);
      assert.deepEqual([state, reader.error, reader.reusable], ['error', 'HPE_INVALID_CONSTANT', false], JSON.stringify(text));
    }
    const chunk = read('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n');
    assert.deepEqual([chunk.state, chunk.reader.error], ['error', 'HPE_INVALID_CHUNK_SIZE']);
  });

  it('should count trailer lines as body bytes, so the answer limit bounds an endless trailer', () => {
    const { reader, state } = read('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nT: 1\r\nU: 22\r\n', 3);
    assert.deepEqual([state, reader.bodyBytes], ['more', 9]);
  });

  it('should refuse chunk data that does not end with CRLF, as node:http does, and count only the data', () => {
    for (const step of [1, 1000]) {
      const bad = read('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcXX0\r\n\r\n', step);
      assert.deepEqual([bad.state, bad.reader.error, bad.reader.reusable], ['error', 'HPE_STRICT', false], `step ${step}`);
      const good = read('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n', step);
      assert.deepEqual([good.state, good.reader.bodyBytes], ['done', 3], `step ${step}`);
    }
  });

  it('should refuse a head longer than HEAD_LIMIT, even before its end has come', () => {
    const { reader, state } = read(`HTTP/1.1 200 OK\r\nX-Long: ${'x'.repeat(HEAD_LIMIT)}`, 4096);
    assert.deepEqual([state, reader.error], ['error', 'HPE_HEADER_OVERFLOW']);
  });
});
