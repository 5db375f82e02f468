// The opaque `$skiptoken` behind `@nextLink` (seed, Collection envelope rule 1: "Consumers follow
// @nextLink; they do not construct it"; Versioning rule 3; CONTRACT §5). It carries the whole query
// and the keyset position, and is authenticated with HMAC-SHA256 under a key the server keeps, so a
// client cannot forge or edit a position, and a token from another collection or server is refused.
//
// Format: base64url(JSON payload) "." base64url(first 16 bytes of the HMAC). The payload is signed
// as sent, so verification needs no canonical re-encoding.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { JsonValue } from '../json.js';
import type { CollectionQuery } from './options.js';

/** Everything the next page needs. */
export interface PagePosition {
  /**
   * The collection the token pages through (a query resource's pages continue as pages of its
   * collection, with the stored query inside the token); a token is only accepted for its own scope.
   */
  readonly scope: string;
  readonly query: CollectionQuery;
  readonly pageSize: number;
  /** Sort key (order-by values, then id) of the last item already returned. */
  readonly after: readonly JsonValue[];
  /** How many items earlier pages returned (for $top across pages). */
  readonly returned: number;
}

const MAC_BYTES = 16;

export function signToken(key: Buffer, position: PagePosition): string {
  const payload = Buffer.from(JSON.stringify(position), 'utf8').toString('base64url');
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
  return position;
}

function mac(key: Buffer, payload: string): Buffer {
  return createHmac('sha256', key).update(payload).digest().subarray(0, MAC_BYTES);
}

/** The MAC already vouches for the content; this only guards against tokens from older formats. */
function isPosition(value: unknown): value is PagePosition {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Record<string, unknown>;
  return (
    typeof candidate['scope'] === 'string' &&
    typeof candidate['query'] === 'object' && candidate['query'] !== null &&
    typeof candidate['pageSize'] === 'number' &&
    Array.isArray(candidate['after']) &&
    typeof candidate['returned'] === 'number'
  );
}
