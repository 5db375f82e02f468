// Tests for lib/client/cache.ts, the client's private cache (CONVENTIONS.md#client-library;
// CONVENTIONS.md#cache-control): its pure decisions (RFC 9111 §4.2 freshness and age, §5.2 request
// and response directives, RFC 5861 stale-if-error, RFC 8246 immutable) and the store itself
// (§3 storability, §4.1 Vary, §4.3.4 refresh by a 304, §4.4 invalidation, bounded size by LRU).
// Times are plain numbers: nothing here reads a clock.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PrivateCache, currentAge, decide, freshnessLifetime, staleIfError, type CacheEntry, type StoredResponse } from '../../lib/client/cache.js';
import { parseCacheControl } from '../../lib/protocol/cache-control.js';
import { formatHttpDate } from '../../lib/protocol/http-date.js';

/** A whole second, so Date and Expires (second resolution) say exactly this instant. */
const T = 1_700_000_000_000;
const SECOND = 1000;
const URL_A = 'http://127.0.0.1:1/things/a';
const URL_B = 'http://127.0.0.1:1/things/b';
const URL_C = 'http://127.0.0.1:1/things/c';

interface ResponseShape {
  readonly status?: number;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
  readonly requestTime?: number;
  readonly responseTime?: number;
}

/** A stored response that arrived at T for a request sent at T, unless told otherwise. */
function stored(shape: ResponseShape = {}): StoredResponse {
  const headers = new Map<string, string>();
  for (const [name, value] of Object.entries(shape.headers ?? {})) headers.set(name.toLowerCase(), value);
  const responseTime = shape.responseTime ?? T;
  return { status: shape.status ?? 200, headers, body: Buffer.from(shape.body ?? '{}'), requestTime: shape.requestTime ?? responseTime, responseTime };
}

function entryOf(shape: ResponseShape = {}): CacheEntry {
  return { url: URL_A, varied: new Map(), response: stored(shape) };
}

/** Request header fields as the client keeps them (lowercase names). */
function fields(record: Readonly<Record<string, string>> = {}): Map<string, string> {
  return new Map(Object.entries(record).map(([name, value]) => [name.toLowerCase(), value]));
}

/** decide() for a response with `cacheControl`, `ageS` seconds after it arrived, under request directives. */
function decideAt(cacheControl: string, ageS: number, request = ''): string {
  return decide(entryOf({ headers: { 'Cache-Control': cacheControl } }), parseCacheControl(request), T + ageS * SECOND);
}

function staleIfErrorAt(cacheControl: string, ageS: number, request = ''): boolean {
  return staleIfError(entryOf({ headers: { 'Cache-Control': cacheControl } }), parseCacheControl(request), T + ageS * SECOND);
}

function bodyOf(entry: CacheEntry | undefined): string | undefined {
  return entry === undefined ? undefined : Buffer.from(entry.response.body).toString('utf8');
}

describe('currentAge (RFC 9111 §4.2.3)', () => {
  it('should be the resident time when the response has neither Age nor Date and arrived at once', () => {
    assert.equal(currentAge(stored(), T), 0);
    assert.equal(currentAge(stored(), T + 42 * SECOND), 42);
  });

  it('should add the request-response delay to the Age the response carried', () => {
    // corrected_age_value = age_value + response_delay = 10 + 2; apparent_age = 0 (Date = response_time).
    const response = stored({ headers: { Age: '10', Date: formatHttpDate(T) }, requestTime: T - 2 * SECOND });
    assert.equal(currentAge(response, T), 12);
    assert.equal(currentAge(response, T + 5 * SECOND), 17);
  });

  it('should take the apparent age (response_time - Date) when it is greater than the corrected Age', () => {
    const response = stored({ headers: { Age: '10', Date: formatHttpDate(T - 30 * SECOND) }, requestTime: T - SECOND });
    assert.equal(currentAge(response, T), 30);
    assert.equal(currentAge(response, T + 3 * SECOND), 33);
  });

  it('should count a Date in the future (clock skew) as an apparent age of 0, never a negative one', () => {
    const response = stored({ headers: { Date: formatHttpDate(T + 3600 * SECOND) } });
    assert.equal(currentAge(response, T + 4 * SECOND), 4);
  });

  it('should ignore an Age that is not a number', () => {
    assert.equal(currentAge(stored({ headers: { Age: 'old' } }), T + SECOND), 1);
  });
});

describe('freshnessLifetime (RFC 9111 §4.2.1)', () => {
  it('should be the response max-age', () => {
    assert.equal(freshnessLifetime(stored({ headers: { 'Cache-Control': 'public, max-age=60' } })), 60);
  });

  it('should prefer max-age over Expires', () => {
    const response = stored({ headers: { 'Cache-Control': 'max-age=5', Date: formatHttpDate(T), Expires: formatHttpDate(T + 3600 * SECOND) } });
    assert.equal(freshnessLifetime(response), 5);
  });

  it('should be Expires minus Date without max-age', () => {
    const response = stored({ headers: { Date: formatHttpDate(T - 10 * SECOND), Expires: formatHttpDate(T + 110 * SECOND) } });
    assert.equal(freshnessLifetime(response), 120);
  });

  it('should measure Expires from the response time when there is no Date', () => {
    assert.equal(freshnessLifetime(stored({ headers: { Expires: formatHttpDate(T + 90 * SECOND) } })), 90);
  });

  it('should treat an invalid Expires (such as "0") as already expired (§5.3)', () => {
    assert.equal(freshnessLifetime(stored({ headers: { Date: formatHttpDate(T), Expires: '0' } })), 0);
    assert.equal(freshnessLifetime(stored({ headers: { Date: formatHttpDate(T), Expires: 'tomorrow' } })), 0);
  });

  it('should be 0 for an Expires before Date, and 0 without max-age or Expires (no heuristic freshness)', () => {
    assert.equal(freshnessLifetime(stored({ headers: { Date: formatHttpDate(T), Expires: formatHttpDate(T - 60 * SECOND) } })), 0);
    assert.equal(freshnessLifetime(stored({ headers: { ETag: '"a"', 'Last-Modified': formatHttpDate(T - 86_400 * SECOND) } })), 0);
  });
});

describe('decide', () => {
  it('should answer fresh while the age is below the lifetime, and revalidate from then on', () => {
    assert.equal(decideAt('max-age=60', 0), 'fresh');
    assert.equal(decideAt('max-age=60', 59.999), 'fresh');
    assert.equal(decideAt('max-age=60', 60), 'revalidate');
    assert.equal(decideAt('max-age=0, must-revalidate', 0), 'revalidate');
  });

  it('should use a lifetime from Expires minus Date, and count an invalid Expires as stale', () => {
    const expires = entryOf({ headers: { Date: formatHttpDate(T), Expires: formatHttpDate(T + 30 * SECOND) } });
    assert.equal(decide(expires, parseCacheControl(''), T + 29 * SECOND), 'fresh');
    assert.equal(decide(expires, parseCacheControl(''), T + 30 * SECOND), 'revalidate');
    const invalid = entryOf({ headers: { Date: formatHttpDate(T), Expires: '0', ETag: '"a"' } });
    assert.equal(decide(invalid, parseCacheControl(''), T), 'revalidate');
  });

  it('should count the Age the response arrived with against its lifetime', () => {
    const aged = entryOf({ headers: { 'Cache-Control': 'max-age=60', Age: '50' } });
    assert.equal(decide(aged, parseCacheControl(''), T + 9 * SECOND), 'fresh');
    assert.equal(decide(aged, parseCacheControl(''), T + 10 * SECOND), 'revalidate');
  });

  it('should honour a request max-age: fresh only while the age is at most that many seconds (§5.2.1.1)', () => {
    assert.equal(decideAt('max-age=60', 30, 'max-age=30'), 'fresh');
    assert.equal(decideAt('max-age=60', 31, 'max-age=30'), 'revalidate');
    assert.equal(decideAt('max-age=60', 1, 'max-age=0'), 'revalidate');
  });

  it('should honour a request min-fresh: fresh only if it stays fresh that much longer (§5.2.1.3)', () => {
    assert.equal(decideAt('max-age=60', 30, 'min-fresh=30'), 'fresh');
    assert.equal(decideAt('max-age=60', 30, 'min-fresh=31'), 'revalidate');
  });

  it('should serve a stale response for a request max-stale without a value, however stale (§5.2.1.2)', () => {
    assert.equal(decideAt('max-age=60', 61), 'revalidate');
    assert.equal(decideAt('max-age=60', 61, 'max-stale'), 'stale');
    assert.equal(decideAt('max-age=60', 86_400, 'max-stale'), 'stale');
  });

  it('should serve a stale response for max-stale=N only while it is stale by at most N seconds', () => {
    assert.equal(decideAt('max-age=60', 70, 'max-stale=10'), 'stale');
    assert.equal(decideAt('max-age=60', 71, 'max-stale=10'), 'revalidate');
  });

  it('should revalidate for a request no-cache even when the response is fresh (§5.2.1.4)', () => {
    assert.equal(decideAt('max-age=60', 1, 'no-cache'), 'revalidate');
  });

  it('should revalidate a response marked no-cache even when fresh, and never serve it stale (§5.2.2.4)', () => {
    assert.equal(decideAt('no-cache, max-age=60', 1), 'revalidate');
    assert.equal(decideAt('no-cache, max-age=60', 61, 'max-stale'), 'revalidate');
  });

  it('should not serve a must-revalidate response stale for any max-stale (RFC 9111 §5.2.2.2; CONVENTIONS.md#cache-control)', () => {
    assert.equal(decideAt('max-age=60, must-revalidate', 30), 'fresh');
    assert.equal(decideAt('max-age=60, must-revalidate', 61, 'max-stale'), 'revalidate');
    assert.equal(decideAt('max-age=60, must-revalidate', 61, 'max-stale=3600'), 'revalidate');
    assert.equal(decideAt('max-age=0, must-revalidate', 1, 'max-stale'), 'revalidate');
  });

  it('should keep a fresh immutable response fresh for a request max-age=0 (RFC 8246 §2), but revalidate it for a request no-cache', () => {
    assert.equal(decideAt('max-age=31536000, immutable', 10, 'max-age=0'), 'fresh');
    assert.equal(decideAt('max-age=31536000', 10, 'max-age=0'), 'revalidate');
    assert.equal(decideAt('max-age=31536000, immutable', 10, 'no-cache'), 'revalidate');
  });

  it('should revalidate an immutable response once it is stale', () => {
    assert.equal(decideAt('max-age=60, immutable', 61, 'max-age=0'), 'revalidate');
    assert.equal(decideAt('max-age=60, immutable', 61), 'revalidate');
  });
});

describe('staleIfError (RFC 5861 §4)', () => {
  it('should allow the stale copy within the response stale-if-error window and not after it', () => {
    assert.equal(staleIfErrorAt('max-age=60, stale-if-error=300', 61), true);
    assert.equal(staleIfErrorAt('max-age=60, stale-if-error=300', 360), true);
    assert.equal(staleIfErrorAt('max-age=60, stale-if-error=300', 361), false);
  });

  it('should allow the stale copy within a request stale-if-error window and not after it', () => {
    assert.equal(staleIfErrorAt('max-age=60', 100, 'stale-if-error=40'), true);
    assert.equal(staleIfErrorAt('max-age=60', 101, 'stale-if-error=40'), false);
  });

  it('should not allow it without a stale-if-error on either side', () => {
    assert.equal(staleIfErrorAt('max-age=60', 61), false);
  });

  it('should not allow it where must-revalidate or no-cache forbid stale use, whoever asks', () => {
    assert.equal(staleIfErrorAt('max-age=60, must-revalidate, stale-if-error=300', 61), false);
    assert.equal(staleIfErrorAt('max-age=60, must-revalidate', 61, 'stale-if-error=300'), false);
    assert.equal(staleIfErrorAt('max-age=0, must-revalidate', 1, 'stale-if-error=300'), false);
    assert.equal(staleIfErrorAt('no-cache, stale-if-error=300', 1), false);
  });
});

describe('PrivateCache storability (RFC 9111 §3)', () => {
  const validated = { ETag: '"a"', 'Cache-Control': 'max-age=0, must-revalidate' };

  function storedBy(method: string, request: Record<string, string>, shape: ResponseShape): boolean {
    const cache = new PrivateCache();
    const entry = cache.store(URL_A, method, fields(request), stored(shape));
    assert.equal(cache.size, entry === undefined ? 0 : 1);
    assert.equal(cache.lookup(URL_A, fields(request)) !== undefined, entry !== undefined);
    return entry !== undefined;
  }

  it('should store a 200 to a GET that has a validator or a lifetime', () => {
    assert.equal(storedBy('GET', {}, { headers: validated }), true);
    assert.equal(storedBy('GET', {}, { headers: { 'Last-Modified': formatHttpDate(T - SECOND) } }), true);
    assert.equal(storedBy('GET', {}, { headers: { 'Cache-Control': 'max-age=60' } }), true);
    assert.equal(storedBy('GET', {}, { headers: { Date: formatHttpDate(T), Expires: formatHttpDate(T + 60 * SECOND) } }), true);
    assert.equal(storedBy('GET', {}, { headers: { ...validated, 'Cache-Control': 'private, max-age=60' } }), true);
  });

  it('should not store a response that has neither a validator nor a lifetime', () => {
    assert.equal(storedBy('GET', {}, { headers: {} }), false);
    assert.equal(storedBy('GET', {}, { headers: { 'Cache-Control': 'max-age=0' } }), false);
  });

  it('should not store when the request or the response says no-store', () => {
    assert.equal(storedBy('GET', { 'Cache-Control': 'no-store' }, { headers: validated }), false);
    assert.equal(storedBy('GET', {}, { headers: { ETag: '"a"', 'Cache-Control': 'no-store' } }), false);
    assert.equal(storedBy('GET', {}, { headers: { ETag: '"a"', 'Cache-Control': 'no-cache, no-store' } }), false);
  });

  it('should not store a response that Varies on *', () => {
    assert.equal(storedBy('GET', {}, { headers: { ...validated, Vary: 'Accept, *' } }), false);
  });

  it('should not store a status other than 200, nor the answer to another method', () => {
    for (const status of [201, 203, 204, 206, 304, 404, 410, 500]) assert.equal(storedBy('GET', {}, { status, headers: validated }), false, `status ${status}`);
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'HEAD']) assert.equal(storedBy(method, {}, { headers: validated }), false, method);
  });
});

describe('PrivateCache variants (RFC 9111 §4.1)', () => {
  function variant(vary: string, body: string): StoredResponse {
    return stored({ headers: { ETag: `"${body}"`, 'Cache-Control': 'max-age=60', Vary: vary }, body });
  }

  it('should keep the variants for different Accept values apart', () => {
    const cache = new PrivateCache();
    cache.store(URL_A, 'GET', fields({ Accept: 'application/json' }), variant('Accept', 'json'));
    cache.store(URL_A, 'GET', fields({ Accept: 'text/csv' }), variant('Accept', 'csv'));
    assert.equal(cache.size, 2);
    assert.equal(bodyOf(cache.lookup(URL_A, fields({ Accept: 'application/json' }))), 'json');
    assert.equal(bodyOf(cache.lookup(URL_A, fields({ Accept: 'text/csv' }))), 'csv');
    assert.equal(cache.lookup(URL_A, fields({ Accept: 'text/html' })), undefined);
    assert.equal(cache.lookup(URL_A, fields()), undefined);
  });

  it("should never serve one user's Vary: Authorization response to another, nor to a request without credentials", () => {
    const cache = new PrivateCache();
    cache.store(URL_A, 'GET', fields({ Authorization: 'Bearer alice' }), variant('Authorization', 'alice'));
    assert.equal(bodyOf(cache.lookup(URL_A, fields({ Authorization: 'Bearer alice' }))), 'alice');
    assert.equal(cache.lookup(URL_A, fields({ Authorization: 'Bearer bob' })), undefined);
    assert.equal(cache.lookup(URL_A, fields()), undefined);
    cache.store(URL_A, 'GET', fields({ Authorization: 'Bearer bob' }), variant('Authorization', 'bob'));
    assert.equal(bodyOf(cache.lookup(URL_A, fields({ Authorization: 'Bearer bob' }))), 'bob');
    assert.equal(bodyOf(cache.lookup(URL_A, fields({ Authorization: 'Bearer alice' }))), 'alice');
  });

  it('should keep pages asked for with different Prefer values apart (Vary names are case-insensitive)', () => {
    const cache = new PrivateCache();
    cache.store(URL_A, 'GET', fields({ Accept: 'application/json', Prefer: 'maxpagesize=3' }), variant('ACCEPT, prefer', 'three'));
    cache.store(URL_A, 'GET', fields({ Accept: 'application/json', Prefer: 'maxpagesize=5' }), variant('ACCEPT, prefer', 'five'));
    assert.equal(bodyOf(cache.lookup(URL_A, fields({ Accept: 'application/json', Prefer: 'maxpagesize=3' }))), 'three');
    assert.equal(bodyOf(cache.lookup(URL_A, fields({ Accept: 'application/json', Prefer: 'maxpagesize=5' }))), 'five');
    assert.equal(cache.lookup(URL_A, fields({ Accept: 'application/json' })), undefined);
  });

  it('should match a Varied field after normalizing its whitespace, and nothing beyond that', () => {
    const cache = new PrivateCache();
    cache.store(URL_A, 'GET', fields({ Accept: 'application/json, text/csv' }), variant('Accept', 'both'));
    assert.equal(bodyOf(cache.lookup(URL_A, fields({ Accept: 'application/json,text/csv' }))), 'both');
    assert.equal(bodyOf(cache.lookup(URL_A, fields({ Accept: '  application/json ,   text/csv ' }))), 'both');
    assert.equal(cache.lookup(URL_A, fields({ Accept: 'application/json, text/html' })), undefined);
    assert.equal(cache.lookup(URL_A, fields({ Accept: 'application/json;q=0.5, text/csv' })), undefined);
  });

  it('should replace a variant stored again for the same (normalized) request values', () => {
    const cache = new PrivateCache();
    cache.store(URL_A, 'GET', fields({ Accept: 'application/json, text/csv' }), variant('Accept', 'old'));
    cache.store(URL_A, 'GET', fields({ Accept: 'application/json,text/csv' }), variant('Accept', 'new'));
    assert.equal(cache.size, 1);
    assert.equal(bodyOf(cache.lookup(URL_A, fields({ Accept: 'application/json, text/csv' }))), 'new');
  });
});

describe('PrivateCache.refresh (RFC 9111 §4.3.4)', () => {
  it('should update the stored fields from a 304, keep Content-Length, and start the age again', () => {
    const cache = new PrivateCache();
    const request = fields({ Accept: 'application/json' });
    const entry = cache.store(URL_A, 'GET', request, stored({
      headers: { ETag: '"v1"', 'Cache-Control': 'max-age=60', 'Content-Length': '11', Date: formatHttpDate(T), 'X-Old': 'kept' },
      body: '{"n":"one"}',
    }));
    assert.ok(entry !== undefined);
    const later = T + 600 * SECOND;
    assert.equal(decide(entry, parseCacheControl(''), later), 'revalidate');
    const notModified = stored({
      status: 304,
      headers: { ETag: '"v1"', 'Cache-Control': 'max-age=120', 'Content-Length': '0', Date: formatHttpDate(later), 'X-New': 'added' },
      body: '',
      requestTime: later - SECOND,
      responseTime: later,
    });
    const refreshed = cache.refresh(entry, notModified);
    assert.equal(refreshed.response.status, 200);
    assert.equal(bodyOf(refreshed), '{"n":"one"}');
    assert.equal(refreshed.response.headers.get('cache-control'), 'max-age=120');
    assert.equal(refreshed.response.headers.get('date'), formatHttpDate(later));
    assert.equal(refreshed.response.headers.get('x-new'), 'added');
    assert.equal(refreshed.response.headers.get('x-old'), 'kept');
    assert.equal(refreshed.response.headers.get('content-length'), '11');
    // The age starts again from the 304: its 1 s request-response delay, then the time resident.
    assert.equal(currentAge(refreshed.response, later), 1);
    assert.equal(decide(refreshed, parseCacheControl(''), later + 118 * SECOND), 'fresh');
    assert.equal(decide(refreshed, parseCacheControl(''), later + 119 * SECOND), 'revalidate');
    // The cache holds the refreshed copy in place of the old one.
    assert.equal(cache.size, 1);
    assert.equal(cache.lookup(URL_A, request)?.response.headers.get('cache-control'), 'max-age=120');
  });

  it('should drop the stored response when the 304 says no-store', () => {
    const cache = new PrivateCache();
    const entry = cache.store(URL_A, 'GET', fields(), stored({ headers: { ETag: '"v1"', 'Cache-Control': 'max-age=0' } }));
    assert.ok(entry !== undefined);
    cache.refresh(entry, stored({ status: 304, headers: { ETag: '"v1"', 'Cache-Control': 'no-store' }, body: '' }));
    assert.equal(cache.size, 0);
    assert.equal(cache.lookup(URL_A, fields()), undefined);
  });
});

describe('PrivateCache size limits (least recently used first)', () => {
  function put(cache: PrivateCache, url: string, body: string): void {
    assert.ok(cache.store(url, 'GET', fields(), stored({ headers: { ETag: '"x"' }, body })) !== undefined, `${url} stored`);
  }

  it('should evict the least recently used entry once maxEntries is passed', () => {
    const cache = new PrivateCache({ maxEntries: 2, maxBytes: 1_000_000 });
    put(cache, URL_A, 'a');
    put(cache, URL_B, 'b');
    assert.equal(bodyOf(cache.lookup(URL_A, fields())), 'a'); // A is now the most recently used.
    put(cache, URL_C, 'c');
    assert.equal(cache.size, 2);
    assert.equal(cache.lookup(URL_B, fields()), undefined);
    assert.equal(bodyOf(cache.lookup(URL_A, fields())), 'a');
    assert.equal(bodyOf(cache.lookup(URL_C, fields())), 'c');
  });

  it('should evict the least recently used entries once maxBytes is passed, and never store a body above maxBytes', () => {
    const cache = new PrivateCache({ maxEntries: 100, maxBytes: 10 });
    put(cache, URL_A, 'aaaa');
    put(cache, URL_B, 'bbbb');
    cache.lookup(URL_A, fields());
    put(cache, URL_C, 'cccc'); // 12 bytes: B, the least recently used, goes.
    assert.equal(cache.size, 2);
    assert.equal(cache.lookup(URL_B, fields()), undefined);
    assert.equal(bodyOf(cache.lookup(URL_A, fields())), 'aaaa');
    assert.equal(bodyOf(cache.lookup(URL_C, fields())), 'cccc');
    assert.equal(cache.store(URL_B, 'GET', fields(), stored({ headers: { ETag: '"x"' }, body: 'b'.repeat(11) })), undefined);
    assert.equal(cache.size, 2);
  });

  it('should count the bytes of a replaced variant out, so replacing never evicts others', () => {
    const cache = new PrivateCache({ maxEntries: 100, maxBytes: 10 });
    put(cache, URL_A, 'aaaa');
    for (let i = 0; i < 5; i++) put(cache, URL_B, 'bbbbbb');
    assert.equal(cache.size, 2);
    assert.equal(bodyOf(cache.lookup(URL_A, fields())), 'aaaa');
  });
});

describe('PrivateCache.invalidate (RFC 9111 §4.4)', () => {
  it('should forget every variant of the URL and nothing else, and give their room back', () => {
    const cache = new PrivateCache({ maxEntries: 3, maxBytes: 12 });
    const vary = { ETag: '"x"', Vary: 'Accept' };
    cache.store(URL_A, 'GET', fields({ Accept: 'application/json' }), stored({ headers: vary, body: 'aaaa' }));
    cache.store(URL_A, 'GET', fields({ Accept: 'text/csv' }), stored({ headers: vary, body: 'aaaa' }));
    cache.store(URL_B, 'GET', fields({ Accept: 'application/json' }), stored({ headers: vary, body: 'bbbb' }));
    assert.equal(cache.size, 3);
    cache.invalidate(URL_A);
    cache.invalidate(URL_C); // Nothing stored there: no change.
    assert.equal(cache.size, 1);
    assert.equal(cache.lookup(URL_A, fields({ Accept: 'application/json' })), undefined);
    assert.equal(cache.lookup(URL_A, fields({ Accept: 'text/csv' })), undefined);
    // Two more entries of 4 bytes fit beside B only if A's entries and bytes were counted out.
    cache.store(URL_A, 'GET', fields({ Accept: 'application/json' }), stored({ headers: vary, body: 'aaaa' }));
    cache.store(URL_C, 'GET', fields({ Accept: 'application/json' }), stored({ headers: vary, body: 'cccc' }));
    assert.equal(cache.size, 3);
    assert.equal(bodyOf(cache.lookup(URL_B, fields({ Accept: 'application/json' }))), 'bbbb');
  });
});
