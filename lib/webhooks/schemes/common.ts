// What the receiving schemes share (CONVENTIONS.md#receiving-sources): the shape of a verdict, the
// 401 and 400 refusals, reading a verified body as a JSON object, the event id rule, the window of a
// signed timestamp, and the provider's own header fields handed to handlers.
//
// A scheme (resapi.ts, standard.ts, github.ts, stripe.ts) is a pure function of what was received
// (the header lines by lower-case name, the raw body bytes), the source's secrets, the timestamp
// settings and "now" in whole seconds: it never reads a clock, a store or the request itself, so
// each one is unit-tested against its provider's published vectors. Its verdict is the event, or a
// refusal whose problem says why and whose `reason` is a fixed phrase for the one log line
// (lib/webhooks/refusal-log.ts): never the secret, never which secret matched or failed.
import { timingSafeEqual } from 'node:crypto';
import { eventIdProblem, MAX_EVENT_ID } from '../../names.js';
import { isJsonObject, type JsonObject } from '../../json.js';
import { parseJson } from '../../json-text.js';
import { problem, type Problem, type ProblemItem } from '../../protocol/problem.js';

/** The header lines of a request by lower-case name, each line as received (RFC 9110 §5.3). */
export type HeaderLines = ReadonlyMap<string, readonly string[]>;

/** What a scheme is asked to judge. */
export interface Received {
  readonly headers: HeaderLines;
  /** The exact body bytes, read under the cap; nothing has parsed them. */
  readonly body: Buffer;
  /** The source's secrets, the current one first (CONVENTIONS.md#secret-rotation); never empty. */
  readonly secrets: readonly string[];
  /** How far a signed timestamp may be from now, in seconds (`webhooks.toleranceS`). */
  readonly toleranceS: number;
  /** Whether the resapi scheme's unsigned X-Timestamp must be sent (`webhooks.requireTimestamp`). */
  readonly requireTimestamp: boolean;
  /** The server clock's current whole second (Unix time): timestamps have no fraction. */
  readonly nowS: number;
}

/** A verified event: what is deduplicated, stored and handed to its handler. */
export interface ReceivedEvent {
  /** The provider's event id, 1-255 code points (CONVENTIONS.md#webhook-event-body). */
  readonly id: string;
  /** The event kind that chooses the handler (CONVENTIONS.md#webhook-handlers). */
  readonly kind: string;
  /** The JSON text to store: the verified body as received (a form-encoded GitHub body, its payload). */
  readonly text: string;
  /** The provider's own header fields, signature fields and connection fields removed (`ctx.headers`). */
  readonly headers: Readonly<Record<string, string>>;
}

export interface Refusal {
  /** A 401 (the signature) or a 400 (the timestamp, the body, the id). */
  readonly problem: Problem;
  /** A fixed phrase for the log line: never the secret, never text the sender chose. */
  readonly reason: string;
}

export type Verdict =
  | { readonly ok: true; readonly event: ReceivedEvent }
  | { readonly ok: false; readonly refusal: Refusal };

export type Scheme = (received: Received) => Verdict;

/** RFC 9110 §15.5.2 asks for a challenge with every 401; no registered scheme names a body signature. */
export const CHALLENGE = 'HMAC-SHA256 realm="webhooks"';
/** Unix seconds as the schemes write them: digits only. */
const UNIX_SECONDS = /^\d{1,15}$/;
/**
 * A strict UTF-8 decoder, shared: a `decode` without `stream` starts afresh each call (WHATWG
 * Encoding §7.2), even after one that threw, and making one per call costs more than the decoding.
 */
const UTF8 = new TextDecoder('utf-8', { fatal: true });
/**
 * Fields about the connection and its framing (RFC 9110 §7.6.1, RFC 9112 §6), and credentials,
 * which are never the provider's event data and are not handed on.
 */
const CONNECTION_FIELDS: ReadonlySet<string> = new Set([
  'host', 'connection', 'keep-alive', 'proxy-connection', 'content-length', 'transfer-encoding', 'te', 'trailer',
  'upgrade', 'expect', 'authorization', 'proxy-authorization', 'cookie',
]);
/** The provider's header fields kept with an event, at most: a sender cannot make a job large with them. */
export const MAX_HEADER_FIELDS = 64;
export const MAX_HEADER_CHARACTERS = 8192;

/** A signature refusal: 401 with the challenge; nothing is recorded. */
export function unsigned(detail: string, reason: string): Verdict {
  const refused = problem('unauthorized', detail, { headers: { 'WWW-Authenticate': CHALLENGE } });
  return { ok: false, refusal: { problem: refused, reason } };
}

/** A 400 about a header field of a delivery whose signature verified. */
export function badHeader(header: string, detail: string, reason: string): Verdict {
  return { ok: false, refusal: { problem: problem('bad-request', detail, { errors: [{ header, detail }] }), reason } };
}

/** A 400 about the verified body. */
export function badBody(problemOf: Problem, reason: string): Verdict {
  return { ok: false, refusal: { problem: problemOf, reason } };
}

/** The one line of a singleton field, or undefined when it is missing or sent more than once. */
export function singleLine(headers: HeaderLines, name: string): string | undefined {
  const lines = headers.get(name);
  return lines?.length === 1 ? (lines[0] as string) : undefined;
}

/** 'missing' or 'repeated' for a singleton field that is not there exactly once, else undefined. */
export function lineCountProblem(headers: HeaderLines, name: string): 'missing' | 'repeated' | undefined {
  const lines = headers.get(name);
  if (lines === undefined || lines.length === 0) return 'missing';
  return lines.length > 1 ? 'repeated' : undefined;
}

/** Whole Unix seconds written as digits, or undefined. */
export function unixSeconds(text: string): number | undefined {
  return UNIX_SECONDS.test(text) ? Number(text) : undefined;
}

/**
 * Is `timestampS` inside ±toleranceS of now (CONVENTIONS.md#webhook-timestamp)? Both are whole
 * seconds, so the window is symmetric: |now − t| ≤ toleranceS is accepted, one second more is not.
 */
export function insideWindow(received: Pick<Received, 'nowS' | 'toleranceS'>, timestampS: number): boolean {
  return Math.abs(received.nowS - timestampS) <= received.toleranceS;
}

/** The 400 of a signed timestamp outside the window: it names the field, never the secret. */
export function staleTimestamp(header: string, what: string, toleranceS: number): Verdict {
  const detail = `${what} is more than ${toleranceS} s away from the server's clock: a replay, or a clock to fix.`;
  return badHeader(header, detail, 'timestamp outside the window');
}

/**
 * A header value as text. Node hands field values over as Latin-1 (one character per byte); a
 * provider writes ids in UTF-8, so the bytes are read again as UTF-8, strictly. Undefined when they
 * are not UTF-8.
 */
export function headerText(line: string): string | undefined {
  try {
    return UTF8.decode(Buffer.from(line, 'latin1'));
  } catch {
    return undefined;
  }
}

/** The body as UTF-8 text, or undefined when it is not UTF-8. */
export function bodyText(bytes: Uint8Array): string | undefined {
  try {
    return UTF8.decode(bytes);
  } catch {
    return undefined;
  }
}

export type ReadObject =
  | { readonly ok: true; readonly value: JsonObject }
  | { readonly ok: false; readonly problem: Problem };

/**
 * Verified text as a JSON object. A number a double cannot hold exactly is no reason to refuse an
 * event: the text is what is kept (CONVENTIONS.md#webhook-event-body), so only syntax is refused, in
 * resapi's own words with the offset, never the parser's message or a slice of the body. JSON.parse
 * reads it; only text it refuses goes to the scanner (lib/json-text.ts), which says where and why.
 */
export function readObject(text: string, expected: string): ReadObject {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    const parsed = parseJson(text);
    if (!parsed.ok && parsed.error.kind === 'syntax') {
      return { ok: false, problem: problem('invalid-json', `The body is not valid JSON: ${parsed.error.message}.`) };
    }
    value = parsed.ok ? parsed.value : undefined;
  }
  if (isJsonObject(value)) return { ok: true, value };
  const errors = [{ pointer: '', detail: 'expected an object' }];
  return { ok: false, problem: problem('invalid-body', `The body is not a webhook event: ${expected}.`, { errors }) };
}

/** What is wrong with an event id taken from a body member, for an `errors` entry; undefined when nothing is. */
export function idProblem(id: unknown): string | undefined {
  if (typeof id !== 'string') return `must be a string of 1-${MAX_EVENT_ID} code points`;
  const wrong = eventIdProblem(id);
  return wrong === undefined ? undefined : `${wrong} (the event id)`;
}

/** An `errors` entry for a member that must be a non-empty string, or undefined when it is one. */
export function kindProblem(value: unknown, pointer: string, what: string): ProblemItem | undefined {
  if (typeof value === 'string' && value !== '') return undefined;
  return { pointer, detail: `must be a non-empty string (${what})` };
}

/**
 * The provider's own header fields as a handler sees them (`ctx.headers`): names in lower case, the
 * lines of a repeated field joined by ", " (RFC 9110 §5.3), without the scheme's signature fields and
 * without the fields of the connection. At most MAX_HEADER_FIELDS fields and MAX_HEADER_CHARACTERS
 * characters of names and values, in the order received; what comes after is left out, so what is
 * stored with a job stays small whatever a sender sends.
 */
export function providerHeaders(headers: HeaderLines, signatureFields: readonly string[]): Record<string, string> {
  const kept: Record<string, string> = {};
  let fields = 0;
  let characters = 0;
  for (const [name, lines] of headers) {
    if (CONNECTION_FIELDS.has(name) || signatureFields.includes(name)) continue;
    const value = lines.join(', ');
    if (fields === MAX_HEADER_FIELDS || characters + name.length + value.length > MAX_HEADER_CHARACTERS) break;
    // A field named __proto__ stays a field: an assignment would set the object's prototype.
    if (name === '__proto__') Object.defineProperty(kept, name, { value, enumerable: true, writable: true });
    else kept[name] = value;
    fields += 1;
    characters += name.length + value.length;
  }
  return kept;
}

/**
 * Does any presented digest equal the digest under any secret? Every pair is compared with
 * timingSafeEqual and nothing stops early, so the time taken says nothing about which secret (or
 * which presented entry) matched (CONVENTIONS.md#webhook-signature).
 */
export function anyDigestMatches(
  presented: readonly Buffer[],
  secrets: readonly string[],
  digestUnder: (secret: string) => Buffer,
): boolean {
  let matched = false;
  for (const secret of secrets) {
    const expected = digestUnder(secret);
    for (const digest of presented) {
      const equal = timingSafeEqual(digest, expected);
      matched = matched || equal;
    }
  }
  return matched;
}
