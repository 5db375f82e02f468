// Tests for lib/http/auth.ts: optional API keys, `Authorization: Bearer <key>` (RESAPI_API_KEYS,
// CONVENTIONS.md#api-keys; RFC 6750 §2.1; RFC 9110 §11.1 and §11.6.2).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ApiKeys } from '../../lib/http/auth.js';
import type { AuthResult } from '../../lib/http/auth.js';

function principalOf(result: AuthResult): string {
  assert.equal(result.ok, true, JSON.stringify(result));
  return result.ok ? result.principal : '';
}

describe('ApiKeys', () => {
  it('should throw a TypeError for an empty key', () => {
    assert.throws(() => new ApiKeys(['']), { name: 'TypeError', message: /must not be empty/ });
    assert.throws(() => new ApiKeys(['good', '']), { name: 'TypeError', message: /must not be empty/ });
  });

  it('should be disabled without keys and enabled with one', () => {
    assert.equal(new ApiKeys([]).enabled, false);
    assert.equal(new ApiKeys(['k1']).enabled, true);
  });

  it('should accept the right key after Bearer', () => {
    const keys = new ApiKeys(['k1']);
    principalOf(keys.check(['Bearer k1']));
  });

  it('should read the scheme case-insensitively (RFC 9110 §11.1)', () => {
    const keys = new ApiKeys(['k1']);
    for (const line of ['bearer k1', 'BEARER k1', 'bEaReR k1']) principalOf(keys.check([line]));
  });

  it('should compare the key itself case-sensitively', () => {
    const keys = new ApiKeys(['k1']);
    assert.equal(keys.check(['Bearer K1']).ok, false);
  });

  it('should accept a key made of every b64token character (RFC 6750 §2.1)', () => {
    const key = 'AZaz09-._~+/==';
    principalOf(new ApiKeys([key]).check([`Bearer ${key}`]));
  });

  it('should refuse a wrong key, a prefix of the key and a longer key', () => {
    const keys = new ApiKeys(['secret-key']);
    for (const line of ['Bearer wrong', 'Bearer secret', 'Bearer secret-key2']) {
      const result = keys.check([line]);
      assert.equal(result.ok, false, line);
      assert.match(result.ok ? '' : result.detail, /not valid/);
    }
  });

  it('should refuse a missing Authorization header', () => {
    const keys = new ApiKeys(['k1']);
    for (const lines of [undefined, []]) {
      const result = keys.check(lines);
      assert.equal(result.ok, false);
      assert.match(result.ok ? '' : result.detail, /Bearer/);
    }
  });

  it('should refuse two Authorization lines even when both carry the right key', () => {
    const keys = new ApiKeys(['k1']);
    const result = keys.check(['Bearer k1', 'Bearer k1']);
    assert.equal(result.ok, false);
    assert.match(result.ok ? '' : result.detail, /exactly one/);
  });

  it('should refuse other schemes and malformed credentials', () => {
    const keys = new ApiKeys(['k1']);
    const basic = Buffer.from('user:k1').toString('base64');
    for (const line of [`Basic ${basic}`, 'k1', 'Bearerk1', 'Bearer', 'Bearer ', 'Bearer k1 k1', 'Bearer "k1"', 'Bearer\tk1', 'Token k1']) {
      assert.equal(keys.check([line]).ok, false, line);
    }
  });

  it('should accept any of several keys and name each one differently', () => {
    const keys = new ApiKeys(['first', 'second']);
    const one = principalOf(keys.check(['Bearer first']));
    const two = principalOf(keys.check(['Bearer second']));
    assert.notEqual(one, two);
  });

  it('should give a principal that is stable and does not reveal the key', () => {
    const key = 'my-api-key';
    const a = principalOf(new ApiKeys([key]).check([`Bearer ${key}`]));
    const b = principalOf(new ApiKeys(['other', key]).check([`Bearer ${key}`]));
    assert.equal(a, b);
    assert.ok(!a.includes(key));
    assert.match(a, /^[0-9a-f]+$/);
  });

  it('should name the same principal for a repeated key', () => {
    const keys = new ApiKeys(['dup', 'dup']);
    assert.equal(principalOf(keys.check(['Bearer dup'])), principalOf(new ApiKeys(['dup']).check(['Bearer dup'])));
  });

  it('should refuse every request when no key is configured', () => {
    assert.equal(new ApiKeys([]).check(['Bearer anything']).ok, false);
  });
});
