// One outbound POST of a webhook delivery (CONVENTIONS.md#deliveries), over node:http and
// node:https with keep-alive connections per receiver, so a steady stream of deliveries to one URL
// reuses its connections instead of paying a TCP (and TLS) handshake each. Redirects are never
// followed: the status says what happened. The answer's body is not kept (a receiver's words are not
// stored): it is read and dropped so the connection can carry the next delivery, and a receiver that
// answers with more than ANSWER_LIMIT bytes loses its connection instead.
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Clock } from '../clock.js';

/** What one POST came to. */
export type PostResult =
  | { readonly kind: 'answered'; readonly status: number; readonly retryAfter: string | undefined }
  | { readonly kind: 'timeout' }
  | { readonly kind: 'stopped' }
  | { readonly kind: 'failed'; readonly error: string };

export interface PostRequest {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** No status line and headers within this many milliseconds: a timeout. */
  readonly timeoutMs: number;
  /** Aborts the request (the process is shutting down). */
  readonly shutdown: AbortSignal;
}

/** Bytes of an answer's body read (and dropped) before its connection is cut instead. */
const ANSWER_LIMIT = 64 * 1024;
const MAX_ERROR_TEXT = 300;

export class WebhookPoster {
  private readonly http = new HttpAgent({ keepAlive: true });
  private readonly https = new HttpsAgent({ keepAlive: true });

  constructor(private readonly clock: Clock) {}

  post(request: PostRequest): Promise<PostResult> {
    return new Promise((resolve) => {
      if (request.shutdown.aborted) {
        resolve({ kind: 'stopped' });
        return;
      }
      let settled = false;
      const settle = (result: PostResult): void => {
        if (settled) return;
        settled = true;
        request.shutdown.removeEventListener('abort', stop);
        resolve(result);
      };
      const url = new URL(request.url);
      const secure = url.protocol === 'https:';
      const body = Buffer.from(request.body);
      const outgoing = (secure ? httpsRequest : httpRequest)(url, {
        method: 'POST',
        agent: secure ? this.https : this.http,
        headers: { ...request.headers, 'Content-Length': String(body.length) },
      });
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
      outgoing.on('error', (error: Error & { code?: string }) => settle({ kind: 'failed', error: errorText(error) }));
      outgoing.on('close', () => timer.cancel());
      outgoing.on('response', (answer: IncomingMessage) => {
        settle({ kind: 'answered', status: answer.statusCode ?? 0, retryAfter: single(answer.headers['retry-after']) });
        dropBody(answer, () => timer.cancel());
      });
      outgoing.end(body);
    });
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

function errorText(error: Error & { code?: string }): string {
  const text = error.code ?? error.message;
  return (text.length > MAX_ERROR_TEXT ? `${text.slice(0, MAX_ERROR_TEXT)}…` : text) || 'network error';
}
