// Bytes queued to sockets, bounded (CONVENTIONS.md#connections). A client that asks for a large page
// and never reads it makes the server hold the page until the kernel takes it: a thousand such
// clients would hold a thousand pages. So every response body is counted from the moment respond.ts
// hands it over until the response finishes (its last byte is in the kernel) or closes, and:
//
// - a page asks for room before it is built (`reserve`): once the bodies queued and the pages being
//   built reach `limits.maxQueuedResponseBytes`, new pages are refused (503, Retry-After), while
//   items, /$health and problems still go out, so memory stays within the cap plus about one page;
// - a response that makes no progress for `limits.responseStallMs` is abandoned: its connection is
//   reset, which frees at once what Node and the kernel hold for it (a plain close would leave the
//   unsent bytes in the kernel, queued ahead of the FIN, until the client read them).
//
// Progress is seen as it happens: a body larger than CHUNK_BYTES is written a chunk at a time, the
// next once the socket has taken the last ('drain'), so a slow reader that keeps reading is never
// taken for a stalled one. One timer serves every response (`sweep`); it is not armed again once
// no response is left.
import type { ServerResponse } from 'node:http';
import type { Clock, Timer } from '../clock.js';

/** Bodies up to this size go out in one write; larger ones a chunk at a time. */
const CHUNK_BYTES = 64 * 1024;

export interface SendLimits {
  readonly maxQueuedResponseBytes: number;
  readonly responseStallMs: number;
}

/** A response whose body is not yet all in the kernel. */
interface Sending {
  readonly res: ServerResponse;
  readonly bytes: number;
  /** clock.monotonic() when it last made progress (began, or the socket took a chunk). */
  lastProgress: number;
}

export class SendQueue {
  private queued = 0;
  private reserved = 0;
  private abandonedCount = 0;
  private readonly sending = new Set<Sending>();
  private timer: Timer | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly limits: SendLimits,
  ) {}

  /** Bytes of bodies handed to responses that have not finished: what /$metrics reports. */
  get queuedBytes(): number {
    return this.queued;
  }

  /** Responses abandoned for making no progress since the server started. */
  get abandoned(): number {
    return this.abandonedCount;
  }

  /** Whether what is queued and reserved reaches the cap: a page is then refused, built or kept. */
  get full(): boolean {
    return this.queued + this.reserved >= this.limits.maxQueuedResponseBytes;
  }

  /**
   * Room to build a page of up to `bytes`: the function that gives it back once the page is built
   * (safe to call twice), or undefined when what is queued and reserved already reaches the cap.
   * A page is let in whenever anything is left, so the cap is passed by at most one page's reservation.
   */
  reserve(bytes: number): (() => void) | undefined {
    if (this.full) return undefined;
    this.reserved += bytes;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.reserved -= bytes;
    };
  }

  /** Ends `res`, whose head is written, with `body`, counting the body until the response is done. */
  end(res: ServerResponse, body: Buffer): void {
    if (body.length === 0) {
      res.end();
      return;
    }
    const whole = body.length <= CHUNK_BYTES;
    if (whole) {
      res.end(body);
      // Most answers are in the kernel as soon as they are written: nothing is held for them, so there
      // is nothing to count or to watch.
      if (res.writableLength === 0) return;
    }
    const entry: Sending = { res, bytes: body.length, lastProgress: this.clock.monotonic() };
    this.queued += entry.bytes;
    this.sending.add(entry);
    let offset = whole ? body.length : 0;
    const writeMore = (): void => {
      entry.lastProgress = this.clock.monotonic();
      while (offset < body.length) {
        const chunk = body.subarray(offset, offset + CHUNK_BYTES);
        offset += chunk.length;
        if (offset === body.length) res.end(chunk);
        else if (!res.write(chunk)) {
          res.once('drain', writeMore);
          return;
        }
      }
    };
    const done = (): void => {
      res.removeListener('drain', writeMore);
      this.forget(entry);
    };
    // 'finish': the last byte is in the kernel; 'close': that, or the connection is gone.
    res.once('finish', done);
    res.once('close', done);
    this.arm(this.limits.responseStallMs);
    if (!whole) writeMore();
  }

  /** Stops counting `entry`. The timer stays: cancelling and arming it per response would cost more than a sweep. */
  private forget(entry: Sending): void {
    if (this.sending.delete(entry)) this.queued -= entry.bytes;
  }

  private arm(ms: number): void {
    if (this.timer !== undefined) return;
    this.timer = this.clock.setTimer(ms, () => {
      this.timer = undefined;
      this.sweep();
    });
  }

  /** Abandons every response without progress for responseStallMs; arms the timer for the next one due. */
  private sweep(): void {
    const stallMs = this.limits.responseStallMs;
    const now = this.clock.monotonic();
    let nextDue = Number.POSITIVE_INFINITY;
    for (const entry of this.sending) {
      // All in the kernel already, its 'finish' not yet emitted: nothing is held here.
      if (entry.res.writableFinished) {
        this.forget(entry);
      } else if (now - entry.lastProgress >= stallMs) {
        this.abandon(entry);
      } else {
        nextDue = Math.min(nextDue, entry.lastProgress + stallMs);
      }
    }
    if (this.sending.size > 0) this.arm(Math.max(1, nextDue - now));
  }

  private abandon(entry: Sending): void {
    this.abandonedCount++;
    this.forget(entry);
    const socket = entry.res.socket;
    // A reset (TCP's ABORT, RFC 9293 §3.10.5) drops at once what the kernel still holds for the peer.
    if (socket !== null && !socket.destroyed) socket.resetAndDestroy();
    else entry.res.destroy();
  }
}
