// End to end, in process: the X-Timestamp window is whole seconds and symmetric
// (CONVENTIONS.md#webhook-timestamp). "Now" is the server clock's second, so wherever inside that
// second a delivery arrives, now ± toleranceS is accepted and one second more is refused, before
// and after alike. The clock is injected at .001 and at .999 of a second, the two ends where a
// fractional "now" used to shift the window by almost a second.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { webhookSignature } from '../../lib/protocol/signature.js';
import { INBOX_SPACE } from '../../lib/webhooks/inbox.js';
import { clockAt } from '../support/clock.js';
import { problemOf, request } from '../support/http.js';
import { withServer } from '../support/server.js';

const SECRET = 'timestamp-window-secret';
const SECOND = 1_700_000_000;
const TOLERANCE_S = 10;

describe('the X-Timestamp window', () => {
  for (const fraction of [0.001, 0.999]) {
    it(`should accept now ± ${TOLERANCE_S} s and refuse one second more on both sides, at ${fraction} of a second`, () => {
      const clock = clockAt(() => (SECOND + fraction) * 1000);
      const options = { memory: true, webhookSecrets: [SECRET], clock, webhooks: { toleranceS: TOLERANCE_S } };
      return withServer(options, async (server) => {
        const cases: readonly [number, number][] = [
          [SECOND - TOLERANCE_S, 200],
          [SECOND + TOLERANCE_S, 200],
          [SECOND - TOLERANCE_S - 1, 400],
          [SECOND + TOLERANCE_S + 1, 400],
        ];
        for (const [timestamp, expected] of cases) {
          const id = `ts-${fraction}-${timestamp}`;
          const body = JSON.stringify({ id, event: 'order.created' });
          const headers = {
            'Content-Type': 'application/json',
            'X-Signature': webhookSignature(body, SECRET),
            'X-Timestamp': String(timestamp),
          };
          const res = await request(server.url, '/webhooks', { method: 'POST', headers, body });
          const offset = timestamp - SECOND;
          assert.equal(res.status, expected, `X-Timestamp now${offset < 0 ? '' : '+'}${offset}: ${res.text}`);
          if (expected === 400) {
            assert.match(problemOf(res).detail, new RegExp(`more than ${TOLERANCE_S} s away`));
            assert.equal(server.store.get(INBOX_SPACE, id), undefined, 'a refused event is not recorded');
          }
        }
      });
    });
  }
});
