// The HTTP side of a server as a lifecycle component (lib/lifecycle.ts): start listens; drain stops
// accepting, closes idle keep-alive connections and waits for in-flight requests, cutting whatever is
// still open when the drain timeout passes (CONTRACT §1: "finish in-flight requests (up to 10 s)").
// It also owns the connection limits: slow or oversized header sections must not hold a connection
// or memory (README, decisions: Connections), and the errors Node's parser raises before a request exists are
// answered as problems too.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Clock } from '../clock.js';
import type { Component } from '../lifecycle.js';
import { problem, problemBody } from '../protocol/problem.js';

const HEADERS_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 60_000;
const KEEP_ALIVE_TIMEOUT_MS = 5_000;
/** How often Node checks the two timeouts above (its default, 30 s, would let a slow client linger). */
const TIMEOUT_CHECK_MS = 1_000;
export const MAX_HEADER_BYTES = 16 * 1024;
const DEFAULT_DRAIN_MS = 10_000;

export interface ListenerOptions {
  readonly host: string;
  /** 0 picks a free port. */
  readonly port: number;
  readonly clock: Clock;
  /** How long a drain waits for in-flight requests before cutting connections. Default 10 s. */
  readonly drainTimeoutMs?: number;
  /** Time allowed for a request's header section (default 10 s) and for the whole request (60 s). */
  readonly headersTimeoutMs?: number;
  readonly requestTimeoutMs?: number;
}

export interface Listener extends Component {
  /** http://host:port once started. */
  readonly url: string;
}

export function httpListener(handler: (req: IncomingMessage, res: ServerResponse) => void, options: ListenerOptions): Listener {
  const server = createServer(
    {
      maxHeaderSize: MAX_HEADER_BYTES,
      requestTimeout: options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS,
      headersTimeout: options.headersTimeoutMs ?? HEADERS_TIMEOUT_MS,
      keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
      connectionsCheckingInterval: TIMEOUT_CHECK_MS,
    },
    handler,
  );
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => answerClientError(error, socket));
  let url = '';
  return {
    name: 'http',
    get url() {
      return url;
    },
    async start() {
      await listen(server, options.port, options.host);
      const address = server.address() as AddressInfo;
      const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      url = `http://${host}:${address.port}`;
    },
    async drain() {
      if (!server.listening) return;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const timer = options.clock.setTimer(options.drainTimeoutMs ?? DEFAULT_DRAIN_MS, () => server.closeAllConnections());
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
function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  if (!socket.writable || error.code === 'ECONNRESET') {
    socket.destroy();
    return;
  }
  const p =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? problem('header-fields-too-large', `The request header section exceeds ${MAX_HEADER_BYTES} bytes.`)
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? problem('request-timeout', 'The request was not received in time.')
        : problem('bad-request', 'The request is not valid HTTP/1.1.');
  const body = problemBody(p);
  socket.end(
    `HTTP/1.1 ${p.status} ${p.title}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${body}`,
  );
}
