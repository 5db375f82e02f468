// The deliveries' poster on a thread of its own (CONVENTIONS.md#deliveries): the same POSTs as
// post.ts makes, written and read by a WebhookPoster on a worker thread, so that the sockets'
// writes and reads (the kernel's loopback wake-up of each receiver, answer parsing) run beside the
// main thread instead of on it. Measured with one subscription and a bare receiver (10,000 items,
// 32 connections of PUTs, the two builds alternating): 8,000-9,800 writes a second with it here,
// 7,100-8,200 with the poster on the main thread, every delivery made within 2 s of the load's end.
//
// What stays on the main thread is every decision: the attempt's timeout runs on the injected clock
// (so `outbox.timeoutMs` is what it says, and a test's manual clock drives it), and the shutdown
// signal; either one settles the attempt here at once and tells the thread to drop the exchange. The
// thread keeps no timer of its own. Requests and answers cross in one message per turn each way, not
// one per delivery (a message costs ~12 µs alone, ~2 in batches of 16, measured). If the thread
// dies, every attempt it carried fails as unreachable (the outbox retries them) and the next POST
// starts a new thread.
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { systemClock, type Clock, type Timer } from '../clock.js';
import { WebhookPoster, type Poster, type PostRequest, type PostResult } from './post.js';

/** What a worker thread of this module is told, so that it knows it is one. */
const THREAD_DATA = 'resapi-poster';

/** A request as it crosses to the thread: PostRequest without its signal and timeout. */
interface ThreadRequest {
  readonly n: number;
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string | Uint8Array;
  readonly refusePrivateAddresses: boolean;
}

/** One turn's message to the thread: attempts to start, and attempts to drop (timed out, stopped). */
interface ToThread {
  readonly posts: ThreadRequest[];
  readonly drops: number[];
}

/** One turn's message from the thread: each settled attempt's number and result. */
type FromThread = readonly (readonly [number, PostResult])[];

/** An attempt sent and not settled yet. */
interface Pending {
  readonly resolve: (result: PostResult) => void;
  readonly timer: Timer;
  readonly shutdown: AbortSignal;
}

const THREAD_GONE: PostResult = { kind: 'failed', error: 'the delivery thread stopped', failure: 'unreachable' };

export class ThreadPoster implements Poster {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Pending>();
  private next = 0;
  private outgoing: ToThread | undefined;
  private readonly watched = new WeakSet<AbortSignal>();
  /** Once closed, nothing starts the thread again (a drop after the close has nothing to drop). */
  private closed = false;

  constructor(private readonly clock: Clock) {}

  post(request: PostRequest): Promise<PostResult> {
    if (request.shutdown.aborted || this.closed) return Promise.resolve({ kind: 'stopped' });
    const n = this.next++;
    const { url, headers, body, refusePrivateAddresses, shutdown } = request;
    this.send().posts.push({ n, url, headers, body, refusePrivateAddresses });
    this.watch(shutdown);
    return new Promise((resolve) => {
      const timer = this.clock.setTimer(request.timeoutMs, () => this.drop(n, { kind: 'timeout' }));
      this.pending.set(n, { resolve, timer, shutdown });
    });
  }

  /** Stops the thread; attempts still out are settled as stopped. */
  close(): void {
    this.closed = true;
    for (const n of [...this.pending.keys()]) this.settle(n, { kind: 'stopped' });
    void this.worker?.terminate();
    this.worker = undefined;
  }

  /** This turn's message, sent at the turn's end (one per turn, whatever it carries). */
  private send(): ToThread {
    if (this.outgoing === undefined) {
      const message: ToThread = { posts: [], drops: [] };
      this.outgoing = message;
      setImmediate(() => {
        this.outgoing = undefined;
        if (!this.closed) this.thread().postMessage(message);
      });
    }
    return this.outgoing;
  }

  /** The thread, started on first use and again after it died. */
  private thread(): Worker {
    if (this.worker !== undefined) return this.worker;
    const worker = new Worker(new URL(import.meta.url), { workerData: THREAD_DATA });
    worker.unref();
    worker.on('message', (settled: FromThread) => {
      for (const [n, result] of settled) this.settle(n, result);
    });
    // What this turn's message holds was never carried by the dead thread: it goes to the next one,
    // so it is left pending (settled here, it would be retried by the outbox and sent all the same).
    const gone = (): void => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      const unsent = new Set(this.outgoing?.posts.map((post) => post.n));
      for (const n of [...this.pending.keys()]) if (!unsent.has(n)) this.settle(n, THREAD_GONE);
    };
    worker.on('error', gone);
    worker.on('exit', gone);
    this.worker = worker;
    return worker;
  }

  /** Settles an attempt here and tells the thread to drop its exchange. */
  private drop(n: number, result: PostResult): void {
    if (!this.pending.has(n)) return;
    this.settle(n, result);
    this.send().drops.push(n);
  }

  private settle(n: number, result: PostResult): void {
    const pending = this.pending.get(n);
    if (pending === undefined) return;
    this.pending.delete(n);
    pending.timer.cancel();
    pending.resolve(result);
  }

  /** Listens to a shutdown signal once: when it aborts, the attempts it stops are settled as stopped. */
  private watch(signal: AbortSignal): void {
    if (this.watched.has(signal)) return;
    this.watched.add(signal);
    signal.addEventListener('abort', () => {
      for (const [n, pending] of this.pending) if (pending.shutdown === signal) this.drop(n, { kind: 'stopped' });
    }, { once: true });
  }
}

/** The thread's side: one WebhookPoster, no timers (the main thread keeps them), one message a turn back. */
function serveThread(port: NonNullable<typeof parentPort>): void {
  const never: Timer = { cancel: () => {} };
  const clock: Clock = { ...systemClock, setTimer: () => never };
  const poster = new WebhookPoster(clock);
  const shutdown = new AbortController().signal;
  const live = new Map<number, PostRequest>();
  let settled: [number, PostResult][] | undefined;
  const answer = (n: number, result: PostResult): void => {
    if (!live.delete(n)) return;
    if (settled === undefined) {
      const batch: [number, PostResult][] = [];
      settled = batch;
      setImmediate(() => {
        settled = undefined;
        port.postMessage(batch);
      });
    }
    settled.push([n, result]);
  };
  port.on('message', ({ posts, drops }: ToThread) => {
    for (const { n, url, headers, body, refusePrivateAddresses } of posts) {
      const bytes = typeof body === 'string' ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
      const request: PostRequest = { url, headers, body: bytes, refusePrivateAddresses, timeoutMs: 0, shutdown };
      live.set(n, request);
      void poster.post(request).then((result) => answer(n, result));
    }
    for (const n of drops) {
      const request = live.get(n);
      live.delete(n);
      if (request !== undefined) poster.stop(request);
    }
  });
}

if (!isMainThread && workerData === THREAD_DATA && parentPort !== null) serveThread(parentPort);
