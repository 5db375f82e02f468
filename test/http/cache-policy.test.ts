// Tests for lib/http/cache-control.ts: the cache policy (CONVENTIONS.md#cache-control,
// CONVENTIONS.md#vary; RFC 9111 §5.2.2).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  DEFAULT_READ_POLICY,
  NO_STORE,
  RISKY_DEPLOY,
  noStoreCacheControl,
  readCacheControl,
  varyOf,
} from '../../lib/http/cache-policy.js';
import type { CachePolicy } from '../../lib/http/cache-policy.js';

const REFERENCE = 'public, max-age=86400';

function policy(options: { noCacheMode?: boolean; credentialed?: boolean; configured?: Record<string, string> } = {}): CachePolicy {
  const configured = options.configured ?? {};
  return {
    noCacheMode: options.noCacheMode ?? false,
    credentialed: options.credentialed ?? false,
    perCollection: (collection) => (Object.hasOwn(configured, collection) ? configured[collection] : undefined),
  };
}

/** Directive names of a Cache-Control value, lower-cased (RFC 9111 §5.2: names are case-insensitive). */
function directives(value: string): string[] {
  return value.split(',').map((part) => part.trim().split('=')[0]?.toLowerCase() ?? '');
}

describe('readCacheControl', () => {
  it('should default to max-age=0, must-revalidate for changing data (CONVENTIONS.md#cache-control)', () => {
    assert.equal(DEFAULT_READ_POLICY, 'max-age=0, must-revalidate');
    assert.equal(readCacheControl(policy(), 'products'), 'max-age=0, must-revalidate');
  });

  it('should use the default for the service document, without asking for a collection policy', () => {
    let asked = false;
    const p: CachePolicy = {
      noCacheMode: false,
      credentialed: false,
      perCollection: () => {
        asked = true;
        return REFERENCE;
      },
    };
    assert.equal(readCacheControl(p), DEFAULT_READ_POLICY);
    assert.equal(asked, false);
  });

  it('should send a collection configured as reference data as configured (CONVENTIONS.md#cache-control)', () => {
    const p = policy({ configured: { countries: REFERENCE } });
    assert.equal(readCacheControl(p, 'countries'), REFERENCE);
    assert.equal(readCacheControl(p, 'products'), DEFAULT_READ_POLICY);
  });

  it('should turn public, max-age=86400 into private, max-age=86400 when API keys are on (RFC 9111 §5.2.2.7)', () => {
    const p = policy({ credentialed: true, configured: { countries: REFERENCE } });
    assert.equal(readCacheControl(p, 'countries'), 'private, max-age=86400');
  });

  it('should make the default policy private when API keys are on', () => {
    assert.equal(readCacheControl(policy({ credentialed: true }), 'products'), 'private, max-age=0, must-revalidate');
    assert.equal(readCacheControl(policy({ credentialed: true })), 'private, max-age=0, must-revalidate');
  });

  it('should drop public whatever its case and never repeat private', () => {
    const p = policy({
      credentialed: true,
      configured: { a: 'PUBLIC, max-age=60', b: 'private, max-age=60', c: 'max-age=60,Public', d: 'Private,max-age=5' },
    });
    for (const collection of ['a', 'b', 'c']) {
      assert.equal(readCacheControl(p, collection), 'private, max-age=60', collection);
    }
    assert.equal(readCacheControl(p, 'd'), 'private, max-age=5');
  });

  it('should keep every other configured directive when it makes a policy private', () => {
    const p = policy({ credentialed: true, configured: { c: 'public, max-age=3600, stale-if-error=600, immutable' } });
    const value = readCacheControl(p, 'c');
    assert.deepEqual(directives(value), ['private', 'max-age', 'stale-if-error', 'immutable']);
    assert.match(value, /max-age=3600/);
    assert.match(value, /stale-if-error=600/);
  });

  it('should send no-cache, no-store on every read in no-cache mode (CONVENTIONS.md#cache-control)', () => {
    assert.equal(RISKY_DEPLOY, 'no-cache, no-store');
    const configured = { countries: REFERENCE };
    for (const credentialed of [false, true]) {
      const p = policy({ noCacheMode: true, credentialed, configured });
      assert.equal(readCacheControl(p, 'countries'), RISKY_DEPLOY);
      assert.equal(readCacheControl(p, 'products'), RISKY_DEPLOY);
      assert.equal(readCacheControl(p), RISKY_DEPLOY);
    }
  });

  it('should never let a credentialed read be stored by a shared cache', () => {
    const p = policy({ credentialed: true, configured: { a: REFERENCE, b: 's-maxage=600, public' } });
    for (const collection of ['a', 'b', 'other']) {
      const names = directives(readCacheControl(p, collection));
      assert.ok(names.includes('private'), collection);
      assert.ok(!names.includes('public'), collection);
    }
  });
});

describe('noStoreCacheControl', () => {
  it('should be no-store for errors and unsafe methods (CONVENTIONS.md#cache-control)', () => {
    assert.equal(NO_STORE, 'no-store');
    assert.equal(noStoreCacheControl(policy()), 'no-store');
    assert.equal(noStoreCacheControl(policy({ credentialed: true })), 'no-store');
  });

  it('should be no-cache, no-store in no-cache mode', () => {
    assert.equal(noStoreCacheControl(policy({ noCacheMode: true })), 'no-cache, no-store');
  });
});

describe('varyOf', () => {
  it('should be undefined when nothing was negotiated and no credentials are involved', () => {
    assert.equal(varyOf(policy(), []), undefined);
  });

  it('should list the negotiated request fields in order', () => {
    assert.equal(varyOf(policy(), ['Accept']), 'Accept');
    assert.equal(varyOf(policy(), ['Accept', 'Prefer']), 'Accept, Prefer');
  });

  it('should add Authorization when API keys are on (CONVENTIONS.md#vary)', () => {
    assert.equal(varyOf(policy({ credentialed: true }), []), 'Authorization');
    assert.equal(varyOf(policy({ credentialed: true }), ['Accept', 'Prefer']), 'Accept, Prefer, Authorization');
  });

  it('should still vary in no-cache mode, since a cache in the path may ignore the directive', () => {
    assert.equal(varyOf(policy({ noCacheMode: true, credentialed: true }), ['Accept']), 'Accept, Authorization');
  });

  it('should not change the array it is given', () => {
    const negotiated = ['Accept'];
    varyOf(policy({ credentialed: true }), negotiated);
    assert.deepEqual(negotiated, ['Accept']);
  });
});
