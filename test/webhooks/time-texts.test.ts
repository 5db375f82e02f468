// The RFC 3339 texts of kept times (lib/webhooks/time-texts.ts): the text Date#toISOString gives, for
// every millisecond of a second, a new second, the same millisecond again, and a fraction of one.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TimeTexts } from '../../lib/webhooks/time-texts.js';

describe('TimeTexts', () => {
  it('should give the text toISOString gives, whatever came before', () => {
    const texts = new TimeTexts();
    const start = Date.UTC(2026, 10, 27, 13, 59, 58, 990);
    const times = [start, start, start + 5, start + 9, start + 10, start + 99, start + 100, start + 1010, start + 1010,
      start - 86_400_000, 0, start + 0.75, 1_700_000_000_000];
    for (const time of times) assert.equal(texts.at(time), new Date(time).toISOString(), `at ${time}`);
  });
});
