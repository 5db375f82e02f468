// The Idempotency-Key request header (CONVENTIONS.md#idempotency-keys; the name is the one of the
// IETF httpapi "Idempotency-Key" draft, which resapi follows): a Structured Field string in that draft, so
// `"abc"` and `abc` name the same key; 1-255 visible ASCII characters; the header sent twice → 400.

export type IdempotencyKeyResult =
  | { readonly kind: 'absent' }
  | { readonly kind: 'key'; readonly key: string }
  | { readonly kind: 'invalid'; readonly detail: string };

import { trimOws } from './field-syntax.js';

const VISIBLE_ASCII = /^[\x21-\x7e]{1,255}$/;

/** `lines` are every received field line (req.headersDistinct['idempotency-key']). */
export function parseIdempotencyKey(lines: readonly string[] | undefined): IdempotencyKeyResult {
  if (lines === undefined || lines.length === 0) return { kind: 'absent' };
  if (lines.length > 1) return { kind: 'invalid', detail: 'Send the Idempotency-Key header field once.' };
  // RFC 9110 §5.5: only SP and HTAB surround a field value.
  let key = trimOws(lines[0] as string);
  if (key.length >= 2 && key.startsWith('"') && key.endsWith('"')) key = key.slice(1, -1);
  if (!VISIBLE_ASCII.test(key)) {
    return { kind: 'invalid', detail: 'An Idempotency-Key is 1-255 visible ASCII characters.' };
  }
  return { kind: 'key', key };
}
