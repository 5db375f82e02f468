// Reading a request body under a cap (seed, Limits: "A request body larger than the cap must not be
// read in full, so that memory is not exhausted"; CONTRACT §3). The cap is enforced twice, the way
// raw-body does it: a declared Content-Length over the cap is refused before any byte is read, and a
// running count stops a chunked body at the cap. Either way memory never grows with what the client
// sends: we keep at most `limit` bytes.
import type { IncomingMessage } from 'node:http';

export type BodyResult =
  | { readonly ok: true; readonly bytes: Buffer }
  | { readonly ok: false; readonly reason: 'too-large' | 'aborted' };

/** True when the request declares (RFC 9110 §8.6 Content-Length) more content than `limit` bytes. */
export function declaresTooLarge(req: IncomingMessage, limit: number): boolean {
  const declared = req.headers['content-length'];
  if (declared === undefined) return false;
  const length = Number(declared);
  return Number.isFinite(length) && length > limit;
}

/** True when the request has content: a non-zero Content-Length, or any Transfer-Encoding. */
export function hasContent(req: IncomingMessage): boolean {
  if (req.headers['transfer-encoding'] !== undefined) return true;
  const declared = req.headers['content-length'];
  return declared !== undefined && Number(declared) > 0;
}

export function readBody(req: IncomingMessage, limit: number): Promise<BodyResult> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const finish = (result: BodyResult): void => {
      req.removeListener('data', onData);
      req.removeListener('end', onEnd);
      req.removeListener('error', onAbort);
      req.removeListener('aborted', onAbort);
      resolve(result);
    };
    const onData = (chunk: Buffer): void => {
      received += chunk.length;
      if (received > limit) {
        chunks.length = 0;
        // Keep the stream flowing with no listener: further input is read and dropped.
        finish({ ok: false, reason: 'too-large' });
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => finish({ ok: true, bytes: Buffer.concat(chunks, received) });
    const onAbort = (): void => finish({ ok: false, reason: 'aborted' });
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onAbort);
    req.on('aborted', onAbort);
  });
}
