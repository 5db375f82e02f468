// Idempotency keys on POST (CONVENTIONS.md#idempotency-keys): with a key, a retried request is
// recognised and deduplicated. The record of a request is (key, fingerprint = method + path + SHA-256
// of the body, status, headers, body), kept 24 hours in the `$idempotency` store space, and written by
// the write path in the same atomic batch as the resource the request created, so a crash can never
// leave a created resource without its record (a retry would create a duplicate) or a record without
// its resource.
//
// Keys are scoped to the caller: with API keys on, two clients that happen to pick the same key do not
// see each other's responses.
import type { IncomingMessage } from 'node:http';
import type { StoredRecord } from '../store/types.js';
import type { Reply } from '../http/respond.js';
import { sha256 } from '../protocol/etag.js';
import { formatHttpDate } from '../protocol/http-date.js';
import type { RememberedOutcome } from '../writes/writer.js';

/** Only these outcomes are stored: 2xx, and the 4xx that the same request would always get again. */
const DETERMINISTIC_4XX = new Set([400, 422]);

/** The response headers a replay repeats; the rest (Date, X-Request-Id) belong to the new exchange. */
// Last-Modified is rebuilt from the record's commit time, which is the created item's (same batch).
const REPLAYED_HEADERS = ['Content-Type', 'Location', 'Content-Location', 'ETag', 'Cache-Control', 'Vary'];

/**
 * Keys whose first request is still running: a repeat meanwhile is answered 409 rather than run twice
 * (CONVENTIONS.md#idempotency-keys). A key is held only while its request runs, so the set is bounded
 * by the requests in progress, never by the keys strangers make up.
 */
export class KeysInFlight {
  private readonly held = new Set<string>();

  /** Runs `first` holding `id`; undefined, without running it, when another request holds `id`. */
  async hold<T>(id: string, first: () => Promise<T>): Promise<T | undefined> {
    if (this.held.has(id)) return undefined;
    this.held.add(id);
    try {
      return await first();
    } finally {
      this.held.delete(id);
    }
  }
}

export function recordId(principal: string, key: string): string {
  return sha256(`${principal}\u0000${key}`).toString('hex');
}

export function fingerprintOf(req: IncomingMessage, target: string, body: Buffer): string {
  const bodyHash = sha256(body).toString('hex');
  return `${req.method ?? ''} ${target} ${bodyHash}`;
}

export function isStorable(status: number): boolean {
  return (status >= 200 && status < 300) || DETERMINISTIC_4XX.has(status);
}

/** `reply` as the outcome to remember for the keyed request. */
export function outcomeOf(id: string, fingerprint: string, reply: Reply): RememberedOutcome {
  const headers: Record<string, string> = {};
  for (const name of REPLAYED_HEADERS) {
    const value = reply.headers[name];
    if (value !== undefined) headers[name] = value;
  }
  return { id, fingerprint, status: reply.status, headers, body: (reply.body ?? Buffer.alloc(0)).toString('utf8') };
}

/** Rebuilds the stored response, marked as a replay. */
export function replayOf(record: StoredRecord): Reply {
  const headers: Record<string, string> = { 'Idempotent-Replayed': 'true' };
  const stored = record.doc['headers'];
  if (typeof stored === 'object' && stored !== null && !Array.isArray(stored)) {
    for (const [name, value] of Object.entries(stored)) if (typeof value === 'string') headers[name] = value;
  }
  if (typeof headers['ETag'] === 'string') headers['Last-Modified'] = formatHttpDate(record.modifiedAt);
  const body = record.doc['body'];
  return {
    status: Number(record.doc['status']),
    headers,
    body: Buffer.from(typeof body === 'string' ? body : '', 'utf8'),
  };
}

export function fingerprintOfRecord(record: StoredRecord): string | undefined {
  const fingerprint = record.doc['fingerprint'];
  return typeof fingerprint === 'string' ? fingerprint : undefined;
}
