// Webhook signatures for the client's users (lowercase hex of HMAC-SHA256 over the exact raw body
// bytes, compared in constant time: CONVENTIONS.md#webhook-signature): the same definitions the
// server's receiver and sender use (lib/protocol/signature.ts).
import { verifySignature, webhookSignature } from '../protocol/signature.js';

/** The X-Signature value for `body` under `secret`. */
export function signWebhook(body: Uint8Array | string, secret: string): string {
  return webhookSignature(body, secret);
}

/**
 * Does `signature` (an X-Signature value, with or without `sha256=`) sign the raw body under one of
 * `secrets` (two during a rotation)? Compared in constant time against every secret. Pass the bytes
 * as received: a body parsed and serialized again no longer matches.
 */
export function verifyWebhook(
  rawBody: Uint8Array | string,
  signature: string | null | undefined,
  secrets: string | readonly string[],
): boolean {
  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody;
  const lines = signature === null || signature === undefined ? undefined : [signature];
  return verifySignature(body, lines, typeof secrets === 'string' ? [secrets] : secrets);
}
