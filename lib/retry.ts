// Retry schedules (CONTRACT §1: "A retry's delay before attempt n+1 is d = min(capMs, baseMs ×
// factor^n) with jitter as sections 7 and 8 say"). Two jitters, both from the AWS architecture note
// on backoff that CONTRACT §7-8 name: "full" (the receiver's handlers: wait random(0, d)), which
// spreads retries widest, and "equal" (the sender's deliveries: wait d/2 + random(d/2)), which keeps
// at least half the delay so a receiver that is down gets its breathing room. The random source is
// injected, so a test runs a whole schedule exactly.
import type { Random } from './clock.js';
import type { RetrySchedule } from './config.js';

export type Jitter = 'full' | 'equal';

/** d before the attempt after `attemptsMade` attempts: min(capMs, baseMs × factor^attemptsMade). */
export function retryCeiling(schedule: RetrySchedule, attemptsMade: number): number {
  return Math.min(schedule.capMs, schedule.baseMs * schedule.factor ** attemptsMade);
}

/** The jittered delay (ms) before the next attempt. */
export function retryDelay(schedule: RetrySchedule, attemptsMade: number, jitter: Jitter, random: Random): number {
  const ceiling = retryCeiling(schedule, attemptsMade);
  const delay = jitter === 'full' ? random.fraction() * ceiling : ceiling / 2 + random.fraction() * (ceiling / 2);
  return Math.round(delay);
}

/** Is another attempt allowed after `attemptsMade`? (`attempts` counts the first one.) */
export function mayRetry(schedule: RetrySchedule, attemptsMade: number): boolean {
  return attemptsMade < schedule.attempts;
}
