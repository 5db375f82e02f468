// A subscriber's endpoint for end-to-end tests of the sender (CONVENTIONS.md#deliveries): an HTTP server on
// 127.0.0.1 that keeps every request it gets and answers each as the test says, one at a time: the next
// of `answers`, else what `otherwise` decides (200 unless told). An answer is a status (with header
// fields if wanted), 'hold' (no answer until `release`), or 'reset' (the connection is cut).
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Clock } from '../../lib/clock.js';
import type { JsonObject } from '../../lib/json.js';
import { eventually } from './eventually.js';

export interface ReceivedRequest {
  /** The request target, path and query. */
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
  /** The receiver's clock when the request had arrived whole. */
  readonly at: number;
}

export type ReceiverAnswer = number | { readonly status: number; readonly headers?: Record<string, string> } | 'hold' | 'reset';

/** How a held request is answered at last: a status, or one decided from the request. */
export type Release = number | 'reset' | ((request: ReceivedRequest) => number);

export interface ReceiverOptions {
  /** The path of `url` (default `/hook`). */
  readonly path?: string;
  /** Stamps `at` on each request (default: wall-clock milliseconds). */
  readonly clock?: Pick<Clock, 'now'>;
}

export class Receiver {
  readonly received: ReceivedRequest[] = [];
  /** Answers, in order, one per request. */
  answers: ReceiverAnswer[] = [];
  /** The answer once `answers` is used up. */
  otherwise: (request: ReceivedRequest) => ReceiverAnswer | Promise<ReceiverAnswer> = () => 200;
  /** A free port at the first start, then the same one at every start after a stop. */
  port = 0;
  private readonly held: { readonly res: ServerResponse; readonly request: ReceivedRequest }[] = [];
  private server: Server | undefined;
  private readonly path: string;
  private readonly now: () => number;

  constructor(options: ReceiverOptions = {}) {
    this.path = options.path ?? '/hook';
    const clock = options.clock;
    this.now = clock === undefined ? Date.now : () => clock.now();
  }

  /** The address a subscription names. */
  get url(): string {
    return `http://127.0.0.1:${this.port}${this.path}`;
  }

  async start(): Promise<void> {
    const server = createServer((req, res) => this.handle(req, res));
    this.server = server;
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as AddressInfo).port;
  }

  /** Stops listening; requests still held are answered as `held` says first (their connections cut by default). */
  async stop(held: Release = 'reset'): Promise<void> {
    this.release(held);
    const server = this.server;
    if (server === undefined) return;
    this.server = undefined;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }

  /** Answers every request held so far. */
  release(answer: Release = 200): void {
    for (const { res, request } of this.held.splice(0)) {
      if (answer === 'reset') res.destroy();
      else res.writeHead(typeof answer === 'number' ? answer : answer(request)).end();
    }
  }

  /** Resolves once `count` requests arrived in all. */
  async got(count: number): Promise<void> {
    await eventually(`${count} requests at the receiver`, () => this.received.length >= count, {
      detail: () => `${this.received.length} arrived`,
    });
  }

  /** The `count`th request from now on (1 = the next one). */
  async next(count = 1): Promise<ReceivedRequest> {
    const wanted = this.received.length + count;
    await this.got(wanted);
    return this.received[wanted - 1] as ReceivedRequest;
  }

  /** Every body received, parsed as JSON. */
  bodies(): JsonObject[] {
    return this.received.map(bodyOf);
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request: ReceivedRequest = { url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks), at: this.now() };
      this.received.push(request);
      const queued = this.answers.shift();
      void Promise.resolve(queued ?? this.otherwise(request)).then((answer) => {
        if (answer === 'hold') this.held.push({ res, request });
        else if (answer === 'reset') req.socket.destroy();
        else if (typeof answer === 'number') res.writeHead(answer).end();
        else res.writeHead(answer.status, answer.headers).end();
      });
    });
  }
}

/** A request's body parsed as JSON (a byte order mark, which forwards may keep, skipped). */
export function bodyOf(request: ReceivedRequest): JsonObject {
  return JSON.parse(request.body.toString('utf8').replace(/^\ufeff/, '')) as JsonObject;
}

/** A port on 127.0.0.1 that nothing listens on: taken from the system, then let go. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
