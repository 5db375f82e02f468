// Checks of the webhook receiver: the seed's "Authentication" (HMAC-SHA256 of the raw body bytes in
// X-Signature, lowercase hex; a missing or wrong signature is a 401 and is not processed) and
// "Events / Receiving rules (in order)" (cap, signature, timestamp, dedup by the event id, 2xx), with
// what CONTRACT §7 fixes where the seed says "not shown": the `sha256=` prefix, X-Timestamp, the
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
/** Seed, Limits: "Webhook request body cap (example receiver): 1 MiB (1048576 bytes)". */
const BODY_CAP = 1_048_576;
/** X-Timestamp values no clock skew makes fresh: 2000-01-01 and 2100-01-01 in Unix seconds. */
const LONG_AGO = '946684800';
const FAR_AHEAD = '4102444800';

interface Receiver {
  readonly path: string;
  readonly secret: string;
}

export const WEBHOOK_CHECKS: readonly Check[] = [
  check('webhooks', 'accepted', 'A correctly signed new event is acknowledged with 200 {"status": "accepted"}', 'seed, Endpoints row 9: "200 once the event is durably accepted"; CONTRACT §7', async (c) => {
    const receiver = receiverOf(c);
    expectOutcome(await signed(c, receiver, eventBody(c, 'accepted')), 'accepted');
  }),

  check('webhooks', 'duplicate', 'The same event delivered again is acknowledged with 200 {"status": "duplicate"} and nothing more', 'seed, Receiving rule 4: "If the id was already handled, acknowledge with 2xx and do nothing more"; CONTRACT §7', async (c) => {
    const receiver = receiverOf(c);
    const body = eventBody(c, 'duplicate');
    expectOutcome(await signed(c, receiver, body), 'accepted');
    expectOutcome(await signed(c, receiver, body), 'duplicate');
  }),

  check('webhooks', 'dedup-by-id', 'Deduplication is by the event id: the same id with a different body is a duplicate', 'seed, Webhook event: "id ... It is the deduplication key"; Receiving rule 4', async (c) => {
    const receiver = receiverOf(c);
    expectOutcome(await signed(c, receiver, eventBody(c, 'dedup-by-id')), 'accepted');
    expectOutcome(await signed(c, receiver, eventBody(c, 'dedup-by-id', 'resent with other fields')), 'duplicate');
  }),

  check('webhooks', 'missing-signature', 'An event without X-Signature is refused with 401 and not recorded (the same event signed afterwards is accepted)', 'seed, Authentication rule 2: "A request with a missing or wrong signature is rejected with 401 and is not processed"', async (c) => {
    const receiver = receiverOf(c);
    const body = eventBody(c, 'missing-signature');
    expectStatus(await deliver(c, receiver, body, {}), 401);
    expectOutcome(await signed(c, receiver, body), 'accepted');
  }),

  check('webhooks', 'wrong-signature', 'An event signed with another secret is refused with 401 and not recorded', 'seed, Authentication rule 2: "A request with a missing or wrong signature is rejected with 401 and is not processed"', async (c) => {
    const receiver = receiverOf(c);
    const body = eventBody(c, 'wrong-signature');
    expectStatus(await deliver(c, receiver, body, { 'X-Signature': webhookSignature(body, `${receiver.secret}-not`) }), 401);
    expectOutcome(await signed(c, receiver, body), 'accepted');
  }),

  check('webhooks', 'raw-bytes', 'The signature covers the exact raw body bytes: one over the same JSON re-encoded (other whitespace) is refused with 401', 'seed, Authentication rule 1: "Verification happens over the raw bytes, before the body is parsed"', async (c) => {
    const receiver = receiverOf(c);
    const body = JSON.stringify(JSON.parse(eventBody(c, 'raw-bytes')), null, 2);
    const reencoded = JSON.stringify(JSON.parse(body));
    expectStatus(await deliver(c, receiver, body, { 'X-Signature': webhookSignature(reencoded, receiver.secret) }), 401);
    expectOutcome(await signed(c, receiver, body), 'accepted');
  }),

  check('webhooks', 'signature-before-parse', 'The signature is verified before the body is parsed: an unsigned body that is not JSON gets 401, not 400', 'seed, Authentication rule 1: "Verification happens over the raw bytes, before the body is parsed"; Receiving rules 2 before 4', async (c) => {
    const receiver = receiverOf(c);
    const body = '{"id": not json';
    expectStatus(await deliver(c, receiver, body, { 'X-Signature': webhookSignature(body, `${receiver.secret}-not`) }), 401);
  }),

  check('webhooks', 'sha256-prefix', 'An X-Signature written as sha256=<hex> (GitHub-style) is accepted', 'CONTRACT §7: "a sha256= prefix is also accepted"', async (c) => {
    const receiver = receiverOf(c);
    const body = eventBody(c, 'sha256-prefix');
    expectOutcome(await deliver(c, receiver, body, { 'X-Signature': `sha256=${webhookSignature(body, receiver.secret)}` }), 'accepted');
  }),

  check('webhooks', 'signature-once', 'X-Signature sent twice is refused with 401 and not recorded', 'CONTRACT §7: "Missing, malformed, sent twice or wrong → 401, nothing recorded"', async (c) => {
    const receiver = receiverOf(c);
    const body = eventBody(c, 'signature-once');
    const signature = webhookSignature(body, receiver.secret);
    expectStatus(await deliver(c, receiver, body, { 'X-Signature': [signature, signature] }), 401);
    expectOutcome(await signed(c, receiver, body), 'accepted');
  }),

  check('webhooks', 'stale-timestamp', 'A stale, future or unreadable X-Timestamp is refused with 400 and not recorded', 'seed, Receiving rule 3: "Reject a stale or future timestamp as replay protection"; CONTRACT §7 (X-Timestamp, ±300 s)', async (c) => {
    const receiver = receiverOf(c);
    const body = eventBody(c, 'stale-timestamp');
    for (const stamp of [LONG_AGO, FAR_AHEAD, 'yesterday']) {
      const response = await signed(c, receiver, body, { 'X-Timestamp': stamp });
      expectThat(response.status === 400, `X-Timestamp: ${stamp} answered ${seen(response)}, expected 400`);
    }
    expectOutcome(await signed(c, receiver, body), 'accepted');
  }),

  check('webhooks', 'event-shape', 'A signed body that is not an event (no string "id", no "event", not JSON) is refused with 400', 'seed, Webhook event received by the service ("id": required, "event": required; "The body is JSON"); CONTRACT §7', async (c) => {
    const receiver = receiverOf(c);
    const bodies = [JSON.stringify({ event: EVENT_KIND }), JSON.stringify({ id: eventId(c, 'event-shape') }), JSON.stringify({ id: 7, event: EVENT_KIND }), '{"id": "x", "event":'];
    for (const body of bodies) {
      const response = await signed(c, receiver, body);
      expectThat(response.status === 400, `${body} answered ${seen(response)}, expected 400`);
    }
  }),

  check('webhooks', 'body-cap', 'A body over 1 MiB is refused with 413 and not recorded', 'seed, Receiving rule 1: "Read the raw body, capped in size"; Limits: "1 MiB (1048576 bytes)"; CONTRACT §3, §7', async (c) => {
    const receiver = receiverOf(c);
    const body = eventBody(c, 'body-cap');
    // The same event padded with whitespace to one byte over the cap: valid JSON, correctly signed.
    const padded = `${body.slice(0, -1)}${' '.repeat(BODY_CAP + 1 - body.length)}}`;
    expectStatus(await signed(c, receiver, padded), 413);
    expectOutcome(await signed(c, receiver, body), 'accepted');
  }),
];

function receiverOf(c: CheckContext): Receiver {
  if (c.webhook === undefined) throw new CheckSkipped("the run was not given the receiver's secret (--webhook-secret-env)");
  return c.webhook;
}

/** An event id no other check or run uses (the run's collection name is random). */
function eventId(c: CheckContext, name: string): string {
  return `${c.collection}-${name}`;
}

function eventBody(c: CheckContext, name: string, note?: string): string {
  return JSON.stringify(note === undefined ? { id: eventId(c, name), event: EVENT_KIND } : { id: eventId(c, name), event: EVENT_KIND, note });
}

function deliver(c: CheckContext, receiver: Receiver, body: string, headers: Readonly<Record<string, string | readonly string[]>>): Promise<ProbeResponse> {
  return c.send({ method: 'POST', path: receiver.path, headers: { 'Content-Type': 'application/json', ...headers }, body });
}

/** A delivery signed as the seed says: lowercase hex HMAC-SHA256 of the exact body bytes. */
function signed(c: CheckContext, receiver: Receiver, body: string, headers: Readonly<Record<string, string>> = {}): Promise<ProbeResponse> {
  return deliver(c, receiver, body, { ...headers, 'X-Signature': webhookSignature(body, receiver.secret) });
}

function expectOutcome(response: ProbeResponse, status: 'accepted' | 'duplicate'): void {
  expectStatus(response, 200);
  const body = expectObject(response);
  expectThat(body['status'] === status, `expected {"status": "${status}"}, got ${seen(response)}`);
}
