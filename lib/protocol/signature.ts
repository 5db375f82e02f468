// Webhook signatures: lowercase hex of HMAC-SHA256 over the exact raw body bytes, 64 characters,
// compared in constant time (CONVENTIONS.md#webhook-signature; the sender signs the same way,
// CONVENTIONS.md#deliveries). Pure, so the receiver, the sender, the client and `resapi sign` share one
// definition.
//
// The receiver reads `X-Signature` as 64 lowercase hex characters, optionally after `sha256=` (the
// prefix GitHub-style providers send). It compares the presented digest with the digest under every
// configured secret (two during a rotation) using crypto.timingSafeEqual, and never stops early, so
// the response time says nothing about the digest or about which secret matched.
import { createHmac, KeyObject, timingSafeEqual } from 'node:crypto';

const DIGEST_HEX_LENGTH = 64;
const PREFIX = 'sha256=';
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;
const LOWER_A = 0x61;
const LOWER_F = 0x66;

/**
 * The X-Signature value of `body` under `secret`: lowercase hex of HMAC-SHA256 (what a sender puts in the
 * header). A sender signing often passes the secret's UTF-8 bytes as a KeyObject made once.
 */
export function webhookSignature(body: Uint8Array | string, secret: string | KeyObject): string {
  if (!(secret instanceof KeyObject) && (typeof secret !== 'string' || secret === '')) {
    throw new TypeError('webhookSignature: secret must be a non-empty string or a KeyObject');
  }
  return createHmac('sha256', secret).update(body).digest('hex');
}

/**
 * The digest an X-Signature field presents, or undefined when it is missing, sent more than once, or
 * not 64 lowercase hex characters (with or without `sha256=`). `lines` are every received field line.
 */
export function presentedDigest(lines: readonly string[] | undefined): Buffer | undefined {
  if (lines === undefined || lines.length !== 1) return undefined;
  const value = lines[0] as string;
  const start = value.startsWith(PREFIX) ? PREFIX.length : 0;
  return isDigestHex(value, start) ? Buffer.from(value.slice(start), 'hex') : undefined;
}

/** Is `value` from `start` on exactly 64 lowercase hex digits? */
function isDigestHex(value: string, start: number): boolean {
  if (value.length - start !== DIGEST_HEX_LENGTH) return false;
  for (let index = start; index < value.length; index++) {
    const code = value.charCodeAt(index);
    if (!((code >= DIGIT_0 && code <= DIGIT_9) || (code >= LOWER_A && code <= LOWER_F))) return false;
  }
  return true;
}

/** Does the X-Signature field sign `body` under one of `secrets`? Constant-time, and it checks every secret. */
export function verifySignature(
  body: Uint8Array,
  lines: readonly string[] | undefined,
  secrets: readonly string[],
): boolean {
  return verifyDigest(body, presentedDigest(lines), secrets);
}

/**
 * Does `presented` (what `presentedDigest` read; undefined never matches) sign `body` under one of
 * `secrets`? Constant-time, and it checks every secret.
 */
export function verifyDigest(body: Uint8Array, presented: Buffer | undefined, secrets: readonly string[]): boolean {
  let matched = false;
  for (const secret of secrets) {
    const expected = createHmac('sha256', secret).update(body).digest();
    // The comparison runs for every secret even once one matched (no early exit).
    const equal = presented !== undefined && timingSafeEqual(presented, expected);
    matched = matched || equal;
  }
  return matched;
}
