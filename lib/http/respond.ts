// The one place that writes responses (README, Architecture): HEAD gets the
// GET headers without content (RFC 9110 §9.3.2), 204 and 304 never carry content (RFC 9110 §15.3.5,
// §15.4.5), Content-Length is always exact, and a connection we must close is closed the way
// RFC 9112 §9.6 asks (a staged close, so the client can read our last response). Every body goes out
// through the server's SendQueue, which counts it until the kernel has it and abandons a response that
// makes no progress (CONVENTIONS.md#connections).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Clock } from '../clock.js';
import { problemBody, type Problem } from '../protocol/problem.js';
import type { SendQueue } from './send-queue.js';

export const JSON_TYPE = 'application/json';
const PROBLEM_TYPE = 'application/problem+json';

export interface Reply {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: Buffer;
  /** Send `Connection: close` and close after a bounded drain of whatever the client still sends. */
  readonly closeConnection?: boolean;
  /** `headers` as `send` lists them for most requests, listed when the reply is made (`listedReply`). */
  readonly prepared?: OwnFields;
}

/** A reply's own fields as `send` hands them to writeHead, and which of the common fields they already hold. */
interface OwnFields {
  /** Names and values in order: the reply's headers, Vary with Origin added if asked, no Content-Type if bodiless. */
  readonly fields: readonly string[];
  readonly cacheControl: boolean;
  readonly vary: boolean;
  /** The list is this one answer's own, made for it: `send` adds the common fields to it in place. */
  readonly own: boolean;
}

const EMPTY = Buffer.alloc(0);

/** How long a closing connection keeps reading (and discarding) client data after the response. */
const LINGER_MS = 2000;

export function jsonReply(status: number, body: Buffer, headers: Readonly<Record<string, string>>): Reply {
  return { status, headers: { 'Content-Type': JSON_TYPE, ...headers }, body };
}

export function problemReply(p: Problem, headers: Readonly<Record<string, string>> = {}): Reply {
  return {
    status: p.status,
    headers: { 'Content-Type': PROBLEM_TYPE, ...headers, ...p.headers },
    body: Buffer.from(problemBody(p)),
  };
}

/** Fields every response of a server carries besides its own, the same for every request (lib/app.ts). */
export interface ServerFields {
  /** The Cache-Control of a reply that has none; with `forceCacheControl`, of every reply. */
  readonly cacheControl: string;
  readonly forceCacheControl: boolean;
  /** The Vary of a reply that has none, if any, without and with `Origin` in it. */
  readonly vary: string | undefined;
  readonly varyWithOrigin: string | undefined;
  /** Access-Control-Expose-Headers, sent with Access-Control-Allow-Origin. */
  readonly exposeHeaders: string;
}

/** The common fields that differ per request (lib/app.ts decides them). */
export interface RequestFields {
  readonly requestId: string;
  /** Whether every answer carries the request id (the client sent one), or only errors (the id a log line names). */
  readonly echoRequestId: boolean;
  readonly date: string;
  /** `Origin`, to be added to a reply's own Vary, when the CORS answer names one origin (lib/http/cors.ts). */
  readonly varyOrigin: boolean;
  /** The CORS fields of this response: Access-Control-Allow-Origin's value, when the origin is allowed. */
  readonly allowOrigin: string | undefined;
}

/**
 * A reply made from its own fields listed in the order they are sent (names and values, as writeHead
 * takes them), for the answers every read ends with: `send` hands the list on as it is whenever the
 * request does not change it (no forced Cache-Control, no Origin to add to Vary), and `headers` is made
 * from it only when something asks for it. A bodiless status sends no Content-Type (RFC 9110 §15.4.5).
 * The list is the answer's own: `send` adds the common fields to it, so a listed reply is sent once, and
 * one kept to be sent again is made by `keptReply`.
 */
export function listedReply(status: number, fields: string[], body?: Buffer): Reply {
  return new ListedReply(status, fields, body, true);
}

/** The same reply, to be kept and sent many times: `send` copies its list instead of adding to it. */
export function keptReply(reply: Reply): Reply {
  const prepared = reply.prepared;
  if (prepared === undefined) return reply;
  return new ListedReply(reply.status, prepared.fields, reply.body, false);
}

class ListedReply implements Reply {
  readonly prepared: OwnFields;

  constructor(
    readonly status: number,
    fields: readonly string[],
    readonly body: Buffer | undefined,
    own: boolean,
  ) {
    let cacheControl = false;
    let vary = false;
    let typed = false;
    for (let index = 0; index < fields.length; index += 2) {
      const name = fields[index];
      if (name === 'Cache-Control') cacheControl = true;
      else if (name === 'Vary') vary = true;
      else if (name === 'Content-Type') typed = true;
    }
    const listed = typed && isBodiless(status) ? withoutContentType(fields) : fields;
    this.prepared = { fields: listed, cacheControl, vary, own };
  }

  get headers(): Readonly<Record<string, string>> {
    const headers: Record<string, string> = {};
    const { fields } = this.prepared;
    for (let index = 0; index < fields.length; index += 2) {
      headers[fields[index] as string] = fields[index + 1] as string;
    }
    return headers;
  }
}

function withoutContentType(fields: readonly string[]): string[] {
  const kept: string[] = [];
  for (let index = 0; index < fields.length; index += 2) {
    if (fields[index] !== 'Content-Type') kept.push(fields[index] as string, fields[index + 1] as string);
  }
  return kept;
}

export function send(
  req: IncomingMessage,
  res: ServerResponse,
  reply: Reply,
  clock: Clock,
  server: ServerFields,
  request: RequestFields,
  queue: SendQueue,
): void {
  if (res.headersSent) return;
  const bodiless = isBodiless(reply.status);
  const { forceCacheControl } = server;
  const { varyOrigin } = request;
  const prepared = forceCacheControl || varyOrigin ? undefined : reply.prepared;
  const own = prepared ?? ownFields(reply, forceCacheControl, varyOrigin);
  // One flat list of names and values handed to writeHead, no header object built: the reply's own
  // fields, then the common ones. A list made for this answer alone is extended in place; a kept one is
  // copied onto an empty list (one allocation with room for all, where a copy by slice would be
  // reallocated by the first push, and packed, as Node's own loop over it expects).
  let fields: string[];
  if (own.own) {
    fields = own.fields as string[];
  } else {
    fields = [];
    for (const text of own.fields) fields.push(text);
  }
  if (request.echoRequestId || reply.status >= 400) fields.push('X-Request-Id', request.requestId);
  fields.push('Date', request.date);
  if (!own.cacheControl) fields.push('Cache-Control', server.cacheControl);
  const vary = varyOrigin ? server.varyWithOrigin : server.vary;
  if (!own.vary && vary !== undefined) fields.push('Vary', vary);
  if (request.allowOrigin !== undefined) {
    fields.push('Access-Control-Allow-Origin', request.allowOrigin);
    fields.push('Access-Control-Expose-Headers', server.exposeHeaders);
  }
  if (reply.closeConnection === true) {
    fields.push('Connection', 'close');
    stageClose(req, clock);
  }
  const body = bodiless ? EMPTY : reply.body ?? EMPTY;
  if (!bodiless) fields.push('Content-Length', String(body.length));
  res.writeHead(reply.status, fields);
  if (bodiless || req.method === 'HEAD') res.end();
  else queue.end(res, body);
}

function isBodiless(status: number): boolean {
  return status === 204 || status === 304 || (status >= 100 && status < 200);
}

/** The reply's own fields as writeHead takes them (see OwnFields), and whether they hold Cache-Control and Vary. */
function ownFields(
  reply: Reply,
  forceCacheControl: boolean,
  varyOrigin: boolean,
): OwnFields & { readonly fields: string[] } {
  const bodiless = isBodiless(reply.status);
  const fields: string[] = [];
  let cacheControl = false;
  let vary = false;
  for (const name in reply.headers) {
    if (name === 'Cache-Control') {
      if (forceCacheControl) continue;
      cacheControl = true;
    } else if (name === 'Vary') {
      vary = true;
      if (varyOrigin) {
        fields.push(name, `${reply.headers[name] as string}, Origin`);
        continue;
      }
    } else if (bodiless && name === 'Content-Type') {
      continue;
    }
    fields.push(name, reply.headers[name] as string);
  }
  return { fields, cacheControl, vary, own: true };
}

/**
 * RFC 9112 §9.6: a server that closes right after responding while the client is still sending
 * makes the client's TCP stack receive a reset, which can discard our response unread. So we stop
 * processing input, keep reading and discarding it, half-close our side once the response is out,
 * and destroy the socket only when the client closes or after LINGER_MS. Node's server would call
 * socket.destroySoon() after a `Connection: close` response, which destroys the socket as soon as our
 * FIN is flushed; for this one socket we replace that with the staged close.
 */
function stageClose(req: IncomingMessage, clock: Clock): void {
  const socket: Socket = req.socket;
  req.resume();
  socket.destroySoon = function stagedDestroy(this: Socket): void {
    this.end();
    const timer = clock.setTimer(LINGER_MS, () => this.destroy());
    this.once('close', () => timer.cancel());
  };
}
