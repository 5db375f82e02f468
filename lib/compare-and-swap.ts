// The one optimistic-concurrency loop (CONVENTIONS.md#durability): read what the store holds, decide,
// and write with the versions read as the expectation; when another write landed in between, decide
// again from what the store holds now: at once the first time (one write landing in between is the
// common case), then after a short full-jitter wait, so writers racing over one record spread out.
// The loop is bounded: a
// record that keeps changing ends in `exhausted` (a 503 with Retry-After for a request) instead of
// recursing for ever. The wait uses the injected clock and random source, so a test replays it.
import { sleep, type Clock, type Random } from './clock.js';

export interface CasPolicy {
  /** Decisions at most, the first included. */
  readonly attempts: number;
  /** The wait before decision n+2 (n ≥ 1) is random(0, min(capMs, baseMs × 2^(n-1))); none before the second. */
  readonly baseMs: number;
  readonly capMs: number;
}

/** Enough for a handful of writers racing over one record, short enough to answer within a request. */
const DEFAULT_CAS_POLICY: CasPolicy = Object.freeze({ attempts: 12, baseMs: 2, capMs: 100 });

/** One decision: a final answer, or `conflict` when the write lost to another one. */
export type CasStep<T> = { readonly done: T } | { readonly conflict: true };

export interface CasContext {
  readonly clock: Clock;
  readonly random: Random;
}

/**
 * Runs `decide` until it is done or has lost `policy.attempts` times; then `exhausted()` answers.
 * `decide` gets the attempt number (0 first) and must read the store afresh each time.
 */
export function compareAndSwap<T>(
  context: CasContext,
  decide: (attempt: number) => Promise<CasStep<T>>,
  exhausted: () => T,
  policy: CasPolicy = DEFAULT_CAS_POLICY,
): Promise<T> {
  // The first decision, which nearly every write ends with, is made at once and continued, without an
  // async frame around it; the loop below takes over only when it lost.
  if (policy.attempts < 1) return retry(context, decide, exhausted, policy);
  let first: Promise<CasStep<T>>;
  try {
    first = decide(0);
  } catch (error) {
    return Promise.reject(error);
  }
  return first.then((step) => ('done' in step ? step.done : retry(context, decide, exhausted, policy)));
}

/** The decisions after a lost first one, from the second on. */
async function retry<T>(
  context: CasContext,
  decide: (attempt: number) => Promise<CasStep<T>>,
  exhausted: () => T,
  policy: CasPolicy,
): Promise<T> {
  for (let attempt = 1; attempt < policy.attempts; attempt++) {
    if (attempt > 1) {
      const ceiling = Math.min(policy.capMs, policy.baseMs * 2 ** (attempt - 2));
      await sleep(context.clock, context.random.fraction() * ceiling);
    }
    const step = await decide(attempt);
    if ('done' in step) return step.done;
  }
  return exhausted();
}
