// Dates and date-times for `$filter`: date literals such as `2024-01-31`, and `year`, `month`, `day`
// (CONVENTIONS.md#filter-grammar).
//
// ABNF (OData ABNF construction rules, §7 "Literal Data Values"):
//   date                = year "-" month "-" day
//   dateTimeOffsetValue = date "T" timeOfDayValue ( "Z" / ( "+" / "-" ) hour ":" minute )
//   timeOfDayValue      = hour ":" minute [ ":" second [ "." fractionalSeconds ] ]
//   fractionalSeconds   = 1*12DIGIT ; second = 00-59 / "60" (leap second)
//
// Stored items hold dates as JSON strings, so the same reader serves literals and stored values.
// Two readings of one text are kept:
// - `instant` (milliseconds since the epoch, UTC) orders and equates dates: a date is midnight UTC
//   of that day, a date-time is its instant. So `createdAt gt 2024-01-01` is true for
//   "2024-01-01T10:00:00Z", and `createdAt eq 2024-01-01` only for midnight exactly.
//   Fractional seconds beyond milliseconds are truncated.
// - `year`, `month`, `day` are the components as written, i.e. "evaluated in the time zone of the
//   DateTimeOffset parameter value" (OData 4.01 Part 2 §5.1.1 "Date and Time Functions").
// Literals must state a time zone (the ABNF requires it). Stored strings without one are read as
// UTC, as rule 11 of `cast` (§5.1.1 "Type Functions") does for strings. Only four-digit, non-negative
// years are read: the ABNF's extended years are a deliberate omission.

/** A date value; a class so it can never be mistaken for a JSON object at run time. */
export class FilterDate {
  readonly year: number;
  readonly month: number;
  readonly day: number;
  readonly instant: number;

  constructor(year: number, month: number, day: number, instant: number) {
    this.year = year;
    this.month = month;
    this.day = day;
    this.instant = instant;
    Object.freeze(this);
  }
}

/** Whether a date-time without `Z` or `±hh:mm` is acceptable (stored strings) or not (literals). */
export type ZoneRule = 'required' | 'optional';

const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,12}))?)?([Zz]|[+-]\d{2}:\d{2})?)?$/u;
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31] as const;
const MS_PER_MINUTE = 60_000;
/** `yyyy-mm-ddThh:mm:ss.` + 12 fractional digits + `±hh:mm`: the longest text DATE_TIME accepts. */
const MAX_DATE_TEXT = 38;

/** Reads a whole string as a date or date-time; null when it is not one (wrong shape or range). */
export function parseDateText(text: string, zone: ZoneRule): FilterDate | null {
  // The pattern matches at most 38 code units; longer texts (a stored string can be megabytes) are
  // refused before the regular expression reads them, so every parse costs about the same.
  if (text.length > MAX_DATE_TEXT) return null;
  const match = DATE_TIME.exec(text);
  if (match === null) return null;
  const [, y, mo, d, h, mi, s, fraction, offset] = match;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (h === undefined) return new FilterDate(year, month, day, utcInstant(year, month, day, 0, 0, 0, 0));
  if (offset === undefined && zone === 'required') return null;
  const hour = Number(h);
  const minute = Number(mi);
  const second = s === undefined ? 0 : Number(s);
  if (hour > 23 || minute > 59 || second > 60) return null;
  const offsetMinutes = offset === undefined ? 0 : parseOffset(offset);
  if (offsetMinutes === null) return null;
  // Truncate to milliseconds: "123456" → 123, "5" → 500.
  const millis = fraction === undefined ? 0 : Number(fraction.slice(0, 3).padEnd(3, '0'));
  const instant = utcInstant(year, month, day, hour, minute, second, millis) - offsetMinutes * MS_PER_MINUTE;
  return new FilterDate(year, month, day, instant);
}

function parseOffset(offset: string): number | null {
  if (offset === 'Z' || offset === 'z') return 0;
  const hours = Number(offset.slice(1, 3));
  const minutes = Number(offset.slice(4, 6));
  if (hours > 23 || minutes > 59) return null;
  const total = hours * 60 + minutes;
  return offset.startsWith('-') ? -total : total;
}

function daysInMonth(year: number, month: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return month === 2 && leap ? 29 : (DAYS_IN_MONTH[month - 1] ?? 0);
}

function utcInstant(
  year: number, month: number, day: number, hour: number, minute: number, second: number, millis: number,
): number {
  if (year >= 100) return Date.UTC(year, month - 1, day, hour, minute, second, millis);
  // Date.UTC maps years 0–99 to 1900–1999; setUTCFullYear takes the year as given.
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, millis);
  return date.getTime();
}
