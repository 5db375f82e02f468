// The log of refused deliveries (lib/webhooks/refusal-log.ts, CONVENTIONS.md#receiving-sources): one
// line per source and reason per minute, on the injected clock; the next line says how many refusals
// of that reason had no line of their own.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { RefusalLog } from '../../lib/webhooks/refusal-log.js';

describe('RefusalLog', () => {
  it('should write the first refusal of a reason, count the rest for a minute, then write again with the count', () => {
    let now = 1_000_000;
    const lines: { message: string; fields: Readonly<Record<string, unknown>> }[] = [];
    const log = new RefusalLog((_level, message, fields = {}) => void lines.push({ message, fields }), { now: () => now });
    log.refused('stripe', 401, 'no signature matched', 'r1');
    log.refused('stripe', 401, 'no signature matched', 'r2');
    log.refused('github', 401, 'no signature matched', 'r3');
    log.refused('stripe', 400, 'timestamp outside the window', 'r4');
    now += 59_999;
    log.refused('stripe', 401, 'no signature matched', 'r5');
    now += 1;
    log.refused('stripe', 401, 'no signature matched', 'r6');
    assert.deepEqual(lines.map(({ message, fields }) => [message, fields['source'], fields['requestId'], fields['alsoRefused']]), [
      ['webhook delivery refused: no signature matched', 'stripe', 'r1', undefined],
      ['webhook delivery refused: no signature matched', 'github', 'r3', undefined],
      ['webhook delivery refused: timestamp outside the window', 'stripe', 'r4', undefined],
      ['webhook delivery refused: no signature matched', 'stripe', 'r6', 2],
    ]);
  });
});
