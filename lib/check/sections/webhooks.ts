// Checks of the webhook receiver (CONVENTIONS.md#receiving-webhooks): a delivery signed as the
// receiver's scheme says (resapi's X-Signature, CONVENTIONS.md#webhook-signature, by default; Standard
// Webhooks, GitHub or Stripe with `--webhook-scheme`, signed by lib/protocol/scheme-headers.ts exactly
// as those providers sign), where a missing or wrong signature is a 401 and is not processed; the
// order of work, cap, signature, timestamp, dedup by the event id, then 200
// (CONVENTIONS.md#receiving-order); the timestamp (CONVENTIONS.md#webhook-timestamp), the event's
// shape (CONVENTIONS.md#webhook-event-body), and the statuses and bodies. They need a secret the
// receiver accepts (`--webhook-secret-env`): without one they are skipped, and when a correctly signed
// event is not accepted (webhooks/accepted) the others are blocked by it. A receiver that takes a
// delivery signed with another secret, or records it before refusing it (webhooks/wrong-signature),
// blocks the other refusals of a signature, which could only say so again; one that does not
// deduplicate (webhooks/duplicate) blocks dedup-by-id. Every event they send has an
// id made from the run's random tag, so no two runs share one; the receiver keeps those ids (dedup),
// which is the point.
import type { WebhookScheme } from '../../config.js';
import { signedHeaders } from '../../protocol/scheme-headers.js';
import { WHSEC_PREFIX } from '../../protocol/standard-signature.js';
import { webhookSignature } from '../../protocol/signature.js';
import { check } from '../define.js';
import { expectObject, expectStatus, expectThat, seen } from '../expect.js';
import type { ProbeResponse } from '../probe.js';
import { CheckSkipped, type Check, type CheckContext, type Receiver } from '../types.js';

/** The kind of every event the checks send: no provider's, so no handler of a real kind runs. */
const EVENT_KIND = 'resapi.check';
/** The receiver's body cap, 1 MiB (CONVENTIONS.md#body-cap). */
const BODY_CAP = 1_048_576;
/** Timestamps no clock skew makes fresh: 2000-01-01 and 2100-01-01 in Unix seconds. */
const LONG_AGO = 946_684_800;
const FAR_AHEAD = 4_102_444_800;

/** The field that carries the signature in each scheme (what a "missing signature" leaves out). */
const SIGNATURE_FIELD: Readonly<Record<WebhookScheme, string>> = {
  resapi: 'X-Signature',
  standard: 'webhook-signature',
  github: 'X-Hub-Signature-256',
  stripe: 'Stripe-Signature',
};

/** One delivery: the event id and kind the scheme carries (in headers or body), and the exact body. */
interface Delivery {
  readonly id: string;
  readonly kind: string;
  readonly body: string;
}

/** How a delivery is signed, when not as its provider would sign it. */
interface Signing {
  /** Sign with this secret instead of the receiver's. */
  readonly secret?: string;
  /** Sign these bytes instead of the body sent. */
  readonly signedBody?: string;
  readonly timestampS?: number;
  /** Fields set after signing (a stale X-Timestamp, which resapi's signature does not cover). */
  readonly fields?: Readonly<Record<string, string | readonly string[]>>;
  /** Leave the signature field out. */
  readonly unsigned?: boolean;
}

export const WEBHOOK_CHECKS: readonly Check[] = [
  // The prerequisite `receiver`: a receiver that refuses a correctly signed event blocks every other check.
  check('webhooks', 'accepted', { anchor: 'durable-acceptance', requires: ['webhook-secret'] },
    'A correctly signed new event is acknowledged with 200 {"status": "accepted"}',
    async (c) => {
      const receiver = receiverOf(c);
      expectOutcome(await signed(c, receiver, event(c, receiver, 'accepted')), 'accepted');
    }),

  check('webhooks', 'duplicate', { anchor: 'deduplication', needs: ['receiver'], requires: ['webhook-secret'] },
    'The same event delivered again is acknowledged with 200 {"status": "duplicate"} and nothing more',
    async (c) => {
      const receiver = receiverOf(c);
      const delivery = event(c, receiver, 'duplicate');
      expectOutcome(await signed(c, receiver, delivery), 'accepted');
      expectOutcome(await signed(c, receiver, delivery), 'duplicate');
    }),

  check('webhooks', 'dedup-by-id',
    { anchor: 'deduplication', needs: ['receiver', 'dedup'], requires: ['webhook-secret'] },
    'Deduplication is by the event id: the same id with a different body is a duplicate',
    async (c) => {
      const receiver = receiverOf(c);
      expectOutcome(await signed(c, receiver, event(c, receiver, 'dedup-by-id')), 'accepted');
      const resent = event(c, receiver, 'dedup-by-id', 'resent with other fields');
      expectOutcome(await signed(c, receiver, resent), 'duplicate');
    }),

  check('webhooks', 'missing-signature',
    { anchor: 'webhook-signature', needs: ['receiver', 'verifies'], requires: ['webhook-secret'], schemeRule: true },
    'An event without its signature is refused with 401 and not recorded ' +
      '(the same event signed afterwards is accepted)',
    async (c) => {
      const receiver = receiverOf(c);
      const delivery = event(c, receiver, 'missing-signature');
      expectStatus(await signed(c, receiver, delivery, { unsigned: true }), 401);
      expectOutcome(await signed(c, receiver, delivery), 'accepted');
    }),

  check('webhooks', 'wrong-signature',
    { anchor: 'webhook-signature', needs: ['receiver'], requires: ['webhook-secret'], schemeRule: true },
    'An event signed with another secret is refused with 401 and not recorded',
    async (c) => {
      const receiver = receiverOf(c);
      const delivery = event(c, receiver, 'wrong-signature');
      expectStatus(await signed(c, receiver, delivery, { secret: wrongSecret(receiver) }), 401);
      expectOutcome(await signed(c, receiver, delivery), 'accepted');
    }),

  check('webhooks', 'raw-bytes',
    { anchor: 'webhook-signature', needs: ['receiver', 'verifies'], requires: ['webhook-secret'], schemeRule: true },
    'The signature covers the exact raw body bytes: ' +
      'one over the same JSON re-encoded (other whitespace) is refused with 401',
    async (c) => {
      const receiver = receiverOf(c);
      const compact = event(c, receiver, 'raw-bytes');
      const delivery = { ...compact, body: JSON.stringify(JSON.parse(compact.body), null, 2) };
      expectStatus(await signed(c, receiver, delivery, { signedBody: compact.body }), 401);
      expectOutcome(await signed(c, receiver, delivery), 'accepted');
    }),

  check('webhooks', 'signature-before-parse',
    { anchor: 'receiving-order', needs: ['receiver', 'verifies'], requires: ['webhook-secret'] },
    'The signature is verified before the body is parsed: ' +
      'an unsigned body that is not JSON gets 401, not 400',
    async (c) => {
      const receiver = receiverOf(c);
      const delivery = { ...event(c, receiver, 'signature-before-parse'), body: '{"id": not json' };
      expectStatus(await signed(c, receiver, delivery, { secret: wrongSecret(receiver) }), 401);
    }),

  check('webhooks', 'sha256-prefix', { anchor: 'webhook-signature', needs: ['receiver'], requires: ['webhook-secret'] },
    'An X-Signature written as sha256=<hex> (GitHub-style) is accepted',
    async (c) => {
      const receiver = resapiScheme(receiverOf(c));
      const delivery = event(c, receiver, 'sha256-prefix');
      const prefixed = `sha256=${webhookSignature(delivery.body, receiver.secret)}`;
      expectOutcome(await signed(c, receiver, delivery, { fields: { 'X-Signature': prefixed } }), 'accepted');
    }),

  check('webhooks', 'signature-once',
    { anchor: 'webhook-signature', needs: ['receiver', 'verifies'], requires: ['webhook-secret'] },
    'X-Signature sent twice is refused with 401 and not recorded',
    async (c) => {
      const receiver = resapiScheme(receiverOf(c));
      const delivery = event(c, receiver, 'signature-once');
      const signature = webhookSignature(delivery.body, receiver.secret);
      const twice = { fields: { 'X-Signature': [signature, signature] } };
      expectStatus(await signed(c, receiver, delivery, twice), 401);
      expectOutcome(await signed(c, receiver, delivery), 'accepted');
    }),

  // resapi's X-Timestamp is not signed, so a stale one is a 400; where the scheme signs the timestamp
  // (Standard Webhooks, Stripe), a stale one fails the signature, and a 401 is as good a refusal.
  check('webhooks', 'stale-timestamp',
    { anchor: 'webhook-timestamp', needs: ['receiver'], requires: ['webhook-secret'], schemeRule: true },
    'A stale, future or unreadable timestamp is refused (400; or 401 where the scheme signs it) and not recorded',
    async (c) => {
      const receiver = receiverOf(c);
      if (receiver.scheme === 'github') throw new CheckSkipped('the github scheme carries no timestamp');
      const delivery = event(c, receiver, 'stale-timestamp');
      const refusals = receiver.scheme === 'resapi' ? [400] : [400, 401];
      for (const signing of staleSignings(receiver)) {
        const response = await signed(c, receiver, delivery, signing.signing);
        const refused = refusals.includes(response.status);
        expectThat(refused, `${signing.what} answered ${seen(response)}, expected ${refusals.join(' or ')}`);
      }
      expectOutcome(await signed(c, receiver, delivery), 'accepted');
    }),

  check('webhooks', 'event-shape',
    { anchor: 'webhook-event-body', needs: ['receiver'], requires: ['webhook-secret'], schemeRule: true },
    'A signed body that is not an event (no id or kind where the scheme reads them, not JSON) is refused with 400',
    async (c) => {
      const receiver = receiverOf(c);
      const { id, kind } = event(c, receiver, 'event-shape');
      for (const body of malformedEvents(receiver.scheme, id)) {
        const response = await signed(c, receiver, { id, kind, body });
        expectThat(response.status === 400, `${body} answered ${seen(response)}, expected 400`);
      }
    }),

  check('webhooks', 'body-cap', { anchor: 'body-cap', needs: ['receiver'], requires: ['webhook-secret'] },
    'A body over 1 MiB is refused with 413 and not recorded',
    async (c) => {
      const receiver = receiverOf(c);
      const delivery = event(c, receiver, 'body-cap');
      // The same event padded with whitespace to one byte over the cap: valid JSON, correctly signed.
      const padding = ' '.repeat(BODY_CAP + 1 - delivery.body.length);
      const padded = { ...delivery, body: `${delivery.body.slice(0, -1)}${padding}}` };
      expectStatus(await signed(c, receiver, padded), 413);
      expectOutcome(await signed(c, receiver, delivery), 'accepted');
    }),
];

function receiverOf(c: CheckContext): Receiver {
  if (c.webhook === undefined) {
    throw new CheckSkipped("the run was not given the receiver's secret (--webhook-secret-env)");
  }
  return c.webhook;
}

/** The receiver, when it speaks resapi's own scheme; the rule is that scheme's alone otherwise. */
function resapiScheme(receiver: Receiver): Receiver {
  if (receiver.scheme !== 'resapi') {
    throw new CheckSkipped(`a rule of the resapi scheme's X-Signature; the receiver speaks ${receiver.scheme}`);
  }
  return receiver;
}

/**
 * The event `name` of this run, its body shaped as the scheme's providers shape one: resapi's `id`
 * and `event`; Standard Webhooks' `type` (the id travels in `webhook-id`); GitHub's free body (id and
 * kind travel in headers); Stripe's `id` and `type`.
 */
function event(c: CheckContext, receiver: Receiver, name: string, note?: string): Delivery {
  const id = `rcheck-${c.tag}-${name}`;
  const data = note === undefined ? { check: name } : { check: name, note };
  const shaped: Record<WebhookScheme, unknown> = {
    resapi: note === undefined ? { id, event: EVENT_KIND } : { id, event: EVENT_KIND, note },
    standard: { type: EVENT_KIND, timestamp: new Date().toISOString(), data },
    github: data,
    stripe: { id, object: 'event', type: EVENT_KIND, data: { object: data } },
  };
  return { id, kind: EVENT_KIND, body: JSON.stringify(shaped[receiver.scheme]) };
}

/** Bodies, signed correctly, that the scheme cannot read an event from. */
function malformedEvents(scheme: WebhookScheme, id: string): string[] {
  const notJson = '{"id": "x", "event":';
  switch (scheme) {
    case 'resapi':
      return [
        JSON.stringify({ event: EVENT_KIND }),
        JSON.stringify({ id }),
        JSON.stringify({ id: 7, event: EVENT_KIND }),
        notJson,
      ];
    case 'standard':
      return [JSON.stringify({ data: {} }), JSON.stringify({ type: 7, data: {} }), notJson];
    case 'stripe':
      return [
        JSON.stringify({ type: EVENT_KIND }),
        JSON.stringify({ id }),
        JSON.stringify({ id: 7, type: EVENT_KIND }),
        notJson,
      ];
    case 'github':
      return [notJson];
  }
}

/** The ways a delivery's timestamp can be wrong in the receiver's scheme, each with a name for failures. */
function staleSignings(receiver: Receiver): { what: string; signing: Signing }[] {
  if (receiver.scheme === 'resapi') {
    return [String(LONG_AGO), String(FAR_AHEAD), 'yesterday'].map((stamp) => ({
      what: `X-Timestamp: ${stamp}`,
      signing: { fields: { 'X-Timestamp': stamp } },
    }));
  }
  return [LONG_AGO, FAR_AHEAD].map((timestampS) => ({
    what: `a delivery signed at ${timestampS}`,
    signing: { timestampS },
  }));
}

/** A secret the receiver does not hold, spelled as the scheme spells secrets. */
function wrongSecret(receiver: Receiver): string {
  if (receiver.scheme === 'standard' && receiver.secret.startsWith(WHSEC_PREFIX)) {
    return `${WHSEC_PREFIX}${Buffer.from(`not ${receiver.secret}`).toString('base64')}`;
  }
  return `${receiver.secret}-not`;
}

/** The delivery, signed as a provider of the receiver's scheme signs it (unless `signing` says otherwise). */
function signed(
  c: CheckContext,
  receiver: Receiver,
  delivery: Delivery,
  signing: Signing = {},
): Promise<ProbeResponse> {
  const headers: Record<string, string | readonly string[]> = signedHeaders(
    receiver.scheme,
    signing.secret ?? receiver.secret,
    {
      id: delivery.id,
      kind: delivery.kind,
      body: signing.signedBody ?? delivery.body,
      timestampS: signing.timestampS ?? Math.floor(Date.now() / 1000),
    },
  );
  if (signing.unsigned === true) delete headers[SIGNATURE_FIELD[receiver.scheme]];
  const fields = { 'Content-Type': 'application/json', ...headers, ...signing.fields };
  return c.send({ method: 'POST', path: receiver.path, headers: fields, body: delivery.body });
}

function expectOutcome(response: ProbeResponse, status: 'accepted' | 'duplicate'): void {
  expectStatus(response, 200);
  const body = expectObject(response);
  expectThat(body['status'] === status, `expected {"status": "${status}"}, got ${seen(response)}`);
}
