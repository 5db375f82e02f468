// Configuration: CONVENTIONS.md#configuration-file (the same object is `start()`'s options). Every key is
// optional; what is given is validated and merged over DEFAULT_CONFIG; an unknown key or a wrong
// type is refused naming the dotted key path, so `resapi serve` can refuse to start naming it.
// Bounds chosen here (the conventions fix only the defaults), and why:
// - tombstoneDays: a finite number 0–36500; 0 means no undo window, fractions allow short windows.
// - maxBodyBytes: an integer 1–1073741824 (1 GiB); the cap bounds the memory a request may take.
// - pageSize.max: an integer 1–1000 (CONVENTIONS.md#page-size: 1 ≤ N ≤ 1000); pageSize.default: an integer
//   1–1000 and at most pageSize.max; when only max is given and it is below the default, the default
//   becomes max (so `{ "pageSize": { "max": 20 } }` works).
// - collections: names match ^[A-Za-z][A-Za-z0-9_-]{0,63}$ (CONVENTIONS.md#names). cacheControl is sent as a
//   header (RFC 9110 §5.5): 1–1024 visible ASCII characters and inner spaces, so no CR, LF or other
//   control character can split the response. schema field names are ASCII OData identifiers
//   (^[A-Za-z_][A-Za-z0-9_]{0,127}$, the ASCII subset of the CSDL SimpleIdentifier) that $filter and
//   $select can address; types are one of the five FieldType names; "id" may be declared only as
//   "string", because the stored id is always the path id (CONVENTIONS.md#items).
// - webhooks.path: "/" and one or more non-empty RFC 3986 path segments (pchar), no query, fragment
//   or trailing "/". webhooks.toleranceS: an integer 1–86400. webhooks.dedupDays: a finite number
//   above 0 and at most 36500; 0 would turn off the only replay defence that holds
//   (CONVENTIONS.md#deduplication).
// - workers: integers 1–256. retry.attempts: an integer 1–1000. retry.factor: a finite number 1–100.
//   retry.baseMs: an integer 0–2147483647 (0 lets tests run a whole schedule at once); retry.capMs:
//   an integer from baseMs to 2147483647, Node's timer ceiling (a longer delay fires at once).
//   outbox.inFlight (deliveries in flight to one subscription, CONVENTIONS.md#deliveries): an integer
//   1–64, default 16; outbox.workers × outbox.inFlight requests may be in flight in all, at most 16384.
//   outbox.timeoutMs: an integer 1–2147483647. webhooks.handlerTimeoutMs (an addition to
//   CONVENTIONS.md#configuration-file: a handler that hangs must be timed out and retried, and the
//   conventions name no value): an integer 1–2147483647, default 30000.
// - collections.<name>.summary: 1–64 distinct field paths written as in $select (`name`, `price`,
//   `dims/width`), each segment a field name; with a schema, each path's first segment is declared.
// - cors.origins: 1–64 entries, each "*" or a serialized origin (RFC 6454 §6.2) as browsers send it in
//   Origin: lower-case `http` or `https`, "://", host, optional port, nothing after. Absent means the
//   default of CONVENTIONS.md#cors, which depends on whether API keys are on (lib/http/cors.ts).
// - allowedHosts: 1–64 host names (RFC 1123 labels, or an IPv4 address, or an IPv6 address in brackets),
//   compared case-insensitively with a request's Host (CONVENTIONS.md#host-check).
// - limits (CONVENTIONS.md#limits): maxPropertyNames.collection an integer 1–1000000,
//   maxPropertyNames.document 1–100000, maxSubscriptions 1–100000, maxQueuedResponseBytes 1 MiB–1 TiB,
//   responseStallMs 1–2147483647, pageBytes 1 KiB–1 GiB, expensiveFilters 1–256.
// - outbox.refusePrivateAddresses: true or false; outbox.errorDetail: "full" or "class".
//   outbox.disableAfterS: an integer 60–31536000 (a year), default 432000 (CONVENTIONS.md#auto-disable).
// - webhooks.sources (CONVENTIONS.md#receiving-sources): 1–16 entries `{ path, scheme, secretsEnv }`;
//   path "/webhooks" or "/webhooks/<name>" (name as a collection name, but not "webhooks", the default
//   source's name in /$inbox, CONVENTIONS.md#receiving-sources), each path once; scheme one of
//   SCHEMES; secretsEnv the name of an environment variable (^[A-Za-z_][A-Za-z0-9_]{0,127}$), never a
//   secret. Given together with webhooks.path it is refused: two places would say where the receiver is.
// - webhooks.forward (CONVENTIONS.md#forwarding): an absolute http or https URL of at most 2048
//   characters, without credentials or fragment.
// "__proto__" (like any name not listed) is reported as unknown, never merged: results are fresh
// objects built from the known keys only, frozen like DEFAULT_CONFIG.

import { isSerializedOrigin } from './http/cors.js';
import { INBOX_BACKOFF, OUTBOX_BACKOFF, type RetrySchedule } from './retry.js';

const MAX_TIMER_MS = 2_147_483_647;
const MAX_DAYS = 36_500;
const MAX_BODY_BYTES = 1_073_741_824;
const MAX_PAGE_SIZE = 1000;
const MAX_WORKERS = 256;
const MAX_IN_FLIGHT = 64;
const MAX_ATTEMPTS = 1000;
const MAX_FACTOR = 100;
const MAX_TOLERANCE_S = 86_400;
const MAX_CACHE_CONTROL_LENGTH = 1024;
const MAX_QUOTED_KEY_LENGTH = 40;
const COLLECTION_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;
const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
const WEBHOOK_PATH = /^(?:\/(?:[A-Za-z0-9._~!$&'()*+,;=:@-]|%[0-9A-Fa-f]{2})+)+$/;
// VCHAR first and last, VCHAR or SP between (RFC 9110 §5.5 field-value without HTAB or obs-text).
const HEADER_VALUE = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;
// A key segment shown bare in a dotted path; anything else is shown JSON-quoted so it stays readable.
const PLAIN_KEY_SEGMENT = /^[A-Za-z0-9_$-]{1,128}$/;
const FIELD_TYPES: readonly FieldType[] = ['string', 'number', 'boolean', 'object', 'array'];
const MAX_SUMMARY_FIELDS = 64;
const MAX_CORS_ORIGINS = 64;
const MAX_ALLOWED_HOSTS = 64;
// A DNS name of RFC 1123 labels, an IPv4 address, or an IPv6 address in brackets, as Host writes it.
const DNS_LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const HOST_NAME = new RegExp(`^(?:${DNS_LABEL}(?:\\.${DNS_LABEL})*|\\[[0-9A-Fa-f:.]{2,45}\\])$`);
const MAX_HOST_NAME = 253;
const KIB = 1024;
const MIB = 1024 * KIB;
const GIB = 1024 * MIB;
const TIB = 1024 * GIB;
const ERROR_DETAILS: readonly ErrorDetail[] = ['full', 'class'];
const MAX_DISABLE_AFTER_S = 31_536_000;
const MAX_SOURCES = 16;
const MAX_URL = 2048;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
const SOURCE_PATH = /^\/webhooks(?:\/[A-Za-z][A-Za-z0-9_-]{0,63})?$/;
const SOURCE_KEYS = ['path', 'scheme', 'secretsEnv'];
/** The environment variable of the default source's secrets (CONVENTIONS.md#secrets). */
export const DEFAULT_SECRETS_ENV = 'RESAPI_WEBHOOK_SECRETS';

export type FieldType = 'string' | 'number' | 'boolean' | 'object' | 'array';
export interface CollectionConfig {
  readonly cacheControl?: string;
  readonly schema?: Readonly<Record<string, FieldType>>;
  /** The fields a page lists when the request has no $select (paths as in $select, `a/b`). */
  readonly summary?: readonly string[];
}
export interface CorsConfig { readonly origins?: readonly string[] }
export interface PageSizeConfig { readonly default: number; readonly max: number }
/** How a receiving path authenticates what it receives (CONVENTIONS.md#receiving-sources). */
export type WebhookScheme = 'resapi' | 'standard' | 'github' | 'stripe';
export const WEBHOOK_SCHEMES: readonly WebhookScheme[] = ['resapi', 'standard', 'github', 'stripe'];
/** One receiving endpoint: its path, its scheme, and the environment variable holding its secrets. */
export interface WebhookSourceConfig {
  readonly path: string;
  readonly scheme: WebhookScheme;
  readonly secretsEnv: string;
}
export interface WebhooksConfig {
  readonly path: string; readonly toleranceS: number; readonly requireTimestamp: boolean;
  readonly dedupDays: number; readonly workers: number; readonly handlerTimeoutMs: number;
  readonly retry: RetrySchedule;
  /** Absent: one source, `webhooks.path` with the resapi scheme (see `webhookSources`). */
  readonly sources?: readonly WebhookSourceConfig[];
  /** Where every accepted event is forwarded (CONVENTIONS.md#forwarding). */
  readonly forward?: string;
}
/** What a delivery's `lastError` says: everything, or only its class (timeout, refused, unreachable, HTTP status). */
export type ErrorDetail = 'full' | 'class';
export interface OutboxConfig {
  /** Receivers served at once. */
  readonly workers: number;
  /** Deliveries in flight to one subscription at once, at most (1: one at a time, in order). */
  readonly inFlight: number;
  readonly timeoutMs: number;
  readonly retry: RetrySchedule;
  readonly refusePrivateAddresses: boolean;
  readonly errorDetail: ErrorDetail;
  /** A subscription whose deliveries all failed this long (and at least 10 times) is disabled. */
  readonly disableAfterS: number;
}
export interface PropertyNameLimits { readonly collection: number; readonly document: number }
/** The bounds that keep one client from costing everyone else (CONVENTIONS.md#limits). */
export interface LimitsConfig {
  readonly maxPropertyNames: PropertyNameLimits;
  readonly maxSubscriptions: number;
  readonly maxQueuedResponseBytes: number;
  readonly responseStallMs: number;
  readonly pageBytes: number;
  readonly expensiveFilters: number;
}
export interface Config {
  readonly allowUnconditionalPut: boolean;
  readonly tombstoneDays: number;
  readonly maxBodyBytes: number;
  readonly pageSize: PageSizeConfig;
  readonly collections: Readonly<Record<string, CollectionConfig>>;
  readonly webhooks: WebhooksConfig;
  readonly outbox: OutboxConfig;
  readonly cors: CorsConfig;
  /** Host names a request may name besides loopback, the listening address and the base URL's. */
  readonly allowedHosts: readonly string[];
  readonly limits: LimitsConfig;
}
export type ConfigResult =
  | { readonly ok: true; readonly config: Config }
  | {
      readonly ok: false;
      /** dotted path, e.g. "webhooks.retry.factor" */
      readonly key: string;
      readonly message: string;
    };

/** The defaults of CONVENTIONS.md#configuration-file, deeply frozen. */
export const DEFAULT_CONFIG: Config = deepFreeze({
  allowUnconditionalPut: false,
  tombstoneDays: 30,
  maxBodyBytes: 1_048_576,
  pageSize: { default: 50, max: 1000 },
  collections: {},
  webhooks: {
    path: '/webhooks', toleranceS: 300, requireTimestamp: false, dedupDays: 30, workers: 4, handlerTimeoutMs: 30_000,
    retry: INBOX_BACKOFF.schedule,
  },
  outbox: {
    workers: 4, inFlight: 16, timeoutMs: 5000, retry: OUTBOX_BACKOFF.schedule, refusePrivateAddresses: false,
    errorDetail: 'full', disableAfterS: 432_000,
  },
  cors: {},
  allowedHosts: [],
  limits: {
    maxPropertyNames: { collection: 10_000, document: 1000 },
    maxSubscriptions: 100,
    maxQueuedResponseBytes: 256 * MIB,
    responseStallMs: 30_000,
    pageBytes: 4 * MIB,
    expensiveFilters: 2,
  },
});

type Problem = { readonly ok: false; readonly key: string; readonly message: string };
type Checked<T> = { readonly ok: true; readonly value: T } | Problem;
/** Validates `value` found at dotted path `key`; `fallback` is what an absent (undefined) value means. */
type Reader<T> = (value: unknown, key: string, fallback: T) => Checked<T>;
type Readers<T> = { readonly [K in keyof T]-?: Reader<T[K]> };
type Mutable<T> = { -readonly [K in keyof T]: T[K] };
/**
 * A cross-field rule run on the merged object before it is frozen; it may adjust a value the input
 * did not set (`source` tells which keys the input itself set).
 */
type ObjectRule<T> = (
  merged: Mutable<T>,
  source: Readonly<Record<string, unknown>>,
  key: string,
) => Problem | undefined;

const RETRY = fields<RetrySchedule>(
  {
    baseMs: integer(0, MAX_TIMER_MS),
    factor: decimal(1, MAX_FACTOR),
    capMs: integer(0, MAX_TIMER_MS),
    attempts: integer(1, MAX_ATTEMPTS),
  },
  (retry, source, key) => {
    if (retry.capMs >= retry.baseMs) return undefined;
    return Object.hasOwn(source, 'capMs')
      ? fail(
          joinKey(key, 'capMs'),
          `must not be less than ${joinKey(key, 'baseMs')} (${retry.baseMs}), got ${retry.capMs}`,
        )
      : fail(joinKey(key, 'baseMs'), `must not exceed ${joinKey(key, 'capMs')} (${retry.capMs}), got ${retry.baseMs}`);
  },
);

const SCHEMA = record(fieldName, fieldType);

const COLLECTION = fields<CollectionConfig>(
  {
    cacheControl: optional(cacheControl),
    schema: optional((value, key) => SCHEMA(value, key, {})),
    summary: optional(list(MAX_SUMMARY_FIELDS, fieldPath)),
  },
  (collection, _source, key) => {
    if (collection.schema?.id !== undefined && collection.schema.id !== 'string') {
      const message = 'must be "string" when declared: the stored id is always the path id';
      return fail(joinKey(joinKey(key, 'schema'), 'id'), message);
    }
    const { schema, summary } = collection;
    const undeclared =
      schema === undefined ? undefined : summary?.find((path) => !Object.hasOwn(schema, path.split('/')[0] as string));
    if (undeclared === undefined) return undefined;
    const message = `names ${JSON.stringify(undeclared)}, which the collection's schema does not declare`;
    return fail(joinKey(key, 'summary'), message);
  },
);

const CONFIG = fields<Config>({
  allowUnconditionalPut: boolean,
  tombstoneDays: decimal(0, MAX_DAYS),
  maxBodyBytes: integer(1, MAX_BODY_BYTES),
  pageSize: fields<PageSizeConfig>(
    { default: integer(1, MAX_PAGE_SIZE), max: integer(1, MAX_PAGE_SIZE) },
    (pageSize, source, key) => {
      if (pageSize.default <= pageSize.max) return undefined;
      // Only a max was given: the default follows it down rather than refusing a plain `{ max: 20 }`.
      if (!Object.hasOwn(source, 'default')) {
        pageSize.default = pageSize.max;
        return undefined;
      }
      const message = `must not exceed ${joinKey(key, 'max')} (${pageSize.max}), got ${pageSize.default}`;
      return fail(joinKey(key, 'default'), message);
    },
  ),
  collections: record(collectionName, (value, key) => COLLECTION(value, key, {})),
  webhooks: fields<WebhooksConfig>(
    {
      path: webhookPath,
      toleranceS: integer(1, MAX_TOLERANCE_S),
      requireTimestamp: boolean,
      dedupDays: decimal(0, MAX_DAYS, true),
      workers: integer(1, MAX_WORKERS),
      handlerTimeoutMs: integer(1, MAX_TIMER_MS),
      retry: RETRY,
      sources: optional(webhookSourceList),
      forward: optional(forwardUrl),
    },
    (_webhooks, source, key) => {
      if (!Object.hasOwn(source, 'sources') || !Object.hasOwn(source, 'path')) return undefined;
      const message = `must not be given with ${joinKey(key, 'sources')}, whose paths say where the receiver listens`;
      return fail(joinKey(key, 'path'), message);
    },
  ),
  outbox: fields<OutboxConfig>({
    workers: integer(1, MAX_WORKERS),
    inFlight: integer(1, MAX_IN_FLIGHT),
    timeoutMs: integer(1, MAX_TIMER_MS),
    retry: RETRY,
    refusePrivateAddresses: boolean,
    errorDetail: oneOf(ERROR_DETAILS),
    disableAfterS: integer(60, MAX_DISABLE_AFTER_S),
  }),
  cors: fields<CorsConfig>({ origins: optional(list(MAX_CORS_ORIGINS, corsOrigin)) }),
  allowedHosts: (value, key, fallback) =>
    value === undefined ? { ok: true, value: fallback } : list(MAX_ALLOWED_HOSTS, hostName)(value, key),
  limits: fields<LimitsConfig>({
    maxPropertyNames: fields<PropertyNameLimits>({
      collection: integer(1, 1_000_000),
      document: integer(1, 100_000),
    }),
    maxSubscriptions: integer(1, 100_000),
    maxQueuedResponseBytes: integer(MIB, TIB),
    responseStallMs: integer(1, MAX_TIMER_MS),
    pageBytes: integer(KIB, GIB),
    expensiveFilters: integer(1, MAX_WORKERS),
  }),
});

/** The receiving endpoints: `webhooks.sources`, or the one default source at `webhooks.path`. */
export function webhookSources(config: Config): readonly WebhookSourceConfig[] {
  const { sources, path } = config.webhooks;
  return sources ?? [{ path, scheme: 'resapi', secretsEnv: DEFAULT_SECRETS_ENV }];
}

/** A collection's own configuration; a name such as "constructor" never reaches Object.prototype. */
export function collectionConfig(config: Config, name: string): CollectionConfig | undefined {
  return Object.hasOwn(config.collections, name) ? config.collections[name] : undefined;
}

/**
 * Validates a parsed JSON value (every key optional) and merges it over DEFAULT_CONFIG. An unknown
 * key or a wrong type → { ok: false } naming the key. `undefined` (no options) yields the defaults.
 */
export function parseConfig(input: unknown): ConfigResult {
  if (input !== undefined && asPlainObject(input) === undefined) {
    return fail('', `the configuration must be a JSON object, got ${describe(input)}`);
  }
  const checked = CONFIG(input, '', DEFAULT_CONFIG);
  return checked.ok ? { ok: true, config: checked.value } : checked;
}

// An object with a fixed set of keys: unknown keys are refused, absent ones come from the fallback.
function fields<T extends object>(readers: Readers<T>, rule?: ObjectRule<T>): Reader<T> {
  const known = Object.keys(readers) as (keyof T & string)[];
  return (value, key, fallback) => {
    const source = value === undefined ? {} : asPlainObject(value);
    if (source === undefined) return fail(key, `must be an object, got ${describe(value)}`);
    for (const name of Object.keys(source)) {
      if (!Object.hasOwn(readers, name)) {
        return fail(joinKey(key, name), `is not a known key (known keys: ${known.join(', ')})`);
      }
    }
    const merged: Mutable<T> = { ...fallback };
    for (const name of known) {
      // Only own properties count: an absent key must never pick up something from Object.prototype.
      const given = Object.hasOwn(source, name) ? source[name] : undefined;
      const checked = readers[name](given, joinKey(key, name), fallback[name]);
      if (!checked.ok) return checked;
      if (checked.value !== undefined) merged[name] = checked.value;
    }
    const problem = rule?.(merged, source, key);
    return problem ?? { ok: true, value: Object.freeze(merged) };
  };
}

// An object whose keys the user chooses (collection names, schema field names). An absent record is
// the fallback, read again so that the result is a fresh object all the same.
function record<T>(
  nameProblem: (name: string) => string | undefined,
  entry: (value: unknown, key: string) => Checked<T>,
): Reader<Readonly<Record<string, T>>> {
  return (value, key, fallback) => {
    const source = value === undefined ? fallback : asPlainObject(value);
    if (source === undefined) return fail(key, `must be an object, got ${describe(value)}`);
    const entries: [string, T][] = [];
    for (const name of Object.keys(source)) {
      const invalid = nameProblem(name);
      if (invalid !== undefined) return fail(joinKey(key, name), invalid);
      const checked = entry(source[name], joinKey(key, name));
      if (!checked.ok) return checked;
      entries.push([name, checked.value]);
    }
    // Object.fromEntries defines own data properties, so even an odd name could not reach a prototype.
    return { ok: true, value: Object.freeze(Object.fromEntries(entries)) };
  };
}

function optional<T>(reader: (value: unknown, key: string) => Checked<T>): Reader<T | undefined> {
  return (value, key, fallback) => (value === undefined ? { ok: true, value: fallback } : reader(value, key));
}

// A non-empty JSON array of distinct strings, each checked by `item`.
function list(
  max: number,
  item: (value: string) => string | undefined,
): (value: unknown, key: string) => Checked<readonly string[]> {
  return (value, key) => {
    if (!Array.isArray(value) || value.length === 0 || value.length > max) {
      return fail(key, `must be an array of 1-${max} strings, got ${describe(value)}`);
    }
    for (const [index, entry] of value.entries()) {
      const invalid = typeof entry === 'string' ? item(entry) : `must be a string, got ${describe(entry)}`;
      if (invalid !== undefined) return fail(`${key}[${index}]`, invalid);
      if (value.indexOf(entry) !== index) return fail(`${key}[${index}]`, `repeats ${describe(entry)}`);
    }
    return { ok: true, value: Object.freeze([...(value as string[])]) };
  };
}

function hostName(host: string): string | undefined {
  if (host.length <= MAX_HOST_NAME && HOST_NAME.test(host)) return undefined;
  return `must be a host name such as "myapp.test" (no scheme, port or path), got ${describe(host)}`;
}

function oneOf<T extends string>(choices: readonly T[]): Reader<T> {
  return (value, key, fallback) => {
    if (value === undefined) return { ok: true, value: fallback };
    const choice = choices.find((candidate) => candidate === value);
    if (choice !== undefined) return { ok: true, value: choice };
    return fail(key, `must be one of ${choices.map((c) => JSON.stringify(c)).join(', ')}, got ${describe(value)}`);
  };
}

function fieldPath(path: string): string | undefined {
  if (path.split('/').every((segment) => fieldName(segment) === undefined)) return undefined;
  return `must be a field path such as "price" or "dims/width", got ${describe(path)}`;
}

function corsOrigin(origin: string): string | undefined {
  if (origin === '*' || isSerializedOrigin(origin)) return undefined;
  return `must be "*" or an origin as browsers send it (lower-case "http://host:port" or "https://host", no path), got ${describe(origin)}`;
}

function boolean(value: unknown, key: string, fallback: boolean): Checked<boolean> {
  if (value === undefined) return { ok: true, value: fallback };
  return typeof value === 'boolean' ? { ok: true, value } : fail(key, `must be true or false, got ${describe(value)}`);
}

function integer(min: number, max: number): Reader<number> {
  return (value, key, fallback) => {
    if (value === undefined) return { ok: true, value: fallback };
    if (typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max) {
      return { ok: true, value };
    }
    return fail(key, `must be an integer from ${min} to ${max}, got ${describe(value)}`);
  };
}

function decimal(min: number, max: number, minExclusive = false): Reader<number> {
  return (value, key, fallback) => {
    if (value === undefined) return { ok: true, value: fallback };
    const aboveMin = typeof value === 'number' && (minExclusive ? value > min : value >= min);
    if (aboveMin && value <= max) return { ok: true, value };
    const range = minExclusive ? `above ${min} and at most ${max}` : `from ${min} to ${max}`;
    return fail(key, `must be a finite number ${range}, got ${describe(value)}`);
  };
}

function cacheControl(value: unknown, key: string): Checked<string> {
  const valid = typeof value === 'string' && value.length <= MAX_CACHE_CONTROL_LENGTH && HEADER_VALUE.test(value);
  return valid ? { ok: true, value } : fail(key, `must be a header value of 1-${MAX_CACHE_CONTROL_LENGTH} visible `
    + `ASCII characters (inner spaces allowed, no control characters), got ${describe(value)}`);
}

function webhookPath(value: unknown, key: string, fallback: string): Checked<string> {
  if (value === undefined) return { ok: true, value: fallback };
  if (typeof value === 'string' && WEBHOOK_PATH.test(value)) return { ok: true, value };
  return fail(key, `must be a path starting with "/" made of non-empty URL path segments, got ${describe(value)}`);
}

function webhookSourceList(value: unknown, key: string): Checked<readonly WebhookSourceConfig[]> {
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_SOURCES) {
    return fail(key, `must be an array of 1-${MAX_SOURCES} sources, got ${describe(value)}`);
  }
  const sources: WebhookSourceConfig[] = [];
  for (const [index, entry] of value.entries()) {
    const at = `${key}[${index}]`;
    const object = asPlainObject(entry);
    if (object === undefined) return fail(at, `must be an object { path, scheme, secretsEnv }, got ${describe(entry)}`);
    const unknown = Object.keys(object).find((name) => !SOURCE_KEYS.includes(name));
    if (unknown !== undefined) {
      return fail(joinKey(at, unknown), `is not a known key (known keys: ${SOURCE_KEYS.join(', ')})`);
    }
    const { path, scheme, secretsEnv } = object;
    if (typeof path !== 'string' || !SOURCE_PATH.test(path)) {
      const message = `must be "/webhooks" or "/webhooks/<name>" (name as a collection name), got ${describe(path)}`;
      return fail(joinKey(at, 'path'), message);
    }
    if (sources.some((other) => other.path === path)) return fail(joinKey(at, 'path'), `repeats ${describe(path)}`);
    if (path === '/webhooks/webhooks') {
      const message = 'must not name a source "webhooks": that is the name of the source at /webhooks';
      return fail(joinKey(at, 'path'), message);
    }
    const chosen = WEBHOOK_SCHEMES.find((candidate) => candidate === scheme);
    if (chosen === undefined) {
      return fail(joinKey(at, 'scheme'), `must be one of ${WEBHOOK_SCHEMES.join(', ')}, got ${describe(scheme)}`);
    }
    if (typeof secretsEnv !== 'string' || !ENV_NAME.test(secretsEnv)) {
      const what = 'must name the environment variable that holds the secrets (such as "STRIPE_WEBHOOK_SECRETS")';
      const message = `${what}, got ${describe(secretsEnv)}`;
      return fail(joinKey(at, 'secretsEnv'), message);
    }
    sources.push(Object.freeze({ path, scheme: chosen, secretsEnv }));
  }
  return { ok: true, value: Object.freeze(sources) };
}

function forwardUrl(value: unknown, key: string): Checked<string> {
  const problem = `must be an absolute http or https URL without credentials or fragment, got ${describe(value)}`;
  if (typeof value !== 'string' || value.length > MAX_URL || !URL.canParse(value)) return fail(key, problem);
  const url = new URL(value);
  const plain = (url.protocol === 'http:' || url.protocol === 'https:') && url.username === '' && url.password === '';
  return plain && url.hash === '' ? { ok: true, value } : fail(key, problem);
}

function fieldType(value: unknown, key: string): Checked<FieldType> {
  const type = FIELD_TYPES.find((candidate) => candidate === value);
  if (type !== undefined) return { ok: true, value: type };
  return fail(key, `must be one of ${FIELD_TYPES.join(', ')}, got ${describe(value)}`);
}

function collectionName(name: string): string | undefined {
  return COLLECTION_NAME.test(name) ? undefined : 'is not a valid collection name (^[A-Za-z][A-Za-z0-9_-]{0,63}$)';
}

function fieldName(name: string): string | undefined {
  if (name === '__proto__') return 'is not a known key: "__proto__" cannot name a field';
  return FIELD_NAME.test(name) ? undefined : 'is not a valid field name (^[A-Za-z_][A-Za-z0-9_]{0,127}$)';
}

function asPlainObject(value: unknown): Readonly<Record<string, unknown>> | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const prototype: unknown = Object.getPrototypeOf(value);
  // A class instance (Date, Map, a prototype-injected literal) is not configuration.
  if (prototype !== Object.prototype && prototype !== null) return undefined;
  return value as Readonly<Record<string, unknown>>;
}

function joinKey(path: string, name: string): string {
  const segment = PLAIN_KEY_SEGMENT.test(name) ? name : JSON.stringify(truncate(name));
  return path === '' ? segment : `${path}.${segment}`;
}

// The message names the key too, so a caller can print it on its own.
function fail(key: string, text: string): Problem {
  return { ok: false, key, message: key === '' ? text : `${key} ${text}` };
}

// A short, log-safe picture of a wrong value (JSON.stringify escapes control characters).
function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(truncate(value));
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a value of type ${typeof value}`;
}

function truncate(text: string): string {
  return text.length > MAX_QUOTED_KEY_LENGTH ? `${text.slice(0, MAX_QUOTED_KEY_LENGTH)}…` : text;
}

function deepFreeze<T extends object>(value: T): T {
  for (const member of Object.values(value)) if (typeof member === 'object' && member !== null) deepFreeze(member);
  return Object.freeze(value);
}
