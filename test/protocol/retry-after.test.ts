// Tests for lib/protocol/retry-after.ts: Retry-After (RFC 9110 §10.2.3) as a wait from now.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { retryAfterMs } from '../../lib/protocol/retry-after.js';

const NOW = Date.UTC(2026, 10, 23, 12, 0, 0);

describe('retryAfterMs', () => {
  it('should read delay-seconds', () => {
    assert.equal(retryAfterMs('120', NOW), 120_000);
    assert.equal(retryAfterMs(' 0 ', NOW), 0);
  });

  it('should read an HTTP-date as the time from now, never negative', () => {
    assert.equal(retryAfterMs('Mon, 23 Nov 2026 12:00:30 GMT', NOW), 30_000);
    assert.equal(retryAfterMs('Mon, 23 Nov 2026 11:00:00 GMT', NOW), 0);
  });

  it('should ignore what is neither', () => {
    for (const value of [undefined, null, '', '-5', '1.5', 'soon', '12345678901']) assert.equal(retryAfterMs(value, NOW), undefined, String(value));
  });
});
