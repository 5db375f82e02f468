import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseDateTime } from '../../lib/protocol/date-time.js';

describe('parseDateTime (RFC 3339 §5.6)', () => {
  it('should read a date-time with seconds and a time zone as its instant', () => {
    const instant = Date.UTC(2026, 3, 14, 9, 0, 0);
    assert.equal(parseDateTime('2026-04-14T09:00:00Z'), instant);
    assert.equal(parseDateTime('2026-04-14t09:00:00z'), instant, 'T and Z may be lowercase');
    assert.equal(parseDateTime('2026-04-14T11:30:00+02:30'), instant);
    assert.equal(parseDateTime('2026-04-14T08:00:00-01:00'), instant);
    assert.equal(parseDateTime('2026-04-14T09:00:00.1234567Z'), instant + 123, 'fractions cut to milliseconds');
    assert.equal(parseDateTime('2024-02-29T00:00:00Z'), Date.UTC(2024, 1, 29));
  });

  it('should refuse what is not an RFC 3339 date-time: no seconds, no zone, a date alone, out of range', () => {
    for (const text of [
      '', '2026-04-14', '2026-04-14T09:00Z', '2026-04-14T09:00:00', '2026-04-14 09:00:00Z', '20260414T090000Z',
      '2026-02-29T00:00:00Z', '2026-13-01T00:00:00Z', '2026-04-14T24:00:00Z', '2026-04-14T09:60:00Z',
      '2026-04-14T09:00:00+24:00', '2026-04-14T09:00:00.Z', '2026-04-14T09:00:00.1234567890123Z',
      ' 2026-04-14T09:00:00Z', '2026-04-14T09:00:00Z\n', 'yesterday',
    ]) {
      assert.equal(parseDateTime(text), undefined, JSON.stringify(text));
    }
  });
});
