// Tests for lib/protocol/signature.ts: HMAC-SHA256 over the raw body, lowercase hex, constant-time
// comparison against every configured secret (CONVENTIONS.md#webhook-signature,
// CONVENTIONS.md#secret-rotation).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { presentedDigest, verifySignature, webhookSignature } from '../../lib/protocol/signature.js';

// GitHub's published example ("Validating webhook deliveries").
const GITHUB_SECRET = "It's a Secret to Everybody";
const GITHUB_PAYLOAD = 'Hello, World!';
const GITHUB_DIGEST = '757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17';

describe('webhookSignature', () => {
  it("should reproduce GitHub's published example", () => {
    assert.equal(webhookSignature(Buffer.from(GITHUB_PAYLOAD), GITHUB_SECRET), GITHUB_DIGEST);
    assert.equal(webhookSignature(GITHUB_PAYLOAD, GITHUB_SECRET), GITHUB_DIGEST);
  });

  it('should match an independent HMAC-SHA256 over the exact bytes, for our own vectors', () => {
    const vectors: readonly [string, Buffer][] = [
      ['<SIGNING_SECRET>', Buffer.from('{"id":"evt_1","event":"order.created"}')],
      ['k', Buffer.alloc(0)],
      ['ünïcødé secret', Buffer.from([0x00, 0xff, 0x7b, 0x7d])],
    ];
    for (const [secret, body] of vectors) {
      const expected = createHmac('sha256', Buffer.from(secret, 'utf8')).update(body).digest('hex');
      assert.equal(webhookSignature(body, secret), expected);
      assert.match(webhookSignature(body, secret), /^[0-9a-f]{64}$/);
    }
  });

  it('should refuse an empty secret as a programmer error', () => {
    assert.throws(() => webhookSignature('x', ''), TypeError);
  });
});

describe('verifySignature', () => {
  const body = Buffer.from('{"id":"e1","event":"x","b":2,"a":1}');
  const good = webhookSignature(body, 'current');

  it('should verify the raw bytes: any change a parse and re-serialize would make breaks it', () => {
    assert.equal(verifySignature(body, [good], ['current']), true);
    const reserialized = Buffer.from(JSON.stringify(JSON.parse(body.toString())));
    assert.equal(reserialized.equals(body), true, 'this one happens to survive');
    for (const variant of ['{"id":"e1","event":"x","a":1,"b":2}', '{ "id":"e1","event":"x","b":2,"a":1}', '{"id":"\\u0065\\u0031","event":"x","b":2,"a":1}']) {
      const bytes = Buffer.from(variant);
      assert.deepEqual(JSON.parse(variant), JSON.parse(body.toString()), 'the same JSON value');
      assert.equal(verifySignature(bytes, [good], ['current']), false, variant);
      assert.equal(verifySignature(bytes, [webhookSignature(bytes, 'current')], ['current']), true, 'and its own signature verifies');
    }
  });

  it('should accept the "sha256=" prefix GitHub-style providers send', () => {
    assert.equal(verifySignature(body, [`sha256=${good}`], ['current']), true);
  });

  it('should accept either secret during a rotation, and neither when both are wrong', () => {
    const previous = webhookSignature(body, 'previous');
    assert.equal(verifySignature(body, [good], ['current', 'previous']), true);
    assert.equal(verifySignature(body, [previous], ['current', 'previous']), true);
    assert.equal(verifySignature(body, [previous], ['current']), false, 'after the rotation ends');
    assert.equal(verifySignature(body, [webhookSignature(body, 'other')], ['current', 'previous']), false);
  });

  it('should refuse a missing, repeated, malformed or wrong signature', () => {
    const cases: readonly (readonly string[] | undefined)[] = [
      undefined,
      [],
      [good, good],
      [good.toUpperCase()],
      [good.slice(1)],
      [`${good}0`],
      [`sha1=${good}`],
      [`sha256=${good.toUpperCase()}`],
      [` ${good}`],
      ['0'.repeat(64)],
    ];
    for (const lines of cases) assert.equal(verifySignature(body, lines, ['current']), false, JSON.stringify(lines));
  });

  it('should verify nothing when no secret is configured', () => {
    assert.equal(verifySignature(body, [good], []), false);
  });
});

describe('presentedDigest', () => {
  it('should read 64 lowercase hex characters, with or without sha256=, and nothing else', () => {
    assert.equal(presentedDigest([GITHUB_DIGEST])?.toString('hex'), GITHUB_DIGEST);
    assert.equal(presentedDigest([`sha256=${GITHUB_DIGEST}`])?.toString('hex'), GITHUB_DIGEST);
    assert.equal(presentedDigest([`sha256=sha256=${GITHUB_DIGEST}`]), undefined);
    assert.equal(presentedDigest(['zz'.repeat(32)]), undefined);
  });

  it('should refuse each character just outside 0-9 and a-f, and a digest one character short or long', () => {
    // The neighbours of the two ranges in ASCII: '/' and ':' around the digits, '`' and 'g' around a-f.
    for (const wrong of ['/', ':', '`', 'g', 'A', 'F', ' ', '\n']) {
      const lines = [`${GITHUB_DIGEST.slice(0, 63)}${wrong}`];
      assert.equal(presentedDigest(lines), undefined, JSON.stringify(lines));
    }
    assert.equal(presentedDigest([GITHUB_DIGEST.slice(1)]), undefined);
    assert.equal(presentedDigest([`${GITHUB_DIGEST}0`]), undefined);
    assert.equal(presentedDigest(['sha256=']), undefined);
  });
});
