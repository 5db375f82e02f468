// The client's private cache (RFC 9111; CONVENTIONS.md#cache-control, CONVENTIONS.md#client-library): it
// honours the response directives max-age, must-revalidate, no-store and no-cache, revalidates with
// If-None-Match, and takes the request directives max-age, min-fresh, max-stale, no-cache and
// stale-if-error.
//
// What it stores: responses to GET with status 200 that neither the request nor the response marks
// `no-store`, whose Vary is not `*`, and that carry a validator (ETag, Last-Modified) or an explicit
// lifetime. `private` is fine here: this cache belongs to one client. There is no heuristic freshness
// (§4.2.2): a response without max-age or Expires is stale at once and revalidated on every use.
// Entries are keyed by URL, with one variant per value of the request fields the response Varies on
// (§4.1); the oldest unused entries go first once `maxEntries` or `maxBytes` is passed.
//
// How a stored response is used (`decide`, pure): fresh when its age (§4.2.3) is below its lifetime
// (response max-age, else Expires minus Date, §4.2.1) and the request's max-age and min-fresh allow;
// `immutable` (RFC 8246) keeps a fresh response fresh even for a request max-age=0 (a reload), while
// a request no-cache still revalidates. A stale response is served only when the request says
// max-stale and the response allows stale use (no must-revalidate, no no-cache, §4.2.4); otherwise it
// is revalidated with If-None-Match (If-Modified-Since without an ETag). When a revalidation fails (no
// answer, or a 5xx), `stale-if-error` (RFC 5861, on the request or the response) lets the stale copy
// answer within its window, except where must-revalidate forbids stale use.
import { deltaSeconds, parseCacheControl, type CacheDirectives } from '../protocol/cache-control.js';
import { parseHttpDate } from '../protocol/http-date.js';

/** A response as the cache keeps it. Header names are lowercase. */
export interface StoredResponse {
  readonly status: number;
  readonly headers: ReadonlyMap<string, string>;
  readonly body: Uint8Array;
  /** When the request that got this response was sent, and when the response arrived (ms). */
  readonly requestTime: number;
  readonly responseTime: number;
}

export interface CacheEntry {
  readonly url: string;
  /** The request's values of the fields the response Varies on (lowercase names). */
  readonly varied: ReadonlyMap<string, string>;
  readonly response: StoredResponse;
}

/** What to do with a stored response for a request. */
export type CacheDecision = 'fresh' | 'stale' | 'revalidate';

export interface CacheLimits {
  readonly maxEntries: number;
  readonly maxBytes: number;
}

export const DEFAULT_CACHE_LIMITS: CacheLimits = { maxEntries: 500, maxBytes: 16 * 1024 * 1024 };

/** Fields whose stored value a 304 does not replace (RFC 9111 §3.2). */
const KEPT_ON_304 = new Set(['content-length', 'content-encoding', 'transfer-encoding', 'content-range']);

export class PrivateCache {
  /** Entries by URL, each URL's variants newest first; Map order is the order of last use. */
  private readonly entries = new Map<string, CacheEntry[]>();
  private bytes = 0;
  private count = 0;

  constructor(private readonly limits: CacheLimits = DEFAULT_CACHE_LIMITS) {}

  /** The stored response for `url` whose Varied fields match the request's, if any. */
  lookup(url: string, requestHeaders: ReadonlyMap<string, string>): CacheEntry | undefined {
    const variants = this.entries.get(url);
    const entry = variants?.find((candidate) => varyMatches(candidate.varied, requestHeaders));
    if (variants === undefined || entry === undefined) return undefined;
    this.entries.delete(url);
    this.entries.set(url, variants);
    return entry;
  }

  /** Stores a response when RFC 9111 §3 allows it (see the header); returns the entry or undefined. */
  store(
    url: string,
    method: string,
    requestHeaders: ReadonlyMap<string, string>,
    response: StoredResponse,
  ): CacheEntry | undefined {
    if (!isStorable(method, requestHeaders, response)) return undefined;
    const varied = new Map<string, string>();
    for (const name of varyNames(response.headers)) varied.set(name, requestHeaders.get(name) ?? '');
    const entry: CacheEntry = { url, varied, response };
    if (entry.response.body.length > this.limits.maxBytes) return undefined;
    this.put(entry);
    return entry;
  }

  /** A 304 refreshes a stored response: its fields updated from the 304's, its age started again (§4.3.4). */
  refresh(entry: CacheEntry, notModified: StoredResponse): CacheEntry {
    const headers = new Map(entry.response.headers);
    for (const [name, value] of notModified.headers) if (!KEPT_ON_304.has(name)) headers.set(name, value);
    const response = {
      ...entry.response,
      headers,
      requestTime: notModified.requestTime,
      responseTime: notModified.responseTime,
    };
    const refreshed: CacheEntry = { url: entry.url, varied: entry.varied, response };
    if (!parseCacheControl(headers.get('cache-control')).has('no-store')) this.put(refreshed);
    else this.invalidate(entry.url);
    return refreshed;
  }

  /** Forgets every variant of `url` (after an unsafe request changed it, §4.4). */
  invalidate(url: string): void {
    const variants = this.entries.get(url);
    if (variants === undefined) return;
    for (const variant of variants) this.forget(variant);
    this.entries.delete(url);
  }

  get size(): number {
    return this.count;
  }

  private put(entry: CacheEntry): void {
    const variants = (this.entries.get(entry.url) ?? []).filter((candidate) => {
      if (!sameVariant(candidate.varied, entry.varied)) return true;
      this.forget(candidate);
      return false;
    });
    variants.unshift(entry);
    this.entries.delete(entry.url);
    this.entries.set(entry.url, variants);
    this.count++;
    this.bytes += entry.response.body.length;
    this.evict();
  }

  private forget(entry: CacheEntry): void {
    this.count--;
    this.bytes -= entry.response.body.length;
  }

  /** Drops the least recently used URLs' variants until both limits hold. */
  private evict(): void {
    for (const [url, variants] of this.entries) {
      if (this.count <= this.limits.maxEntries && this.bytes <= this.limits.maxBytes) return;
      while (variants.length > 0 && (this.count > this.limits.maxEntries || this.bytes > this.limits.maxBytes)) {
        this.forget(variants.pop() as CacheEntry);
      }
      if (variants.length === 0) this.entries.delete(url);
    }
  }
}

function isStorable(method: string, requestHeaders: ReadonlyMap<string, string>, response: StoredResponse): boolean {
  if (method !== 'GET' || response.status !== 200) return false;
  if (parseCacheControl(requestHeaders.get('cache-control')).has('no-store')) return false;
  const directives = parseCacheControl(response.headers.get('cache-control'));
  if (directives.has('no-store') || varyNames(response.headers).includes('*')) return false;
  return response.headers.has('etag') || response.headers.has('last-modified') || freshnessLifetime(response) > 0;
}

/** The names in the response's Vary, lowercase. */
function varyNames(headers: ReadonlyMap<string, string>): string[] {
  return (headers.get('vary') ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== '');
}

/** Do the request's fields match the ones a variant was stored for (§4.1: after normalizing whitespace)? */
function varyMatches(varied: ReadonlyMap<string, string>, requestHeaders: ReadonlyMap<string, string>): boolean {
  for (const [name, value] of varied) {
    if (normalized(requestHeaders.get(name) ?? '') !== normalized(value)) return false;
  }
  return true;
}

function sameVariant(a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>): boolean {
  if (a.size !== b.size) return false;
  for (const [name, value] of a) {
    const other = b.get(name);
    if (other === undefined || normalized(other) !== normalized(value)) return false;
  }
  return true;
}

function normalized(value: string): string {
  return value.trim().replace(/\s*,\s*/g, ',').replace(/\s+/g, ' ');
}

/** Freshness lifetime in seconds (§4.2.1): max-age, else Expires minus Date; no heuristic. */
export function freshnessLifetime(response: StoredResponse): number {
  const maxAge = deltaSeconds(parseCacheControl(response.headers.get('cache-control')), 'max-age');
  if (maxAge !== undefined) return maxAge;
  const expires = response.headers.get('expires');
  if (expires === undefined) return 0;
  const expiresAt = parseHttpDate(expires, response.responseTime);
  // An invalid Expires (such as "0") means already expired (§5.3).
  if (expiresAt === undefined) return 0;
  const date = dateOf(response);
  return Math.max(0, (expiresAt - date) / 1000);
}

/** Current age in seconds (§4.2.3). */
export function currentAge(response: StoredResponse, now: number): number {
  // Age is delta-seconds (RFC 9111 §5.1): digits only; anything else is no Age at all.
  const ageText = response.headers.get('age') ?? '0';
  const ageValue = /^\d+$/.test(ageText) ? Number(ageText) : 0;
  const apparentAge = Math.max(0, response.responseTime - dateOf(response)) / 1000;
  const responseDelay = (response.responseTime - response.requestTime) / 1000;
  const correctedAgeValue = ageValue + responseDelay;
  const correctedInitialAge = Math.max(apparentAge, correctedAgeValue);
  const residentTime = (now - response.responseTime) / 1000;
  return correctedInitialAge + residentTime;
}

/** The Date the origin gave, or when the response arrived (§6.6.1 of RFC 9110: a recipient may assume it). */
function dateOf(response: StoredResponse): number {
  const date = response.headers.get('date');
  return (date === undefined ? undefined : parseHttpDate(date, response.responseTime)) ?? response.responseTime;
}

/** What to do with `entry` for a request carrying `requestDirectives` at `now` (see the header). */
export function decide(entry: CacheEntry, requestDirectives: CacheDirectives, now: number): CacheDecision {
  const response = parseCacheControl(entry.response.headers.get('cache-control'));
  if (requestDirectives.has('no-cache') || response.has('no-cache')) return 'revalidate';
  const lifetime = freshnessLifetime(entry.response);
  const age = currentAge(entry.response, now);
  const fresh = age < lifetime;
  const maxAge = deltaSeconds(requestDirectives, 'max-age');
  const minFresh = deltaSeconds(requestDirectives, 'min-fresh') ?? 0;
  if (fresh && response.has('immutable')) return lifetime - age >= minFresh ? 'fresh' : 'revalidate';
  if (fresh && (maxAge === undefined || age <= maxAge) && lifetime - age >= minFresh) return 'fresh';
  if (!fresh && mayServeStale(response) && requestDirectives.has('max-stale')) {
    const maxStale = requestDirectives.get('max-stale');
    const allowed = maxStale === true ? Number.POSITIVE_INFINITY : (deltaSeconds(requestDirectives, 'max-stale') ?? 0);
    if (age - lifetime <= allowed && (maxAge === undefined || age <= maxAge)) return 'stale';
  }
  return 'revalidate';
}

/** May `entry` answer in place of a failed revalidation (stale-if-error, RFC 5861 §4)? */
export function staleIfError(entry: CacheEntry, requestDirectives: CacheDirectives, now: number): boolean {
  const response = parseCacheControl(entry.response.headers.get('cache-control'));
  if (!mayServeStale(response)) return false;
  const window = deltaSeconds(requestDirectives, 'stale-if-error') ?? deltaSeconds(response, 'stale-if-error');
  if (window === undefined) return false;
  return currentAge(entry.response, now) - freshnessLifetime(entry.response) <= window;
}

/** must-revalidate and no-cache forbid serving it stale (§5.2.2.2, §5.2.2.4; CONVENTIONS.md#cache-control). */
function mayServeStale(response: CacheDirectives): boolean {
  return !response.has('must-revalidate') && !response.has('no-cache');
}
