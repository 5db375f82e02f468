// One outbound POST of a webhook delivery (CONVENTIONS.md#deliveries), over node:http and
// node:https with keep-alive connections per receiver, so a steady stream of deliveries to one URL
// reuses its connections instead of paying a TCP (and TLS) handshake each. The header section is
// handed to node:http as one list of field lines, `Host` (and `Authorization` for credentials in the
// URL) made once per receiver URL, so a request costs no field-by-field bookkeeping, and a text body
// goes out with its head in one write (node still checks every name and value). Redirects are never
// followed: the status says what happened. The answer's body is not kept (a receiver's words are not
// stored): it is read and dropped so the connection can carry the next delivery, and a receiver that
// answers with more than ANSWER_LIMIT bytes loses its connection instead.
//
// With `refusePrivateAddresses` (CONVENTIONS.md#deliveries) the address is checked where the
// connection is made, after DNS, so a name that resolves (or is rebound) to an internal address
// is caught as surely as an address written in the URL: a literal is checked before anything is
// sent, and a name is resolved through `publicOnly`, which hands node:net only the addresses that
// are allowed. A connection can only go to an address its lookup returned, so nothing else is
// reached, and nothing at all when none is left.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { urlToHttpOptions } from 'node:url';
import type { Clock } from '../clock.js';
import { isPrivateAddress } from './addresses.js';

/**
 * What a failure says when only its class may be told (`outbox.errorDetail: "class"`): the receiver
 * did not answer in time, its host turned the connection away, or it could not be reached at all.
 */
export type FailureClass = 'timeout' | 'refused' | 'unreachable';

/** What one POST came to. */
export type PostResult =
  | { readonly kind: 'answered'; readonly status: number; readonly retryAfter: string | undefined }
  | { readonly kind: 'timeout' }
  | { readonly kind: 'stopped' }
  | { readonly kind: 'failed'; readonly error: string; readonly failure: FailureClass }
  /** The receiver's address is one `refusePrivateAddresses` keeps deliveries from; nothing was sent. */
  | { readonly kind: 'not-allowed' };

export interface PostRequest {
  readonly url: string;
  /** The request's fields but Host, Content-Length and Connection, which the poster writes. */
  readonly headers: Readonly<Record<string, string>>;
  /** Text is sent as its UTF-8 bytes; a Buffer (a forward's provider bytes) as it is. */
  readonly body: string | Buffer;
  /** No status line and headers within this many milliseconds: a timeout. */
  readonly timeoutMs: number;
  /** Refuse loopback, private, link-local, unique-local and unspecified addresses (addresses.ts). */
  readonly refusePrivateAddresses: boolean;
  /** Aborts the request (the process is shutting down). */
  readonly shutdown: AbortSignal;
}

/** Bytes of an answer's body read (and dropped) before its connection is cut instead. */
const ANSWER_LIMIT = 64 * 1024;
const MAX_ERROR_TEXT = 300;
/** The code of the error `publicOnly` fails a lookup with. */
const NOT_ALLOWED = 'ERR_RESAPI_ADDRESS_NOT_ALLOWED';
/** Network error codes (errno names) that say the receiver's host turned the connection away. */
const REFUSED = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE']);
const TIMED_OUT = new Set(['ETIMEDOUT']);
/** Receiver URLs whose parsed form is kept (a subscription's deliveries all go to one), at most. */
const KNOWN_URLS = 1024;

/** A receiver URL as a request needs it, parsed once. */
interface Target {
  readonly secure: boolean;
  /** The host as written in the URL, without the brackets of an IPv6 literal. */
  readonly literal: string;
  /** The options of a POST to it, but for its header fields: made once, not spread per attempt. */
  readonly options: RequestOptions;
  /** Its first field lines, name then value: `Host`, and `Authorization` when the URL has credentials. */
  readonly fields: readonly string[];
}

export class WebhookPoster {
  private readonly http = new HttpAgent({ keepAlive: true });
  private readonly https = new HttpsAgent({ keepAlive: true });
  private readonly targets = new Map<string, Target>();

  constructor(private readonly clock: Clock) {}

  post(request: PostRequest): Promise<PostResult> {
    return new Promise((resolve) => {
      if (request.shutdown.aborted) {
        resolve({ kind: 'stopped' });
        return;
      }
      const { secure, literal, options, fields } = this.target(request.url);
      const refuse = request.refusePrivateAddresses;
      // An address written in the URL is the address connected to: checked before anything is sent.
      if (refuse && isIP(literal) !== 0 && isPrivateAddress(literal)) {
        resolve({ kind: 'not-allowed' });
        return;
      }
      let settled = false;
      const settle = (result: PostResult): void => {
        if (settled) return;
        settled = true;
        request.shutdown.removeEventListener('abort', stop);
        resolve(result);
      };
      const { body } = request;
      const length = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
      // node:http adds `Connection: keep-alive` (the agent keeps the connection) and nothing else.
      const headers = [...fields];
      for (const name in request.headers) headers.push(name, request.headers[name] as string);
      headers.push('Content-Length', String(length));
      const outgoing = (secure ? httpsRequest : httpRequest)(
        refuse ? { ...options, headers, lookup: publicOnly } : { ...options, headers },
      );
      const stop = (): void => {
        settle({ kind: 'stopped' });
        outgoing.destroy();
      };
      // One deadline for the whole exchange: the answer's head decides the result, and a body that
      // has not ended by then costs the connection, so a receiver cannot hold one open for ever.
      const timer = this.clock.setTimer(request.timeoutMs, () => {
        settle({ kind: 'timeout' });
        outgoing.destroy();
      });
      request.shutdown.addEventListener('abort', stop, { once: true });
      outgoing.on('error', (error: Error & { code?: string }) => settle(failedResult(error)));
      outgoing.on('close', () => timer.cancel());
      outgoing.on('response', (answer: IncomingMessage) => {
        settle({ kind: 'answered', status: answer.statusCode ?? 0, retryAfter: single(answer.headers['retry-after']) });
        dropBody(answer, () => timer.cancel());
      });
      outgoing.end(body);
    });
  }

  /** The URL parsed, from the ones kept when it is one of them. */
  private target(text: string): Target {
    let target = this.targets.get(text);
    if (target === undefined) {
      const url = new URL(text);
      const literal = url.hostname.replace(/^\[|\]$/g, '');
      const secure = url.protocol === 'https:';
      const { protocol, hostname, port, path, auth } = urlToHttpOptions(url);
      const agent = secure ? this.https : this.http;
      const options = { protocol, hostname, port, path, method: 'POST', agent };
      // `url.host` is the Host field (RFC 9110 §7.2): brackets kept, a default port left out.
      const fields = ['Host', url.host];
      if (typeof auth === 'string') fields.push('Authorization', `Basic ${Buffer.from(auth).toString('base64')}`);
      target = { secure, literal, options, fields };
      if (this.targets.size >= KNOWN_URLS) this.targets.clear();
      this.targets.set(text, target);
    }
    return target;
  }

  /** Closes every kept connection. */
  close(): void {
    this.http.destroy();
    this.https.destroy();
  }
}

function dropBody(answer: IncomingMessage, done: () => void): void {
  let read = 0;
  answer.on('error', () => undefined);
  answer.on('end', done);
  answer.on('data', (chunk: Buffer) => {
    read += chunk.length;
    if (read > ANSWER_LIMIT) answer.destroy();
  });
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** node:dns's lookup, answering only the addresses a delivery may reach, or an error when none is left. */
const publicOnly: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, found: LookupAddress[]) => {
    if (error !== null) {
      callback(error, '', 0);
      return;
    }
    const allowed = found.filter((entry) => !isPrivateAddress(entry.address));
    const first = allowed[0];
    if (first === undefined) callback(Object.assign(new Error('address not allowed'), { code: NOT_ALLOWED }), '', 0);
    else if (options.all === true) callback(null, allowed);
    else callback(null, first.address, first.family);
  });
};

/** A request's error as a result: refused by `publicOnly`, or a network failure and its class. */
function failedResult(error: Error & { code?: string }): PostResult {
  if (error.code === NOT_ALLOWED) return { kind: 'not-allowed' };
  const code = error.code ?? '';
  const failureClass: FailureClass = REFUSED.has(code) ? 'refused' : TIMED_OUT.has(code) ? 'timeout' : 'unreachable';
  return { kind: 'failed', error: errorText(error), failure: failureClass };
}

function errorText(error: Error & { code?: string }): string {
  const text = error.code ?? error.message;
  return (text.length > MAX_ERROR_TEXT ? `${text.slice(0, MAX_ERROR_TEXT)}…` : text) || 'network error';
}
