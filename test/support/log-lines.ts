// The log lines a server writes, kept for a test to read (CONVENTIONS.md#metrics: what goes wrong writes
// one log line each, a level, a message and its fields).
import type { Logger } from '../../lib/log.js';

export interface LogLine {
  readonly level: string;
  readonly message: string;
  readonly fields: Readonly<Record<string, unknown>>;
}

/** A logger that appends every line to `lines`. */
export function capturingLogger(lines: LogLine[]): Logger {
  return (level, message, fields = {}) => void lines.push({ level, message, fields });
}
