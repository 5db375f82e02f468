// A delivery's attempt log (CONVENTIONS.md#attempt-log): its last ATTEMPT_LOG_SIZE attempts, oldest
// first, each `{ "at", "status" | "error", "durationMs" }`: when the attempt started, the receiver's
// status when it answered or what went wrong when it did not (a network error, a timeout, an address
// refused, no request at all), and how long it took. The outbox's policy (outbox.ts) adds an entry to
// the fields every outcome writes, so an attempt and its entry are one write, and a crash in between
// loses both (the attempt runs again) or neither.
import { isJsonObject, type JsonObject, type JsonValue } from '../json.js';

/** The field of a delivery that holds its log. */
export const ATTEMPT_LOG = 'attemptLog';
/** Attempts a delivery keeps: as many as the default schedule makes (CONVENTIONS.md#delivery-retries). */
export const ATTEMPT_LOG_SIZE = 15;
/** The characters an entry's error keeps at most, so an entry is small whatever failed. */
const ERROR_CHARACTERS = 300;

/** What an attempt came to, as its log entry tells it. */
export type AttemptResult = { readonly status: number } | { readonly error: string };

/** The entry of an attempt that started at `at` (its RFC 3339 text) and took `durationMs`. */
export function attemptEntry(at: string, durationMs: number, result: AttemptResult): JsonObject {
  const entry: JsonObject = { at };
  if ('status' in result) entry['status'] = result.status;
  else entry['error'] = clipped(result.error);
  entry['durationMs'] = Math.max(0, Math.round(durationMs));
  return entry;
}

/** `log` (a stored attemptLog, or nothing yet) with `entry` appended, and only the last ATTEMPT_LOG_SIZE kept. */
export function withAttempt(log: JsonValue | undefined, entry: JsonObject): JsonObject[] {
  // A first attempt (most deliveries have only that one) makes one array.
  if (!Array.isArray(log)) return [entry];
  const kept = log.filter(isJsonObject);
  kept.push(entry);
  return kept.slice(-ATTEMPT_LOG_SIZE);
}

/**
 * The logs of first attempts that got an answer, shared: deliveries that one look of the runner starts
 * begin in the same millisecond, most are answered alike in the same number of milliseconds, and each
 * keeps its log for 30 days; one entry and one list of it (about 100 bytes) serve them all instead of
 * one each. Only the current millisecond's are kept. Stored documents are never changed in place (a
 * later attempt's log is a new list, `withAttempt`), so sharing one is safe.
 */
export class FirstAttempts {
  private at = '';
  private readonly logs = new Map<number, JsonObject[]>();

  /** The log of a first attempt that started at `at`, took `durationMs` and was answered `status`. */
  log(at: string, durationMs: number, status: number): JsonObject[] {
    if (at !== this.at) {
      this.at = at;
      this.logs.clear();
    }
    const duration = Math.max(0, Math.round(durationMs));
    // A status has three digits: one number keys both.
    const key = duration * 1000 + status;
    let log = this.logs.get(key);
    if (log === undefined) {
      log = [attemptEntry(at, duration, { status })];
      this.logs.set(key, log);
    }
    return log;
  }
}

/** At most ERROR_CHARACTERS of `text`, never half a surrogate pair, with `…` when it was cut. */
function clipped(text: string): string {
  if (text.length <= ERROR_CHARACTERS) return text;
  const high = text.charCodeAt(ERROR_CHARACTERS - 1);
  const end = high >= 0xd800 && high <= 0xdbff ? ERROR_CHARACTERS - 1 : ERROR_CHARACTERS;
  return `${text.slice(0, end)}…`;
}
