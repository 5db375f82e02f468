// Waiting for an event with a deadline, never for a fixed sleep: `eventually` polls a check until it
// yields a value, and a timeout names what was awaited and the last state seen, so a failure says why.
import { setTimeout as pause } from 'node:timers/promises';

/** Long enough for a loaded two-core CI machine; a passing test never waits for it. */
export const DEFAULT_DEADLINE_MS = 30_000;
const POLL_MS = 10;

export interface EventuallyOptions {
  /** How long to keep polling (ms). */
  readonly deadlineMs?: number;
  /** Describes the state when the deadline passes (what was seen last). */
  readonly detail?: () => string | Promise<string>;
  /** Appended to the failure message as it is: the seed of a randomized test, the round, … */
  readonly context?: string;
}

/**
 * Calls `check` until it returns something other than `undefined`, `false` or `null`, and returns that.
 * Fails with "timed out after N ms waiting for <what>" (plus `detail()` and `context`) once the
 * deadline passes.
 */
export async function eventually<T>(
  what: string,
  check: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  options: EventuallyOptions = {},
): Promise<T> {
  const deadlineMs = options.deadlineMs ?? DEFAULT_DEADLINE_MS;
  const deadline = performance.now() + deadlineMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== null && value !== false) return value;
    if (performance.now() > deadline) {
      const detail = options.detail === undefined ? '' : `: ${await options.detail()}`;
      const context = options.context === undefined ? '' : ` ${options.context}`;
      throw new Error(`timed out after ${deadlineMs} ms waiting for ${what}${detail}${context}`);
    }
    await pause(POLL_MS);
  }
}
