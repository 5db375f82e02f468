// The one optimistic-concurrency loop (lib/compare-and-swap.ts, CONVENTIONS.md#durability): bounded,
// immediate on the first loss, jittered after, on the injected clock and random source.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { compareAndSwap, type CasStep } from '../lib/compare-and-swap.js';
import type { Random } from '../lib/clock.js';
import { ManualClock } from './support/clock.js';
import { eventually } from './support/eventually.js';

const HALF: Random = { bytes: (size) => Buffer.alloc(size), fraction: () => 0.5 };

describe('compareAndSwap', () => {
  it('should return the first decision that is done, without waiting', async () => {
    const clock = new ManualClock();
    const answer = await compareAndSwap({ clock, random: HALF }, async (attempt) => ({ done: `decided at ${attempt}` }), () => 'gave up');
    assert.equal(answer, 'decided at 0');
    assert.equal(clock.timers, 0);
  });

  it('should decide again at once after the first conflict', async () => {
    const clock = new ManualClock();
    const answer = await compareAndSwap(
      { clock, random: HALF },
      async (attempt): Promise<CasStep<string>> => (attempt === 0 ? { conflict: true } : { done: `decided at ${attempt}` }),
      () => 'gave up',
    );
    assert.equal(answer, 'decided at 1');
    assert.equal(clock.timers, 0, 'no timer for the first retry');
  });

  it('should wait random(0, min(cap, base × 2^(n-1))) on the clock before later decisions', async () => {
    const clock = new ManualClock();
    const attempts: number[] = [];
    const running = compareAndSwap(
      { clock, random: HALF },
      async (attempt): Promise<CasStep<string>> => {
        attempts.push(attempt);
        return attempt < 3 ? { conflict: true } : { done: 'done' };
      },
      () => 'gave up',
      { attempts: 10, baseMs: 8, capMs: 12 },
    );
    // Before decision 2: half of min(12, 8 × 2^0) = 4 ms; before decision 3: half of min(12, 16) = 6 ms.
    await eventually('the wait before decision 2', () => clock.timers === 1);
    clock.advance(3);
    assert.equal(clock.timers, 1, 'not yet: the wait is 4 ms');
    clock.advance(1);
    assert.equal(clock.timers, 0, 'the 4 ms wait is over');
    await eventually('the wait before decision 3', () => clock.timers === 1 && attempts.length === 3);
    clock.advance(5);
    assert.equal(clock.timers, 1, 'not yet: the wait is 6 ms');
    clock.advance(1);
    assert.equal(await running, 'done');
    assert.deepEqual(attempts, [0, 1, 2, 3]);
  });

  it('should give up with exhausted() after policy.attempts conflicts, never recursing further', async () => {
    let decisions = 0;
    const answer = await compareAndSwap(
      { clock: new ManualClock(), random: { bytes: (size) => Buffer.alloc(size), fraction: () => 0 } },
      async (): Promise<CasStep<string>> => {
        decisions++;
        return { conflict: true };
      },
      () => 'gave up',
      { attempts: 2, baseMs: 1, capMs: 1 },
    );
    assert.equal(answer, 'gave up');
    assert.equal(decisions, 2);
  });
});
