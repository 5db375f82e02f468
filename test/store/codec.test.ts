// CRC-32C of lib/store/codec.ts (CONVENTIONS.md#durability: every frame carries the CRC-32C of its
// payload): the check values of the Castagnoli polynomial, and agreement with the bitwise definition
// for every length, alignment and range a frame can have.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Crc32c } from '../../lib/store/codec.js';

/** CRC-32C one bit at a time, from the reflected polynomial 0x82F63B78: the definition itself. */
function bitwise(bytes: Uint8Array, start = 0, end = bytes.length): number {
  let c = ~0;
  for (let i = start; i < end; i++) {
    c ^= bytes[i] as number;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
  }
  return ~c >>> 0;
}

/** Bytes that differ from each other and from any table pattern (a fixed multiplicative sequence). */
function sample(length: number): Uint8Array {
  return Uint8Array.from({ length }, (_, index) => (Math.imul(index + 1, 2654435761) >>> 24) & 0xff);
}

describe('Crc32c', () => {
  const crc = new Crc32c();

  it('should give the check values of CRC-32C ("123456789" and RFC 3720 B.4)', () => {
    assert.equal(crc.compute(Buffer.from('123456789')), 0xe3069283);
    assert.equal(crc.compute(new Uint8Array(32)), 0x8a9136aa);
    assert.equal(crc.compute(new Uint8Array(32).fill(0xff)), 0x62a8ab43);
    assert.equal(crc.compute(Uint8Array.from({ length: 32 }, (_, index) => index)), 0x46dd794e);
    assert.equal(crc.compute(Uint8Array.from({ length: 32 }, (_, index) => 31 - index)), 0x113fdb5c);
    assert.equal(crc.compute(new Uint8Array(0)), 0);
  });

  it('should agree with the bitwise definition for every length to 300, at every alignment, and for ranges', () => {
    const bytes = sample(300 + 16);
    for (let offset = 0; offset < 8; offset++) {
      // A view that starts `offset` bytes into its memory, as a frame inside a read buffer does.
      const view = new Uint8Array(bytes.buffer, offset, bytes.length - offset);
      for (let length = 0; length <= 300; length++) {
        assert.equal(crc.compute(view.subarray(0, length)), bitwise(view, 0, length), `length ${length} at ${offset}`);
      }
      for (let start = 0; start < 40; start += 3) {
        const end = view.length - start * 2;
        assert.equal(crc.compute(view, start, end), bitwise(view, start, end), `range ${start}-${end} at ${offset}`);
      }
    }
  });

  it('should agree with the bitwise definition over a large buffer', () => {
    const bytes = sample(1 << 20);
    assert.equal(crc.compute(bytes), bitwise(bytes));
    assert.equal(crc.compute(bytes, 5, bytes.length - 7), bitwise(bytes, 5, bytes.length - 7));
  });
});
