// The HTTP side of a server as a lifecycle component (lib/lifecycle.ts). bind() takes the port before
// anything else happens (so a port in use refuses the start before a data dir is created); requests
// that arrive before start() wait for it; drain stops accepting, closes idle keep-alive connections
// and waits for in-flight requests, cutting whatever is still open when the drain timeout passes
// (CONVENTIONS.md#shutdown: in-flight requests get up to 10 s to finish).
// It also owns the connection limits: slow or oversized header sections must not hold a connection or
// memory (CONVENTIONS.md#connections), and the errors Node's parser raises before a request exists
// are answered as problems too, with a request id like every other response.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Clock, Random } from '../clock.js';
import type { Component } from '../lifecycle.js';
import { formatHttpDate } from '../protocol/http-date.js';
import { problem, problemBody, type Problem } from '../protocol/problem.js';

const HEADERS_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 60_000;
const KEEP_ALIVE_TIMEOUT_MS = 5_000;
/** How often Node checks the two timeouts above (its default, 30 s, would let a slow client linger). */
const TIMEOUT_CHECK_MS = 1_000;
const MAX_HEADER_BYTES = 16 * 1024;
const DEFAULT_DRAIN_MS = 10_000;
/** request-line = method SP request-target SP HTTP-version (RFC 9112 §3); method = token. */
const REQUEST_LINE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+ [^ \r\n]+ HTTP\/\d\.\d\r?\n/;

export interface ListenerOptions {
  readonly host: string;
  /** 0 picks a free port. */
  readonly port: number;
  readonly clock: Clock;
  /** For the request ids of the answers given before a request exists. */
  readonly random: Random;
  /** How long a drain waits for in-flight requests before cutting connections. Default 10 s. */
  readonly drainTimeoutMs?: number;
  /** Time allowed for a request's header section (default 10 s) and for the whole request (60 s). */
  readonly headersTimeoutMs?: number;
  readonly requestTimeoutMs?: number;
}

/** Handles one request; `expectsContinue` when the client waits for 100 Continue (RFC 9110 §10.1.1). */
export type RequestHandler = (req: IncomingMessage, res: ServerResponse, expectsContinue: boolean) => void;

export interface Listener extends Component {
  /** http://host:port once bound. */
  readonly url: string;
  /** Takes the port; throws an error with code EADDRINUSE (and a message that says what to do) when it is taken. */
  bind(): Promise<void>;
  /** The handler requests go to from start() on. */
  use(handler: RequestHandler): void;
}

export function httpListener(options: ListenerOptions): Listener {
  let handler: RequestHandler | undefined;
  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => {
    markReady = resolve;
  });
  const serve = (req: IncomingMessage, res: ServerResponse, expectsContinue: boolean): void => {
    if (handler !== undefined) {
      handler(req, res, expectsContinue);
      return;
    }
    void ready.then(() => handler?.(req, res, expectsContinue));
  };
  const server = createServer({
    maxHeaderSize: MAX_HEADER_BYTES,
    requestTimeout: options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS,
    headersTimeout: options.headersTimeoutMs ?? HEADERS_TIMEOUT_MS,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    connectionsCheckingInterval: TIMEOUT_CHECK_MS,
    // RFC 9112 §3.2: a missing or repeated Host is answered 400 by the pipeline, as a problem.
    requireHostHeader: false,
  });
  server.on('request', (req: IncomingMessage, res: ServerResponse) => serve(req, res, false));
  // With this listener Node leaves 100 Continue to us: it is sent only once the request passed every
  // check that needs no body, so a 413 or 415 comes without inviting the body first.
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => serve(req, res, true));
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => answerClientError(error, socket, options));
  let url = '';
  let started = false;
  return {
    name: 'http',
    get url() {
      return url;
    },
    async bind() {
      try {
        await listen(server, options.port, options.host);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
        const message = `port ${options.port} on ${options.host} is in use: ` +
          'stop what uses it, or choose another port (--port 0 picks a free one)';
        throw Object.assign(new Error(message), { code: 'EADDRINUSE' });
      }
      const address = server.address() as AddressInfo;
      const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      url = `http://${host}:${address.port}`;
    },
    use(next) {
      handler = next;
    },
    async start() {
      if (!server.listening) await this.bind();
      if (handler === undefined) throw new TypeError('httpListener: use() a handler before start()');
      started = true;
      markReady();
    },
    async drain() {
      if (!server.listening) return;
      // Requests that waited for a start that never came have no handler to finish them.
      if (!started) server.closeAllConnections();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const drainMs = options.drainTimeoutMs ?? DEFAULT_DRAIN_MS;
      const timer = options.clock.setTimer(drainMs, () => server.closeAllConnections());
      await closed;
      timer.cancel();
    },
    async close() {
      server.closeAllConnections();
    },
  };
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.removeListener('error', reject);
      resolve();
    });
  });
}

/**
 * Errors Node's parser raises before a request exists (malformed request line, headers over
 * maxHeaderSize, headers too slow): answered as problems too, then the connection is closed,
 * which RFC 9112 §9.6 permits after such an error.
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Socket, options: ListenerOptions): void {
  if (!socket.writable || error.code === 'ECONNRESET') {
    socket.destroy();
    return;
  }
  const p = clientErrorProblem(error.code, (error as NodeJS.ErrnoException & { rawPacket?: Buffer }).rawPacket);
  const body = problemBody(p);
  const requestId = options.random.bytes(16).toString('hex');
  socket.end(
    `HTTP/1.1 ${p.status} ${p.title}\r\n` +
      `Content-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `Cache-Control: no-store\r\nX-Request-Id: ${requestId}\r\n` +
      `Date: ${formatHttpDate(options.clock.now())}\r\nConnection: close\r\n\r\n${body}`,
  );
}

function clientErrorProblem(code: string | undefined, rawPacket: Buffer | undefined): Problem {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return problem('header-fields-too-large', `The request header section exceeds ${MAX_HEADER_BYTES} bytes.`);
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return problem('request-timeout', 'The request was not received in time.');
    case 'HPE_INVALID_METHOD':
      // RFC 9110 §15.6.2: a well-formed request line with a method the server does not recognize
      // (methods are case-sensitive) is 501; bytes that are no request line at all are a 400.
      return REQUEST_LINE.test(rawPacket?.subarray(0, MAX_HEADER_BYTES).toString('latin1') ?? '')
        ? problem('not-implemented', '')
        : problem('bad-request', 'The request is not valid HTTP/1.1.');
    default:
      return problem('bad-request', 'The request is not valid HTTP/1.1.');
  }
}
