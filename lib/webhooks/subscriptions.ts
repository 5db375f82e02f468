// Subscriptions of the webhook sender (CONVENTIONS.md#subscriptions): `PUT /$subscriptions/{id}`
// with `{ "url", "events", "secret", "status"? }`. A subscription is two records written together:
// its public document in `$subscriptions` (url, events, status: what GET answers and what its ETag is
// of) and its secret in `$subscription-secrets`, which no response but `GET .../$secret` serializes
// (secrets.ts: generated when a create leaves it out, kept when a replace does, rotated with an overlap).
//
// Event kinds are `<collection>.<change>`, change one of created, replaced, deleted, restored. A
// subscription's patterns are exact kinds, `<collection>.*` (every change of a collection), or `*`;
// and `subscription.disabled`, the notice that another subscription was disabled, which only that
// exact pattern matches (CONVENTIONS.md#auto-disable), so a subscriber to `*` sees nothing new.
// A URL is absolute http or https, without credentials or a fragment; one that points at this server
// itself is refused, so no delivery can loop back into the changes that cause deliveries.
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import { isJsonObject, type JsonObject } from '../json.js';
import { isCollectionName } from '../names.js';
import { problem, type Problem } from '../protocol/problem.js';
import { canonicalAddress, isLoopbackAddress, isUnspecifiedAddress } from './addresses.js';

export const SUBSCRIPTION_SPACE = '$subscriptions';
export const SECRET_SPACE = '$subscription-secrets';
const CHANGES = ['created', 'replaced', 'deleted', 'restored'] as const;
export type Change = (typeof CHANGES)[number];
/** The kind of the notice that a subscription was disabled (CONVENTIONS.md#auto-disable). */
export const SUBSCRIPTION_DISABLED = 'subscription.disabled';

const DOT = 0x2e;
const STAR = 0x2a;
const MEMBERS = new Set(['id', 'url', 'events', 'secret', 'status', 'secretOverlapS', 'rateLimit']);
/** Members a PUT body may carry but never sets: what the server says about the subscription. */
const READ_ONLY = new Set(['disabledReason', 'disabledAt']);
const MAX_URL = 2048;
const MAX_PATTERNS = 100;
const MAX_SECRET = 1024;
/** How long a replaced secret keeps signing by default (CONVENTIONS.md#signing-secrets-and-rotation). */
export const DEFAULT_SECRET_OVERLAP_S = 86_400;
const MAX_SECRET_OVERLAP_S = 30 * 86_400;
/** Deliveries per second a subscription may ask for at most (CONVENTIONS.md#rate-limits-and-timeouts). */
const MAX_RATE_LIMIT = 10_000;

/** The part of a subscription the write path and the dispatcher read. */
export interface Subscription {
  readonly id: string;
  readonly url: string;
  readonly events: readonly string[];
  readonly active: boolean;
  /** Seconds a replaced secret keeps signing beside the new one. */
  readonly secretOverlapS: number;
  /** Deliveries per second at most; undefined: as fast as the workers go. */
  readonly rateLimit: number | undefined;
}

export type CheckedSubscription =
  | { readonly ok: true; readonly doc: JsonObject; readonly secret: string | undefined }
  | { readonly ok: false; readonly problem: Problem };

/**
 * A PUT body as the public document to store (id, url, events, status, ...) and the secret, if given
 * (a create without one gets a generated one: secrets.ts).
 */
export function checkSubscription(id: string, body: JsonObject): CheckedSubscription {
  const errors: { pointer: string; detail: string }[] = [];
  const refuse = (pointer: string, detail: string): void => void errors.push({ pointer, detail });
  for (const key of Object.keys(body)) {
    if (MEMBERS.has(key) || READ_ONLY.has(key)) continue;
    refuse(`/${key}`, 'not a member of a subscription (url, events, secret, status, secretOverlapS, rateLimit)');
  }
  const { url, events, secret, status, secretOverlapS, rateLimit } = body;
  if (Object.hasOwn(body, 'id') && body['id'] !== id) refuse('/id', `must be "${id}" (the id in the path) or left out`);
  const badUrl = typeof url === 'string' ? urlProblem(url) : 'must be an absolute http or https URL';
  if (badUrl !== undefined) refuse('/url', badUrl);
  const patterns = Array.isArray(events) && events.every((one) => typeof one === 'string' && isPattern(one));
  if (!patterns || events.length === 0 || events.length > MAX_PATTERNS) {
    const changes = '"<collection>.<created|replaced|deleted|restored>"';
    const kinds = `"*", "<collection>.*", ${changes} or "${SUBSCRIPTION_DISABLED}"`;
    refuse('/events', `must be 1-${MAX_PATTERNS} patterns: ${kinds}`);
  }
  if (secret !== undefined && (typeof secret !== 'string' || secret === '' || secret.length > MAX_SECRET)) {
    refuse('/secret', `must be a non-empty string of at most ${MAX_SECRET} characters`);
  }
  if (status !== undefined && status !== 'active' && status !== 'disabled') {
    refuse('/status', 'must be "active" or "disabled"');
  }
  const overlapOk = Number.isInteger(secretOverlapS) && (secretOverlapS as number) >= 0;
  if (secretOverlapS !== undefined && !(overlapOk && (secretOverlapS as number) <= MAX_SECRET_OVERLAP_S)) {
    refuse('/secretOverlapS', `must be an integer from 0 to ${MAX_SECRET_OVERLAP_S} (seconds)`);
  }
  const rateOk = typeof rateLimit === 'number' && rateLimit > 0 && rateLimit <= MAX_RATE_LIMIT;
  if (rateLimit !== undefined && !rateOk) {
    refuse('/rateLimit', `must be a number of deliveries per second above 0 and at most ${MAX_RATE_LIMIT}`);
  }
  if (errors.length > 0) {
    return { ok: false, problem: problem('invalid-body', 'The body is not a valid subscription.', { errors }) };
  }
  const chosen = (status as string | undefined) ?? 'active';
  const overlap = (secretOverlapS as number | undefined) ?? DEFAULT_SECRET_OVERLAP_S;
  const doc: JsonObject = {
    id, url: url as string, events: events as string[], status: chosen, secretOverlapS: overlap,
  };
  if (rateLimit !== undefined) doc['rateLimit'] = rateLimit as number;
  return { ok: true, doc, secret: secret as string | undefined };
}

/** A stored public document as a Subscription (undefined for a record of another shape). */
export function subscriptionOf(doc: JsonObject): Subscription | undefined {
  const { id, url, events, status, secretOverlapS, rateLimit } = doc;
  if (typeof id !== 'string' || typeof url !== 'string' || !Array.isArray(events)) return undefined;
  // Read on every write of an item: the stored array itself when it holds only texts (as every PUT stores it).
  const patterns = events.every(isText) ? (events as string[]) : events.filter(isText);
  // A subscription stored before these members existed has the defaults.
  const overlap = typeof secretOverlapS === 'number' ? secretOverlapS : DEFAULT_SECRET_OVERLAP_S;
  const rate = typeof rateLimit === 'number' ? rateLimit : undefined;
  return { id, url, events: patterns, active: status === 'active', secretOverlapS: overlap, rateLimit: rate };
}

/** Does the subscription want the notice that another one was disabled? Only by its exact name. */
export function wantsDisabledNotice(subscription: Subscription): boolean {
  return subscription.events.includes(SUBSCRIPTION_DISABLED);
}

/**
 * Does the subscription want events of `kind` (`<collection>.<change>`)? Read in place, without making
 * the kind's texts: it is asked for every subscription on every write of an item.
 */
export function wants(subscription: Subscription, collection: string, change: Change): boolean {
  const dot = collection.length;
  for (const pattern of subscription.events) {
    if (pattern === '*') return true;
    // `<collection>.*` or `<collection>.<change>`.
    if (!pattern.startsWith(collection) || pattern.charCodeAt(dot) !== DOT) continue;
    const tail = pattern.length - dot - 1;
    if (tail === 1 && pattern.charCodeAt(dot + 1) === STAR) return true;
    if (tail === change.length && pattern.endsWith(change)) return true;
  }
  return false;
}

/** Where this server listens, and the base of its links: what a subscription must not point at. */
export interface SelfAddress {
  readonly host: string;
  readonly port: number;
  readonly baseUrl: string;
}

/**
 * Does `url` reach this server? Its port is ours and its host resolves to an address that reaches
 * where we listen, or it starts with our base URL. Addresses are compared as the network reads them
 * (addresses.ts), not as the URL spells them: `127.1`, `[::ffff:127.0.0.1]` and `[::ffff:7f00:1]`
 * are all 127.0.0.1, and 0.0.0.0 and `::` reach this host whatever it listens on.
 */
export async function pointsAtSelf(url: string, self: SelfAddress): Promise<boolean> {
  const parsed = new URL(url);
  if (self.baseUrl !== '' && url.startsWith(self.baseUrl)) return true;
  const port = parsed.port === '' ? (parsed.protocol === 'https:' ? 443 : 80) : Number(parsed.port);
  if (port !== self.port) return false;
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  try {
    addresses = isIP(host) === 0 ? (await lookup(host, { all: true })).map((entry) => entry.address) : [host];
  } catch {
    // A host that does not resolve cannot be this server; deliveries to it will fail and be retried.
    return false;
  }
  return addresses.some((address) => reachesListener(address, self.host));
}

/**
 * Does a connection to `address` (on our port) reach a socket listening on `listening`? The
 * unspecified addresses always do; a socket on all addresses (0.0.0.0, `::`) takes loopback and
 * every address of every local interface; one on a loopback address takes all of loopback (more
 * than it strictly does, never less); any other, its own address.
 */
function reachesListener(address: string, listening: string): boolean {
  const target = canonicalAddress(address);
  if (target === undefined) return false;
  if (isUnspecifiedAddress(target)) return true;
  if (listening === '' || isUnspecifiedAddress(listening)) {
    if (isLoopbackAddress(target)) return true;
    return Object.values(networkInterfaces()).some((entries) =>
      (entries ?? []).some((entry) => canonicalAddress(entry.address) === target),
    );
  }
  if (isLoopbackAddress(listening)) return isLoopbackAddress(target);
  return canonicalAddress(listening) === target;
}

function urlProblem(text: string): string | undefined {
  if (text.length > MAX_URL) return `must be at most ${MAX_URL} characters`;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'must be an absolute http or https URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must use http or https';
  if (url.username !== '' || url.password !== '') {
    return 'must not carry credentials (the secret signs each delivery instead)';
  }
  if (url.hash !== '') return 'must not have a fragment';
  return undefined;
}

function isPattern(pattern: string): boolean {
  if (pattern === '*' || pattern === SUBSCRIPTION_DISABLED) return true;
  const dot = pattern.lastIndexOf('.');
  if (dot <= 0) return false;
  const collection = pattern.slice(0, dot);
  const change = pattern.slice(dot + 1);
  return isCollectionName(collection) && (change === '*' || (CHANGES as readonly string[]).includes(change));
}

/** A stored secret record's secret. */
export function secretOf(doc: JsonObject | undefined): string | undefined {
  return isJsonObject(doc) && typeof doc['secret'] === 'string' ? doc['secret'] : undefined;
}

function isText(value: unknown): value is string {
  return typeof value === 'string';
}
