// Standard Webhooks 1.0 signatures (CONVENTIONS.md#standard-webhooks-scheme): `webhook-signature` is a
// space-separated list of `v1,<base64 of HMAC-SHA256>` entries over `<webhook-id>.<webhook-timestamp>.<body>`.
// The key is what a secret stands for: after a `whsec_` prefix, the base64-decoded bytes (the form
// Standard Webhooks libraries and Svix hand out); any other secret, its UTF-8 bytes (what those
// libraries call a "raw" secret). The sender (CONVENTIONS.md#deliveries) and the `standard` receiving
// scheme share these, so what one signs the other verifies.
import { createHmac, type KeyObject } from 'node:crypto';

/** Standard Webhooks' spelling of a secret: this prefix, then the key's bytes in base64. */
export const WHSEC_PREFIX = 'whsec_';

/** The HMAC key a secret stands for: the decoded bytes of a `whsec_` secret, else its UTF-8 bytes. */
export function signingKey(secret: string): Buffer {
  if (secret.startsWith(WHSEC_PREFIX)) return Buffer.from(secret.slice(WHSEC_PREFIX.length), 'base64');
  return Buffer.from(secret, 'utf8');
}

/** The raw HMAC-SHA256 of `id.timestamp.body` under `key` (what a `v1,` entry carries in base64). */
export function standardDigest(
  key: Uint8Array | KeyObject,
  id: string,
  timestamp: string,
  body: Uint8Array | string,
): Buffer {
  return createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest();
}

/**
 * The `webhook-signature` value for one delivery: one `v1,<base64>` entry per secret, in the order
 * given (the current secret first, then the previous one during a rotation overlap), space-separated.
 * A secret is given as itself or as its `signingKey` made into a KeyObject once (a sender signing often).
 */
export function standardSignature(
  id: string,
  timestamp: string,
  body: Uint8Array | string,
  secrets: readonly (string | KeyObject)[],
): string {
  let value = '';
  for (const secret of secrets) {
    const key = typeof secret === 'string' ? signingKey(secret) : secret;
    const entry = `v1,${standardDigest(key, id, timestamp, body).toString('base64')}`;
    value = value === '' ? entry : `${value} ${entry}`;
  }
  return value;
}
