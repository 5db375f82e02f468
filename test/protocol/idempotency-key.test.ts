// Tests for lib/http/idempotency-key.ts: the Idempotency-Key request header
// (CONVENTIONS.md#idempotency-keys): 1-255 visible ASCII characters, "abc" and abc the same key, the
// header twice → 400.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseIdempotencyKey } from '../../lib/protocol/idempotency-key.js';

describe('parseIdempotencyKey', () => {
  it('should report an absent header for no field lines', () => {
    assert.deepEqual(parseIdempotencyKey(undefined), { kind: 'absent' });
    assert.deepEqual(parseIdempotencyKey([]), { kind: 'absent' });
  });

  it('should read an unquoted key', () => {
    assert.deepEqual(parseIdempotencyKey(['8e03978e-40d5-43e8-bc93-6894a57f9324']), {
      kind: 'key',
      key: '8e03978e-40d5-43e8-bc93-6894a57f9324',
    });
  });

  it('should read "abc" and abc as the same key', () => {
    assert.deepEqual(parseIdempotencyKey(['"abc"']), parseIdempotencyKey(['abc']));
    assert.deepEqual(parseIdempotencyKey(['"abc"']), { kind: 'key', key: 'abc' });
  });

  it('should ignore surrounding whitespace (RFC 9110 §5.5, §5.6.3 OWS)', () => {
    assert.deepEqual(parseIdempotencyKey([' \tabc \t']), { kind: 'key', key: 'abc' });
    assert.deepEqual(parseIdempotencyKey([' "abc" ']), { kind: 'key', key: 'abc' });
  });

  it('should accept every visible ASCII character, from "!" to "~"', () => {
    let all = '';
    for (let code = 0x21; code <= 0x7e; code++) if (code !== 0x22) all += String.fromCharCode(code);
    assert.deepEqual(parseIdempotencyKey([all]), { kind: 'key', key: all });
  });

  it('should accept a one-character key', () => {
    assert.deepEqual(parseIdempotencyKey(['x']), { kind: 'key', key: 'x' });
  });

  it('should accept 255 characters and refuse 256', () => {
    assert.deepEqual(parseIdempotencyKey(['k'.repeat(255)]), { kind: 'key', key: 'k'.repeat(255) });
    assert.equal(parseIdempotencyKey(['k'.repeat(256)]).kind, 'invalid');
  });

  it('should count the length without the quotes', () => {
    assert.deepEqual(parseIdempotencyKey([`"${'k'.repeat(255)}"`]), { kind: 'key', key: 'k'.repeat(255) });
    assert.equal(parseIdempotencyKey([`"${'k'.repeat(256)}"`]).kind, 'invalid');
  });

  it('should refuse the header sent twice, even with the same value', () => {
    const result = parseIdempotencyKey(['abc', 'abc']);
    assert.equal(result.kind, 'invalid');
    assert.match(result.kind === 'invalid' ? result.detail : '', /once/);
    assert.equal(parseIdempotencyKey(['abc', 'def']).kind, 'invalid');
  });

  it('should refuse an empty key, quoted or not', () => {
    for (const line of ['', '   ', '""', ' "" ']) {
      assert.equal(parseIdempotencyKey([line]).kind, 'invalid', JSON.stringify(line));
    }
  });

  it('should refuse control characters, spaces inside, DEL and non-ASCII', () => {
    for (const line of ['a\x00b', 'a\x01b', 'a\tb', 'a\nb', 'a\rb', 'a b', 'a\x7fb', 'caf\u00e9', '"a b"']) {
      assert.equal(parseIdempotencyKey([line]).kind, 'invalid', JSON.stringify(line));
    }
  });

  it('should trim only SP and HTAB, so a key ending in a no-break space stays invalid (RFC 9110 §5.6.3 OWS)', () => {
    // Node reads header bytes as latin1: a 0xA0 byte arrives as U+00A0, which String.prototype.trim removes.
    assert.equal(parseIdempotencyKey(['abc\u00a0']).kind, 'invalid');
    assert.equal(parseIdempotencyKey(['\u00a0abc']).kind, 'invalid');
  });

  it('should say what a valid key looks like', () => {
    const result = parseIdempotencyKey(['a b']);
    assert.match(result.kind === 'invalid' ? result.detail : '', /1-255 visible ASCII/);
  });
});
