// Checks of the webhook receiver (CONVENTIONS.md#receiving-webhooks): the signature, an HMAC-SHA256 of
// the raw body bytes in X-Signature, lowercase hex or `sha256=`-prefixed, where a missing or wrong one
// is a 401 and is not processed (CONVENTIONS.md#webhook-signature); the order of work, cap, signature,
// timestamp, dedup by the event id, then 200 (CONVENTIONS.md#receiving-order); X-Timestamp
// (CONVENTIONS.md#webhook-timestamp), the event's shape (CONVENTIONS.md#webhook-event-body), and the
// statuses and bodies. They need a secret the receiver accepts (`--webhook-secret-env`); without one
// each is skipped. Every event they send has an id made from the run's collection name, so no two
// runs share one; the receiver keeps those ids (dedup), which is the point.
import { webhookSignature } from '../../protocol/signature.js';
import { check } from '../define.js';
import { expectObject, expectStatus, expectThat, seen } from '../expect.js';
import type { ProbeResponse } from '../probe.js';
import { CheckSkipped, type Check, type CheckContext } from '../types.js';

/** The kind of every event the checks send: no provider's, so no handler of a real kind runs. */
const EVENT_KIND = 'resapi.check';
/** The receiver's body cap, 1 MiB (CONVENTIONS.md#body-cap). */
const BODY_CAP = 1_048_576;
/** X-Timestamp values no clock skew makes fresh: 2000-01-01 and 2100-01-01 in Unix seconds. */
const LONG_AGO = '946684800';
const FAR_AHEAD = '4102444800';

interface Receiver {
  readonly path: string;
  readonly secret: string;
}

export const WEBHOOK_CHECKS: readonly Check[] = [
  check('webhooks', 'accepted', { anchor: 'durable-acceptance' },
    'A correctly signed new event is acknowledged with 200 {"status": "accepted"}',
    async (c) => {
      const receiver = receiverOf(c);
      expectOutcome(await signed(c, receiver, eventBody(c, 'accepted')), 'accepted');
    }),

  check('webhooks', 'duplicate', { anchor: 'deduplication' },
    'The same event delivered again is acknowledged with 200 {"status": "duplicate"} and nothing more',
    async (c) => {
      const receiver = receiverOf(c);
      const body = eventBody(c, 'duplicate');
      expectOutcome(await signed(c, receiver, body), 'accepted');
      expectOutcome(await signed(c, receiver, body), 'duplicate');
    }),

  check('webhooks', 'dedup-by-id', { anchor: 'deduplication' },
    'Deduplication is by the event id: the same id with a different body is a duplicate',
    async (c) => {
      const receiver = receiverOf(c);
      expectOutcome(await signed(c, receiver, eventBody(c, 'dedup-by-id')), 'accepted');
      const resent = eventBody(c, 'dedup-by-id', 'resent with other fields');
      expectOutcome(await signed(c, receiver, resent), 'duplicate');
    }),

  check('webhooks', 'missing-signature', { anchor: 'webhook-signature' },
    'An event without X-Signature is refused with 401 and not recorded (the same event signed afterwards is accepted)',
    async (c) => {
      const receiver = receiverOf(c);
      const body = eventBody(c, 'missing-signature');
      expectStatus(await deliver(c, receiver, body, {}), 401);
      expectOutcome(await signed(c, receiver, body), 'accepted');
    }),

  check('webhooks', 'wrong-signature', { anchor: 'webhook-signature' },
    'An event signed with another secret is refused with 401 and not recorded',
    async (c) => {
      const receiver = receiverOf(c);
      const body = eventBody(c, 'wrong-signature');
      const wrong = webhookSignature(body, `${receiver.secret}-not`);
      expectStatus(await deliver(c, receiver, body, { 'X-Signature': wrong }), 401);
      expectOutcome(await signed(c, receiver, body), 'accepted');
    }),

  check('webhooks', 'raw-bytes', { anchor: 'webhook-signature' },
    'The signature covers the exact raw body bytes: ' +
      'one over the same JSON re-encoded (other whitespace) is refused with 401',
    async (c) => {
      const receiver = receiverOf(c);
      const body = JSON.stringify(JSON.parse(eventBody(c, 'raw-bytes')), null, 2);
      const reencoded = JSON.stringify(JSON.parse(body));
      const signature = webhookSignature(reencoded, receiver.secret);
      expectStatus(await deliver(c, receiver, body, { 'X-Signature': signature }), 401);
      expectOutcome(await signed(c, receiver, body), 'accepted');
    }),

  check('webhooks', 'signature-before-parse', { anchor: 'receiving-order' },
    'The signature is verified before the body is parsed: ' +
      'an unsigned body that is not JSON gets 401, not 400',
    async (c) => {
      const receiver = receiverOf(c);
      const body = '{"id": not json';
      const wrong = webhookSignature(body, `${receiver.secret}-not`);
      expectStatus(await deliver(c, receiver, body, { 'X-Signature': wrong }), 401);
    }),

  check('webhooks', 'sha256-prefix', { anchor: 'webhook-signature' },
    'An X-Signature written as sha256=<hex> (GitHub-style) is accepted',
    async (c) => {
      const receiver = receiverOf(c);
      const body = eventBody(c, 'sha256-prefix');
      const prefixed = `sha256=${webhookSignature(body, receiver.secret)}`;
      expectOutcome(await deliver(c, receiver, body, { 'X-Signature': prefixed }), 'accepted');
    }),

  check('webhooks', 'signature-once', { anchor: 'webhook-signature' },
    'X-Signature sent twice is refused with 401 and not recorded',
    async (c) => {
      const receiver = receiverOf(c);
      const body = eventBody(c, 'signature-once');
      const signature = webhookSignature(body, receiver.secret);
      expectStatus(await deliver(c, receiver, body, { 'X-Signature': [signature, signature] }), 401);
      expectOutcome(await signed(c, receiver, body), 'accepted');
    }),

  check('webhooks', 'stale-timestamp', { anchor: 'webhook-timestamp' },
    'A stale, future or unreadable X-Timestamp is refused with 400 and not recorded',
    async (c) => {
      const receiver = receiverOf(c);
      const body = eventBody(c, 'stale-timestamp');
      for (const stamp of [LONG_AGO, FAR_AHEAD, 'yesterday']) {
        const response = await signed(c, receiver, body, { 'X-Timestamp': stamp });
        expectThat(response.status === 400, `X-Timestamp: ${stamp} answered ${seen(response)}, expected 400`);
      }
      expectOutcome(await signed(c, receiver, body), 'accepted');
    }),

  check('webhooks', 'event-shape', { anchor: 'webhook-event-body' },
    'A signed body that is not an event (no string "id", no "event", not JSON) is refused with 400',
    async (c) => {
      const receiver = receiverOf(c);
      const bodies = [
        JSON.stringify({ event: EVENT_KIND }),
        JSON.stringify({ id: eventId(c, 'event-shape') }),
        JSON.stringify({ id: 7, event: EVENT_KIND }),
        '{"id": "x", "event":',
      ];
      for (const body of bodies) {
        const response = await signed(c, receiver, body);
        expectThat(response.status === 400, `${body} answered ${seen(response)}, expected 400`);
      }
    }),

  check('webhooks', 'body-cap', { anchor: 'body-cap' },
    'A body over 1 MiB is refused with 413 and not recorded',
    async (c) => {
      const receiver = receiverOf(c);
      const body = eventBody(c, 'body-cap');
      // The same event padded with whitespace to one byte over the cap: valid JSON, correctly signed.
      const padded = `${body.slice(0, -1)}${' '.repeat(BODY_CAP + 1 - body.length)}}`;
      expectStatus(await signed(c, receiver, padded), 413);
      expectOutcome(await signed(c, receiver, body), 'accepted');
    }),
];

function receiverOf(c: CheckContext): Receiver {
  if (c.webhook === undefined) {
    throw new CheckSkipped("the run was not given the receiver's secret (--webhook-secret-env)");
  }
  return c.webhook;
}

/** An event id no other check or run uses (the run's collection name is random). */
function eventId(c: CheckContext, name: string): string {
  return `${c.collection}-${name}`;
}

function eventBody(c: CheckContext, name: string, note?: string): string {
  const id = eventId(c, name);
  return JSON.stringify(note === undefined ? { id, event: EVENT_KIND } : { id, event: EVENT_KIND, note });
}

function deliver(
  c: CheckContext,
  receiver: Receiver,
  body: string,
  headers: Readonly<Record<string, string | readonly string[]>>,
): Promise<ProbeResponse> {
  const fields = { 'Content-Type': 'application/json', ...headers };
  return c.send({ method: 'POST', path: receiver.path, headers: fields, body });
}

/**
 * A delivery signed as CONVENTIONS.md#webhook-signature says: lowercase hex HMAC-SHA256 of the exact
 * body bytes.
 */
function signed(
  c: CheckContext,
  receiver: Receiver,
  body: string,
  headers: Readonly<Record<string, string>> = {},
): Promise<ProbeResponse> {
  return deliver(c, receiver, body, { ...headers, 'X-Signature': webhookSignature(body, receiver.secret) });
}

function expectOutcome(response: ProbeResponse, status: 'accepted' | 'duplicate'): void {
  expectStatus(response, 200);
  const body = expectObject(response);
  expectThat(body['status'] === status, `expected {"status": "${status}"}, got ${seen(response)}`);
}
