// Large request bodies for the body-cap tests (memory use does not grow with what the client sends:
// CONVENTIONS.md#body-cap): a body written chunk by chunk with backpressure, cut short once the server has
// answered, and the peak memory of the server process that read it.
import { readFileSync } from 'node:fs';
import type { ClientRequest } from 'node:http';

export interface StreamResult {
  readonly status: number;
  readonly connection: string | undefined;
  readonly problemStatus: number | undefined;
  /** Bytes of the body written before the answer came. */
  readonly sent: number;
}

export interface StreamedBody {
  readonly head?: Buffer;
  readonly chunk: Buffer;
  readonly chunks: number;
  readonly tail?: Buffer;
}

/** Writes `head`, `chunks` copies of `chunk` and `tail` to `req`, stopping once the response arrives, and resolves with it. */
export function streamBody(req: ClientRequest, body: StreamedBody): Promise<StreamResult> {
  return new Promise((resolve, reject) => {
    let sent = 0;
    let written = 0;
    let started = false;
    let done = false;
    const pump = (): void => {
      if (!started) {
        started = true;
        if (body.head !== undefined) {
          req.write(body.head);
          sent = body.head.length;
        }
      }
      while (!done && written < body.chunks) {
        written++;
        sent += body.chunk.length;
        if (!req.write(body.chunk)) {
          req.once('drain', pump);
          return;
        }
      }
      if (!done) req.end(body.tail);
    };
    req.on('response', (res) => {
      let text = '';
      res.on('data', (data: Buffer) => (text += data.toString()));
      res.on('end', () => {
        done = true;
        const problemStatus = text === '' ? undefined : (JSON.parse(text) as { status: number }).status;
        resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, problemStatus, sent });
        req.destroy();
      });
    });
    // After the response the server may close while we still write; only an error before it counts.
    req.on('error', (error) => {
      if (!done) reject(error);
    });
    pump();
  });
}

/** Peak resident set size of a process, from Linux /proc (VmHWM). */
export function peakRss(pid: number): number {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(match?.[1] ?? 0) * 1024;
}
