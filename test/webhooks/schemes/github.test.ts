// The `github` receiving scheme (lib/webhooks/schemes/github.ts, CONVENTIONS.md#github-scheme) against
// GitHub's documented example: "Validating webhook deliveries" in GitHub's docs
// (https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries) gives the secret
// `It's a Secret to Everybody` and the payload `Hello, World!`, whose X-Hub-Signature-256 is
// sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17. That payload is no JSON
// event, so it shows the signature step (it passes, and the body is refused after it); the events
// around it are signed the same way, with lib/protocol/scheme-headers.ts `signedHeaders`.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { signedHeaders } from '../../../lib/protocol/scheme-headers.js';
import { webhookSignature } from '../../../lib/protocol/signature.js';
import { githubScheme } from '../../../lib/webhooks/schemes/github.js';
import { MAX_HEADER_FIELDS } from '../../../lib/webhooks/schemes/common.js';
import { accepted, received, refused } from '../../support/schemes.js';

const SECRET = "It's a Secret to Everybody";
const PAYLOAD = 'Hello, World!';
const EXPECTED = 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17';
const DELIVERY = '72d3162e-cc78-11e3-81ab-4c9367dc0958';
const NOW_S = 1_700_000_000;
const ISSUE_OPENED = JSON.stringify({ action: 'opened', issue: { number: 1347 }, repository: { full_name: 'octocat/Hello-World' } });

function githubHeaders(body: string, event = 'issues', secret = SECRET): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    'User-Agent': 'GitHub-Hookshot/044aadd',
    'X-GitHub-Hook-ID': '292430182',
    ...signedHeaders('github', secret, { id: DELIVERY, kind: event, body, timestampS: NOW_S }),
  };
}

describe('the github scheme against GitHub\'s documented example', () => {
  it('should sign the documented payload as documented, with signedHeaders and the shared signer', () => {
    assert.equal(`sha256=${webhookSignature(PAYLOAD, SECRET)}`, EXPECTED);
    assert.equal(githubHeaders(PAYLOAD)['X-Hub-Signature-256'], EXPECTED);
  });

  it('should verify the documented delivery\'s signature, then refuse its body, which is not JSON, with 400', () => {
    const headers = { 'X-Hub-Signature-256': EXPECTED, 'X-GitHub-Delivery': DELIVERY, 'X-GitHub-Event': 'ping', 'Content-Type': 'application/json' };
    const problem = refused(githubScheme(received({ headers, body: PAYLOAD, secrets: [SECRET], nowS: NOW_S })));
    assert.equal(problem.status, 400, problem.detail);
    assert.equal(problem.type, 'invalid-json');
    // Signed with another secret, the same delivery is a 401: the 400 above came after the signature passed.
    const other = refused(githubScheme(received({ headers, body: PAYLOAD, secrets: ['another secret, 16+ bytes'], nowS: NOW_S })));
    assert.equal(other.status, 401);
    assert.match(other.detail, /does not sign this body/);
  });

  it('should accept an event: id from X-GitHub-Delivery, kind from X-GitHub-Event and the body\'s action', () => {
    const event = accepted(githubScheme(received({ headers: githubHeaders(ISSUE_OPENED), body: ISSUE_OPENED, secrets: [SECRET], nowS: NOW_S })));
    assert.equal(event.id, DELIVERY);
    assert.equal(event.kind, 'issues.opened');
    assert.equal(event.text, ISSUE_OPENED);
    assert.deepEqual(event.headers, {
      'content-type': 'application/json',
      'user-agent': 'GitHub-Hookshot/044aadd',
      'x-github-hook-id': '292430182',
      'x-github-delivery': DELIVERY,
      'x-github-event': 'issues',
    });
    const push = JSON.stringify({ ref: 'refs/heads/main' });
    assert.equal(accepted(githubScheme(received({ headers: githubHeaders(push, 'push'), body: push, secrets: [SECRET], nowS: NOW_S }))).kind, 'push');
  });

  it('should verify a form-encoded delivery over its raw bytes, then read its payload as the JSON body', () => {
    const form = `payload=${encodeURIComponent(ISSUE_OPENED).replace(/%20/g, '+')}`;
    const headers = { ...githubHeaders(form), 'Content-Type': 'application/x-www-form-urlencoded' };
    const event = accepted(githubScheme(received({ headers, body: form, secrets: [SECRET], nowS: NOW_S })));
    assert.equal(event.text, ISSUE_OPENED);
    assert.equal(event.kind, 'issues.opened');
    // Signed over the decoded JSON instead of the bytes sent: refused.
    const resigned = { ...headers, 'X-Hub-Signature-256': `sha256=${webhookSignature(ISSUE_OPENED, SECRET)}` };
    assert.equal(refused(githubScheme(received({ headers: resigned, body: form, secrets: [SECRET], nowS: NOW_S }))).status, 401);
  });

  it('should refuse a form without one well-formed payload field with 400 saying to choose application/json', () => {
    for (const form of ['other=1', 'payload=%7B&payload=%7D', 'payload=%E0%A4%A']) {
      const headers = { ...githubHeaders(form), 'Content-Type': 'application/x-www-form-urlencoded' };
      const problem = refused(githubScheme(received({ headers, body: form, secrets: [SECRET], nowS: NOW_S })));
      assert.equal(problem.status, 400, form);
      assert.match(problem.detail, /Choose application\/json as the Content type in the webhook's settings/, form);
    }
  });

  it('should refuse a missing, repeated or malformed X-Hub-Signature-256 with 401, never trusting X-Hub-Signature', () => {
    const headers = githubHeaders(ISSUE_OPENED);
    const judge = (changed: Record<string, string | string[]>) => {
      const all: Record<string, string | string[]> = { ...headers, ...changed };
      for (const [name, value] of Object.entries(all)) if (value === '') delete all[name];
      return refused(githubScheme(received({ headers: all, body: ISSUE_OPENED, secrets: [SECRET], nowS: NOW_S })));
    };
    const sha1 = 'sha1=7d38cdd689735b008b3c702edd92eea23791c5f6';
    assert.match(judge({ 'X-Hub-Signature-256': '', 'X-Hub-Signature': sha1 }).detail, /^X-Hub-Signature-256 is missing/);
    assert.match(judge({ 'X-Hub-Signature-256': [headers['X-Hub-Signature-256'] as string, EXPECTED] }).detail, /more than once/);
    assert.match(judge({ 'X-Hub-Signature-256': (headers['X-Hub-Signature-256'] as string).toUpperCase() }).detail, /malformed/);
    assert.match(judge({ 'X-Hub-Signature-256': (headers['X-Hub-Signature-256'] as string).slice(7) }).detail, /malformed/);
  });

  it('should refuse a signed delivery without X-GitHub-Delivery or X-GitHub-Event with 400 naming it', () => {
    for (const missing of ['X-GitHub-Delivery', 'X-GitHub-Event']) {
      const headers = githubHeaders(ISSUE_OPENED);
      delete headers[missing];
      const problem = refused(githubScheme(received({ headers, body: ISSUE_OPENED, secrets: [SECRET], nowS: NOW_S })));
      assert.equal(problem.status, 400, missing);
      assert.match(problem.detail, new RegExp(`^${missing} is missing`));
    }
  });

  it('should take no timestamp: the same delivery is accepted a year later (deduplication meets a repeat)', () => {
    accepted(githubScheme(received({ headers: githubHeaders(ISSUE_OPENED), body: ISSUE_OPENED, secrets: [SECRET], nowS: NOW_S + 365 * 86_400 })));
  });

  it('should keep at most MAX_HEADER_FIELDS of the provider\'s header fields', () => {
    const many: Record<string, string> = { ...githubHeaders(ISSUE_OPENED) };
    for (let n = 0; n < 100; n++) many[`X-Extra-${n}`] = 'x';
    const event = accepted(githubScheme(received({ headers: many, body: ISSUE_OPENED, secrets: [SECRET], nowS: NOW_S })));
    assert.equal(Object.keys(event.headers).length, MAX_HEADER_FIELDS);
  });
});
