// What the benchmark's limit servers (same-bytes.ts, ideal-durable.ts, unavoidable.ts) share, each a
// process of its own: listening on loopback and saying where, stopping on SIGTERM, reading a request's
// body whole, and answering `GET` with their totals as JSON for the suite to read.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { rawRequest, sendRaw } from '../load.js';

/** Listens on a free loopback port, prints `listening on URL` (what spawnModule waits for), stops on SIGTERM. */
export function listenOnLoopback(server: Server): void {
  server.listen(0, '127.0.0.1', () => {
    process.stdout.write(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
  });
  process.once('SIGTERM', () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}

/** Reads a request's body whole, then calls `done` with it. */
export function readBody(request: IncomingMessage, done: (body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => done(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)));
}

/** Answers a limit server's totals as JSON. */
export function answerTotals(response: ServerResponse, totals: object): void {
  const text = JSON.stringify(totals);
  response.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) }).end(text);
}

/** A limit server's totals, as `answerTotals` wrote them. */
export async function limitTotals<T>(url: URL): Promise<T> {
  const answer = await sendRaw(url, rawRequest('GET', url, '/'));
  return JSON.parse(answer.body.toString('utf8')) as T;
}
