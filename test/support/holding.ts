// Work that hangs until the test lets it go, for end-to-end tests of the job queue
// (CONVENTIONS.md#webhook-handlers, CONVENTIONS.md#deliveries): a gate a webhook handler waits at,
// counting the runs that reached it, and a receiver (./receiver.ts) that holds every request it gets
// open. Nothing waits for time: the test opens the gate or releases the receiver.
import { eventually } from './eventually.js';
import { Receiver } from './receiver.js';

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

/** A receiver that holds every request open until `letGo`. */
export function holdingReceiver(): Receiver {
  const receiver = new Receiver();
  receiver.otherwise = () => 'hold';
  return receiver;
}

/** Answers 200 to every request the receiver holds, and to every later one. */
export function letGo(receiver: Receiver): void {
  receiver.otherwise = () => 200;
  receiver.release(200);
}
