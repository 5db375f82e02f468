// Checks and helpers shared by the resource handlers. Each answers a question about the request and
// returns a problem value or the parsed thing; handlers only wire the answers together.
import { isAscii, isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import type { PreconditionVerdict } from '../protocol/conditional.js';
import { problem, type Problem } from '../protocol/problem.js';
import { problemReply, type Reply } from '../http/respond.js';
import { readBody, unreadBodyReply, type BodyResult } from '../http/body.js';
import type { JsonObject } from '../json.js';
import { parseJson } from '../json-text.js';
import { documentShapeProblem } from '../writes/document.js';
import type { App } from './context.js';

const BYTE_ORDER_MARK = 0xfeff;

/** A failed body is `deterministic` when it was read whole and the same bytes would always fail. */
export type JsonBody =
  | { readonly ok: true; readonly bytes: Buffer; readonly doc: JsonObject }
  | { readonly ok: false; readonly reply: Reply; readonly deterministic: false }
  | { readonly ok: false; readonly reply: Reply; readonly deterministic: true; readonly bytes: Buffer };

/** Reads and parses a JSON object body; every failure is a reply ready to send. */
export function readJsonObject(req: IncomingMessage, limit: number): Promise<JsonBody> {
  return withJsonObject(req, limit, (body) => body);
}

/**
 * readJsonObject continued by `next` within the read's own continuation (not an async function, not a
 * second `.then`): one promise and one turn of the microtask queue per body.
 */
export function withJsonObject<T>(
  req: IncomingMessage,
  limit: number,
  next: (body: JsonBody) => T | Promise<T>,
): Promise<T> {
  return readBody(req, limit).then((body) => next(jsonBody(body, limit)));
}

function jsonBody(body: BodyResult, limit: number): JsonBody {
  if (!body.ok) return { ok: false, reply: unreadBodyReply(body.reason, limit), deterministic: false };
  const parsed = parseJsonObject(body.bytes);
  if (!parsed.ok) return { ok: false, reply: problemReply(parsed.problem), deterministic: true, bytes: body.bytes };
  return { ok: true, bytes: body.bytes, doc: parsed.doc };
}

/**
 * A request body → the JSON object it holds, or the 400 problem: invalid UTF-8 and malformed JSON are
 * `invalid-json` in resapi's words with the offset (CONVENTIONS.md#json-bodies: never the parser's message or a slice
 * of the body); a number JSON cannot carry exactly, or a value that is not a storable object, is
 * `invalid-body` pointing at it (RFC 6901).
 */
export function parseJsonObject(bytes: Buffer): { ok: true; doc: JsonObject } | { ok: false; problem: Problem } {
  const text = bodyText(bytes);
  if (text === undefined) return { ok: false, problem: problem('invalid-json', 'The body is not valid UTF-8.') };
  const parsed = parseJson(text);
  if (!parsed.ok) {
    const { error } = parsed;
    if (error.kind === 'syntax') {
      return { ok: false, problem: problem('invalid-json', `The body is not valid JSON: ${error.message}.`) };
    }
    const detail = `The body holds a number JSON cannot carry as written: ${error.message}.`;
    const errors = [{ pointer: error.pointer ?? '', detail: error.reason }];
    return { ok: false, problem: problem('invalid-body', detail, { errors }) };
  }
  // The write path asks the same question of every stored document (lib/writes/document.ts).
  const shape = documentShapeProblem(parsed.value);
  if (shape !== undefined) return { ok: false, problem: shape };
  return { ok: true, doc: parsed.value as JsonObject };
}

/**
 * A body's UTF-8 text, or undefined when it is not UTF-8; a leading byte order mark is dropped (RFC 8259
 * §8.1 lets a parser ignore it). An ASCII body (nearly every one) is read as latin1, which reads bytes
 * below 0x80 as UTF-8 does, faster.
 */
function bodyText(bytes: Buffer): string | undefined {
  if (isAscii(bytes)) return bytes.toString('latin1');
  if (!isUtf8(bytes)) return undefined;
  const text = bytes.toString('utf8');
  return text.charCodeAt(0) === BYTE_ORDER_MARK ? text.slice(1) : text;
}

export function verdictProblem(
  verdict: Exclude<PreconditionVerdict, { kind: 'proceed' } | { kind: 'not-modified' }>,
): Problem {
  if (verdict.kind === 'malformed') {
    const errors = [{ header: verdict.field, detail: verdict.detail }];
    return problem('invalid-header', `${verdict.field} is malformed: ${verdict.detail}`, { errors });
  }
  return problem(
    'precondition-failed',
    `The ${verdict.field} precondition is not met: GET the resource again, merge, and retry with its current ETag.`,
  );
}

export function link(app: Pick<App, 'baseUrl'>, path: string): string {
  return app.baseUrl + path;
}

export function itemPath(collection: string, id: string): string {
  return `/${collection}/${id}`;
}

/**
 * 503 for a write the store could not make durable (CONVENTIONS.md#problem-details: a retry is welcome); the
 * detail goes to the log only.
 */
export function unavailableReply(app: Pick<App, 'log'>, rq: { readonly requestId: string }, detail: string): Reply {
  app.log('error', 'store write failed', { requestId: rq.requestId, detail });
  return problemReply(problem('unavailable', detail), { 'Retry-After': '1' });
}

/** An id as a problem shows it: quoted, and clipped so that a 255-character id stays readable. */
export function shown(id: string): string {
  return JSON.stringify(id.length > 80 ? `${id.slice(0, 80)}…` : id);
}
