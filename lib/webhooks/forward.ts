// Forwarding (CONVENTIONS.md#forwarding): with `webhooks.forward` (or `--forward URL`), every event
// the receiver accepts is also delivered to that URL, the app being built, as the provider sent it:
// the exact body bytes and the provider's own signature and id fields, so the app's own verification
// code (Stripe's, GitHub's, a Standard Webhooks library, resapi's X-Signature check) works unchanged.
// Nothing is signed again: resapi passes on the provider's proof, it does not add its own.
//
// A forward is a delivery of the outbox (lib/webhooks/outbox.ts), so it has the outbox's retries,
// dead letters, `$retry` and its line in /$outbox, under the pseudo subscription `$forward`: no
// record of `$subscriptions` (never listed, never disabled; a 410 makes the delivery dead and
// nothing more), one worker at a time like any subscription. `forwardMutations` gives the writes
// that go into the same atomic batch as the acceptance (lib/webhooks/inbox.ts `acceptance`), so a
// crash can never leave an accepted event without its forward, nor a forward of an event that was
// not accepted; a duplicate or a refused delivery writes neither.
//
// What is stored, once per accepted event, in the outbox's per-delivery body space under the
// delivery's id, dropped once it is delivered (lib/webhooks/event-bodies.ts):
//   { "body": <the bytes as UTF-8 text> | "bodyBase64": <the bytes>, "headers": { <name>: <value> } }
// Not the inbox's copy of the body: that one is the text the handlers parse (a GitHub form body is
// decoded first), and it is dropped as soon as a handler has processed the event.
//
// The fields passed on are a fixed allow-list per scheme: Content-Type, the signature fields and the
// fields the scheme carries its id, time and kind in. Never the rest of the request (Host, Cookie,
// Authorization, hop-by-hop fields, the provider's tracing): the app is reached as a new request.
import type { Clock, Random } from '../clock.js';
import type { WebhookScheme } from '../config.js';
import { newId } from '../ids.js';
import { jobItem } from '../jobs/queue.js';
import type { JsonObject } from '../json.js';
import type { Mutation, Store, StoredRecord } from '../store/types.js';
import { OUTBOX_BODY_SPACE, OUTBOX_SPACES } from './events.js';

/** The subscription a forward belongs to in /$outbox: no subscription has that id ($ is not in ids). */
export const FORWARD_SUBSCRIPTION = '$forward';

/**
 * The fields passed on, per scheme, spelled as sent (RFC 9110 §5.1: names are case-insensitive).
 * resapi: CONVENTIONS.md#webhook-signature, #webhook-timestamp. standard: Standard Webhooks 1.0 and
 * its `svix-` spelling. github: the SHA-256 signature, the legacy SHA-1 one that older apps still
 * check, the delivery id and the event. stripe: one field carries the time and the signatures.
 */
export const FORWARDED_FIELDS: Readonly<Record<WebhookScheme, readonly string[]>> = {
  resapi: ['Content-Type', 'X-Signature', 'X-Timestamp'],
  standard: [
    'Content-Type', 'webhook-id', 'webhook-timestamp', 'webhook-signature', 'svix-id', 'svix-timestamp',
    'svix-signature',
  ],
  github: ['Content-Type', 'X-Hub-Signature-256', 'X-Hub-Signature', 'X-GitHub-Delivery', 'X-GitHub-Event'],
  stripe: ['Content-Type', 'Stripe-Signature'],
};

/**
 * Characters of the fields kept (names and values): the receiver's limit on a whole header section
 * (lib/http/listener.ts, 16 KiB), so a field of a request the server read is never left out.
 */
export const MAX_FORWARDED_FIELD_CHARS = 16 * 1024;
/** Forwards are kept as long as the deliveries of the sender (lib/webhooks/events.ts). */
const FORWARD_RETENTION_MS = 30 * 86_400_000;

/** The lines of a request's field (its name in lower case), or undefined when it was not sent. */
export type FieldLookup = (name: string) => readonly string[] | undefined;

/** What forwarding reads: the URL (none: forwarding is off), the clock and the random source for ids. */
export interface ForwardContext {
  readonly config: { readonly webhooks: { readonly forward?: string | undefined } };
  readonly clock: Clock;
  readonly random: Random;
}

/** An event the receiver has verified and is about to record. */
export interface AcceptedEvent {
  /** The source it came in by: `webhooks`, or the name of `/webhooks/<name>`. */
  readonly source: string;
  readonly scheme: WebhookScheme;
  /** The provider's event id and kind, as the inbox records them. */
  readonly id: string;
  readonly kind: string;
  /** The exact bytes received. */
  readonly body: Uint8Array;
  readonly fields: FieldLookup;
}

/** The request a forward sends, or why it cannot be sent (the delivery is dead). */
export type ForwardRequest =
  | {
      readonly ok: true;
      readonly url: string;
      readonly headers: Readonly<Record<string, string>>;
      readonly body: Buffer;
    }
  | { readonly ok: false; readonly reason: string };

/**
 * The writes that forward `event`, for the batch that accepts it: its delivery, due now, and its body
 * with the fields passed on. None when forwarding is off.
 */
export function forwardMutations(context: ForwardContext, event: AcceptedEvent): Mutation[] {
  if (context.config.webhooks.forward === undefined) return [];
  const now = context.clock.now();
  const id = newId(now, (size) => context.random.bytes(size));
  const expiresAt = now + FORWARD_RETENTION_MS;
  const item: JsonObject = {
    id,
    eventId: event.id,
    subscription: FORWARD_SUBSCRIPTION,
    source: event.source,
    event: event.kind,
    status: 'pending',
    attempts: 0,
    createdAt: new Date(now).toISOString(),
  };
  const doc: JsonObject = { ...storedBody(event.body), headers: forwardedFields(event.scheme, event.fields) };
  const body: Mutation = { kind: 'put', collection: OUTBOX_BODY_SPACE, id, doc, expiresAt };
  return [jobItem(OUTBOX_SPACES, id, item, now, expiresAt), body];
}

/** The fields of `scheme` the request carried, each one value (its lines joined, RFC 9110 §5.3), within the bound. */
export function forwardedFields(scheme: WebhookScheme, fields: FieldLookup): JsonObject {
  const kept: JsonObject = {};
  let characters = 0;
  for (const name of FORWARDED_FIELDS[scheme]) {
    const lines = fields(name.toLowerCase());
    if (lines === undefined || lines.length === 0) continue;
    const value = lines.join(', ');
    characters += name.length + value.length;
    // Past the bound the field is left out: the app's verifier then refuses the forward, which says so.
    if (characters > MAX_FORWARDED_FIELD_CHARS) break;
    kept[name] = value;
  }
  return kept;
}

/**
 * The request a forward delivery sends now: to the URL configured now (the app may have moved since
 * the event came), with the stored bytes and fields. Without a URL, or without its stored body, it
 * cannot be sent.
 */
export function forwardRequest(store: Store, record: StoredRecord, url: string | undefined): ForwardRequest {
  if (url === undefined) {
    return { ok: false, reason: 'forwarding is off: start the server with --forward URL (webhooks.forward)' };
  }
  const stored = store.get(OUTBOX_BODY_SPACE, record.id)?.doc;
  const body = stored === undefined ? undefined : bodyOf(stored);
  const fields = stored?.['headers'];
  if (body === undefined || typeof fields !== 'object' || fields === null || Array.isArray(fields)) {
    return { ok: false, reason: 'the forward has lost its body' };
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(fields)) if (typeof value === 'string') headers[name] = value;
  return { ok: true, url, headers, body };
}

/**
 * The bytes as text when they are UTF-8 (decoded keeping a byte-order mark, so they encode back to
 * the same bytes), else as base64: providers send JSON, but the bytes are passed on whatever they are.
 */
function storedBody(bytes: Uint8Array): JsonObject {
  try {
    return { body: new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes) };
  } catch {
    return { bodyBase64: Buffer.from(bytes).toString('base64') };
  }
}

function bodyOf(stored: JsonObject): Buffer | undefined {
  const { body, bodyBase64 } = stored;
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  return typeof bodyBase64 === 'string' ? Buffer.from(bodyBase64, 'base64') : undefined;
}
