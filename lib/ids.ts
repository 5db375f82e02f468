// Server-chosen ids for POST, time-ordered and unguessable (CONVENTIONS.md#post-creates): 48 bits of
// milliseconds then 80 random bits, written in Crockford base32 (lowercase, so ids sort by creation time in code-unit
// order and stay within the id alphabet of names.ts). 80 random bits make guessing a neighbour's id
// hopeless even when the time is known.
import { systemRandom } from './clock.js';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const TIME_CHARS = 10;
const RANDOM_BYTES = 10;

/** Ten base32 characters hold 50 bits; the time part is 48 bits, good until the year 10889. */
const MAX_TIME = 2 ** 48 - 1;

export function newId(now: number, random: (size: number) => Buffer = systemRandom.bytes): string {
  if (!Number.isFinite(now) || now < 0 || now > MAX_TIME) {
    throw new TypeError(`newId: now must be a time in ms from 0 to 2^48-1, got ${now}`);
  }
  let time = '';
  let value = Math.floor(now);
  for (let i = 0; i < TIME_CHARS; i++) {
    time = ALPHABET[value % 32] + time;
    value = Math.floor(value / 32);
  }
  return time + encodeRandom(random(RANDOM_BYTES));
}

/** 80 bits → 16 base32 characters, 5 bits at a time. */
function encodeRandom(bytes: Buffer): string {
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += ALPHABET[(buffer >> bits) & 31];
    }
    buffer &= (1 << bits) - 1;
  }
  return out;
}
