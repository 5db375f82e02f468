// The logs of first attempts that got an answer (lib/webhooks/attempt-log.ts FirstAttempts): the log a
// first attempt would get on its own, one list shared by the attempts of one millisecond answered alike,
// a list of its own for any other status, duration or millisecond.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { attemptEntry, FirstAttempts, withAttempt } from '../../lib/webhooks/attempt-log.js';

const AT = '2026-11-27T15:45:00.120Z';
const LATER = '2026-11-27T15:45:00.121Z';

describe('FirstAttempts', () => {
  it('should give the log withAttempt makes for a first attempt', () => {
    const logs = new FirstAttempts();
    assert.deepEqual(logs.log(AT, 2.4, 200), withAttempt(undefined, attemptEntry(AT, 2.4, { status: 200 })));
    assert.deepEqual(logs.log(AT, -0.2, 204), [{ at: AT, status: 204, durationMs: 0 }]);
  });

  it('should share one list between attempts of one millisecond answered alike', () => {
    const logs = new FirstAttempts();
    const first = logs.log(AT, 1.2, 200);
    assert.equal(logs.log(AT, 0.8, 200), first, 'the same rounded duration and status');
    assert.notEqual(logs.log(AT, 2, 200), first, 'another duration');
    assert.notEqual(logs.log(AT, 1, 202), first, 'another status');
    assert.equal(logs.log(AT, 1, 200), first, 'the others did not replace it');
  });

  it('should start afresh in a new millisecond', () => {
    const logs = new FirstAttempts();
    const first = logs.log(AT, 1, 200);
    const later = logs.log(LATER, 1, 200);
    assert.notEqual(later, first);
    assert.deepEqual(later, [{ at: LATER, status: 200, durationMs: 1 }]);
    assert.deepEqual(first, [{ at: AT, status: 200, durationMs: 1 }], 'a list given out is never changed');
  });

  it('should leave a shared list as it is when a later attempt adds to it', () => {
    const logs = new FirstAttempts();
    const first = logs.log(AT, 1, 503);
    const next = withAttempt(first, attemptEntry(LATER, 3, { status: 200 }));
    assert.equal(first.length, 1);
    assert.equal(next.length, 2);
  });
});
