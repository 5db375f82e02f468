// RFC 3339 date-times as a request body gives them (the window of a `$recover`,
// CONVENTIONS.md#recovering-after-an-outage). RFC 3339 §5.6:
//   date-time      = full-date "T" full-time
//   full-time      = partial-time time-offset
//   partial-time   = time-hour ":" time-minute ":" time-second [time-secfrac]
//   time-secfrac   = "." 1*DIGIT
//   time-offset    = "Z" / time-numoffset
//   time-numoffset = ("+" / "-") time-hour ":" time-minute
// "T" and "Z" may be lowercase (§5.6, NOTE). Seconds and the offset are required: ISO 8601's shorter
// forms (a date alone, no seconds, local time) are refused, since a window must be one instant
// wherever it is read. The ranges (month, day of the month, hour, leap second, offset) are checked by
// the same reader as `$filter`'s date-times (lib/filter/dates.ts); fractions are cut to milliseconds.
import { parseDateText } from '../filter/dates.js';

const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d{1,12})?(?:[Zz]|[+-]\d{2}:\d{2})$/;
/** `yyyy-mm-ddThh:mm:ss.` + 12 fractional digits + `±hh:mm`: the longest text DATE_TIME accepts. */
const MAX_TEXT = 38;

/** The instant (ms since the epoch) an RFC 3339 date-time names; undefined when it is not one. */
export function parseDateTime(text: string): number | undefined {
  if (text.length > MAX_TEXT || !DATE_TIME.test(text)) return undefined;
  return parseDateText(text, 'required')?.instant;
}
