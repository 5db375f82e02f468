// Tests for lib/retry.ts: d = min(capMs, baseMs × factor^n) (CONVENTIONS.md#retry-schedules), full
// jitter for the receiver's handlers (CONVENTIONS.md#inbox-retries-and-dead-letters) and equal jitter
// for the sender's deliveries (CONVENTIONS.md#delivery-retries).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Random } from '../lib/clock.js';
import { DEFAULT_CONFIG } from '../lib/config.js';
import { mayRetry, retryCeiling, retryDelay } from '../lib/retry.js';

function fixed(fraction: number): Random {
  return { bytes: (size) => Buffer.alloc(size), fraction: () => fraction };
}

describe('retryCeiling', () => {
  it("should follow the receiver's default schedule: 2 s, 4 s, ... capped at 5 minutes", () => {
    const schedule = DEFAULT_CONFIG.webhooks.retry;
    assert.deepEqual([1, 2, 3, 7, 8, 9].map((n) => retryCeiling(schedule, n)), [2000, 4000, 8000, 128_000, 256_000, 300_000]);
  });

  it("should follow the sender's default schedule to its 6-hour cap", () => {
    const schedule = DEFAULT_CONFIG.outbox.retry;
    assert.deepEqual([0, 1, 2, 9, 10, 14].map((n) => retryCeiling(schedule, n)), [1000, 3000, 9000, 19_683_000, 21_600_000, 21_600_000]);
  });
});

describe('retryDelay', () => {
  const schedule = { baseMs: 1000, factor: 2, capMs: 60_000, attempts: 5 };

  it('should wait between 0 and d with full jitter', () => {
    assert.equal(retryDelay(schedule, 3, 'full', fixed(0)), 0);
    assert.equal(retryDelay(schedule, 3, 'full', fixed(0.5)), 4000);
    assert.equal(retryDelay(schedule, 3, 'full', fixed(0.999_999)), 8000);
  });

  it('should wait between d/2 and d with equal jitter', () => {
    assert.equal(retryDelay(schedule, 3, 'equal', fixed(0)), 4000);
    assert.equal(retryDelay(schedule, 3, 'equal', fixed(0.5)), 6000);
    assert.equal(retryDelay(schedule, 3, 'equal', fixed(0.999_999)), 8000);
  });
});

describe('mayRetry', () => {
  it('should allow attempts up to the schedule’s count, the first one included', () => {
    const schedule = { baseMs: 1, factor: 1, capMs: 1, attempts: 3 };
    assert.deepEqual([1, 2, 3, 4].map((made) => mayRetry(schedule, made)), [true, true, false, false]);
  });
});
