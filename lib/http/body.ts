// Reading a request body under a cap: a body larger than the cap is never read in full, so memory
// cannot be exhausted (CONVENTIONS.md#body-cap). The cap is enforced twice, the way
// raw-body does it: a declared Content-Length over the cap is refused before any byte is read, and a
// running count stops a chunked body at the cap. Either way memory never grows with what the client
// sends: we keep at most `limit` bytes.
import type { IncomingMessage } from 'node:http';
import { isCsvMediaType, isJsonMediaType, parseMediaType, type MediaType } from '../protocol/content-type.js';
import { problem, type Problem } from '../protocol/problem.js';
import { fieldValue } from './field-lines.js';
import { problemReply, type Reply } from './respond.js';

export type BodyResult =
  | { readonly ok: true; readonly bytes: Buffer }
  | { readonly ok: false; readonly reason: 'too-large' | 'aborted' };

/** How a request frames its content (RFC 9112 §6): its Content-Length, and whether it is chunked. */
export interface ContentFraming {
  readonly declared: number | undefined;
  readonly chunked: boolean;
}

/** Reads both framing fields in one pass over the raw field lines. */
export function contentFraming(req: IncomingMessage): ContentFraming {
  const raw = req.rawHeaders;
  let declared: number | undefined;
  let chunked = false;
  for (let index = 0; index < raw.length; index += 2) {
    const name = raw[index] as string;
    if (name.length === 14 && name.toLowerCase() === 'content-length') declared = Number(raw[index + 1]);
    else if (name.length === 17 && name.toLowerCase() === 'transfer-encoding') chunked = true;
  }
  return { declared, chunked };
}

/** True when the request declares (RFC 9110 §8.6 Content-Length) more content than `limit` bytes. */
export function declaresTooLarge(framing: ContentFraming, limit: number): boolean {
  return framing.declared !== undefined && Number.isFinite(framing.declared) && framing.declared > limit;
}

/** True when the request carries content: a non-zero Content-Length, or a Transfer-Encoding (RFC 9112 §6.3). */
export function hasContent(framing: ContentFraming): boolean {
  return framing.chunked || (framing.declared !== undefined && framing.declared > 0);
}

/**
 * Reads the body under the cap. With `keep: false` the bytes are counted and dropped (a route that
 * reads no content still refuses one over the cap, and never holds it in memory).
 */
export function readBody(
  req: IncomingMessage,
  limit: number,
  options: { readonly keep?: boolean } = {},
): Promise<BodyResult> {
  const keep = options.keep !== false;
  return new Promise((resolve) => {
    // The first chunk is kept alone: a list is made only for a body that comes in more than one.
    let first: Buffer | undefined;
    let chunks: Buffer[] | undefined;
    let received = 0;
    const finish = (result: BodyResult): void => {
      req.removeListener('data', onData);
      req.removeListener('end', onEnd);
      req.removeListener('error', onAbort);
      req.removeListener('aborted', onAbort);
      resolve(result);
    };
    const onData = (chunk: Buffer): void => {
      received += chunk.length;
      if (received > limit) {
        first = undefined;
        chunks = undefined;
        // Keep the stream flowing with no listener: further input is read and dropped.
        finish({ ok: false, reason: 'too-large' });
        return;
      }
      if (!keep) return;
      if (first === undefined) first = chunk;
      else (chunks ??= [first]).push(chunk);
    };
    // A body that came in one chunk (nearly every one) is that chunk: copying it into a new buffer
    // would cost an allocation per request for nothing.
    const onEnd = (): void => finish({ ok: true, bytes: bodyBytes(first, chunks, received) });
    const onAbort = (): void => finish({ ok: false, reason: 'aborted' });
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onAbort);
    req.on('aborted', onAbort);
  });
}

/** The bytes read: none, the one chunk, or the chunks joined. */
function bodyBytes(first: Buffer | undefined, chunks: Buffer[] | undefined, received: number): Buffer {
  if (chunks !== undefined) return Buffer.concat(chunks, received);
  return first ?? Buffer.alloc(0);
}

/** A kind of request body a route takes: which media types, and how to name them in a 415. */
export interface BodyKind {
  readonly accepts: (type: MediaType) => boolean;
  readonly name: string;
  /** The media type a description (GET /$openapi) names for it: one `accepts` takes, as written here. */
  readonly media: string;
}

export const JSON_BODY: BodyKind = {
  accepts: isJsonMediaType,
  name: 'application/json (or a +json media type)',
  media: 'application/json',
};
export const CSV_BODY: BodyKind = { accepts: isCsvMediaType, name: 'text/csv (RFC 4180)', media: 'text/csv' };

/**
 * The checks on a request's content that do not depend on state (CONVENTIONS.md#precondition-order):
 * 413 for a declared length over the cap (RFC 9110 §15.5.14), then 415 for a media type, charset or
 * content coding the route does not take (RFC 9110 §15.5.16). Bodies are UTF-8 (RFC 8259 §8.1 for
 * JSON; resapi's CSV).
 */
export function checkContent(req: IncomingMessage, limit: number, kind: BodyKind): Problem | undefined {
  if (declaresTooLarge(contentFraming(req), limit)) return tooLarge(limit);
  const coding = fieldValue(req, 'content-encoding');
  if (coding !== undefined && coding.trim().toLowerCase() !== 'identity') {
    const detail = `Content-Encoding '${coding}' is not accepted; send the body uncompressed.`;
    return problem('unsupported-media-type', detail);
  }
  const declared = fieldValue(req, 'content-type');
  // The very media type the kind names (`application/json`, nearly every request) is one it takes,
  // with no charset: nothing to parse.
  if (declared === kind.media) return undefined;
  const type = declared === undefined ? undefined : parseMediaType(declared);
  if (type === undefined || !kind.accepts(type)) {
    return problem('unsupported-media-type', `Send the body as ${kind.name}.`);
  }
  const charset = type.parameters.get('charset');
  if (charset !== undefined && charset.toLowerCase() !== 'utf-8') {
    return problem('unsupported-media-type', 'The body must be UTF-8.');
  }
  return undefined;
}

export function tooLarge(limit: number): Problem {
  return problem('content-too-large', `The request body exceeds the limit of ${limit} bytes.`);
}

/** The reply for a content problem: a 413 also closes the connection (the rest is never read). */
export function contentReply(p: Problem): Reply {
  return p.status === 413 ? { ...problemReply(p), closeConnection: true } : problemReply(p);
}

/** A body that ended too early or too large, as the reply to send. */
export function unreadBodyReply(reason: 'too-large' | 'aborted', limit: number): Reply {
  return reason === 'too-large'
    ? contentReply(tooLarge(limit))
    : problemReply(problem('bad-request', 'The request body ended early.'));
}
