// Checks of caching headers: Cache-Control (CONVENTIONS.md#cache-control: the policy for changing
// data, no-store on writes and errors, private with API keys), Vary (CONVENTIONS.md#vary: Accept,
// Prefer, Authorization), Last-Modified beside the ETag (CONVENTIONS.md#etags) and revalidation
// (CONVENTIONS.md#conditional-reads); RFC 9111 and RFC 9110 §6.6.1 (Date). The run's collection is
// data the checker keeps changing, so whatever the server says of changing data applies to it.
import { isJsonObject } from '../../json.js';
import { deltaSeconds, parseCacheControl, type CacheDirectives } from '../../protocol/cache-control.js';
import { parseEntityTag } from '../../protocol/etag.js';
import { parseHttpDate } from '../../protocol/http-date.js';
import { check, JSON_BODY, JSON_CREATE_ONLY } from '../define.js';
import { expectHeader, expectObject, expectStatus, expectThat, seen, varyNames } from '../expect.js';
import type { ProbeResponse } from '../probe.js';
import { CheckFailed, CheckSkipped, type Check, type CheckContext } from '../types.js';

/**
 * The longest max-age accepted for changing data: seconds for volatile data, against hours or days
 * for static reference data (CONVENTIONS.md#cache-control), so a minute is the bound.
 */
const VOLATILE_MAX_AGE_S = 60;

export const CACHING_CHECKS: readonly Check[] = [
  // The ETag that makes revalidation cheap is the rule of resources/get-item (an item) and
  // caching/page-etag (a page); this check judges the policy alone.
  check('caching', 'must-revalidate', { anchor: 'cache-control', rfc: 'RFC 9111 §5.2.2.2', needs: ['item'] },
    'Changing data (an item, a page) is served with must-revalidate (or no-cache), ' +
      'so a stale copy is never used unchecked',
    async (c) => {
      const item = await c.newItem();
      const reads = [
        await c.send({ method: 'GET', path: item.path }),
        await c.send({ method: 'GET', path: `/${c.collection}` }),
      ];
      for (const response of reads) {
        expectStatus(response, 200);
        const directives = cacheControl(response);
        const revalidates = directives.has('must-revalidate') || directives.has('no-cache');
        const policy = response.header('cache-control') ?? '(none)';
        expectThat(revalidates, `${where(response)} has Cache-Control: ${policy}`);
      }
    }),

  // Catches changing data served with a reference-data lifetime (or marked immutable): caches would
  // serve it unchecked long after it changed.
  check('caching', 'volatile-lifetime', { anchor: 'cache-control', needs: ['item'] },
    `Changing data has a short lifetime: max-age and s-maxage of at most ${VOLATILE_MAX_AGE_S} s, ` +
      'and never immutable',
    async (c) => {
      const item = await c.newItem();
      const response = await c.send({ method: 'GET', path: item.path });
      expectStatus(response, 200);
      const directives = cacheControl(response);
      const policy = response.header('cache-control') ?? '';
      for (const name of ['max-age', 's-maxage']) {
        const lifetime = deltaSeconds(directives, name);
        const short = lifetime === undefined || lifetime <= VOLATILE_MAX_AGE_S;
        expectThat(short, `an item the checker keeps changing has Cache-Control: ${policy}`);
      }
      const immutable = directives.has('immutable');
      expectThat(!immutable, `an item the checker keeps changing is immutable: Cache-Control: ${policy}`);
    }),

  check('caching', 'max-age-seconds',
    { anchor: 'cache-control', rfc: 'RFC 9111 §1.2.2, §5.2.2.1', needs: ['item', 'listing'] },
    'max-age and s-maxage are delta-seconds: a whole number of seconds, digits only',
    async (c) => {
      const item = await c.newItem();
      const listing = c.listing();
      const responses = [
        await c.send({ method: 'GET', path: item.path }),
        await c.send({ method: 'GET', path: `/${listing}` }),
        await c.send({ method: 'GET', path: item.path, headers: { 'If-None-Match': item.etag } }),
      ];
      for (const response of responses) {
        const directives = cacheControl(response);
        for (const name of ['max-age', 's-maxage']) {
          const value = directives.get(name);
          const digits = value === undefined || (typeof value === 'string' && /^\d+$/.test(value));
          expectThat(digits, `${where(response)} has Cache-Control: ${response.header('cache-control') ?? ''}`);
        }
      }
    }),

  // A 304 or a HEAD without Cache-Control leaves a cache with no policy for the copy it refreshes.
  check('caching', 'item-reads-cache-control',
    { anchor: 'cache-control', rfc: 'RFC 9110 §9.3.2, §15.4.5', needs: ['item', 'not-modified'] },
    'Every successful read of an item (GET 200, HEAD, 304) carries Cache-Control, ' +
      'the same for HEAD as for GET',
    async (c) => {
      const item = await c.newItem();
      const get = await c.send({ method: 'GET', path: item.path });
      const head = await c.send({ method: 'HEAD', path: item.path });
      const revalidated = await c.send({ method: 'GET', path: item.path, headers: { 'If-None-Match': item.etag } });
      expectStatus(get, 200);
      expectStatus(head, 200);
      expectStatus(revalidated, 304);
      for (const response of [get, head, revalidated]) expectHeader(response, 'cache-control');
      expectThat(
        sameDirectives(cacheControl(get), cacheControl(head)),
        `GET says Cache-Control: ${get.header('cache-control') ?? ''}, HEAD says ${head.header('cache-control') ?? ''}`,
      );
    }),

  // The answer to a write describes that one exchange; a cache that stored it could serve it to a later
  // GET of the same URL. The POST's item is deleted here since the run only knows the ids it chose.
  check('caching', 'writes-no-store',
    { anchor: 'cache-control', rfc: 'RFC 9111 §5.2.2.5', needs: ['item', 'replace'] },
    'The responses to PUT (create and replace), POST and DELETE carry Cache-Control: no-store',
    async (c) => {
      const id = c.newId();
      const path = `/${c.collection}/${id}`;
      const created = await c.send({
        method: 'PUT',
        path,
        headers: JSON_CREATE_ONLY,
        body: JSON.stringify({ id, name: 'write' }),
      });
      expectStatus(created, 201);
      expectNoStore(created);
      const replaced = await c.send({
        method: 'PUT',
        path,
        headers: { ...JSON_BODY, 'If-Match': expectHeader(created, 'etag') },
        body: JSON.stringify({ id, name: 'rewrite' }),
      });
      expectStatus(replaced, 200);
      expectNoStore(replaced);
      const deleted = await c.send({ method: 'DELETE', path });
      expectNoStore(deleted);
      const posted = await c.send({
        method: 'POST',
        path: `/${c.collection}`,
        headers: JSON_BODY,
        body: JSON.stringify({ name: 'posted' }),
      });
      try {
        expectNoStore(posted);
      } finally {
        await deletePosted(c, posted);
      }
    }),

  check('caching', 'errors-no-store', { anchor: 'cache-control', rfc: 'RFC 9111 §5.2.2.5', needs: ['item'] },
    'Errors (404, 412, 428) carry Cache-Control: no-store',
    async (c) => {
      const item = await c.newItem();
      const missing = await c.send({ method: 'GET', path: `/${c.collection}/${c.newId()}` });
      const body = JSON.stringify(item.doc);
      const failed = await c.send({ method: 'PUT', path: item.path, headers: JSON_CREATE_ONLY, body });
      const unconditional = await c.send({ method: 'PUT', path: item.path, headers: JSON_BODY, body });
      // Which status each gets is the rule of other checks (resources/missing-item,
      // conditional/create-existing, conditional/precondition-required); this one judges the policy.
      // A PUT's answer is an error or a write's, and both are no-store.
      const errors = missing.status >= 400 ? [missing] : [];
      for (const response of [...errors, failed, unconditional]) expectNoStore(response);
    }),

  // The page size depends on Prefer (RFC 7240 §2); a cache ignoring it would answer a request for
  // 5 items per page with a stored page of 50. Where Prefer changes nothing (paging/max-page-size
  // failed), there is nothing to vary on.
  check('caching', 'collection-vary-prefer', { anchor: 'vary', rfc: 'RFC 7240 §2', needs: ['listing', 'pages'] },
    'A collection page carries Vary: Prefer (even when no Prefer was sent)',
    async (c) => {
      const listing = c.listing();
      const response = await c.send({ method: 'GET', path: `/${listing}` });
      expectStatus(response, 200);
      expectThat(varies(response, 'prefer'), `the page has Vary: ${response.header('vary') ?? '(none)'}`);
    }),

  // "Negotiated" is judged from outside: when Accept changes the answer (another type or a 406),
  // the 200 depends on Accept and must say so. A server that ignores Accept has nothing to list.
  check('caching', 'negotiated-vary-accept', { anchor: 'vary', rfc: 'RFC 9110 §12.5.5', needs: ['item', 'listing'] },
    'A response chosen by Accept (an item, a collection page) carries Vary: Accept',
    async (c) => {
      const item = await c.newItem();
      const listing = c.listing();
      let negotiated = 0;
      for (const path of [item.path, `/${listing}`]) {
        const json = await c.send({ method: 'GET', path, headers: { Accept: 'application/json' } });
        const csv = await c.send({ method: 'GET', path, headers: { Accept: 'text/csv' } });
        expectStatus(json, 200);
        if (csv.status === json.status && mediaType(csv) === mediaType(json)) continue;
        negotiated++;
        for (const response of [json, csv]) {
          if (response.status !== 200) continue;
          const vary = response.header('vary') ?? '(none)';
          expectThat(varies(response, 'accept'), `${where(response)} (${mediaType(response)}) has Vary: ${vary}`);
        }
      }
      if (negotiated === 0) {
        throw new CheckSkipped('Accept changes nothing in the answers (JSON is sent whatever is asked)');
      }
    }),

  check('caching', 'page-etag', { anchor: 'collection-envelope', needs: ['listing'] },
    'A collection page carries a strong ETag, and If-None-Match with it answers 304',
    async (c) => {
      const listing = c.listing();
      const page = await c.send({ method: 'GET', path: `/${listing}` });
      expectStatus(page, 200);
      const etag = expectHeader(page, 'etag');
      expectThat(parseEntityTag(etag)?.weak === false, `the page's ETag ${etag} is not a strong entity-tag`);
      const revalidated = await c.send({ method: 'GET', path: `/${listing}`, headers: { 'If-None-Match': etag } });
      expectStatus(revalidated, 304);
    }),

  // Catches validators coarser than the bytes (a Last-Modified to the second, a version counter not
  // bumped): a change within the same second would be answered 304 and the cache keep the old copy.
  check('caching', 'revalidate-after-change', { anchor: 'conditional-reads', needs: ['item', 'read', 'replace'] },
    'Revalidating with the ETag of a copy that has since changed answers 200 with the new ETag ' +
      'and the new data',
    async (c) => {
      const item = await c.newItem({ name: 'old copy' });
      const replaced = await c.send({
        method: 'PUT',
        path: item.path,
        headers: { ...JSON_BODY, 'If-Match': item.etag },
        body: JSON.stringify({ ...item.doc, name: 'new copy' }),
      });
      expectStatus(replaced, 200);
      const etag = expectHeader(replaced, 'etag');
      const revalidated = await c.send({ method: 'GET', path: item.path, headers: { 'If-None-Match': item.etag } });
      expectStatus(revalidated, 200);
      expectThat(
        revalidated.header('etag') === etag,
        `the replace said ETag: ${etag}, the revalidation says ${revalidated.header('etag') ?? '(none)'}`,
      );
      expectThat(expectObject(revalidated)['name'] === 'new copy', `the revalidation sent ${seen(revalidated)}`);
    }),

  check('caching', 'last-modified', { anchor: 'etags', rfc: 'RFC 9110 §8.8.2.1', needs: ['item'] },
    'A read of an item carries Last-Modified, an HTTP-date no later than the response\'s Date',
    async (c) => {
      const item = await c.newItem();
      const response = await c.send({ method: 'GET', path: item.path });
      expectStatus(response, 200);
      const modified = expectHttpDate(response, 'last-modified');
      const date = expectHttpDate(response, 'date');
      expectThat(
        modified <= date,
        `Last-Modified: ${response.header('last-modified') ?? ''} is later than Date: ${response.header('date') ?? ''}`,
      );
    }),

  // Caches compute a response's age from Date (RFC 9111 §4.2.3); without it max-age counts from
  // whenever the response reached them.
  check('caching', 'date', { anchor: 'cache-control', rfc: 'RFC 9110 §6.6.1', needs: ['item'] },
    'Responses (200, 304, 404) carry a Date that is an HTTP-date',
    async (c) => {
      const item = await c.newItem();
      const responses = [
        await c.send({ method: 'GET', path: item.path }),
        await c.send({ method: 'GET', path: item.path, headers: { 'If-None-Match': item.etag } }),
        await c.send({ method: 'GET', path: `/${c.collection}/${c.newId()}` }),
      ];
      for (const response of responses) expectHttpDate(response, 'date');
    }),

  // Catches a shared-cache policy (`public`, `s-maxage`) applied to a caller's credentialed answer:
  // a proxy would then serve one user's data to another. `no-store` is as safe as `private`.
  check('caching', 'credentialed-not-public',
    {
      anchor: 'cache-control',
      rfc: 'RFC 9111 §3.5',
      needs: ['item', 'listing', 'not-modified'],
      requires: ['credentials'],
    },
    'When the request carries credentials, reads are private (or no-store), never public',
    async (c) => {
      const reads = await credentialedReads(c);
      for (const response of reads) {
        const directives = cacheControl(response);
        const text = response.header('cache-control') ?? '(none)';
        const shared = directives.has('public') || directives.has('s-maxage');
        expectThat(!shared, `${where(response)} to a credentialed request has Cache-Control: ${text}`);
        const kept = directives.has('private') || directives.has('no-store');
        expectThat(kept, `${where(response)} to a credentialed request has Cache-Control: ${text}, without private`);
      }
    }),

  check('caching', 'credentialed-vary-authorization',
    { anchor: 'vary', needs: ['item', 'listing', 'not-modified'], requires: ['credentials'] },
    'When the request carries credentials, reads carry Vary: Authorization',
    async (c) => {
      const reads = await credentialedReads(c);
      for (const response of reads) {
        const vary = response.header('vary') ?? '(none)';
        expectThat(varies(response, 'authorization'), `${where(response)} to a credentialed request has Vary: ${vary}`);
      }
    }),

  // The two contradict each other (RFC 9111 §5.2.2.7, §5.2.2.9); a cache may read either.
  check('caching', 'public-or-private',
    { anchor: 'cache-control', rfc: 'RFC 9111 §5.2.2.7, §5.2.2.9', needs: ['item', 'listing'] },
    'No response says both public and private',
    async (c) => {
      const item = await c.newItem();
      const listing = c.listing();
      const responses = [
        await c.send({ method: 'GET', path: item.path }),
        await c.send({ method: 'GET', path: `/${listing}` }),
        await c.send({ method: 'GET', path: item.path, headers: { 'If-None-Match': item.etag } }),
        await c.send({ method: 'GET', path: `/${c.collection}/${c.newId()}` }),
      ];
      for (const response of responses) {
        const directives = cacheControl(response);
        const both = directives.has('public') && directives.has('private');
        expectThat(!both, `${where(response)} has Cache-Control: ${response.header('cache-control') ?? ''}`);
      }
    }),
];

function cacheControl(response: ProbeResponse): CacheDirectives {
  return parseCacheControl(response.lines.get('cache-control'));
}

function expectNoStore(response: ProbeResponse): void {
  const policy = response.header('cache-control') ?? '(none)';
  expectThat(cacheControl(response).has('no-store'), `${where(response)} has Cache-Control: ${policy}, not no-store`);
}

/** The field's HTTP-date in milliseconds; fails when it is absent or not an HTTP-date. */
function expectHttpDate(response: ProbeResponse, name: string): number {
  const value = expectHeader(response, name);
  const ms = parseHttpDate(value);
  if (ms === undefined) throw new CheckFailed(`${where(response)} has ${name}: ${value}, not an HTTP-date`);
  return ms;
}

/** Whether Vary lists `name` (lowercase) or is `*`. */
function varies(response: ProbeResponse, name: string): boolean {
  const names = varyNames(response);
  return names.has(name) || names.has('*');
}

function sameDirectives(a: CacheDirectives, b: CacheDirectives): boolean {
  return a.size === b.size && [...a].every(([name, value]) => b.get(name) === value);
}

/** The response named in a failure: its status and path. */
function where(response: ProbeResponse): string {
  return `the ${response.status} of ${new URL(response.url).pathname}`;
}

/** The response's media type without parameters, lowercased. */
function mediaType(response: ProbeResponse): string {
  return (response.header('content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

/** An item's 200 and 304 and a page's 200, read with the run's credentials. */
async function credentialedReads(c: CheckContext): Promise<ProbeResponse[]> {
  const item = await c.newItem();
  const listing = c.listing();
  const get = await c.send({ method: 'GET', path: item.path });
  const revalidated = await c.send({ method: 'GET', path: item.path, headers: { 'If-None-Match': item.etag } });
  const page = await c.send({ method: 'GET', path: `/${listing}` });
  expectStatus(get, 200);
  expectStatus(revalidated, 304);
  expectStatus(page, 200);
  return [get, revalidated, page];
}

/**
 * Deletes what a POST made in the run's collection (found by its Location, else the body's id), leaving
 * anything else alone.
 */
async function deletePosted(c: CheckContext, posted: ProbeResponse): Promise<void> {
  if (posted.status < 200 || posted.status >= 300) return;
  const location = posted.header('location');
  const body = posted.json();
  const id = isJsonObject(body) && typeof body['id'] === 'string' ? body['id'] : undefined;
  if (location !== undefined) {
    const url = new URL(location, posted.url);
    if (url.origin === new URL(posted.url).origin && url.pathname.includes(`/${c.collection}/`)) {
      await c.send({ method: 'DELETE', path: url.href });
    }
  } else if (id !== undefined) {
    await c.send({ method: 'DELETE', path: `/${c.collection}/${encodeURIComponent(id)}` });
  }
}
