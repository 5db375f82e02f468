// The resapi receiving scheme (lib/webhooks/schemes/resapi.ts, CONVENTIONS.md#webhook-signature,
// #webhook-timestamp, #webhook-event-body) and what every scheme shares (common.ts): each refusal says
// which header is missing, that it is malformed or sent twice, or that no secret's signature matches;
// the provider's header fields handed to a handler leave out the signature and the connection's fields.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { signedHeaders } from '../../../lib/protocol/scheme-headers.js';
import { webhookSignature } from '../../../lib/protocol/signature.js';
import { providerHeaders } from '../../../lib/webhooks/schemes/common.js';
import { resapiScheme } from '../../../lib/webhooks/schemes/resapi.js';
import { accepted, received, refused } from '../../support/schemes.js';

const SECRET = 'resapi-scheme-test-secret';
const NOW_S = 1_776_157_960;
const BODY = '{"id":"evt_1","event":"order.created","total":12.5}';

function judge(headers: Record<string, string | string[]>, options: { body?: string; requireTimestamp?: boolean } = {}) {
  return resapiScheme(received({ headers, body: options.body ?? BODY, secrets: [SECRET], nowS: NOW_S, requireTimestamp: options.requireTimestamp ?? false }));
}

describe('the resapi scheme', () => {
  it('should accept what signedHeaders signs: id and kind from the body, X-Signature not handed on', () => {
    const headers = signedHeaders('resapi', SECRET, { id: 'evt_1', kind: 'order.created', body: BODY, timestampS: NOW_S });
    const event = accepted(judge({ ...headers, 'Content-Type': 'application/json' }));
    assert.deepEqual(event, { id: 'evt_1', kind: 'order.created', text: BODY, headers: { 'x-timestamp': String(NOW_S), 'content-type': 'application/json' } });
  });

  it('should say which of missing, sent twice, malformed or not matching the X-Signature is, with 401', () => {
    const signature = webhookSignature(BODY, SECRET);
    const cases: [Record<string, string | string[]>, RegExp, string][] = [
      [{}, /^X-Signature is missing/, 'X-Signature missing'],
      [{ 'X-Signature': [signature, signature] }, /^X-Signature is sent more than once/, 'X-Signature sent more than once'],
      [{ 'X-Signature': signature.toUpperCase() }, /^X-Signature is malformed/, 'X-Signature malformed'],
      [{ 'X-Signature': webhookSignature(BODY, 'another-secret-of-16+') }, /^X-Signature does not sign this body/, 'no signature matched'],
    ];
    for (const [headers, detail, reason] of cases) {
      const problem = refused(judge(headers));
      assert.equal(problem.status, 401, reason);
      assert.match(problem.detail, detail);
      assert.equal(problem.reason, reason);
      assert.equal(problem.headers?.['WWW-Authenticate'], 'HMAC-SHA256 realm="webhooks"');
    }
    accepted(judge({ 'X-Signature': `sha256=${signature}` }));
  });

  it('should check X-Timestamp only when sent, unless required', () => {
    const signature = webhookSignature(BODY, SECRET);
    accepted(judge({ 'X-Signature': signature }));
    assert.match(refused(judge({ 'X-Signature': signature }, { requireTimestamp: true })).detail, /X-Timestamp is required/);
    assert.match(refused(judge({ 'X-Signature': signature, 'X-Timestamp': String(NOW_S - 301) })).detail, /more than 300 s away/);
    assert.equal(refused(judge({ 'X-Signature': signature, 'X-Timestamp': 'now' })).status, 400);
  });

  it('should refuse a body without a string id and event with 400 pointing at each', () => {
    const body = '{"id":7}';
    const problem = refused(judge({ 'X-Signature': webhookSignature(body, SECRET) }, { body }));
    assert.equal(problem.status, 400);
    assert.deepEqual(problem.errors?.map((error) => error.pointer), ['/id', '/event']);
  });

  it('should keep numbers a double cannot hold exactly, and refuse bad syntax at its offset in its own words', () => {
    const exact = '{"id":"evt_2","event":"order.created","total":9007199254740993,"tiny":1e-400}';
    assert.equal(accepted(judge({ 'X-Signature': webhookSignature(exact, SECRET) }, { body: exact })).text, exact);
    const broken = '{"id":"evt_3","event": }';
    const problem = refused(judge({ 'X-Signature': webhookSignature(broken, SECRET) }, { body: broken }));
    assert.equal(problem.status, 400);
    assert.equal(problem.reason, 'body not a JSON object');
    assert.equal(problem.detail, 'The body is not valid JSON: unexpected character at offset 23.');
  });
});

describe('providerHeaders', () => {
  it('should leave out the signature fields, the connection\'s fields and credentials, and keep a __proto__ field as a field', () => {
    const lines = new Map<string, string[]>([
      ['host', ['abc.ngrok.app']], ['content-length', ['12']], ['connection', ['keep-alive']], ['authorization', ['Bearer x']],
      ['x-signature', ['00']], ['user-agent', ['provider/1']], ['x-many', ['a', 'b']], ['__proto__', ['odd']],
    ]);
    const kept = providerHeaders(lines, ['x-signature']);
    assert.deepEqual(Object.keys(kept), ['user-agent', 'x-many', '__proto__']);
    assert.equal(kept['x-many'], 'a, b');
    assert.equal(Object.getPrototypeOf(kept), Object.prototype);
  });

  it('should stop at 8192 characters of names and values', () => {
    const lines = new Map<string, string[]>([['x-a', ['a'.repeat(5000)]], ['x-b', ['b'.repeat(5000)]], ['x-c', ['c']]]);
    assert.deepEqual(Object.keys(providerHeaders(lines, [])), ['x-a']);
  });
});
