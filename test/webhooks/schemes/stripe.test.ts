// The `stripe` receiving scheme (lib/webhooks/schemes/stripe.ts, CONVENTIONS.md#stripe-scheme) against
// Stripe's documented signature algorithm, worked by hand ("Verify webhook signatures manually",
// https://docs.stripe.com/webhooks#verify-manually):
//   1. split Stripe-Signature at "," into key=value elements; `t` is the timestamp, each `v1` a
//      signature, anything else (`v0`, the test-mode legacy scheme) is ignored;
//   2. the signed payload is the text of `t`, a ".", then the exact body;
//   3. the expected signature is HMAC-SHA256 of the signed payload with the endpoint's signing secret
//      as the key (its UTF-8 bytes, `whsec_` included), written in lowercase hex;
//   4. any `v1` equal to it (constant-time) verifies; then `t` must be within the tolerance (300 s).
// The digest below was computed once with node:crypto following those steps, and is pinned, so the
// scheme, the hand computation and lib/protocol/scheme-headers.ts `signedHeaders` must all agree on it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { signedHeaders } from '../../../lib/protocol/scheme-headers.js';
import { stripeScheme } from '../../../lib/webhooks/schemes/stripe.js';
import { accepted, received, refused } from '../../support/schemes.js';

/** A secret spelt as Stripe's dashboard shows one: used whole, prefix and all. */
const SECRET = 'whsec_resapi_stripe_example';
const T = 1_700_000_000;
const BODY = '{"id":"evt_1NG8Du2eZvKYlo2CUI79vXWy","object":"event","type":"invoice.paid"}';
/** Step 3 by hand: createHmac('sha256', utf8(SECRET)).update(`${T}.${BODY}`).digest('hex'). */
const DIGEST = '88b74c81feceeb3b31943a035e4181c7fa6501f740c373efaf03b6cea46fc089';
/** A well-formed v1 that signs nothing here. */
const WRONG = 'a'.repeat(64);

function judge(signature: string | string[], nowS = T, secrets: readonly string[] = [SECRET], body = BODY) {
  return stripeScheme(received({ headers: { 'Stripe-Signature': signature, 'Content-Type': 'application/json' }, body, secrets, nowS }));
}

describe('the stripe scheme against Stripe\'s algorithm worked by hand', () => {
  it('should compute the pinned digest by hand and with signedHeaders', () => {
    assert.equal(createHmac('sha256', Buffer.from(SECRET, 'utf8')).update(`${T}.`).update(BODY).digest('hex'), DIGEST);
    assert.deepEqual(signedHeaders('stripe', SECRET, { id: 'evt_1NG8Du2eZvKYlo2CUI79vXWy', kind: 'invoice.paid', body: BODY, timestampS: T }), {
      'Stripe-Signature': `t=${T},v1=${DIGEST}`,
    });
  });

  it('should accept the delivery: id from the body\'s id, kind from its type, the signature field not handed on', () => {
    const event = accepted(judge(`t=${T},v1=${DIGEST}`));
    assert.equal(event.id, 'evt_1NG8Du2eZvKYlo2CUI79vXWy');
    assert.equal(event.kind, 'invoice.paid');
    assert.equal(event.text, BODY);
    assert.deepEqual(event.headers, { 'content-type': 'application/json' });
  });

  it('should accept when any one of several v1 signatures matches (a secret roll), in any position', () => {
    accepted(judge(`t=${T},v1=${WRONG},v1=${DIGEST}`));
    accepted(judge(`t=${T},v1=${DIGEST},v1=${WRONG}`));
    accepted(judge(`v1=${WRONG},t=${T},v1=${DIGEST},v0=${WRONG}`));
  });

  it('should ignore v0: a v0 carrying the right digest verifies nothing', () => {
    const problem = refused(judge(`t=${T},v0=${DIGEST}`));
    assert.equal(problem.status, 401);
    assert.match(problem.detail, /no v1 signature \(v0 and other schemes are ignored\)/);
    assert.equal(refused(judge(`t=${T},v1=${WRONG},v0=${DIGEST}`)).status, 401);
  });

  it('should try every secret: the previous secret still verifies, and neither secret is named', () => {
    accepted(judge(`t=${T},v1=${DIGEST}`, T, ['whsec_the_new_secret_of_the_roll', SECRET]));
    const problem = refused(judge(`t=${T},v1=${DIGEST}`, T, ['whsec_the_new_secret_of_the_roll']));
    assert.equal(problem.status, 401);
    assert.equal(problem.reason, 'no signature matched');
    assert.doesNotMatch(problem.detail, /whsec_/);
  });

  it('should check t against the tolerance after the signature: 300 s either way is accepted, 301 s is a 400', () => {
    accepted(judge(`t=${T},v1=${DIGEST}`, T + 300));
    accepted(judge(`t=${T},v1=${DIGEST}`, T - 300));
    for (const nowS of [T + 301, T - 301]) {
      const problem = refused(judge(`t=${T},v1=${DIGEST}`, nowS));
      assert.equal(problem.status, 400);
      assert.match(problem.detail, /^The Stripe-Signature timestamp \(t\) is more than 300 s away/);
    }
    // A stale t that does not verify is a 401: the signature comes first.
    assert.equal(refused(judge(`t=${T},v1=${WRONG}`, T + 3600)).status, 401);
    // t is signed: moving it to now breaks the signature.
    assert.equal(refused(judge(`t=${T + 3600},v1=${DIGEST}`, T + 3600)).status, 401);
  });

  it('should refuse a missing, repeated or unreadable Stripe-Signature with 401 saying what is wrong', () => {
    const missing = refused(stripeScheme(received({ headers: {}, body: BODY, secrets: [SECRET], nowS: T })));
    assert.equal(missing.status, 401);
    assert.match(missing.detail, /^Stripe-Signature is missing/);
    assert.match(refused(judge([`t=${T},v1=${DIGEST}`, `t=${T},v1=${DIGEST}`])).detail, /more than once/);
    assert.match(refused(judge(`v1=${DIGEST}`)).detail, /no single t= timestamp/);
    assert.match(refused(judge(`t=${T},t=${T},v1=${DIGEST}`)).detail, /no single t= timestamp/);
    assert.match(refused(judge(`t=soon,v1=${DIGEST}`)).detail, /no single t= timestamp/);
    assert.match(refused(judge(`t=${T}`)).detail, /no v1 signature/);
    assert.match(refused(judge(`t=${T},v1=${DIGEST.toUpperCase()}`)).detail, /no v1 signature/);
  });

  it('should refuse a verified body that is not a Stripe event with 400 pointing at what is missing', () => {
    const body = '{"object":"event"}';
    const signature = `t=${T},v1=${createHmac('sha256', SECRET).update(`${T}.${body}`).digest('hex')}`;
    const problem = refused(judge(signature, T, [SECRET], body));
    assert.equal(problem.status, 400);
    assert.equal(problem.type, 'invalid-body');
    assert.deepEqual(problem.errors?.map((error) => error.pointer), ['/id', '/type']);
  });
});
