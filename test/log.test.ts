// The log (lib/log.ts): a limited logger writes at most its lines a second and says, on the next line
// it writes, how many it left out, so a flood of failures cannot flood the log.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { limitedLogger, type Logger } from '../lib/log.js';

describe('limitedLogger', () => {
  it('should write at most perSecond lines a second, then say how many it left out', () => {
    const written: Record<string, unknown>[] = [];
    const log: Logger = (_level, message, fields = {}) => void written.push({ message, ...fields });
    let now = 1_700_000_000_000;
    const limited = limitedLogger(log, () => now, 3);
    for (let n = 0; n < 10; n++) limited('error', 'dead', { n });
    assert.deepEqual(written, [{ message: 'dead', n: 0 }, { message: 'dead', n: 1 }, { message: 'dead', n: 2 }]);
    now += 1000;
    limited('error', 'dead', { n: 10 });
    limited('error', 'dead', { n: 11 });
    assert.deepEqual(written.slice(3), [{ message: 'dead', n: 10, omitted: 7 }, { message: 'dead', n: 11 }]);
  });

  it('should refuse a bound that is not a positive integer', () => {
    assert.throws(() => limitedLogger(() => {}, () => 0, 0), /perSecond must be a positive integer/);
  });
});
