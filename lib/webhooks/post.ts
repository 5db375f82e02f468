// One outbound POST of a webhook delivery (CONVENTIONS.md#deliveries), written on keep-alive
// connections kept per receiver URL, so a steady stream of deliveries to one URL reuses its connections
// instead of paying a TCP (and TLS) handshake each. The request is HTTP/1.1 written as text: the
// request line and `Host` (and `Authorization` for credentials in the URL) made once per URL, the
// attempt's fields, `Content-Length` and `Connection: keep-alive`, then the body, in one write; the
// answer is read by answer.ts, which takes the status and Retry-After and counts the body (a TCP
// connection reads into one buffer the poster shares, without a readable stream). node:http's
// client did the same with an object per request, a parser and a stream per answer, listeners per
// socket and an agent's bookkeeping, three times the CPU of all this (measured, 16 in flight to a bare
// receiver: 23-39 µs of user CPU a request against 7-10, the system time alike), and every delivery
// pays it. Redirects are never followed: the status says what happened. The answer's body is not kept
// (a receiver's words are not stored): it is read and dropped so the connection can carry the next
// delivery, and a receiver that answers with more than ANSWER_LIMIT bytes loses its connection
// instead, as does one whose answer is not HTTP/1.x, has no length (it ends with the connection), or
// asks for the connection's close.
//
// With `refusePrivateAddresses` (CONVENTIONS.md#deliveries) the address is checked where the
// connection is made, after DNS, so a name that resolves (or is rebound) to an internal address
// is caught as surely as an address written in the URL: a literal is checked before anything is
// sent, and a name is resolved through `publicOnly`, which hands node:net only the addresses that
// are allowed. A connection can only go to an address its lookup returned, so nothing else is
// reached, and nothing at all when none is left. Connections made that way are kept apart from the
// others, so a delivery that must be checked never rides on a connection that was not.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { connect as tcpConnect, isIP, type LookupFunction, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { Clock, Timer } from '../clock.js';
import { isPrivateAddress } from './addresses.js';
import { AnswerReader } from './answer.js';

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

/** What makes the POSTs: a WebhookPoster, or the same on a thread of its own (post-thread.ts). */
export interface Poster {
  post(request: PostRequest): Promise<PostResult>;
  close(): void;
}

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
/** Receiver URLs kept parsed, with their idle connections, at most (a subscription's deliveries all go to one). */
const KNOWN_URLS = 1024;
/** Idle connections kept per receiver URL, at most (as many as a subscription has in flight, and more). */
const IDLE_PER_URL = 64;
/** One read of a connection, at most. */
const READ_BUFFER_BYTES = 16 * 1024;
/** TCP keep-alive probes on a kept connection start after this long without traffic (node's agent's default). */
const KEEP_ALIVE_PROBE_MS = 1000;
/** A field name (RFC 9110 §5.1 token) and value (§5.5: no CR, LF or NUL) that may be written. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const BAD_VALUE = /[^\t\x20-\x7e\x80-\xff]/;
const NOT_ASCII = /[^\x00-\x7f]/;

/** A receiver URL as a request needs it, parsed once, with its idle connections. */
interface Target {
  readonly secure: boolean;
  /** The host as written in the URL, without the brackets of an IPv6 literal: what is connected to. */
  readonly literal: string;
  readonly port: number;
  /** The request line and the first fields: `Host`, and `Authorization` when the URL has credentials. */
  readonly head: string;
  readonly refuse: boolean;
  /** Connections that carried an answer to its end and wait for the next request, the latest last. */
  readonly idle: Connection[];
}

/** What the connection is doing for the exchange it carries now. */
interface Exchange {
  data(chunk: Buffer): void;
  ended(): void;
  failed(error: Error & { code?: string }): void;
}

/** One connection to a receiver, carrying one exchange at a time, kept while it may carry another. */
class Connection {
  exchange: Exchange | undefined;

  constructor(
    readonly socket: Socket,
    readonly target: Target,
    all: Set<Connection>,
  ) {
    all.add(this);
    socket.setNoDelay(true);
    socket.setKeepAlive(true, KEEP_ALIVE_PROBE_MS);
    // A TLS connection's bytes come as events; a TCP connection's through `received` (see `connection`).
    socket.on('data', (chunk: Buffer) => this.received(chunk));
    socket.on('end', () => {
      if (this.exchange === undefined) this.drop();
      else this.exchange.ended();
    });
    socket.on('error', (error: Error) => this.exchange?.failed(error));
    socket.on('close', () => {
      all.delete(this);
      const at = target.idle.indexOf(this);
      if (at >= 0) target.idle.splice(at, 1);
      this.exchange?.ended();
    });
  }

  /** Bytes of the answer; bytes no request asked for make it a connection not to keep. */
  received(chunk: Buffer): void {
    if (this.exchange === undefined) this.drop();
    else this.exchange.data(chunk);
  }

  /** Closes an idle connection, out of the idle ones at once (its `close` event comes a turn later). */
  drop(): void {
    const at = this.target.idle.indexOf(this);
    if (at >= 0) this.target.idle.splice(at, 1);
    this.socket.destroy();
  }

  /** The exchange is over: the connection waits for the next one when it may, else it is closed. */
  done(reusable: boolean): void {
    this.exchange = undefined;
    const { socket, target } = this;
    if (!reusable || socket.destroyed || target.idle.length >= IDLE_PER_URL) {
      socket.destroy();
      return;
    }
    // An idle connection does not keep the process alive, as with node's agent.
    socket.unref();
    target.idle.push(this);
  }
}

/**
 * One request's exchange on its connection: its answer read as it comes, one deadline for the whole
 * exchange (the answer's head decides the result, and a body that has not ended by then costs the
 * connection, so a receiver cannot hold one open for ever), and the shutdown signal. One object per
 * request instead of a closure per step; it is among the poster's `live` exchanges until it settles,
 * which is how the shutdown signal finds it (one listener per signal, not one per request).
 */
class Delivery implements Exchange {
  private readonly answer = new AnswerReader();
  private readonly timer: Timer;
  private settled = false;

  constructor(
    private readonly connection: Connection,
    readonly request: PostRequest,
    clock: Clock,
    private readonly live: Set<Delivery>,
    private readonly resolve: (result: PostResult) => void,
  ) {
    this.timer = clock.setTimer(request.timeoutMs, () => {
      this.settle({ kind: 'timeout' });
      this.end(false);
    });
    live.add(this);
  }

  data(chunk: Buffer): void {
    const { answer } = this;
    const state = answer.push(chunk);
    const { status, retryAfter } = answer;
    if (status !== undefined) this.settle({ kind: 'answered', status, retryAfter });
    if (state === 'error') this.settle(failedResult(codedError('not an HTTP answer', answer.error)));
    if (state !== 'more' || answer.bodyBytes > ANSWER_LIMIT) this.end(state === 'done' && answer.reusable);
  }

  ended(): void {
    // The connection ended before the answer did (a body read to the close is the exception).
    if (this.answer.end() !== 'done') this.settle(failedResult(codedError('socket hang up', 'ECONNRESET')));
    this.end(false);
  }

  failed(error: Error & { code?: string }): void {
    this.settle(failedResult(error));
    this.end(false);
  }

  /** The request's shutdown signal aborted. */
  stopped(): void {
    this.settle({ kind: 'stopped' });
    this.end(false);
  }

  private settle(result: PostResult): void {
    if (this.settled) return;
    this.settled = true;
    this.live.delete(this);
    this.resolve(result);
  }

  /** The exchange is over; the connection goes back to the idle ones when `reusable`, else it is closed. */
  private end(reusable: boolean): void {
    if (this.connection.exchange !== this) return;
    this.timer.cancel();
    this.connection.done(reusable);
  }
}

export class WebhookPoster implements Poster {
  private readonly targets = new Map<string, Target>();
  private readonly connections = new Set<Connection>();
  /** Where every TCP connection's bytes are read, each read handed over before the next (see `connection`). */
  private readonly readBuffer = Buffer.allocUnsafe(READ_BUFFER_BYTES);
  /** The exchanges not yet settled; and the shutdown signals listened to, each once (see Delivery). */
  private readonly live = new Set<Delivery>();
  private readonly watched = new WeakSet<AbortSignal>();

  constructor(private readonly clock: Clock) {}

  post(request: PostRequest): Promise<PostResult> {
    return new Promise((resolve) => {
      if (request.shutdown.aborted) {
        resolve({ kind: 'stopped' });
        return;
      }
      const refuse = request.refusePrivateAddresses;
      const target = this.target(request.url, refuse);
      // An address written in the URL is the address connected to: checked before anything is sent.
      if (refuse && isIP(target.literal) !== 0 && isPrivateAddress(target.literal)) {
        resolve({ kind: 'not-allowed' });
        return;
      }
      const { body } = request;
      const length = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
      let head = target.head;
      for (const name in request.headers) {
        const value = request.headers[name] as string;
        if (!TOKEN.test(name) || BAD_VALUE.test(value)) {
          resolve({ kind: 'failed', error: 'ERR_INVALID_CHAR', failure: 'unreachable' });
          return;
        }
        head += `${name}: ${value}\r\n`;
      }
      head += `Content-Length: ${length}\r\nConnection: keep-alive\r\n\r\n`;
      this.watch(request.shutdown);
      const connection = this.connection(target);
      connection.exchange = new Delivery(connection, request, this.clock, this.live, resolve);
      const { socket } = connection;
      if (typeof body === 'string' && !NOT_ASCII.test(head)) {
        socket.write(head + body);
      } else {
        // Field values may hold latin1 bytes (a forward's provider fields), written as they came.
        socket.cork();
        socket.write(head, 'latin1');
        socket.write(body);
        socket.uncork();
      }
    });
  }

  /** Listens to a shutdown signal once: when it aborts, every exchange it stops is settled as stopped. */
  private watch(signal: AbortSignal): void {
    if (this.watched.has(signal)) return;
    this.watched.add(signal);
    signal.addEventListener('abort', () => {
      for (const delivery of this.live) if (delivery.request.shutdown === signal) delivery.stopped();
    }, { once: true });
  }

  /** Settles `request` as stopped and drops its connection, if it is still under way. */
  stop(request: PostRequest): void {
    for (const delivery of this.live) if (delivery.request === request) delivery.stopped();
  }

  /** Closes every kept connection, and those carrying a request (it fails as cut). */
  close(): void {
    for (const connection of this.connections) connection.socket.destroy();
  }

  /** An idle connection to the target, the one used last, or a new one. */
  private connection(target: Target): Connection {
    for (let idle = target.idle.pop(); idle !== undefined; idle = target.idle.pop()) {
      if (idle.socket.destroyed) continue;
      idle.socket.ref();
      return idle;
    }
    const { literal: host, port, secure, refuse } = target;
    const lookup = refuse ? { lookup: publicOnly } : {};
    if (secure) {
      const socket = tlsConnect({ host, port, ...(isIP(host) === 0 ? { servername: host } : {}), ...lookup });
      return new Connection(socket, target, this.connections);
    }
    // A TCP connection reads into the poster's one buffer and hands the bytes over at once, without
    // a readable stream's events and chunks: the answer reader turns them into text before returning.
    let connection: Connection | undefined;
    const onread = {
      buffer: this.readBuffer,
      callback: (bytes: number, buffer: Uint8Array): boolean => {
        connection?.received(Buffer.from(buffer.buffer, buffer.byteOffset, bytes));
        return true;
      },
    };
    const socket = tcpConnect({ host, port, ...lookup, onread });
    connection = new Connection(socket, target, this.connections);
    return connection;
  }

  /** The URL parsed, from the ones kept when it is one of them. */
  private target(text: string, refuse: boolean): Target {
    const key = refuse ? `!${text}` : text;
    let target = this.targets.get(key);
    if (target === undefined) {
      const url = new URL(text);
      const literal = url.hostname.replace(/^\[|\]$/g, '');
      const secure = url.protocol === 'https:';
      const port = url.port === '' ? (secure ? 443 : 80) : Number(url.port);
      // `url.host` is the Host field (RFC 9110 §7.2): brackets kept, a default port left out.
      let head = `POST ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\n`;
      if (url.username !== '' || url.password !== '') {
        const credentials = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
        head += `Authorization: Basic ${Buffer.from(credentials).toString('base64')}\r\n`;
      }
      target = { secure, literal, port, head, refuse, idle: [] };
      if (this.targets.size >= KNOWN_URLS) this.forgetTargets();
      this.targets.set(key, target);
    }
    return target;
  }

  /** Drops the parsed URLs kept, and closes their idle connections (those in use close after their answer). */
  private forgetTargets(): void {
    for (const target of this.targets.values()) {
      for (const connection of target.idle.splice(0)) connection.drop();
    }
    this.targets.clear();
  }
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

/** An error as node's own carry their code: "socket hang up" is ECONNRESET, as node:http says it. */
function codedError(message: string, code: string | undefined): Error & { code?: string } {
  return Object.assign(new Error(message), { code });
}

function errorText(error: Error & { code?: string }): string {
  const text = error.code ?? error.message;
  return (text.length > MAX_ERROR_TEXT ? `${text.slice(0, MAX_ERROR_TEXT)}…` : text) || 'network error';
}
