// The one backoff of resapi (CONVENTIONS.md#retry-schedules): the delay before a retry is drawn under
// d = min(capMs, baseMs × factor^n), with one of two jitters from the AWS architecture note on
// backoff. "full" waits random(0, d) and spreads retries widest: the receiver's handlers
// (CONVENTIONS.md#inbox-retries-and-dead-letters) and the client (CONVENTIONS.md#client-library).
// "equal" waits d/2 + random(d/2), keeping at least half the delay so a receiver that is down gets its
// breathing room: the sender's deliveries (CONVENTIONS.md#delivery-retries). The three are parameter
// sets of this one implementation; the two server schedules are configurable (their numbers, never
// their jitter), and the random source is injected, so a test runs a whole schedule exactly.
import type { Random } from './clock.js';

/** Delay before attempt n+1: min(capMs, baseMs × factor^n), then jittered; `attempts` counts the first. */
export interface RetrySchedule {
  readonly baseMs: number;
  readonly factor: number;
  readonly capMs: number;
  readonly attempts: number;
}

export type Jitter = 'full' | 'equal';

/** A schedule and the jitter its channel uses. */
export interface Backoff {
  readonly schedule: RetrySchedule;
  readonly jitter: Jitter;
}

/** Webhook handlers: 1 s × 2^n, at most 5 minutes, 8 attempts, full jitter. */
export const INBOX_BACKOFF: Backoff = backoff({ baseMs: 1000, factor: 2, capMs: 300_000, attempts: 8 }, 'full');
/** Webhook deliveries: 1 s × 3^n, at most 6 hours, 15 attempts (about a day), equal jitter. */
export const OUTBOX_BACKOFF: Backoff = backoff({ baseMs: 1000, factor: 3, capMs: 21_600_000, attempts: 15 }, 'equal');
/** The client's retries of a request: 100 ms × 2^n, at most 5 s, 4 attempts, full jitter. */
export const CLIENT_BACKOFF: Backoff = backoff({ baseMs: 100, factor: 2, capMs: 5000, attempts: 4 }, 'full');

/** `defaults` with another schedule (a configured one): the jitter stays the channel's. */
export function withSchedule(defaults: Backoff, schedule: RetrySchedule): Backoff {
  return backoff(schedule, defaults.jitter);
}

/** d for exponent n: min(capMs, baseMs × factor^n). */
export function retryCeiling(schedule: RetrySchedule, n: number): number {
  return Math.min(schedule.capMs, schedule.baseMs * schedule.factor ** n);
}

/**
 * The jittered delay (ms) under d for exponent n. The server's schedules take n = the attempts made,
 * so a handler's first retry waits at most baseMs × factor (CONVENTIONS.md#retry-schedules); the
 * client takes n = the retries made, so its first waits at most baseMs.
 */
export function retryDelay(backoff: Backoff, n: number, random: Random): number {
  const ceiling = retryCeiling(backoff.schedule, n);
  const fraction = random.fraction();
  const delay = backoff.jitter === 'full' ? fraction * ceiling : ceiling / 2 + fraction * (ceiling / 2);
  return Math.round(delay);
}

/** Is another attempt allowed after `attemptsMade`? (`attempts` counts the first one.) */
export function mayRetry(backoff: Backoff, attemptsMade: number): boolean {
  return attemptsMade < backoff.schedule.attempts;
}

function backoff(schedule: RetrySchedule, jitter: Jitter): Backoff {
  return Object.freeze({ schedule: Object.freeze({ ...schedule }), jitter });
}
