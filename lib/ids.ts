// Server-chosen ids for POST, time-ordered and unguessable (CONVENTIONS.md#post-creates): 48 bits of
// milliseconds then 80 random bits, written in Crockford base32 (lowercase, so ids sort by creation time in code-unit
// order and stay within the id alphabet of names.ts). 80 random bits make guessing a neighbour's id
// hopeless even when the time is known.
import { systemRandom } from './clock.js';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const TIME_CHARS = 10;
const RANDOM_BYTES = 10;
/** The characters 80 random bits make in base32. */
const ID_RANDOM_CHARS = 16;
const ALPHABET_CODES: readonly number[] = Array.from(ALPHABET, (character) => character.charCodeAt(0));

/** Ten base32 characters hold 50 bits; the time part is 48 bits, good until the year 10889. */
const MAX_TIME = 2 ** 48 - 1;

export function newId(now: number, random: (size: number) => Buffer = systemRandom.bytes): string {
  if (!Number.isFinite(now) || now < 0 || now > MAX_TIME) {
    throw new TypeError(`newId: now must be a time in ms from 0 to 2^48-1, got ${now}`);
  }
  // Character codes, made into one string at the end: a string grown a character at a time is a chain
  // of 26 pieces, kept as such (about 180 bytes more per id, measured) by every record holding it.
  const codes = new Array<number>(TIME_CHARS + ID_RANDOM_CHARS);
  let value = Math.floor(now);
  for (let i = TIME_CHARS - 1; i >= 0; i--) {
    codes[i] = ALPHABET_CODES[value % 32] as number;
    value = Math.floor(value / 32);
  }
  encodeRandom(random(RANDOM_BYTES), codes, TIME_CHARS);
  return String.fromCharCode(...codes);
}

/** 80 bits → 16 base32 characters, 5 bits at a time, their codes written into `codes` from `at` on. */
function encodeRandom(bytes: Buffer, codes: number[], at: number): void {
  let next = at;
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      codes[next++] = ALPHABET_CODES[(buffer >> bits) & 31] as number;
    }
    buffer &= (1 << bits) - 1;
  }
}
