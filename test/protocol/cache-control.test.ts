// Tests for lib/protocol/cache-control.ts: Cache-Control as RFC 9111 §5.2 writes it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { deltaSeconds, parseCacheControl } from '../../lib/protocol/cache-control.js';

describe('parseCacheControl', () => {
  it('should read directives with and without values, names case-insensitive', () => {
    const directives = parseCacheControl('Public, MAX-AGE=60, must-revalidate');
    assert.deepEqual([...directives], [['public', true], ['max-age', '60'], ['must-revalidate', true]]);
  });

  it('should read quoted values, commas inside them included, and every line of the field', () => {
    const directives = parseCacheControl(['no-cache="Set-Cookie, Authorization", private', 'max-stale']);
    assert.equal(directives.get('no-cache'), 'Set-Cookie, Authorization');
    assert.equal(directives.get('private'), true);
    assert.equal(directives.get('max-stale'), true);
  });

  it('should skip a member that does not parse and keep reading, and keep the first of a repeated directive', () => {
    const directives = parseCacheControl('max-age=60 junk, =5, no-store, max-age=5, stale-if-error=30');
    assert.equal(directives.get('max-age'), '5', 'the malformed member is skipped, the well-formed one later counts');
    assert.equal(directives.get('no-store'), true);
    assert.equal(directives.get('stale-if-error'), '30');
    assert.equal(parseCacheControl('max-age=1, max-age=2').get('max-age'), '1');
  });

  it('should read nothing from an absent or empty field', () => {
    assert.equal(parseCacheControl(undefined).size, 0);
    assert.equal(parseCacheControl(' , ').size, 0);
  });
});

describe('deltaSeconds', () => {
  it('should read digits only, and cap an overflowing value at 2^31 (RFC 9111 §1.2.2)', () => {
    const directives = parseCacheControl('max-age=60, min-fresh=-1, max-stale=1.5, s-maxage=99999999999999, no-cache');
    assert.equal(deltaSeconds(directives, 'max-age'), 60);
    assert.equal(deltaSeconds(directives, 'min-fresh'), undefined);
    assert.equal(deltaSeconds(directives, 'max-stale'), undefined);
    assert.equal(deltaSeconds(directives, 's-maxage'), 2_147_483_648);
    assert.equal(deltaSeconds(directives, 'no-cache'), undefined);
    assert.equal(deltaSeconds(directives, 'absent'), undefined);
  });
});
