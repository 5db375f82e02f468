// Checks and helpers shared by the resource handlers. Each answers a question about the request and
// returns a problem value or the parsed thing; handlers only wire the answers together.
import type { IncomingMessage } from 'node:http';
import { chooseMediaType } from '../protocol/negotiate.js';
import { isJsonMediaType, parseMediaType, type MediaType } from '../protocol/content-type.js';
import type { PreconditionFields, PreconditionVerdict } from '../protocol/conditional.js';
import { problem, type Problem } from '../protocol/problem.js';
import { JSON_TYPE, problemReply, type Reply } from '../http/respond.js';
import { declaresTooLarge, readBody } from '../http/body.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../json.js';
import type { App } from './context.js';
import type { CollectionConfig } from '../config.js';

/** Deepest nesting accepted in a JSON body: deep enough for real documents, shallow enough that no recursive consumer can overflow its stack. */
export const MAX_JSON_DEPTH = 256;

export function preconditionFields(req: IncomingMessage): PreconditionFields {
  const distinct = req.headersDistinct;
  return {
    ifMatch: distinct['if-match'],
    ifNoneMatch: distinct['if-none-match'],
    ifModifiedSince: distinct['if-modified-since'],
    ifUnmodifiedSince: distinct['if-unmodified-since'],
  };
}

/** RFC 9110 §12.5.1: the representations resapi can send for this route; 406 when none is acceptable. */
export function negotiate(req: IncomingMessage, offered: readonly string[]): string | Problem {
  const chosen = chooseMediaType(req.headers.accept, offered);
  if (chosen !== undefined) return chosen;
  return problem('not-acceptable', `This resource is available as ${offered.join(', ')}; the Accept header allows none of them.`);
}

export function acceptsJson(req: IncomingMessage): Problem | undefined {
  const chosen = negotiate(req, [JSON_TYPE]);
  return typeof chosen === 'string' ? undefined : chosen;
}

/** A kind of request body a route takes: which media types, and how to name them in a 415. */
export interface BodyKind {
  readonly accepts: (type: MediaType) => boolean;
  readonly name: string;
}

export const JSON_BODY: BodyKind = { accepts: isJsonMediaType, name: 'application/json (or a +json media type)' };

/**
 * The checks on a request's content that do not depend on state (CONTRACT §4): 413 for a declared
 * length over the cap (RFC 9110 §15.5.14), then 415 for a media type, charset or content coding the
 * route does not take (RFC 9110 §15.5.16). Bodies are UTF-8 (RFC 8259 §8.1 for JSON; resapi's CSV).
 */
export function checkContent(req: IncomingMessage, limit: number, kind: BodyKind): Problem | undefined {
  if (declaresTooLarge(req, limit)) return tooLarge(limit);
  const coding = req.headers['content-encoding'];
  if (coding !== undefined && coding.trim().toLowerCase() !== 'identity') {
    return problem('unsupported-media-type', `Content-Encoding '${coding}' is not accepted; send the body uncompressed.`);
  }
  const declared = req.headers['content-type'];
  const type = declared === undefined ? undefined : parseMediaType(declared);
  if (type === undefined || !kind.accepts(type)) return problem('unsupported-media-type', `Send the body as ${kind.name}.`);
  const charset = type.parameters.get('charset');
  if (charset !== undefined && charset.toLowerCase() !== 'utf-8') return problem('unsupported-media-type', 'The body must be UTF-8.');
  return undefined;
}

export function checkJsonContent(req: IncomingMessage, limit: number): Problem | undefined {
  return checkContent(req, limit, JSON_BODY);
}

export function tooLarge(limit: number): Problem {
  return problem('content-too-large', `The request body exceeds the limit of ${limit} bytes.`);
}

/** The reply for a problem of checkJsonContent: a 413 also closes the connection. */
export function contentReply(p: Problem): Reply {
  return p.status === 413 ? { ...problemReply(p), closeConnection: true } : problemReply(p);
}

/** A 413 reply closes the connection: the rest of the body is discarded, never read into memory. */
export function tooLargeReply(limit: number): Reply {
  return { ...problemReply(tooLarge(limit)), closeConnection: true };
}

/** A failed body is `deterministic` when it was read whole and the same bytes would always fail. */
export type JsonBody =
  | { readonly ok: true; readonly bytes: Buffer; readonly doc: JsonObject }
  | { readonly ok: false; readonly reply: Reply; readonly deterministic: false }
  | { readonly ok: false; readonly reply: Reply; readonly deterministic: true; readonly bytes: Buffer };

/** Reads and parses a JSON object body; every failure is a reply ready to send. */
export async function readJsonObject(req: IncomingMessage, limit: number): Promise<JsonBody> {
  const body = await readBody(req, limit);
  if (!body.ok) {
    return body.reason === 'too-large'
      ? { ok: false, reply: tooLargeReply(limit), deterministic: false }
      : { ok: false, reply: problemReply(problem('bad-request', 'The request body ended early.')), deterministic: false };
  }
  const parsed = parseJsonObject(body.bytes);
  if (!parsed.ok) return { ok: false, reply: problemReply(parsed.problem), deterministic: true, bytes: body.bytes };
  return { ok: true, bytes: body.bytes, doc: parsed.doc };
}

export function parseJsonObject(bytes: Buffer): { ok: true; doc: JsonObject } | { ok: false; problem: Problem } {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return { ok: false, problem: problem('invalid-json', 'The body is not valid UTF-8.') };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const reason = error instanceof SyntaxError ? error.message : 'syntax error';
    return { ok: false, problem: problem('invalid-json', `The body is not valid JSON: ${reason}`) };
  }
  if (!isJsonObject(value)) {
    return { ok: false, problem: problem('invalid-body', 'The body must be a JSON object.', { errors: [{ pointer: '', detail: 'expected an object' }] }) };
  }
  const shape = checkJsonTree(value);
  if (shape !== undefined) return { ok: false, problem: problem('invalid-body', shape.detail, { errors: [shape] }) };
  return { ok: true, doc: value };
}

/**
 * Walks the parsed body without recursion: numbers must be finite (JSON.parse turns 1e400 into
 * Infinity, which JSON.stringify would silently store as null), nesting at most MAX_JSON_DEPTH.
 */
function checkJsonTree(root: JsonObject): { pointer: string; detail: string } | undefined {
  const stack: { value: JsonValue; pointer: string; depth: number }[] = [{ value: root, pointer: '', depth: 1 }];
  while (stack.length > 0) {
    const { value, pointer, depth } = stack.pop() as { value: JsonValue; pointer: string; depth: number };
    if (typeof value === 'number' && !Number.isFinite(value)) return { pointer, detail: 'number out of range' };
    if (typeof value !== 'object' || value === null) continue;
    if (depth > MAX_JSON_DEPTH) return { pointer, detail: `nested deeper than ${MAX_JSON_DEPTH} levels` };
    const entries: [string, JsonValue][] = Array.isArray(value) ? value.map((v, i) => [String(i), v]) : Object.entries(value);
    for (const [key, child] of entries) stack.push({ value: child, pointer: `${pointer}/${escapePointer(key)}`, depth: depth + 1 });
  }
  return undefined;
}

/** RFC 6901 §3: "~" → "~0", "/" → "~1". */
function escapePointer(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** The declared schema (CONTRACT §1 collections.<name>.schema): only declared fields, of the declared type. */
export function checkSchema(doc: JsonObject, config: CollectionConfig | undefined): Problem | undefined {
  const schema = config?.schema;
  if (schema === undefined) return undefined;
  const errors: { pointer: string; detail: string }[] = [];
  for (const [field, value] of Object.entries(doc)) {
    if (field === 'id') continue;
    const declared = Object.hasOwn(schema, field) ? schema[field] : undefined;
    if (declared === undefined) errors.push({ pointer: `/${escapePointer(field)}`, detail: 'not a field of this collection' });
    else if (value !== null && typeOf(value) !== declared) errors.push({ pointer: `/${escapePointer(field)}`, detail: `must be ${declared}` });
  }
  return errors.length === 0 ? undefined : problem('invalid-body', 'The body does not match the collection schema.', { errors });
}

function typeOf(value: JsonValue): string {
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

export function verdictProblem(verdict: Exclude<PreconditionVerdict, { kind: 'proceed' } | { kind: 'not-modified' }>): Problem {
  if (verdict.kind === 'malformed') {
    return problem('invalid-header', `${verdict.field} is malformed: ${verdict.detail}`, { errors: [{ header: verdict.field, detail: verdict.detail }] });
  }
  return problem('precondition-failed', `The ${verdict.field} precondition is not met: GET the resource again, merge, and retry with its current ETag.`);
}

export function link(app: App, path: string): string {
  return app.baseUrl + path;
}

export function itemPath(collection: string, id: string): string {
  return `/${collection}/${id}`;
}
