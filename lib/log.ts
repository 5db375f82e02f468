// Logging: one JSON object per line on stderr, so a person can read it and a tool can parse it.
// Internal error details go here, tagged with the request id, and never to a caller
// (CONVENTIONS.md#problem-details). Secrets are never passed to the logger.
import { systemClock } from './clock.js';

export type LogLevel = 'info' | 'warn' | 'error';
export type Logger = (level: LogLevel, message: string, fields?: Readonly<Record<string, unknown>>) => void;

export function stderrLogger(now: () => number = systemClock.now): Logger {
  return (level, message, fields = {}) => {
    process.stderr.write(`${JSON.stringify({ time: new Date(now()).toISOString(), level, message, ...fields })}\n`);
  };
}

export const silentLogger: Logger = () => {};

/**
 * A logger for lines that a flood of failures multiplies (a handler failing, a job gone dead): at most
 * `perSecond` lines in each second of `now`. Lines past it are counted, not written, and the next line
 * written says how many were left out (`omitted`), so the log's volume stays bounded whatever arrives,
 * and what was left out is still told.
 */
export function limitedLogger(log: Logger, now: () => number, perSecond: number): Logger {
  if (!Number.isInteger(perSecond) || perSecond < 1) {
    throw new TypeError('limitedLogger: perSecond must be a positive integer');
  }
  let second = Number.NaN;
  let written = 0;
  let omitted = 0;
  return (level, message, fields = {}) => {
    const current = Math.floor(now() / 1000);
    if (current !== second) {
      second = current;
      written = 0;
    }
    if (written >= perSecond) {
      omitted++;
      return;
    }
    written++;
    log(level, message, omitted === 0 ? fields : { ...fields, omitted });
    omitted = 0;
  };
}
