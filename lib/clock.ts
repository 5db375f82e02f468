// The one clock and the one random source of a server (README, Architecture: "one clock and one
// random source, injected"). Everything in lib/ that needs the time, a timer or randomness takes a
// Clock or a Random; the system implementations below are the only code that reads Date.now,
// setTimeout or Math.random. Tests inject a manual clock to run a whole retry schedule (a day of
// backoff, CONVENTIONS.md#retry-schedules) in milliseconds, and a seeded random source to make jitter
// repeatable.
import { randomBytes, randomFillSync } from 'node:crypto';

/** A pending timer; `cancel` is safe to call more than once, and after the timer fired. */
export interface Timer {
  cancel(): void;
}

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Milliseconds from an arbitrary start, never going back and finer than a millisecond: for durations. */
  monotonic(): number;
  /**
   * Calls `callback` once, `ms` milliseconds from now. A timer keeps the process alive only when
   * `keepAlive` is set (someone awaits it); background timers do not, because a server's listening
   * socket does that and a closed server must be free to exit.
   */
  setTimer(ms: number, callback: () => void, options?: TimerOptions): Timer;
}

export interface TimerOptions {
  readonly keepAlive?: boolean;
}

export interface Random {
  /** Cryptographically strong bytes (ids, keys, tokens, temp-file names). */
  bytes(size: number): Buffer;
  /** A number in [0, 1) for jitter; it needs no cryptographic strength. */
  fraction(): number;
}

/** Node's own timers cap a delay at 2^31-1 ms and fire a longer one at once; clamp instead. */
const MAX_TIMER_MS = 2_147_483_647;

export const systemClock: Clock = Object.freeze({
  now: () => Date.now(),
  monotonic: () => performance.now(),
  setTimer(ms: number, callback: () => void, options: TimerOptions = {}): Timer {
    const handle = setTimeout(callback, Math.min(Math.max(ms, 0), MAX_TIMER_MS));
    if (options.keepAlive !== true) handle.unref();
    return { cancel: () => clearTimeout(handle) };
  },
});

/**
 * Each call into the system's generator costs far more than the bytes it returns (a busy server
 * spent a seventh of its time there drawing two ids per change), so small draws are served from a
 * pool filled 4 KiB at a time. Every byte is handed out once and copied out of the pool.
 */
const POOL_BYTES = 4096;
const POOLED_AT_MOST = 256;

function pooledStrongBytes(): (size: number) => Buffer {
  const pool = Buffer.alloc(POOL_BYTES);
  let offset = POOL_BYTES;
  return (size) => {
    if (size > POOLED_AT_MOST) return randomBytes(size);
    if (offset + size > POOL_BYTES) {
      randomFillSync(pool);
      offset = 0;
    }
    const bytes = Buffer.from(pool.subarray(offset, offset + size));
    offset += size;
    return bytes;
  };
}

export const systemRandom: Random = Object.freeze({
  bytes: pooledStrongBytes(),
  fraction: () => Math.random(),
});

/**
 * Resolves on the next turn of the event loop, after the I/O that is waiting: how a long scan lets
 * other requests run. Not a timer, so not the clock's: no time passes on a manual clock.
 */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Resolves after `ms` on `clock`; the wait keeps the process alive, since someone awaits it. */
export function sleep(clock: Clock, ms: number): Promise<void> {
  return new Promise((resolve) => {
    clock.setTimer(ms, resolve, { keepAlive: true });
  });
}
