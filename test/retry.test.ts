// Tests for lib/retry.ts: d = min(capMs, baseMs × factor^n) (CONVENTIONS.md#retry-schedules), full
// jitter for the receiver's handlers and the client (CONVENTIONS.md#inbox-retries-and-dead-letters), equal
// jitter for the sender's deliveries (CONVENTIONS.md#delivery-retries).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Random } from '../lib/clock.js';
import { DEFAULT_CONFIG } from '../lib/config.js';
import { CLIENT_BACKOFF, INBOX_BACKOFF, mayRetry, OUTBOX_BACKOFF, retryCeiling, retryDelay, type Backoff } from '../lib/retry.js';

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
  const full: Backoff = { schedule, jitter: 'full' };
  const equal: Backoff = { schedule, jitter: 'equal' };

  it('should wait between 0 and d with full jitter', () => {
    assert.equal(retryDelay(full, 3, fixed(0)), 0);
    assert.equal(retryDelay(full, 3, fixed(0.5)), 4000);
    assert.equal(retryDelay(full, 3, fixed(0.999_999)), 8000);
  });

  it('should wait between d/2 and d with equal jitter', () => {
    assert.equal(retryDelay(equal, 3, fixed(0)), 4000);
    assert.equal(retryDelay(equal, 3, fixed(0.5)), 6000);
    assert.equal(retryDelay(equal, 3, fixed(0.999_999)), 8000);
  });
});

describe('the three parameter sets', () => {
  it('should be the configured defaults for the inbox and the outbox, each with its jitter', () => {
    assert.deepEqual(INBOX_BACKOFF, { schedule: DEFAULT_CONFIG.webhooks.retry, jitter: 'full' });
    assert.deepEqual(OUTBOX_BACKOFF, { schedule: DEFAULT_CONFIG.outbox.retry, jitter: 'equal' });
  });

  it("should give the client 100 ms × 2^n up to 5 s, 4 attempts, full jitter", () => {
    assert.deepEqual(CLIENT_BACKOFF, { schedule: { baseMs: 100, factor: 2, capMs: 5000, attempts: 4 }, jitter: 'full' });
    assert.deepEqual([0, 1, 5, 6].map((n) => retryDelay(CLIENT_BACKOFF, n, fixed(0.999_999))), [100, 200, 3200, 5000]);
  });
});

describe('mayRetry', () => {
  it('should allow attempts up to the schedule’s count, the first one included', () => {
    const backoff: Backoff = { schedule: { baseMs: 1, factor: 1, capMs: 1, attempts: 3 }, jitter: 'full' };
    assert.deepEqual([1, 2, 3, 4].map((made) => mayRetry(backoff, made)), [true, true, false, false]);
  });
});
