// The client library (CONVENTIONS.md#client-library; `import { ResourceClient } from 'resapi/client'`):
// resapi's rules for consumers, kept by the client so its users need not know them.
//
// - Caching (CONVENTIONS.md#cache-control): GETs go through a private cache
//   (cache.ts) that serves fresh copies, revalidates stale ones with If-None-Match, and may serve a
//   stale copy when a request's max-stale or stale-if-error allows it. A successful PUT, POST or
//   DELETE forgets what the cache held for its URL (RFC 9111 §4.4).
// - Retries (CONVENTIONS.md#idempotent-methods: GET, HEAD, PUT and DELETE may be retried
//   automatically, POST and PATCH never): those four methods are sent again after a network error or
//   a 5xx, on the client's parameter set of the one backoff (lib/retry.ts CLIENT_BACKOFF, full jitter),
//   or after the wait a Retry-After asks for (a longer wait than `maxRetryAfterMs` is not waited for:
//   the 5xx is the answer). POST and PATCH are retried only with an Idempotency-Key
//   (CONVENTIONS.md#idempotency-keys), which the client makes when asked. A 4xx is never retried: the
//   request will not be accepted as it is.
// - Collections (CONVENTIONS.md#collection-envelope): `list` follows `@nextLink` and never builds one;
//   an answer that is not an envelope, or a link to another origin, is a ProtocolError.
// - Conflicts (a 412 means GET, merge and retry: CONVENTIONS.md#conditional-replace): `update` does GET,
//   mutate, PUT with If-Match, and on 412 reads again and applies the change again, up to a limit.
// Errors are values (errors.ts): the server's problem document, or why no answer came.
// The README's "The client" lists every public member, what it returns and the errors worth handling;
// test/client/readme-client.test.ts fails when a member is added here and not there.
import { STATUS_CODES } from 'node:http';
import { systemClock, systemRandom, type Clock, type Random } from '../clock.js';
import type { JsonObject } from '../json.js';
import { parseCacheControl } from '../protocol/cache-control.js';
import { retryAfterMs } from '../protocol/retry-after.js';
import { CLIENT_BACKOFF, mayRetry, retryDelay, withSchedule, type Backoff } from '../retry.js';
import {
  DEFAULT_CACHE_LIMITS,
  PrivateCache,
  decide,
  staleIfError,
  type CacheLimits,
  type StoredResponse,
} from './cache.js';
import { NetworkError, ProtocolError, ResourceError, problemOf } from './errors.js';

export interface RetryPolicy {
  /** Attempts in all, the first one included. */
  readonly attempts: number;
  readonly baseMs: number;
  readonly factor: number;
  readonly capMs: number;
}

export interface ResourceClientOptions {
  /** Sent as `Authorization: Bearer <apiKey>` (CONVENTIONS.md#api-keys). */
  readonly apiKey?: string;
  /** Fields sent with every request. */
  readonly headers?: Readonly<Record<string, string>>;
  /** The private cache's limits, or false for none. */
  readonly cache?: false | Partial<CacheLimits>;
  /** Default (CLIENT_BACKOFF): 4 attempts, 100 ms × 2^n, at most 5 s; the jitter is always full. */
  readonly retry?: Partial<RetryPolicy>;
  /** The longest Retry-After the client waits for before retrying (default 60 s). */
  readonly maxRetryAfterMs?: number;
  /** How long one attempt may take before it counts as a network error (default 30 s). */
  readonly timeoutMs?: number;
  /** How many times `update` applies its change before giving up on 412s (default 10). */
  readonly updateAttempts?: number;
  readonly fetch?: typeof globalThis.fetch;
  readonly clock?: Clock;
  readonly random?: Random;
}

export interface RequestOptions {
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string | Uint8Array;
  /**
   * Request Cache-Control directives: `no-cache`, `max-age=0`, `min-fresh=N`, `max-stale[=N]`,
   * `stale-if-error=N`, `no-store`.
   */
  readonly cacheControl?: string;
  /** The Idempotency-Key of a POST or PATCH (true: a new random one); it makes the request retryable. */
  readonly idempotencyKey?: string | true;
  /** false: send once, never again (what `update` does, so a write is never applied twice). */
  readonly retry?: boolean;
}

/** Where an answer came from: the server (`miss`, `revalidated` by a 304) or the cache alone. */
export type CacheStatus = 'miss' | 'hit' | 'stale' | 'revalidated' | 'bypass';

export interface ClientResponse {
  readonly status: number;
  readonly url: string;
  /** Field values by lowercase name. */
  readonly headers: ReadonlyMap<string, string>;
  readonly body: Uint8Array;
  readonly cache: CacheStatus;
  /** Requests sent to the server for this answer (0 when the cache answered alone). */
  readonly attempts: number;
  text(): string;
  json(): unknown;
}

/** A resource as read or written: its JSON, its ETag (for If-Match), its URL. */
export interface Item<T extends JsonObject = JsonObject> {
  readonly data: T;
  readonly etag: string;
  readonly url: string;
}

export interface ListOptions {
  readonly filter?: string;
  readonly select?: readonly string[] | string;
  readonly orderby?: string;
  /** Asked for with `Prefer: maxpagesize=N`. */
  readonly pageSize?: number;
  readonly top?: number;
}

export interface BulkReport {
  readonly applied: number;
  readonly skipped: number;
  readonly conflicts: readonly JsonObject[];
  readonly notFound: readonly JsonObject[];
}

export interface QueryDefinition {
  readonly filter?: string;
  readonly orderby?: string;
  readonly select?: readonly string[];
}

const RETRYABLE = new Set(['GET', 'HEAD', 'PUT', 'DELETE']);
const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);
const JSON_TYPE = 'application/json';

interface Answer {
  readonly status: number;
  readonly headers: Map<string, string>;
  readonly body: Uint8Array;
  readonly attempts: number;
}

export class ResourceClient {
  readonly baseUrl: string;
  private readonly origin: string;
  private readonly cache: PrivateCache | undefined;
  private readonly backoff: Backoff;
  private readonly clock: Clock;
  private readonly random: Random;
  private readonly fetch: typeof globalThis.fetch;
  private readonly defaultHeaders: Map<string, string>;

  constructor(
    baseUrl: string,
    private readonly options: ResourceClientOptions = {},
  ) {
    const base = new URL(baseUrl);
    if (base.protocol !== 'http:' && base.protocol !== 'https:') {
      throw new TypeError(`ResourceClient: the base URL must be http or https, not ${base.protocol}`);
    }
    this.baseUrl = base.href.replace(/\/+$/, '');
    this.origin = base.origin;
    this.cache = options.cache === false ? undefined : new PrivateCache({ ...DEFAULT_CACHE_LIMITS, ...options.cache });
    this.backoff = withSchedule(CLIENT_BACKOFF, { ...CLIENT_BACKOFF.schedule, ...options.retry });
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? systemRandom;
    this.fetch = options.fetch ?? globalThis.fetch;
    this.defaultHeaders = new Map([['accept', JSON_TYPE]]);
    for (const [name, value] of Object.entries(options.headers ?? {})) {
      this.defaultHeaders.set(name.toLowerCase(), value);
    }
    if (options.apiKey !== undefined) this.defaultHeaders.set('authorization', `Bearer ${options.apiKey}`);
  }

  /**
   * One request, through the cache and the retries; any status is an answer (only a request that got
   * no answer at all throws, a NetworkError). `path` is relative to the base URL, or an absolute URL
   * on its origin.
   */
  async request(method: string, path: string, options: RequestOptions = {}): Promise<ClientResponse> {
    const url = this.resolve(path, method);
    const headers = this.headersFor(options);
    const directives = parseCacheControl(headers.get('cache-control'));
    const conditional = headers.has('if-none-match') || headers.has('if-modified-since');
    const cache = method === 'GET' && !directives.has('no-store') ? this.cache : undefined;
    const entry = cache !== undefined && !conditional ? cache.lookup(url, headers) : undefined;
    if (entry !== undefined) {
      const decision = decide(entry, directives, this.clock.now());
      if (decision !== 'revalidate') return answerOf(entry.response, url, decision === 'fresh' ? 'hit' : 'stale', 0);
      const etag = entry.response.headers.get('etag');
      const lastModified = entry.response.headers.get('last-modified');
      if (etag !== undefined) headers.set('if-none-match', etag);
      else if (lastModified !== undefined) headers.set('if-modified-since', lastModified);
    }
    const retryable = options.retry !== false && (RETRYABLE.has(method) || headers.has('idempotency-key'));
    const requestTime = this.clock.now();
    let answer: Answer;
    try {
      answer = await this.send(method, url, headers, options.body, retryable);
    } catch (error) {
      if (entry !== undefined && staleIfError(entry, directives, this.clock.now())) {
        return answerOf(entry.response, url, 'stale', 0);
      }
      throw error;
    }
    const stored: StoredResponse = {
      status: answer.status,
      headers: answer.headers,
      body: answer.body,
      requestTime,
      responseTime: this.clock.now(),
    };
    if (entry !== undefined && cache !== undefined) {
      if (answer.status === 304) {
        return answerOf(cache.refresh(entry, stored).response, url, 'revalidated', answer.attempts);
      }
      if (answer.status >= 500 && staleIfError(entry, directives, this.clock.now())) {
        return answerOf(entry.response, url, 'stale', answer.attempts);
      }
    }
    // A full answer to a revalidation replaces the stored copy (RFC 9111 §4.3.3): one that is not
    // stored itself (a 404, a no-store) must not leave the old copy behind to be served stale later.
    if (entry !== undefined && cache !== undefined) cache.invalidate(url);
    if (cache !== undefined) cache.store(url, method, headers, stored);
    if (!SAFE.has(method) && answer.status < 400) this.invalidate(url, answer.headers);
    return answerOf(stored, url, cache === undefined ? 'bypass' : 'miss', answer.attempts);
  }

  /** GET an item: 200 with its JSON and ETag, else a ResourceError (404 when it does not exist). */
  async get<T extends JsonObject = JsonObject>(
    collection: string,
    id: string,
    options: { readonly cacheControl?: string } = {},
  ): Promise<Item<T>> {
    const request = options.cacheControl === undefined ? {} : { cacheControl: options.cacheControl };
    const response = await this.request('GET', itemPath(collection, id), request);
    return this.itemOf<T>('GET', response, [200]);
  }

  /** PUT with If-None-Match: * (CONVENTIONS.md#conditional-create): creates the item, 412 when it exists. */
  async create<T extends JsonObject = JsonObject>(collection: string, id: string, data: T): Promise<Item<T>> {
    const response = await this.request('PUT', itemPath(collection, id), jsonBody(data, { 'If-None-Match': '*' }));
    return this.itemOf<T>('PUT', response, [201]);
  }

  /** PUT with If-Match (CONVENTIONS.md#conditional-replace): replaces the item if it still has `etag`, else 412. */
  async replace<T extends JsonObject = JsonObject>(
    collection: string,
    id: string,
    data: T,
    etag: string,
  ): Promise<Item<T>> {
    const response = await this.request('PUT', itemPath(collection, id), jsonBody(data, { 'If-Match': etag }));
    return this.itemOf<T>('PUT', response, [200]);
  }

  /** DELETE (idempotent); with `etag`, only if the item still has it (412 otherwise). */
  async delete(collection: string, id: string, options: { readonly etag?: string } = {}): Promise<void> {
    const request = options.etag === undefined ? {} : { headers: { 'If-Match': options.etag } };
    const response = await this.request('DELETE', itemPath(collection, id), request);
    if (response.status < 200 || response.status >= 300) throw errorOf('DELETE', response);
  }

  /** PUT /{c}/{id}/$undoDelete (CONVENTIONS.md#undo-delete): the deleted item back, 404 when nothing to undo. */
  async undoDelete<T extends JsonObject = JsonObject>(collection: string, id: string): Promise<Item<T>> {
    const response = await this.request('PUT', `${itemPath(collection, id)}/$undoDelete`);
    return this.itemOf<T>('PUT', response, [200]);
  }

  /**
   * POST /{c} (CONVENTIONS.md#post-creates): an item with an id the server chooses. Never sent twice
   * unless it carries an Idempotency-Key (`idempotencyKey: true` makes one), which makes a retry safe.
   */
  async add<T extends JsonObject = JsonObject>(
    collection: string,
    data: T,
    options: { readonly idempotencyKey?: string | true } = {},
  ): Promise<Item<T>> {
    const key = options.idempotencyKey === undefined ? {} : { idempotencyKey: options.idempotencyKey };
    const response = await this.request('POST', collectionPath(collection), { ...jsonBody(data, {}), ...key });
    return this.itemOf<T>('POST', response, [200, 201]);
  }

  /** PUT /{c}/$bulk with a CSV of currentX/newX columns (CONVENTIONS.md#bulk-updates): the server's report. */
  async bulk(collection: string, csv: string): Promise<BulkReport> {
    const request = { headers: { 'Content-Type': 'text/csv' }, body: csv };
    const response = await this.request('PUT', `${collectionPath(collection)}/$bulk`, request);
    if (response.status !== 200) throw errorOf('PUT', response);
    const report = response.json();
    if (!isObject(report) || typeof report['applied'] !== 'number' || typeof report['skipped'] !== 'number') {
      throw new ProtocolError('PUT', response.url, 'the bulk report is not { applied, skipped, conflicts, notFound }');
    }
    return {
      applied: report['applied'],
      skipped: report['skipped'],
      conflicts: arrayOf(report['conflicts']),
      notFound: arrayOf(report['notFound']),
    };
  }

  /** PUT /{c}/$queries/{name}: creates the query resource, or replaces it when `etag` is given. */
  async defineQuery(
    collection: string,
    name: string,
    definition: QueryDefinition,
    options: { readonly etag?: string } = {},
  ): Promise<Item> {
    const precondition: Record<string, string> =
      options.etag === undefined ? { 'If-None-Match': '*' } : { 'If-Match': options.etag };
    const path = `${collectionPath(collection)}/$queries/${encodeURIComponent(name)}`;
    const response = await this.request('PUT', path, jsonBody(definition as JsonObject, precondition));
    return this.itemOf('PUT', response, [200, 201]);
  }

  /** Every item of a collection that matches, page after page by `@nextLink`. */
  list<T extends JsonObject = JsonObject>(collection: string, options: ListOptions = {}): AsyncIterable<T> {
    const query = new URLSearchParams();
    if (options.filter !== undefined) query.set('$filter', options.filter);
    if (options.select !== undefined) {
      query.set('$select', typeof options.select === 'string' ? options.select : options.select.join(','));
    }
    if (options.orderby !== undefined) query.set('$orderby', options.orderby);
    if (options.top !== undefined) query.set('$top', String(options.top));
    const search = query.toString();
    const queryString = search === '' ? '' : `?${search.replace(/\+/g, '%20')}`;
    return this.pages<T>(`${collectionPath(collection)}${queryString}`, options.pageSize);
  }

  /** The results of a query resource (GET /{c}/$queries/{name}), page after page. */
  query<T extends JsonObject = JsonObject>(
    collection: string,
    name: string,
    options: { readonly pageSize?: number } = {},
  ): AsyncIterable<T> {
    return this.pages<T>(`${collectionPath(collection)}/$queries/${encodeURIComponent(name)}`, options.pageSize);
  }

  /**
   * GET → mutate → PUT with If-Match; on 412 (someone else changed it) reads again and applies
   * `mutate` again to what is there now, up to `updateAttempts` times. The PUT is never resent after
   * an unknown outcome: when it gets no answer or a 5xx, the item is read again, and the change is
   * applied again only if the item is unchanged; otherwise the outcome is unknown and that is the error.
   */
  async update<T extends JsonObject = JsonObject>(
    collection: string,
    id: string,
    mutate: (data: T) => T | Promise<T>,
  ): Promise<Item<T>> {
    const limit = this.options.updateAttempts ?? 10;
    let current = await this.get<T>(collection, id);
    for (let attempt = 1; ; attempt++) {
      const next = await mutate(structuredClone(current.data));
      let response: ClientResponse | undefined;
      let failure: unknown;
      try {
        const request = { ...jsonBody(next, { 'If-Match': current.etag }), retry: false };
        response = await this.request('PUT', itemPath(collection, id), request);
      } catch (error) {
        failure = error;
      }
      if (response !== undefined && response.status === 200) return this.itemOf<T>('PUT', response, [200]);
      if (response !== undefined && response.status !== 412 && response.status < 500) throw errorOf('PUT', response);
      const unknownOutcome = response === undefined || response.status >= 500;
      if (attempt >= limit) throw failure ?? errorOf('PUT', response as ClientResponse);
      await this.pause(attempt);
      const before = current.etag;
      current = await this.get<T>(collection, id, { cacheControl: 'no-cache' });
      if (unknownOutcome && current.etag !== before) throw failure ?? errorOf('PUT', response as ClientResponse);
    }
  }

  private async *pages<T extends JsonObject>(first: string, pageSize: number | undefined): AsyncGenerator<T> {
    const headers: Record<string, string> = pageSize === undefined ? {} : { Prefer: `maxpagesize=${pageSize}` };
    let next: string | undefined = first;
    while (next !== undefined) {
      const response = await this.request('GET', next, { headers });
      if (response.status !== 200) throw errorOf('GET', response);
      const body = response.json();
      if (Array.isArray(body)) {
        const what = 'a bare array where a collection envelope { "value": [...] } belongs';
        throw new ProtocolError('GET', response.url, what);
      }
      if (!isObject(body) || !Array.isArray(body['value'])) {
        throw new ProtocolError('GET', response.url, 'the answer is not a collection envelope { "value": [...] }');
      }
      for (const item of body['value']) yield item as T;
      const link = body['@nextLink'];
      if (link !== undefined && typeof link !== 'string') {
        throw new ProtocolError('GET', response.url, '"@nextLink" is not a string');
      }
      next = link === undefined ? undefined : new URL(link, response.url).href;
    }
  }

  private itemOf<T extends JsonObject>(method: string, response: ClientResponse, expected: readonly number[]): Item<T> {
    if (!expected.includes(response.status)) throw errorOf(method, response);
    const etag = response.headers.get('etag');
    if (etag === undefined) throw new ProtocolError(method, response.url, `a ${response.status} without an ETag`);
    const data = response.json();
    if (!isObject(data)) throw new ProtocolError(method, response.url, 'the representation is not a JSON object');
    const location = response.headers.get('location') ?? response.headers.get('content-location');
    return { data: data as T, etag, url: location === undefined ? response.url : new URL(location, response.url).href };
  }

  /** Sends, and sends again while the answer allows (see the header), waiting on the client's clock. */
  private async send(
    method: string,
    url: string,
    headers: Map<string, string>,
    body: string | Uint8Array | undefined,
    retryable: boolean,
  ): Promise<Answer> {
    for (let attempt = 1; ; attempt++) {
      let answer: Omit<Answer, 'attempts'>;
      try {
        answer = await this.once(method, url, headers, body);
      } catch (error) {
        if (!retryable || !mayRetry(this.backoff, attempt)) throw new NetworkError(method, url, attempt, error);
        await this.pause(attempt);
        continue;
      }
      if (answer.status < 500 || !retryable || !mayRetry(this.backoff, attempt)) {
        return { ...answer, attempts: attempt };
      }
      const asked = retryAfterMs(answer.headers.get('retry-after'), this.clock.now());
      if (asked !== undefined && asked > (this.options.maxRetryAfterMs ?? 60_000)) {
        return { ...answer, attempts: attempt };
      }
      await (asked === undefined ? this.pause(attempt) : this.wait(asked));
    }
  }

  private async once(
    method: string,
    url: string,
    headers: ReadonlyMap<string, string>,
    body: string | Uint8Array | undefined,
  ): Promise<Omit<Answer, 'attempts'>> {
    const controller = new AbortController();
    const timeoutMs = this.options.timeoutMs ?? 30_000;
    const timer = this.clock.setTimer(timeoutMs, () => controller.abort(new Error(`no answer within ${timeoutMs} ms`)));
    try {
      const response = await this.fetch(url, {
        method,
        headers: Object.fromEntries(headers),
        ...(body === undefined ? {} : { body }),
        signal: controller.signal,
      });
      const bytes = new Uint8Array(await response.arrayBuffer());
      const fields = new Map<string, string>();
      response.headers.forEach((value, name) => fields.set(name.toLowerCase(), value));
      return { status: response.status, headers: fields, body: bytes };
    } finally {
      timer.cancel();
    }
  }

  /** The backoff after `attempt` attempts: n counts the retries made, so the first waits at most baseMs. */
  private pause(attempt: number): Promise<void> {
    return this.wait(retryDelay(this.backoff, attempt - 1, this.random));
  }

  private wait(ms: number): Promise<void> {
    return new Promise((resolve) => this.clock.setTimer(ms, resolve, { keepAlive: true }));
  }

  private headersFor(options: RequestOptions): Map<string, string> {
    const headers = new Map(this.defaultHeaders);
    for (const [name, value] of Object.entries(options.headers ?? {})) headers.set(name.toLowerCase(), value);
    if (options.cacheControl !== undefined) headers.set('cache-control', options.cacheControl);
    if (options.idempotencyKey !== undefined) {
      const key = options.idempotencyKey;
      headers.set('idempotency-key', key === true ? this.random.bytes(18).toString('base64url') : key);
    }
    return headers;
  }

  /** The absolute URL of `path`; the client only sends to its base URL's origin. */
  private resolve(path: string, method: string): string {
    const url = /^https?:\/\//i.test(path)
      ? new URL(path)
      : new URL(`${this.baseUrl}${path.startsWith('/') ? '' : '/'}${path}`);
    if (url.origin !== this.origin) {
      throw new ProtocolError(method, url.href, `not sent: ${url.origin} is not the client's origin ${this.origin}`);
    }
    return url.href;
  }

  /**
   * After a successful unsafe request: forget the target and what Location and Content-Location name
   * (RFC 9111 §4.4).
   */
  private invalidate(url: string, headers: ReadonlyMap<string, string>): void {
    if (this.cache === undefined) return;
    this.cache.invalidate(url);
    for (const name of ['location', 'content-location']) {
      const value = headers.get(name);
      if (value === undefined) continue;
      const target = new URL(value, url);
      if (target.origin === this.origin) this.cache.invalidate(target.href);
    }
  }
}

function answerOf(response: StoredResponse, url: string, cache: CacheStatus, attempts: number): ClientResponse {
  const body = response.body;
  return {
    status: response.status,
    url,
    headers: response.headers,
    body,
    cache,
    attempts,
    text: () => Buffer.from(body).toString('utf8'),
    json: () => {
      try {
        return JSON.parse(Buffer.from(body).toString('utf8')) as unknown;
      } catch {
        return undefined;
      }
    },
  };
}

function errorOf(method: string, response: ClientResponse): ResourceError {
  const contentType = response.headers.get('content-type') ?? null;
  const problem = problemOf(response.status, STATUS_CODES[response.status] ?? '', contentType, response.text());
  return new ResourceError(method, response.url, problem);
}

function jsonBody(data: JsonObject, headers: Record<string, string>): RequestOptions {
  return { headers: { ...headers, 'Content-Type': JSON_TYPE }, body: JSON.stringify(data) };
}

function collectionPath(collection: string): string {
  return `/${encodeURIComponent(collection)}`;
}

function itemPath(collection: string, id: string): string {
  return `/${encodeURIComponent(collection)}/${encodeURIComponent(id)}`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function arrayOf(value: unknown): JsonObject[] {
  return Array.isArray(value) ? (value.filter(isObject) as JsonObject[]) : [];
}

