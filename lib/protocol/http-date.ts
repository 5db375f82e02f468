// HTTP-date (RFC 9110 §5.6.7): formatting as IMF-fixdate, parsing all three formats a recipient
// MUST accept. Used by Last-Modified, Date, If-Modified-Since and If-Unmodified-Since
// (CONVENTIONS.md#conditional-reads).
//   HTTP-date    = IMF-fixdate / obs-date
//   IMF-fixdate  = day-name "," SP date1 SP time-of-day SP GMT    ; Sun, 06 Nov 1994 08:49:37 GMT
//   rfc850-date  = day-name-l "," SP date2 SP time-of-day SP GMT  ; Sunday, 06-Nov-94 08:49:37 GMT
//   asctime-date = day-name SP date3 SP time-of-day SP year       ; Sun Nov  6 08:49:37 1994
//   date1 = day SP month SP year   date2 = day "-" month "-" 2DIGIT   date3 = month SP ( 2DIGIT / ( SP DIGIT ))
//   time-of-day = hour ":" minute ":" second   (all 2DIGIT; names, "GMT" and month are case-sensitive)
// The meaning of day-name, day, month, year and time-of-day is RFC 5322 §3.3's (RFC 9110 §5.6.7):
// day within its month, hour 00-23, minute 00-59, second 00-60 (60 is a leap second), year 1900 or
// later, and a day-name that is the day the date falls on.
// A wrong day-name is rejected, not tolerated: by RFC 5322 §3.3 the value is then not a valid
// HTTP-date, nothing says which half of a self-contradictory date to believe, and RFC 9110
// §13.1.3-4 tell the recipient to ignore an invalid date, so the request is served unconditionally.

import { systemClock } from '../clock.js';
import { SP, trimOws } from './field-syntax.js';

/** Index = Date#getUTCDay(). */
const DAY_NAMES: readonly string[] = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const LONG_DAY_NAMES: readonly string[] = [
  'Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'
];
/** Index = Date#getUTCMonth(). */
const MONTH_NAMES: readonly string[] = [
  'Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'
];

const COMMA = 0x2c;
const HYPHEN = 0x2d;
const COLON = 0x3a;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;

const MIN_YEAR = 1900; // RFC 5322 §3.3
const MAX_YEAR = 9999; // year = 4DIGIT
const MAX_HOUR = 23;
const MAX_MINUTE = 59;
const MAX_SECOND = 60; // RFC 5322 §3.3 allows a leap second
const MS_PER_SECOND = 1000;
const SECONDS_PER_HOUR = 3600;
const SECONDS_PER_MINUTE = 60;
const TWO_DIGIT_YEAR_HORIZON = 50; // RFC 9110 §5.6.7: "more than 50 years in the future"

const IMF_FIXDATE_LENGTH = 29; // "Sun, 06 Nov 1994 08:49:37 GMT"
const ASCTIME_LENGTH = 24; // "Sun Nov  6 08:49:37 1994"
const RFC850_AFTER_NAME_LENGTH = 24; // ", 06-Nov-94 08:49:37 GMT"

/** Formats `ms` (milliseconds since the epoch, truncated to whole seconds) as IMF-fixdate. */
export function formatHttpDate(ms: number): string {
  if (!Number.isFinite(ms)) {
    throw new TypeError('formatHttpDate: ms must be a finite number');
  }
  const date = new Date(ms);
  const year = date.getUTCFullYear();
  if (year < MIN_YEAR || year > MAX_YEAR) {
    throw new TypeError(`formatHttpDate: ms must fall in the years ${MIN_YEAR}-${MAX_YEAR}`);
  }
  const day = DAY_NAMES[date.getUTCDay()] ?? '';
  const month = MONTH_NAMES[date.getUTCMonth()] ?? '';
  const time = `${pad2(date.getUTCHours())}:${pad2(date.getUTCMinutes())}:${pad2(date.getUTCSeconds())}`;
  return `${day}, ${pad2(date.getUTCDate())} ${month} ${year} ${time} GMT`;
}

/**
 * Parses an HTTP-date into milliseconds since the epoch, or undefined when `value` is not one.
 * `now` (default: the system clock) anchors the two-digit years of rfc850-date. Leading and trailing OWS is
 * allowed, since it is not part of a field value (RFC 9110 §5.5); nothing else is.
 */
export function parseHttpDate(value: string, now: number = systemClock.now()): number | undefined {
  if (typeof value !== 'string') {
    throw new TypeError('parseHttpDate: value must be a string');
  }
  if (!Number.isFinite(now)) {
    throw new TypeError('parseHttpDate: now must be a finite number');
  }
  const text = trimOws(value);
  // The fourth character tells the formats apart: "Sun," / "Sun " / "Sund".
  switch (text.charCodeAt(3)) {
    case COMMA:
      return parseImfFixdate(text);
    case SP:
      return parseAsctime(text);
    default:
      return parseRfc850(text, now);
  }
}

/** IMF-fixdate, the one format senders generate (RFC 9110 §5.6.7). */
function parseImfFixdate(text: string): number | undefined {
  if (
    text.length !== IMF_FIXDATE_LENGTH ||
    !text.startsWith(', ', 3) ||
    text.charCodeAt(7) !== SP ||
    text.charCodeAt(11) !== SP ||
    text.charCodeAt(16) !== SP ||
    !text.startsWith(' GMT', 25)
  ) {
    return undefined;
  }
  return toEpochMs(
    nameAt(DAY_NAMES, text, 0),
    digitsAt(text, 12, 4),
    nameAt(MONTH_NAMES, text, 8),
    digitsAt(text, 5, 2),
    timeOfDayAt(text, 17),
  );
}

/** asctime-date (obsolete, RFC 9110 §5.6.7): a single-digit day is preceded by a second SP. */
function parseAsctime(text: string): number | undefined {
  if (
    text.length !== ASCTIME_LENGTH ||
    text.charCodeAt(7) !== SP ||
    text.charCodeAt(10) !== SP ||
    text.charCodeAt(19) !== SP
  ) {
    return undefined;
  }
  const day = text.charCodeAt(8) === SP ? digitsAt(text, 9, 1) : digitsAt(text, 8, 2);
  return toEpochMs(
    nameAt(DAY_NAMES, text, 0),
    digitsAt(text, 20, 4),
    nameAt(MONTH_NAMES, text, 4),
    day,
    timeOfDayAt(text, 11),
  );
}

/** rfc850-date (obsolete, RFC 9110 §5.6.7): full day name, two-digit year. */
function parseRfc850(text: string, now: number): number | undefined {
  const comma = text.indexOf(',');
  if (comma === -1 || text.length !== comma + RFC850_AFTER_NAME_LENGTH) {
    return undefined;
  }
  const at = comma + 1; // offsets below are those of " 06-Nov-94 08:49:37 GMT"
  if (
    text.charCodeAt(at) !== SP ||
    text.charCodeAt(at + 3) !== HYPHEN ||
    text.charCodeAt(at + 7) !== HYPHEN ||
    text.charCodeAt(at + 10) !== SP ||
    !text.startsWith(' GMT', at + 19)
  ) {
    return undefined;
  }
  const twoDigitYear = digitsAt(text, at + 8, 2);
  const month = nameAt(MONTH_NAMES, text, at + 4);
  const day = digitsAt(text, at + 1, 2);
  const timeOfDay = timeOfDayAt(text, at + 11);
  if (twoDigitYear === -1) {
    return undefined;
  }
  const year = resolveTwoDigitYear(twoDigitYear, month, day, timeOfDay, now);
  return toEpochMs(LONG_DAY_NAMES.indexOf(text.slice(0, comma)), year, month, day, timeOfDay);
}

/**
 * RFC 9110 §5.6.7: a two-digit year that appears to be more than 50 years in the future is the most
 * recent past year with the same last two digits. Read as a window: the year is the one, among
 * those ending in these digits, whose date lies after now - 50 years and no later than now + 50 years.
 */
function resolveTwoDigitYear(twoDigits: number, month: number, day: number, timeOfDay: number, now: number): number {
  const nowYear = new Date(now).getUTCFullYear();
  const year = nowYear - (nowYear % 100) + twoDigits;
  const instant = Date.UTC(year, month, day) + timeOfDay * MS_PER_SECOND;
  if (instant > addYears(now, TWO_DIGIT_YEAR_HORIZON)) {
    return year - 100;
  }
  if (instant <= addYears(now, -TWO_DIGIT_YEAR_HORIZON)) {
    return year + 100; // late in a century "10" is the coming 2110, not 2010, long gone
  }
  return year;
}

/**
 * Checks the parts against RFC 5322 §3.3 and combines them. Every part is -1 when it did not parse,
 * which each range check below rejects.
 */
function toEpochMs(weekday: number, year: number, month: number, day: number, timeOfDay: number): number | undefined {
  if (weekday === -1 || year < MIN_YEAR || month === -1 || day < 1 || timeOfDay === -1) {
    return undefined;
  }
  if (day > daysInMonth(year, month)) {
    return undefined;
  }
  const midnight = Date.UTC(year, month, day);
  if (new Date(midnight).getUTCDay() !== weekday) {
    return undefined; // RFC 5322 §3.3: the day-name MUST be the day the date implies
  }
  // A leap second (23:59:60) lands on the next day's 00:00:00, as in POSIX time, which has none.
  return midnight + timeOfDay * MS_PER_SECOND;
}

/** time-of-day = hour ":" minute ":" second, as seconds since midnight, or -1. */
function timeOfDayAt(text: string, at: number): number {
  if (text.charCodeAt(at + 2) !== COLON || text.charCodeAt(at + 5) !== COLON) {
    return -1;
  }
  const hour = digitsAt(text, at, 2);
  const minute = digitsAt(text, at + 3, 2);
  const second = digitsAt(text, at + 6, 2);
  if (hour === -1 || minute === -1 || second === -1) {
    return -1;
  }
  if (hour > MAX_HOUR || minute > MAX_MINUTE || second > MAX_SECOND) {
    return -1;
  }
  return hour * SECONDS_PER_HOUR + minute * SECONDS_PER_MINUTE + second;
}

/** The value of `count` DIGITs at `at`, or -1 when any of them is not a DIGIT. */
function digitsAt(text: string, at: number, count: number): number {
  let result = 0;
  for (let index = at; index < at + count; index += 1) {
    const code = text.charCodeAt(index);
    if (code < DIGIT_0 || code > DIGIT_9) {
      return -1; // NaN past the end fails this too
    }
    result = result * 10 + (code - DIGIT_0);
  }
  return result;
}

/** Index of the three-letter name at `at` (case-sensitive, RFC 9110 §5.6.7), or -1. */
function nameAt(names: readonly string[], text: string, at: number): number {
  return names.findIndex((name) => text.startsWith(name, at));
}

function daysInMonth(year: number, month: number): number {
  // Day 0 of the next month is the last day of this one; Date.UTC knows the Gregorian leap years.
  return new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
}

function addYears(ms: number, years: number): number {
  const date = new Date(ms);
  date.setUTCFullYear(date.getUTCFullYear() + years);
  return date.getTime();
}

function pad2(value: number): string {
  return value < 10 ? `0${value}` : String(value);
}
