// The opaque `$skiptoken` behind `@nextLink` (CONVENTIONS.md#skip-tokens): consumers follow
// `@nextLink` and never construct it, so the paging mechanism behind it may change. It carries the keyset
// position and, for a collection, the whole query; for a query resource, the version of the stored
// definition the walk started from (the definition stays in the store, so the token stays small). It
// is authenticated with HMAC-SHA256 under a key the server keeps, so a client cannot forge or edit a
// position, and a token from another collection, query resource or server is refused.
//
// Format: base64url(JSON payload) "." base64url(first 16 bytes of the HMAC). The payload is signed
// as sent, so verification needs no canonical re-encoding. The payload's `v` is the format: a token of
// an older format reads as not ours, and the client starts again from the first page.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { CollectionQuery } from './options.js';
import { isSortValue, MAX_SORT_TEXT, type SortValue } from './order.js';

/** Everything the next page needs. */
export interface PagePosition {
  /** The collection (`products`), or the query resource (`products/$queries/cheap`), the token pages through. */
  readonly scope: string;
  /** A collection walk's query. */
  readonly query?: CollectionQuery;
  /** A query resource walk's definition version: the walk ends with a 400 if the definition changes. */
  readonly definition?: number;
  readonly pageSize: number;
  /** Sort key (order-by values, then id) of the last item already returned. */
  readonly after: readonly SortValue[];
  /** How many items earlier pages returned (for $top across pages). */
  readonly returned: number;
}

const FORMAT = 2;
const MAC_BYTES = 16;
/**
 * The longest resource id (CONVENTIONS.md#names, no character needs escaping), and the character JSON escapes
 * longest (`\u0000`).
 */
const MAX_ID_LENGTH = 128;
const WORST_ESCAPED_CHAR = '\u0000';

export function signToken(key: Buffer, position: PagePosition): string {
  const payload = Buffer.from(JSON.stringify({ v: FORMAT, ...position }), 'utf8').toString('base64url');
  return `${payload}.${mac(key, payload).toString('base64url')}`;
}

/** The position inside a token, or undefined when it is malformed, tampered with or not ours. */
export function verifyToken(key: Buffer, token: string, scope: string): PagePosition | undefined {
  const dot = token.indexOf('.');
  if (dot <= 0) return undefined;
  const payload = token.slice(0, dot);
  // Compared as text: decoding first would accept other spellings of the same bytes.
  const presented = Buffer.from(token.slice(dot + 1), 'utf8');
  const expected = Buffer.from(mac(key, payload).toString('base64url'), 'utf8');
  if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) return undefined;
  let position: unknown;
  try {
    position = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (!isPosition(position) || position.scope !== scope) return undefined;
  const { v: _format, ...rest } = position;
  return rest;
}

/**
 * The longest token a walk can produce once it starts from `start` with `sortKeys` order-by keys:
 * every key at its largest (MAX_SORT_TEXT characters that each take six bytes of JSON), the longest id
 * (a resource id unless the walk names a longer one: an inbox item's), the largest count. A query
 * whose longest token would not fit in a link is refused up front (CONVENTIONS.md#skip-tokens), rather
 * than failing on a page deep into the walk.
 */
export function longestToken(
  key: Buffer,
  start: Omit<PagePosition, 'after' | 'returned'>,
  sortKeys: number,
  longestId = 'x'.repeat(MAX_ID_LENGTH),
): number {
  const worstValue: SortValue = WORST_ESCAPED_CHAR.repeat(MAX_SORT_TEXT);
  const after: SortValue[] = [...Array.from({ length: sortKeys }, () => worstValue), longestId];
  return signToken(key, { ...start, after, returned: Number.MAX_SAFE_INTEGER }).length;
}

function mac(key: Buffer, payload: string): Buffer {
  return createHmac('sha256', key).update(payload).digest().subarray(0, MAC_BYTES);
}

/** The MAC already vouches for the content; this only guards against tokens of other formats. */
function isPosition(value: unknown): value is PagePosition & { readonly v: number } {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Record<string, unknown>;
  const query = candidate['query'];
  const definition = candidate['definition'];
  return (
    candidate['v'] === FORMAT &&
    typeof candidate['scope'] === 'string' &&
    (query === undefined || (typeof query === 'object' && query !== null)) &&
    (definition === undefined || typeof definition === 'number') &&
    typeof candidate['pageSize'] === 'number' &&
    Array.isArray(candidate['after']) &&
    candidate['after'].every(isSortValue) &&
    typeof candidate['returned'] === 'number'
  );
}
