// Tests for lib/ids.ts: server-chosen ids for POST (CONVENTIONS.md#post-creates: time-ordered,
// unguessable), which must also be valid resource ids (CONVENTIONS.md#names).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { newId } from '../lib/ids.js';
import { isResourceId } from '../lib/names.js';

const CROCKFORD = /^[0-9a-hjkmnp-tv-z]{26}$/;
const zeros = (size: number): Buffer => Buffer.alloc(size);
const ones = (size: number): Buffer => Buffer.alloc(size, 0xff);

describe('newId', () => {
  it('should be 26 lower-case Crockford base32 characters', () => {
    for (const now of [0, 1, Date.now(), 2 ** 48 - 1]) {
      assert.match(newId(now), CROCKFORD, String(now));
    }
  });

  it('should be a valid resource id', () => {
    for (let i = 0; i < 100; i++) assert.equal(isResourceId(newId(Date.now())), true);
  });

  it('should put 48 bits of milliseconds first, as a ULID does (vector from the ULID spec)', () => {
    // github.com/ulid/spec: timestamp 1469918176385 encodes as "01ARYZ6S41".
    assert.equal(newId(1469918176385, zeros).slice(0, 10), '01aryz6s41');
    assert.equal(newId(0, zeros), '0'.repeat(26));
    assert.equal(newId(2 ** 48 - 1, zeros).slice(0, 10), '7zzzzzzzzz');
  });

  it('should encode the 80 random bits five at a time, most significant first', () => {
    assert.equal(newId(0, ones).slice(10), 'z'.repeat(16));
    // 0x08 42 10 84 21 is 00001 repeated eight times.
    const pattern = Buffer.from([0x08, 0x42, 0x10, 0x84, 0x21, 0x08, 0x42, 0x10, 0x84, 0x21]);
    assert.equal(newId(0, () => pattern).slice(10), '1'.repeat(16));
    const first = Buffer.alloc(10);
    first[0] = 0x80;
    assert.equal(newId(0, () => first).slice(10), `g${'0'.repeat(15)}`);
  });

  it('should ask the random source for 10 bytes', () => {
    const sizes: number[] = [];
    newId(0, (size) => {
      sizes.push(size);
      return Buffer.alloc(size);
    });
    assert.deepEqual(sizes, [10]);
  });

  it('should sort by creation time in code-unit order, whatever the random part', () => {
    const times = [0, 1, 9, 10, 31, 32, 1023, 1024, 1_700_000_000_000, 1_700_000_000_001, 2 ** 41, 2 ** 48 - 1];
    const ids = times.map((now, index) => newId(now, index % 2 === 0 ? ones : zeros));
    assert.deepEqual([...ids].sort(), ids);
  });

  it('should floor a fractional millisecond', () => {
    assert.equal(newId(1000.9, zeros), newId(1000, zeros));
  });

  it('should differ for ids made in the same millisecond', () => {
    const now = Date.now();
    const ids = new Set<string>();
    for (let i = 0; i < 1000; i++) ids.add(newId(now));
    assert.equal(ids.size, 1000);
  });

  it('should share the time prefix for ids made in the same millisecond', () => {
    assert.equal(newId(123456789).slice(0, 10), newId(123456789).slice(0, 10));
  });

  it('should throw a TypeError for a time that cannot be encoded (NaN, negative, too large for ten characters)', () => {
    for (const now of [Number.NaN, -1, Number.POSITIVE_INFINITY, 2 ** 50]) {
      assert.throws(() => newId(now, zeros), { name: 'TypeError' }, String(now));
    }
  });
});

describe('newId against a reference encoding', () => {
  /** Crockford base32 of the 128 bits, five at a time from the top: 2 bits of padding, 48 of time, 80 random. */
  const reference = (now: number, bytes: Buffer): string => {
    let bits = Math.floor(now).toString(2).padStart(50, '0');
    for (const byte of bytes) bits += byte.toString(2).padStart(8, '0');
    let out = '';
    for (let at = 0; at < bits.length; at += 5) out += '0123456789abcdefghjkmnpqrstvwxyz'[parseInt(bits.slice(at, at + 5), 2)];
    return out;
  };

  it('should equal it for times across the range and random bytes of every value', () => {
    const times = [0, 1, 31, 32, 2 ** 25 - 1, 2 ** 25, 2 ** 30, 1_700_000_000_123.7, 2 ** 47, 2 ** 48 - 1];
    for (let n = 0; n < 2000; n++) {
      const now = n < times.length ? (times[n] as number) : Math.random() * 2 ** 48;
      const bytes = Buffer.from(Array.from({ length: 10 }, (_, index) => (n * 37 + index * 101 + (n >> 3)) & 255));
      assert.equal(newId(now, () => bytes), reference(now, bytes), `${now} ${bytes.toString('hex')}`);
    }
  });
});
