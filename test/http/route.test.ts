// Tests for lib/http/route.ts over the real route table of lib/routes.ts: request target → route
// (CONVENTIONS.md#routes; RFC 9112 §3.2 request-target forms; RFC 3986 §2.2, §5.2.4 and §6.2.2.2 for
// percent-encoding and dot-segments), and the methods each route allows.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_CONFIG } from '../../lib/config.js';
import { Router, splitTarget, type RouteMatch } from '../../lib/http/route.js';
import { allowedMethods, routeTable, type RouteEntry, type RouteName } from '../../lib/routes.js';

const WEBHOOK = '/webhooks';

function tableFor(webhookPath: string): readonly RouteEntry[] {
  return routeTable({ ...DEFAULT_CONFIG, webhooks: { ...DEFAULT_CONFIG.webhooks, path: webhookPath } });
}

/** A match as plain data: the route's name as `kind` and its parameters beside it. */
type Shape = Readonly<Record<string, string>>;

function shape(match: RouteMatch<RouteName>): Shape {
  if (match.kind === 'unknown') return { kind: 'unknown' };
  if (match.kind === 'invalid') return { kind: 'invalid', detail: match.detail };
  return { kind: match.name, ...Object.fromEntries(match.params.entries()) };
}

function matchRoute(path: string, webhookPath: string): Shape {
  return shape(new Router<RouteName>(tableFor(webhookPath)).match(path));
}

const route = (path: string): Shape => matchRoute(path, WEBHOOK);

describe('splitTarget', () => {
  it('should split an origin-form target into path and query', () => {
    assert.deepEqual(splitTarget('/products?$top=2&x=1'), { path: '/products', query: '$top=2&x=1' });
  });

  it('should give an empty query when there is no "?"', () => {
    assert.deepEqual(splitTarget('/products/1'), { path: '/products/1', query: '' });
  });

  it('should keep an empty query after a bare "?"', () => {
    assert.deepEqual(splitTarget('/products?'), { path: '/products', query: '' });
  });

  it('should split on the first "?" only, leaving later ones in the query', () => {
    assert.deepEqual(splitTarget('/p?a=1?b=2'), { path: '/p', query: 'a=1?b=2' });
  });

  it('should drop a fragment after the query', () => {
    assert.deepEqual(splitTarget('/products?a=1#frag'), { path: '/products', query: 'a=1' });
  });

  it('should drop a fragment with no query, even when the fragment holds a "?"', () => {
    assert.deepEqual(splitTarget('/products#frag?a=1'), { path: '/products', query: '' });
  });

  it('should take the path and query of an absolute-form target (RFC 9112 §3.2.2)', () => {
    assert.deepEqual(splitTarget('http://example.com:8080/products/1?x=y'), { path: '/products/1', query: 'x=y' });
  });

  it('should read the scheme of an absolute-form target case-insensitively', () => {
    assert.deepEqual(splitTarget('HTTPS://Example.COM/products'), { path: '/products', query: '' });
  });

  it('should treat an absolute-form target without a path as "/"', () => {
    assert.deepEqual(splitTarget('http://example.com'), { path: '/', query: '' });
  });

  it('should treat an empty path before a query as "/" (RFC 9110 §4.2.3)', () => {
    assert.deepEqual(splitTarget('http://example.com?a=1'), { path: '/', query: 'a=1' });
  });

  it('should not mistake an origin-form path that mentions http for an absolute-form target', () => {
    assert.deepEqual(splitTarget('/http://x/y'), { path: '/http://x/y', query: '' });
  });
});

describe('matchRoute', () => {
  it('should route "/" to the service document', () => {
    assert.deepEqual(route('/'), { kind: 'service' });
  });

  it('should route a collection path', () => {
    assert.deepEqual(route('/products'), { kind: 'collection', collection: 'products' });
  });

  it('should route an item path', () => {
    assert.deepEqual(route('/products/abc-1'), { kind: 'item', collection: 'products', id: 'abc-1' });
  });

  it('should route $undoDelete below an item', () => {
    assert.deepEqual(route('/products/abc/$undoDelete'), { kind: 'undo', collection: 'products', id: 'abc' });
  });

  it('should route /$health', () => {
    assert.deepEqual(route('/$health'), { kind: 'health' });
  });

  it('should route the configured webhook path, and only it, to the receiver', () => {
    assert.deepEqual(route('/webhooks'), { kind: 'webhook' });
    assert.deepEqual(matchRoute('/hooks/in', '/hooks/in'), { kind: 'webhook' });
    assert.deepEqual(matchRoute('/webhooks', '/hooks/in'), { kind: 'collection', collection: 'webhooks' });
  });

  it('should make every path below the webhook path unknown, not an item of a "webhooks" collection', () => {
    assert.deepEqual(route('/webhooks/1'), { kind: 'unknown' });
    assert.deepEqual(route('/webhooks/1/$undoDelete'), { kind: 'unknown' });
    assert.deepEqual(matchRoute('/hooks/in/x', '/hooks/in'), { kind: 'unknown' });
  });

  it('should not treat a path that merely starts with the webhook path as below it', () => {
    assert.deepEqual(route('/webhooksx'), { kind: 'collection', collection: 'webhooksx' });
  });

  it('should route a percent-encoded spelling of the webhook path like the plain one (RFC 3986 §6.2.2.2)', () => {
    // "%77" is "w", an unreserved character: "/%77ebhooks" and "/webhooks" are the same URI.
    assert.deepEqual(route('/%77ebhooks'), { kind: 'webhook' });
    assert.deepEqual(route('/%77ebhooks/1'), { kind: 'unknown' });
  });

  it('should decode percent-encoded unreserved characters in names', () => {
    assert.deepEqual(route('/pr%6Fducts/%61bc'), { kind: 'item', collection: 'products', id: 'abc' });
  });

  it('should route each receiving source\'s path below the reserved /webhooks, and nothing else there (CONVENTIONS.md#receiving-sources)', () => {
    const sources = [
      { path: '/webhooks', scheme: 'resapi', secretsEnv: 'A' },
      { path: '/webhooks/stripe', scheme: 'stripe', secretsEnv: 'B' },
    ] as const;
    const router = new Router<RouteName>(routeTable({ ...DEFAULT_CONFIG, webhooks: { ...DEFAULT_CONFIG.webhooks, sources } }));
    assert.deepEqual(shape(router.match('/webhooks')), { kind: 'webhook' });
    assert.deepEqual(shape(router.match('/webhooks/stripe')), { kind: 'webhook-stripe' });
    for (const path of ['/webhooks/github', '/webhooks/stripe/x', '/webhooks/stripe/$undoDelete', '/webhooks/x/$undoDelete']) {
      assert.deepEqual(shape(router.match(path)), { kind: 'unknown' }, path);
    }
    assert.deepEqual(shape(router.match(`/$inbox/${encodeURIComponent(`stripe:${'x'.repeat(255)}`)}`)), { kind: 'inbox-event', eventId: `stripe:${'x'.repeat(255)}` });
  });

  it('should refuse a percent-encoded "/" inside an id instead of splitting on it', () => {
    assert.equal(route('/products/a%2Fb').kind, 'invalid');
    assert.equal(route('/products/a%2fb').kind, 'invalid');
  });

  it('should refuse a percent-encoded "/" inside a collection name', () => {
    assert.equal(route('/pro%2Fducts').kind, 'invalid');
  });

  it('should refuse dot-segments rather than resolve them (RFC 3986 §5.2.4)', () => {
    for (const path of ['/products/..', '/products/.', '/products/%2e%2e', '/products/%2E%2E', '/products/%2e', '/..', '/%2e%2e']) {
      assert.equal(route(path).kind, 'invalid', path);
    }
  });

  it('should refuse a dot-segment used to climb to another collection', () => {
    assert.equal(route('/products/../orders').kind, 'invalid');
  });

  it('should accept an id of "..." and ids holding dots', () => {
    assert.deepEqual(route('/products/...'), { kind: 'item', collection: 'products', id: '...' });
    assert.deepEqual(route('/products/a.b'), { kind: 'item', collection: 'products', id: 'a.b' });
  });

  it('should accept a 128-character id and refuse a 129-character one', () => {
    const ok = 'a'.repeat(128);
    assert.deepEqual(route(`/products/${ok}`), { kind: 'item', collection: 'products', id: ok });
    assert.equal(route(`/products/${'a'.repeat(129)}`).kind, 'invalid');
  });

  it('should accept a 64-character collection name and refuse a 65-character one', () => {
    const ok = 'c'.repeat(64);
    assert.deepEqual(route(`/${ok}`), { kind: 'collection', collection: ok });
    assert.equal(route(`/${'c'.repeat(65)}`).kind, 'invalid');
  });

  it('should refuse ids with characters outside [A-Za-z0-9._~-]', () => {
    for (const id of ['a%20b', 'a+b', 'a%40b', 'caf%C3%A9', 'a!b', "a'b"]) {
      assert.equal(route(`/products/${id}`).kind, 'invalid', id);
    }
  });

  it('should refuse a collection name that starts with a digit, "_" or "-"', () => {
    for (const name of ['1products', '_products', '-products']) {
      assert.equal(route(`/${name}`).kind, 'invalid', name);
    }
  });

  it('should count an event id in code points: 255 astral characters fit, 256 code points do not', () => {
    const astral = encodeURIComponent('\u{1F600}');
    assert.equal(route(`/$inbox/${astral.repeat(255)}`).eventId, '\u{1F600}'.repeat(255));
    const tooLong = route(`/$inbox/a${astral.repeat(255)}`);
    assert.equal(tooLong.kind, 'invalid');
    assert.match(tooLong.detail ?? '', /1-255 code points/);
  });

  it('should refuse the percent-encoded UTF-8 spelling of a surrogate (not UTF-8) in an event id', () => {
    assert.equal(route('/$inbox/%ED%A0%80').kind, 'invalid');
    assert.equal(route('/$inbox/a%ED%B0%80b/$retry').kind, 'invalid');
  });

  it('should clip a long segment in a problem by code point, never splitting a surrogate pair', () => {
    const detail = route(`/$inbox/a${encodeURIComponent('\u{1F600}').repeat(300)}`).detail ?? '';
    assert.doesNotMatch(detail, /\p{Cs}/u);
    assert.match(detail, /\u{1F600}…'/u);
  });

  it('should call malformed percent-encoding invalid', () => {
    assert.equal(route('/products/%zz').kind, 'invalid');
    assert.equal(route('/products/%').kind, 'invalid');
    assert.equal(route('/products/%C3%28').kind, 'invalid');
  });

  it('should never make a "$" segment a collection or an id', () => {
    assert.deepEqual(route('/$inbox'), { kind: 'inbox' }, 'a system route, not a collection');
    assert.deepEqual(route('/$other'), { kind: 'unknown' });
    assert.deepEqual(route('/$metrics'), { kind: 'metrics' }, 'a system route');
    assert.deepEqual(route('/$metrics/x'), { kind: 'unknown' });
    assert.deepEqual(route('/$openapi'), { kind: 'openapi' }, 'a system route');
    assert.deepEqual(route('/$openapi/x'), { kind: 'unknown' });
    assert.deepEqual(route('/products/$queries'), { kind: 'unknown' });
    assert.deepEqual(route('/products/$bulk/x'), { kind: 'unknown' });
    assert.deepEqual(route('/products/$other'), { kind: 'unknown' });
    assert.deepEqual(route('/$health/x'), { kind: 'unknown' });
  });

  it('should route $bulk and query resources (CONVENTIONS.md#routes)', () => {
    assert.deepEqual(route('/products/$bulk'), { kind: 'bulk', collection: 'products' });
    assert.deepEqual(route('/products/$queries/cheap'), { kind: 'query', collection: 'products', name: 'cheap' });
    assert.deepEqual(route('/products/$queries/cheap/$definition'), { kind: 'query-definition', collection: 'products', name: 'cheap' });
    assert.deepEqual(route('/products/$queries/cheap/other'), { kind: 'unknown' });
    assert.deepEqual(route('/products/$queries/$x'), { kind: 'unknown' });
    assert.equal(route('/products/$queries/a%2Fb').kind, 'invalid');
  });

  it('should make an unknown "$" segment below an item unknown', () => {
    assert.deepEqual(route('/products/1/$bogus'), { kind: 'unknown' });
    assert.deepEqual(route('/products/1/other'), { kind: 'unknown' });
  });

  it('should match $undoDelete case-sensitively', () => {
    assert.deepEqual(route('/products/1/$undodelete'), { kind: 'unknown' });
  });

  it('should make paths with empty segments or more than three segments unknown', () => {
    for (const path of ['//products', '/products/', '/products//1', '/a/b/c/d', '/products/1/$undoDelete/x']) {
      assert.deepEqual(route(path), { kind: 'unknown' }, path);
    }
  });

  it('should make a path without a leading "/" unknown (asterisk-form, empty)', () => {
    assert.deepEqual(route('*'), { kind: 'unknown' });
    assert.deepEqual(route(''), { kind: 'unknown' });
  });

  it('should name the bad segment in the detail of an invalid route', () => {
    const result = route('/products/a%20b');
    assert.equal(result.kind, 'invalid');
    assert.match(result.kind === 'invalid' ? result.detail ?? '' : '', /'a b' is not a valid resource id/);
  });

  it('should escape control characters in the detail and clip long names', () => {
    const result = route(`/products/a%0Ab%00${'x'.repeat(200)}`);
    assert.equal(result.kind, 'invalid');
    const detail = result.kind === 'invalid' ? result.detail ?? '' : '';
    assert.doesNotMatch(detail, /[\x00-\x1f]/);
    assert.match(detail, /a\\nb\\u0000/);
    assert.ok(detail.length < 300, `detail of ${detail.length} characters`);
  });

  it('should route the same way whatever the webhook path is set to, apart from that path', () => {
    assert.deepEqual(matchRoute('/products/1', '/in'), route('/products/1'));
    assert.deepEqual(matchRoute('/', '/in'), { kind: 'service' });
  });
});

describe('allowedMethods', () => {
  const entries = new Map(tableFor(WEBHOOK).map((entry) => [entry.name, entry]));
  const methodsOf = (name: RouteName): string[] => allowedMethods(entries.get(name) as RouteEntry);
  const names: readonly RouteName[] = ['service', 'health', 'metrics', 'openapi', 'webhook', 'collection', 'item', 'undo', 'bulk', 'query', 'query-definition'];

  it('should list HEAD wherever it lists GET (CONVENTIONS.md#methods)', () => {
    for (const name of names) {
      const methods = methodsOf(name);
      assert.equal(methods.includes('HEAD'), methods.includes('GET'), name);
    }
  });

  it('should allow the methods CONVENTIONS.md#routes gives each route', () => {
    assert.ok(methodsOf('item').includes('PUT') && methodsOf('item').includes('DELETE') && methodsOf('item').includes('GET'));
    assert.ok(methodsOf('collection').includes('POST') && methodsOf('collection').includes('GET'));
    assert.ok(methodsOf('undo').includes('PUT'));
    assert.ok(methodsOf('webhook').includes('POST'));
    assert.ok(methodsOf('service').includes('GET'));
    assert.ok(methodsOf('health').includes('GET'));
  });

  it('should not allow writes where CONVENTIONS.md#routes has none', () => {
    assert.ok(!methodsOf('collection').includes('PUT') && !methodsOf('collection').includes('DELETE'));
    assert.ok(!methodsOf('item').includes('POST'));
    assert.ok(!methodsOf('webhook').includes('GET') && !methodsOf('webhook').includes('PUT'));
    assert.ok(!methodsOf('undo').includes('GET') && !methodsOf('undo').includes('DELETE'));
    assert.ok(!methodsOf('service').includes('PUT') && !methodsOf('health').includes('POST'));
  });

  it('should list only upper-case method names without duplicates', () => {
    for (const name of names) {
      const methods = methodsOf(name);
      assert.equal(new Set(methods).size, methods.length, name);
      for (const method of methods) assert.match(method, /^[A-Z]+$/);
    }
  });

  it('should leave unknown and invalid paths without a route, so no method is allowed on them', () => {
    for (const path of ['/a/b/c/d', '/products/1/other', '/products/a%20b', '/1products']) {
      assert.notEqual(new Router<RouteName>(tableFor(WEBHOOK)).match(path).kind, 'route', path);
    }
  });
});

describe('Router: the matches it remembers', () => {
  it('should match a path asked for again exactly as the first time, past its memory and for long paths', () => {
    const router = new Router<RouteName>(tableFor(WEBHOOK));
    const long = `/products/${'a'.repeat(128)}/$undoDelete`;
    const paths = ['/products/p1', '/products/%zz', '/$other', '/products/p1/$undoDelete', long, `/${'c'.repeat(300)}`];
    const first = paths.map((path) => shape(router.match(path)));
    // Asked for a second and a third time: remembered, then answered from memory.
    for (let round = 0; round < 2; round++) assert.deepEqual(paths.map((path) => shape(router.match(path))), first);
    // More distinct paths than it remembers, each twice: it forgets and starts again, and answers the same.
    for (let n = 0; n < 9000; n++) router.match(`/products/n${n}`) && router.match(`/products/n${n}`);
    assert.deepEqual(paths.map((path) => shape(router.match(path))), first);
    assert.deepEqual(shape(router.match('/products/n7')), { kind: 'item', collection: 'products', id: 'n7' });
    assert.deepEqual(first[0], { kind: 'item', collection: 'products', id: 'p1' });
    assert.equal(first[1]?.kind, 'invalid');
    assert.equal(first[5]?.kind, 'invalid');
  });

  // A remembered match is handed back as the same object; one matched afresh is a new one.
  const forgottenOf = (count: number): string[] => {
    const router = new Router<RouteName>(tableFor(WEBHOOK));
    const paths = Array.from({ length: count }, (_, n) => `/items/i${String(n * 39).padStart(7, '0')}`);
    for (let round = 0; round < 3; round++) for (const path of paths) router.match(path);
    return paths.filter((path) => router.match(path) !== router.match(path));
  };

  it('should remember each of 256 paths read in turn (paths sharing a slot pushed each other out)', () => {
    assert.deepEqual(forgottenOf(256), []);
  });

  it('should keep what it lets in: most of 2,000 paths read in turn (all were let in, then dropped at 1,024)', () => {
    // Those it forgets share a pair of slots with two others read between their requests.
    const forgotten = forgottenOf(2000).length;
    assert.ok(forgotten < 400, `${forgotten} of 2,000 forgotten`);
  });
});
