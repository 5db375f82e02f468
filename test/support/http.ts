// A small HTTP client for tests: exact control of methods, header lines (an array value sends one
// field line per element) and bodies, and the raw response back.
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';

export interface TestResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
  readonly text: string;
  json(): unknown;
}

export interface TestRequest {
  readonly method?: string;
  readonly headers?: Readonly<Record<string, string | readonly string[]>>;
  readonly body?: string | Buffer;
}

export function request(base: string, path: string, options: TestRequest = {}): Promise<TestResponse> {
  return new Promise((resolve, reject) => {
    const url = new URL(base);
    // Spaces are written as %20 so tests can spell $filter expressions readably.
    const req = httpRequest({ host: url.hostname, port: url.port, path: path.replace(/ /g, '%20'), method: options.method ?? 'GET', agent: false });
    for (const [name, value] of Object.entries(options.headers ?? {})) req.setHeader(name, typeof value === 'string' ? value : [...value]);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        const text = body.toString('utf8');
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text, json: () => JSON.parse(text) as unknown });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

export const JSON_HEADERS = { 'Content-Type': 'application/json' } as const;

/** PUT that creates (If-None-Match: *). */
export function create(base: string, path: string, doc: unknown): Promise<TestResponse> {
  return request(base, path, { method: 'PUT', headers: { ...JSON_HEADERS, 'If-None-Match': '*' }, body: JSON.stringify(doc) });
}

/** Asserts-free accessor for a problem body's fields. */
export function problemOf(res: TestResponse): { type: string; title: string; status: number; detail: string; errors?: unknown[] } {
  return res.json() as { type: string; title: string; status: number; detail: string; errors?: unknown[] };
}

export interface SlowRequest {
  /** Sends the rest of the body and resolves with the response status. */
  finish(rest: string): Promise<number>;
}

/**
 * Starts a chunked request, sends `firstPart` of its body and resolves once the server is handling it:
 * Node answers `Expect: 100-continue` just before it hands the request to the application, so the
 * handler has run up to its first await when this resolves. No sleeping, no guessing.
 */
export async function startSlowRequest(base: string, path: string, options: { readonly method: string; readonly headers: Readonly<Record<string, string>>; readonly firstPart: string }): Promise<SlowRequest> {
  const url = new URL(base);
  const headers = { ...options.headers, 'Transfer-Encoding': 'chunked', Expect: '100-continue' };
  const req = httpRequest({ host: url.hostname, port: url.port, path, method: options.method, agent: false, headers });
  const status = new Promise<number>((resolve, reject) => {
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
  });
  const handedOver = new Promise<void>((resolve, reject) => {
    req.once('continue', resolve);
    req.once('error', reject);
  });
  req.write(options.firstPart);
  await handedOver;
  return {
    finish(rest) {
      req.end(rest);
      return status;
    },
  };
}
