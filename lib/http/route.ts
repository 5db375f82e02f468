// Request target → route (seed, "Generic resource addressing"; CONTRACT §2). Pure: the router sees
// only the target string and the configured webhook path.
//
// The path is split on "/" before percent-decoding, so an encoded "%2F" inside a segment is data,
// not a separator, and is then refused by the name rules; dot-segments are refused rather than
// resolved (RFC 3986 §5.2.4 would let "/a/../b" reach another resource).
import { isCollectionName, isResourceId, isSystemSegment } from '../names.js';

export type Route =
  | { readonly kind: 'service' }
  | { readonly kind: 'health' }
  | { readonly kind: 'webhook' }
  | { readonly kind: 'collection'; readonly collection: string }
  | { readonly kind: 'item'; readonly collection: string; readonly id: string }
  | { readonly kind: 'undo'; readonly collection: string; readonly id: string }
  | { readonly kind: 'bulk'; readonly collection: string }
  | { readonly kind: 'query'; readonly collection: string; readonly name: string }
  | { readonly kind: 'query-definition'; readonly collection: string; readonly name: string }
  | { readonly kind: 'unknown' }
  | { readonly kind: 'invalid'; readonly detail: string };

export type RouteKind = Route['kind'];

/** Methods each route allows (RFC 9110 §15.5.6: a 405 lists them in Allow). HEAD wherever GET. */
export const ALLOWED_METHODS: Readonly<Record<RouteKind, readonly string[]>> = {
  service: ['GET', 'HEAD', 'OPTIONS'],
  health: ['GET', 'HEAD', 'OPTIONS'],
  webhook: ['POST', 'OPTIONS'],
  collection: ['GET', 'HEAD', 'POST', 'OPTIONS'],
  item: ['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS'],
  undo: ['PUT', 'OPTIONS'],
  bulk: ['PUT', 'OPTIONS'],
  query: ['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS'],
  'query-definition': ['GET', 'HEAD', 'OPTIONS'],
  unknown: [],
  invalid: [],
};

export interface ParsedTarget {
  readonly path: string;
  readonly query: string;
}

/** Splits an origin-form or absolute-form request target (RFC 9112 §3.2) into path and query. */
export function splitTarget(target: string): ParsedTarget {
  let rest = target;
  const scheme = /^https?:\/\/[^/?#]*/i.exec(rest);
  if (scheme !== null) rest = rest.slice(scheme[0].length);
  const hash = rest.indexOf('#');
  if (hash !== -1) rest = rest.slice(0, hash);
  const question = rest.indexOf('?');
  const path = question === -1 ? rest : rest.slice(0, question);
  // RFC 9110 §4.2.3: an empty path is "/".
  return { path: path === '' ? '/' : path, query: question === -1 ? '' : rest.slice(question + 1) };
}

export function matchRoute(path: string, webhookPath: string): Route {
  if (path === '/') return { kind: 'service' };
  if (!path.startsWith('/')) return { kind: 'unknown' };
  const raw = path.slice(1).split('/');
  if (raw.some((segment) => segment === '')) return { kind: 'unknown' };
  const segments: string[] = [];
  for (const segment of raw) {
    const decoded = decodeSegment(segment);
    if (decoded === undefined) return { kind: 'invalid', detail: `The path segment '${printable(segment)}' is not valid percent-encoding.` };
    segments.push(decoded);
  }
  // Compared decoded, so /%77ebhooks is the webhook path too (RFC 3986 §6.2.2.2).
  const webhook = webhookPath.slice(1).split('/');
  if (webhook.every((segment, index) => segments[index] === segment)) {
    return segments.length === webhook.length ? { kind: 'webhook' } : { kind: 'unknown' };
  }
  if (segments.length > 4) return { kind: 'unknown' };
  const [first, second, third, fourth] = segments as [string, string | undefined, string | undefined, string | undefined];
  if (segments.length === 1 && first === '$health') return { kind: 'health' };
  if (isSystemSegment(first)) return { kind: 'unknown' };
  if (!isCollectionName(first)) return invalidCollection(first);
  if (second === undefined) return { kind: 'collection', collection: first };
  if (second === '$bulk' && third === undefined) return { kind: 'bulk', collection: first };
  if (second === '$queries' && third !== undefined) return queryRoute(first, third, fourth);
  if (isSystemSegment(second)) return { kind: 'unknown' };
  if (!isResourceId(second)) return invalidId(second);
  if (third === undefined) return { kind: 'item', collection: first, id: second };
  if (third === '$undoDelete' && fourth === undefined) return { kind: 'undo', collection: first, id: second };
  return { kind: 'unknown' };
}

/** `/{c}/$queries/{name}` and `/{c}/$queries/{name}/$definition` (CONTRACT §2, §5). */
function queryRoute(collection: string, name: string, rest: string | undefined): Route {
  if (isSystemSegment(name)) return { kind: 'unknown' };
  if (!isResourceId(name)) return invalidId(name);
  if (rest === undefined) return { kind: 'query', collection, name };
  if (rest === '$definition') return { kind: 'query-definition', collection, name };
  return { kind: 'unknown' };
}

function decodeSegment(segment: string): string | undefined {
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

function invalidCollection(name: string): Route {
  return {
    kind: 'invalid',
    detail: `'${printable(name)}' is not a valid collection name: use 1-64 characters, a letter first, then letters, digits, '_' or '-'.`,
  };
}

function invalidId(id: string): Route {
  return {
    kind: 'invalid',
    detail: `'${printable(id)}' is not a valid resource id: use 1-128 characters of A-Z a-z 0-9 . _ ~ - (not '.' or '..').`,
  };
}

/** Echo at most 80 characters of a name, with control characters escaped, so a problem stays readable. */
function printable(text: string): string {
  const clipped = text.length > 80 ? `${text.slice(0, 80)}…` : text;
  return JSON.stringify(clipped).slice(1, -1);
}
