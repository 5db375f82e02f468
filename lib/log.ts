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
