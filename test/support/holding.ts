// Work that hangs until the test lets it go, for end-to-end tests of the job queue
// (CONVENTIONS.md#webhook-handlers, CONVENTIONS.md#deliveries): a gate a webhook handler waits at,
// counting the runs that reached it, and a receiver on 127.0.0.1 that holds every request it gets
// open. Nothing waits for time: the test opens the gate or releases the receiver.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { eventually } from './eventually.js';

/** A handler's body waits at `pass()` until `open()`; `arrived` counts the calls that reached it. */
export class Gate {
  arrived = 0;
  private opened = false;
  private readonly waiting: (() => void)[] = [];

  /** Counts the arrival, then resolves once the gate is open. */
  pass(): Promise<void> {
    this.arrived++;
    if (this.opened) return Promise.resolve();
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  open(): void {
    this.opened = true;
    for (const resolve of this.waiting.splice(0)) resolve();
  }

  /** Resolves once `count` calls reached the gate in all. */
  async reached(count: number): Promise<void> {
    await eventually(`${count} handler runs at the gate`, () => this.arrived >= count, { detail: () => `${this.arrived} arrived` });
  }
}

/** A receiver on 127.0.0.1: holds every request open while `holding`, else answers 200 at once. */
export class HoldingReceiver {
  /** The bodies received, in order. */
  readonly received: Buffer[] = [];
  holding: boolean;
  private readonly held: ServerResponse[] = [];
  private server: Server | undefined;
  url = '';

  constructor(options: { holding: boolean }) {
    this.holding = options.holding;
  }

  async start(): Promise<void> {
    this.server = createServer((req, res) => this.handle(req, res));
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  /** Answers 200 to every request held, and to every later one. */
  release(): void {
    this.holding = false;
    for (const res of this.held.splice(0)) res.end();
  }

  async stop(): Promise<void> {
    this.release();
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }

  /** Resolves once `count` requests arrived in all. */
  async got(count: number): Promise<void> {
    await eventually(`${count} requests at ${this.url}`, () => this.received.length >= count, { detail: () => `${this.received.length} arrived` });
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      this.received.push(Buffer.concat(chunks));
      if (this.holding) this.held.push(res);
      else res.end();
    });
  }
}
