// Randomness a test can replay: mulberry32, a small seeded PRNG, and the seed of a randomized run,
// taken from RESAPI_TEST_SEED when it is set, so the seed a failure printed runs the same case again.
import { randomInt } from 'node:crypto';

/** The environment variable that replays a randomized test: `RESAPI_TEST_SEED=<seed> node --test …`. */
export const SEED_VARIABLE = 'RESAPI_TEST_SEED';

/** mulberry32: uniform in [0, 1), the same sequence for the same seed. */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/**
 * The seed for one randomized test: RESAPI_TEST_SEED when set, otherwise a new one each run. Put
 * `replayNote(seed)` in every failure message of the test, or a failure cannot be run again.
 */
export function testSeed(): number {
  const given = process.env[SEED_VARIABLE];
  if (given === undefined || given === '') return randomInt(2 ** 32);
  const seed = Number(given);
  if (!Number.isInteger(seed) || seed < 0 || seed >= 2 ** 32) {
    throw new TypeError(`${SEED_VARIABLE}: expected an integer from 0 to 4294967295, got ${JSON.stringify(given)}`);
  }
  return seed;
}

/** What a failure message says to be replayed: `RESAPI_TEST_SEED=<seed>`. */
export function replayNote(seed: number): string {
  return `${SEED_VARIABLE}=${seed}`;
}
