// The header fields that sign one webhook delivery in each receiving scheme resapi knows
// (CONVENTIONS.md#receiving-sources): what a provider of that scheme sends, made here so the tests,
// the benchmark, the checker (`resapi check --webhook-scheme`) and the client sign exactly as the
// receiver verifies. Pure: the caller brings the time and the body, which must already say what the
// scheme reads from it (Stripe's and Standard Webhooks' `type`, Stripe's `id`).
// - resapi: `X-Signature` (lowercase hex HMAC-SHA256 of the body), `X-Timestamp` (CONVENTIONS.md#webhook-signature);
// - standard: `webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64>` over `id.timestamp.body`
//   (CONVENTIONS.md#standard-webhooks-scheme);
// - github: `X-Hub-Signature-256: sha256=<hex>` of the body, `X-GitHub-Delivery`, `X-GitHub-Event`
//   (CONVENTIONS.md#github-scheme);
// - stripe: `Stripe-Signature: t=<seconds>,v1=<hex of HMAC-SHA256 over "t.body">` (CONVENTIONS.md#stripe-scheme).
import { createHmac } from 'node:crypto';
import type { WebhookScheme } from '../config.js';
import { webhookSignature } from './signature.js';
import { standardSignature } from './standard-signature.js';

export interface DeliveryToSign {
  /** The event id the scheme carries in a header (standard, github); resapi and stripe read it from the body. */
  readonly id: string;
  /** The event kind a header carries (github's `X-GitHub-Event`); the others read it from the body. */
  readonly kind: string;
  /** The exact bytes to be sent. */
  readonly body: string | Uint8Array;
  /** The time of this attempt, in whole Unix seconds. */
  readonly timestampS: number;
}

/** The header fields a provider of `scheme` would send with `delivery`, signed with `secret`. */
export function signedHeaders(scheme: WebhookScheme, secret: string, delivery: DeliveryToSign): Record<string, string> {
  const timestamp = String(delivery.timestampS);
  switch (scheme) {
    case 'resapi':
      return { 'X-Signature': webhookSignature(delivery.body, secret), 'X-Timestamp': timestamp };
    case 'standard':
      return {
        'webhook-id': delivery.id,
        'webhook-timestamp': timestamp,
        'webhook-signature': standardSignature(delivery.id, timestamp, delivery.body, [secret]),
      };
    case 'github':
      return {
        'X-Hub-Signature-256': `sha256=${webhookSignature(delivery.body, secret)}`,
        'X-GitHub-Delivery': delivery.id,
        'X-GitHub-Event': delivery.kind,
      };
    case 'stripe': {
      const digest = createHmac('sha256', secret).update(`${timestamp}.`).update(delivery.body).digest('hex');
      return { 'Stripe-Signature': `t=${timestamp},v1=${digest}` };
    }
  }
}
