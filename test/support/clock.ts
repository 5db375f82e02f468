// Clocks for tests (lib/clock.ts): one that reads a time the test moves, with the system's timers,
// and a manual clock whose timers fire only when the test advances it, so a schedule of hours runs
// in milliseconds and in a known order.
import { systemClock, type Clock, type Timer } from '../../lib/clock.js';

/** A clock that reads `now` (a variable the test changes) and uses real timers. */
export function clockAt(now: () => number): Clock {
  return { now, monotonic: now, setTimer: (ms, callback, options) => systemClock.setTimer(ms, callback, options) };
}

interface Pending {
  readonly at: number;
  readonly order: number;
  readonly callback: () => void;
  cancelled: boolean;
}

/** Time moves only through `advance`; timers due by then fire in time order. */
export class ManualClock implements Clock {
  private time: number;
  private order = 0;
  private readonly pending: Pending[] = [];

  constructor(start = 1_700_000_000_000) {
    this.time = start;
  }

  now(): number {
    return this.time;
  }

  monotonic(): number {
    return this.time;
  }

  setTimer(ms: number, callback: () => void): Timer {
    const entry: Pending = { at: this.time + Math.max(0, ms), order: this.order++, callback, cancelled: false };
    this.pending.push(entry);
    return { cancel: () => void (entry.cancelled = true) };
  }

  /** Timers not yet fired or cancelled. */
  get timers(): number {
    return this.pending.filter((entry) => !entry.cancelled).length;
  }

  /** Moves time forward by `ms`, firing every timer that falls due on the way, earliest first. */
  advance(ms: number): void {
    const end = this.time + ms;
    for (;;) {
      const next = this.pending
        .filter((entry) => !entry.cancelled && entry.at <= end)
        .sort((a, b) => a.at - b.at || a.order - b.order)[0];
      if (next === undefined) break;
      next.cancelled = true;
      this.pending.splice(this.pending.indexOf(next), 1);
      this.time = Math.max(this.time, next.at);
      next.callback();
    }
    this.time = end;
  }
}
