// Forwarding (lib/webhooks/forward.ts, CONVENTIONS.md#forwarding): the writes that forward an
// accepted event, for each receiving scheme the fields a provider of it signs with and nothing else
// of the request, the bytes kept exactly (UTF-8 or not), and the request a forward sends. Pure: a
// memory store holds what the writes would, and nothing is sent anywhere.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { systemRandom } from '../../lib/clock.js';
import { WEBHOOK_SCHEMES, type WebhookScheme } from '../../lib/config.js';
import type { JsonObject } from '../../lib/json.js';
import { signedHeaders } from '../../lib/protocol/scheme-headers.js';
import type { Mutation, StoredRecord } from '../../lib/store/types.js';
import { OUTBOX_BODY_SPACE, OUTBOX_SPACE } from '../../lib/webhooks/events.js';
import {
  FORWARD_SUBSCRIPTION, forwardedFields, forwardMutations, forwardRequest, MAX_FORWARDED_FIELD_CHARS,
  type AcceptedEvent, type FieldLookup, type ForwardContext,
} from '../../lib/webhooks/forward.js';
import { ManualClock } from '../support/clock.js';

const APP_URL = 'http://127.0.0.1:4000/webhooks';
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const BODY = Buffer.from('{"id":"evt_1","type":"invoice.paid","event":"invoice.paid","action":"created"}');

/** A request's fields as node:http reads them: name, value, name, value …, names as the sender wrote them. */
function lookup(raw: readonly string[]): FieldLookup {
  return (name) => {
    const lines: string[] = [];
    for (let index = 0; index < raw.length; index += 2) if ((raw[index] as string).toLowerCase() === name) lines.push(raw[index + 1] as string);
    return lines.length === 0 ? undefined : lines;
  };
}

/** What a provider of `scheme` sends, plus what a request to the receiver also carries. */
function providerRequest(scheme: WebhookScheme): string[] {
  const signed = Object.entries(signedHeaders(scheme, SECRET, { id: 'evt_1', kind: 'invoice', body: BODY, timestampS: 1_776_157_960 }));
  const others = [
    ['Host', 'hooks.example.test'], ['Content-Type', 'application/json; charset=utf-8'], ['Content-Length', String(BODY.length)],
    ['Connection', 'keep-alive'], ['Cookie', 'a=b'], ['Authorization', 'Bearer x'], ['User-Agent', 'Provider/1.0'],
    ['X-Forwarded-For', '203.0.113.9'], ['Accept-Encoding', 'gzip'], ['Transfer-Encoding', 'chunked'],
  ];
  return [...others, ...signed].flat();
}

/** Forwarding to `forward`, or off with null. */
function context(forward: string | null = APP_URL): ForwardContext {
  return { config: { webhooks: forward === null ? {} : { forward } }, clock: new ManualClock(1_776_157_960_000), random: systemRandom };
}

function accepted(scheme: WebhookScheme, body: Uint8Array = BODY, raw = providerRequest(scheme)): AcceptedEvent {
  return { source: 'billing', scheme, id: 'evt_1', kind: 'invoice.paid', body, fields: lookup(raw) };
}

/** The records the writes would store (a put's doc under its id), enough for forwardRequest. */
function stored(mutations: readonly Mutation[]): { item: StoredRecord; store: { get: (collection: string, id: string) => StoredRecord | undefined } } {
  const records = mutations.map((mutation) => {
    assert.equal(mutation.kind, 'put');
    const put = mutation as Extract<Mutation, { kind: 'put' }>;
    return { collection: put.collection, id: put.id, version: 1, modifiedAt: 0, doc: put.doc } as StoredRecord;
  });
  const item = records.find((record) => record.collection === OUTBOX_SPACE) as StoredRecord;
  return { item, store: { get: (collection, id) => records.find((record) => record.collection === collection && record.id === id) } };
}

describe('forwardMutations', () => {
  it('should write nothing when forwarding is off', () => {
    assert.deepEqual(forwardMutations(context(null), accepted('resapi')), []);
  });

  it('should write one pending delivery of "$forward", due now, and its body with the fields beside it', () => {
    const mutations = forwardMutations(context(), accepted('stripe'));
    assert.equal(mutations.length, 2);
    const [item, body] = mutations as [Extract<Mutation, { kind: 'put' }>, Extract<Mutation, { kind: 'put' }>];
    assert.equal(item.collection, OUTBOX_SPACE);
    assert.deepEqual(item.expect, { absent: true });
    assert.equal(item.dueAt, 1_776_157_960_000);
    const { id, ...rest } = item.doc as JsonObject;
    assert.match(String(id), /^[0-9a-z]{26}$/);
    assert.deepEqual(rest, {
      eventId: 'evt_1', subscription: FORWARD_SUBSCRIPTION, source: 'billing', event: 'invoice.paid',
      status: 'pending', attempts: 0, createdAt: '2026-04-14T09:12:40.000Z',
    });
    assert.equal(body.collection, OUTBOX_BODY_SPACE);
    assert.equal(body.id, id);
    assert.equal(body.expiresAt, item.expiresAt);
    assert.equal((body.doc as JsonObject)['body'], BODY.toString('utf8'));
  });

  it('should give each accepted event a delivery id of its own', () => {
    const ids = new Set(Array.from({ length: 50 }, () => (forwardMutations(context(), accepted('resapi'))[0] as { id: string }).id));
    assert.equal(ids.size, 50);
  });
});

describe('forwardedFields', () => {
  const expected: Record<WebhookScheme, string[]> = {
    resapi: ['Content-Type', 'X-Signature', 'X-Timestamp'],
    standard: ['Content-Type', 'webhook-id', 'webhook-timestamp', 'webhook-signature'],
    github: ['Content-Type', 'X-Hub-Signature-256', 'X-GitHub-Delivery', 'X-GitHub-Event'],
    stripe: ['Content-Type', 'Stripe-Signature'],
  };

  for (const scheme of WEBHOOK_SCHEMES) {
    it(`should keep, for the ${scheme} scheme, the Content-Type and the signature and id fields as received, and nothing else`, () => {
      const raw = providerRequest(scheme);
      const signed = signedHeaders(scheme, SECRET, { id: 'evt_1', kind: 'invoice', body: BODY, timestampS: 1_776_157_960 });
      const kept = forwardedFields(scheme, lookup(raw));
      assert.deepEqual(Object.keys(kept), expected[scheme]);
      assert.equal(kept['Content-Type'], 'application/json; charset=utf-8');
      for (const [name, value] of Object.entries(signed)) assert.equal(kept[name], value, name);
    });
  }

  it('should read names case-insensitively and keep the svix- spelling of Standard Webhooks', () => {
    const raw = ['SVIX-ID', 'msg_1', 'svix-timestamp', '1776157960', 'Svix-Signature', 'v1,abc v1,def', 'content-type', 'application/json'];
    assert.deepEqual(forwardedFields('standard', lookup(raw)), {
      'Content-Type': 'application/json', 'svix-id': 'msg_1', 'svix-timestamp': '1776157960', 'svix-signature': 'v1,abc v1,def',
    });
  });

  it('should keep GitHub\'s legacy SHA-1 signature beside the SHA-256 one', () => {
    const kept = forwardedFields('github', lookup(['X-Hub-Signature', 'sha1=0123', 'X-Hub-Signature-256', 'sha256=abcd']));
    assert.deepEqual(kept, { 'X-Hub-Signature-256': 'sha256=abcd', 'X-Hub-Signature': 'sha1=0123' });
  });

  it('should join a field sent on several lines into one value (RFC 9110 §5.3)', () => {
    assert.deepEqual(forwardedFields('resapi', lookup(['X-Signature', 'aa', 'x-signature', 'bb'])), { 'X-Signature': 'aa, bb' });
  });

  it('should leave out the fields past the bound, and keep those before it', () => {
    const long = 'v1,' + 'A'.repeat(MAX_FORWARDED_FIELD_CHARS);
    const kept = forwardedFields('standard', lookup(['webhook-id', 'msg_1', 'webhook-timestamp', '1', 'webhook-signature', long]));
    assert.deepEqual(kept, { 'webhook-id': 'msg_1', 'webhook-timestamp': '1' });
  });
});

describe('forwardRequest', () => {
  it('should send the stored bytes and fields to the URL configured now', () => {
    const { item, store } = stored(forwardMutations(context(), accepted('github')));
    const request = forwardRequest(store as never, item, 'http://127.0.0.1:4001/moved');
    assert.ok(request.ok);
    assert.equal(request.url, 'http://127.0.0.1:4001/moved');
    assert.deepEqual(request.body, BODY);
    assert.deepEqual(Object.keys(request.headers), ['Content-Type', 'X-Hub-Signature-256', 'X-GitHub-Delivery', 'X-GitHub-Event']);
  });

  it('should keep bytes exactly, a byte-order mark and bytes that are not UTF-8 included', () => {
    for (const bytes of [Buffer.from('\ufeff{"id":"evt_1"}'), Buffer.from([0x7b, 0xff, 0xfe, 0x00, 0xc3, 0x7d])]) {
      const { item, store } = stored(forwardMutations(context(), accepted('resapi', bytes)));
      const request = forwardRequest(store as never, item, APP_URL);
      assert.ok(request.ok);
      assert.deepEqual(request.body, bytes);
    }
  });

  it('should not send a forward when forwarding is off now, or its body is gone, and say why', () => {
    const { item, store } = stored(forwardMutations(context(), accepted('resapi')));
    const off = forwardRequest(store as never, item, undefined);
    assert.deepEqual(off, { ok: false, reason: 'forwarding is off: start the server with --forward URL (webhooks.forward)' });
    const lost = forwardRequest({ get: () => undefined } as never, item, APP_URL);
    assert.deepEqual(lost, { ok: false, reason: 'the forward has lost its body' });
  });
});
