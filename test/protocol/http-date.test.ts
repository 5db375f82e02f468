// Tests for lib/http/http-date.ts: RFC 9110 §5.6.7 HTTP-date, with RFC 5322 §3.3 value ranges.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { formatHttpDate, parseHttpDate } from '../../lib/protocol/http-date.js';

/** The example instant of RFC 9110 §5.6.7, in its three formats. */
const RFC_EXAMPLE_MS = Date.UTC(1994, 10, 6, 8, 49, 37);
const RFC_IMF_FIXDATE = 'Sun, 06 Nov 1994 08:49:37 GMT';
const RFC_RFC850 = 'Sunday, 06-Nov-94 08:49:37 GMT';
const RFC_ASCTIME = 'Sun Nov  6 08:49:37 1994';

/** Instants across every month and weekday, with hours, minutes and seconds below and above 10. */
const SAMPLE_INSTANTS: readonly number[] = Array.from({ length: 12 }, (_, month) =>
  Date.UTC(1990 + month * 3, month, 1 + month * 2, month * 2, month * 5, 59 - month * 5, 123),
);

describe('formatHttpDate', () => {
  it('should format the RFC 9110 example as IMF-fixdate', () => {
    assert.equal(formatHttpDate(RFC_EXAMPLE_MS), RFC_IMF_FIXDATE);
  });

  it('should format the epoch', () => {
    assert.equal(formatHttpDate(0), 'Thu, 01 Jan 1970 00:00:00 GMT');
  });

  it('should pad the day, hour, minute and second to two digits', () => {
    assert.equal(formatHttpDate(Date.UTC(2024, 0, 5, 3, 4, 5)), 'Fri, 05 Jan 2024 03:04:05 GMT');
  });

  it('should truncate milliseconds rather than round them', () => {
    assert.equal(formatHttpDate(RFC_EXAMPLE_MS + 999), RFC_IMF_FIXDATE);
  });

  it('should agree with Date#toUTCString on every month and weekday name', () => {
    for (const ms of SAMPLE_INSTANTS) {
      assert.equal(formatHttpDate(ms), new Date(ms).toUTCString());
    }
  });

  it('should format the first and last representable years', () => {
    assert.equal(formatHttpDate(Date.UTC(1900, 0, 1)), 'Mon, 01 Jan 1900 00:00:00 GMT');
    assert.equal(formatHttpDate(Date.UTC(9999, 11, 31, 23, 59, 59)), 'Fri, 31 Dec 9999 23:59:59 GMT');
  });

  it('should throw a TypeError for a non-finite time', () => {
    assert.throws(() => formatHttpDate(Number.NaN), { name: 'TypeError', message: /finite/ });
    assert.throws(() => formatHttpDate(Number.POSITIVE_INFINITY), { name: 'TypeError', message: /finite/ });
  });

  it('should throw a TypeError for a year an HTTP-date cannot carry', () => {
    assert.throws(() => formatHttpDate(Date.UTC(1899, 11, 31, 23, 59, 59)), { name: 'TypeError', message: /1900-9999/ });
    assert.throws(() => formatHttpDate(Date.UTC(10000, 0, 1)), { name: 'TypeError', message: /1900-9999/ });
  });
});

describe('parseHttpDate', () => {
  describe('the three formats', () => {
    it('should parse IMF-fixdate', () => {
      assert.equal(parseHttpDate(RFC_IMF_FIXDATE), RFC_EXAMPLE_MS);
    });

    it('should parse the obsolete RFC 850 format', () => {
      assert.equal(parseHttpDate(RFC_RFC850), RFC_EXAMPLE_MS);
    });

    it('should parse the obsolete asctime format with a space-padded day', () => {
      assert.equal(parseHttpDate(RFC_ASCTIME), RFC_EXAMPLE_MS);
    });

    it('should parse asctime with a two-digit day, including a zero-padded one', () => {
      assert.equal(parseHttpDate('Wed Nov 16 08:49:37 1994'), Date.UTC(1994, 10, 16, 8, 49, 37));
      assert.equal(parseHttpDate('Sun Nov 06 08:49:37 1994'), RFC_EXAMPLE_MS);
    });

    it('should read back what formatHttpDate writes, to the second', () => {
      for (const ms of SAMPLE_INSTANTS) {
        assert.equal(parseHttpDate(formatHttpDate(ms)), Math.floor(ms / 1000) * 1000);
      }
    });

    it('should allow leading and trailing OWS', () => {
      assert.equal(parseHttpDate(` \t${RFC_IMF_FIXDATE}\t `), RFC_EXAMPLE_MS);
      assert.equal(parseHttpDate(` ${RFC_ASCTIME} `), RFC_EXAMPLE_MS);
    });
  });

  describe('value ranges (RFC 5322 §3.3)', () => {
    it('should accept 29 February in a leap year', () => {
      assert.equal(parseHttpDate('Tue, 29 Feb 2000 00:00:00 GMT'), Date.UTC(2000, 1, 29));
    });

    // Each weekday below is the one the overflowing date would roll over to, so only the day check rejects it.
    const badDays: readonly [string, string][] = [
      ['29 February outside a leap year', 'Thu, 29 Feb 1900 00:00:00 GMT'],
      ['31 April', 'Wed, 31 Apr 2024 00:00:00 GMT'],
      ['day 32', 'Thu, 32 Jan 2024 00:00:00 GMT'],
      ['day 00', 'Sun, 00 Jan 2024 00:00:00 GMT'],
    ];
    for (const [what, value] of badDays) {
      it(`should reject ${what}`, () => {
        assert.equal(parseHttpDate(value), undefined);
      });
    }

    it('should accept hour 23, minute 59 and second 59 but reject 24, 60 and 61', () => {
      assert.equal(parseHttpDate('Mon, 15 Jan 2024 23:59:59 GMT'), Date.UTC(2024, 0, 15, 23, 59, 59));
      assert.equal(parseHttpDate('Mon, 15 Jan 2024 24:00:00 GMT'), undefined);
      assert.equal(parseHttpDate('Mon, 15 Jan 2024 12:60:00 GMT'), undefined);
      assert.equal(parseHttpDate('Mon, 15 Jan 2024 12:00:61 GMT'), undefined);
    });

    it('should accept a leap second as the first second of the next day', () => {
      assert.equal(parseHttpDate('Sun, 31 Dec 2023 23:59:60 GMT'), Date.UTC(2024, 0, 1));
    });

    it('should accept 1900 and reject earlier years', () => {
      assert.equal(parseHttpDate('Mon, 01 Jan 1900 00:00:00 GMT'), Date.UTC(1900, 0, 1));
      assert.equal(parseHttpDate('Wed, 01 Jan 1800 00:00:00 GMT'), undefined);
    });

    it('should reject a day-name that is not the day the date falls on, in every format', () => {
      assert.equal(parseHttpDate('Mon, 06 Nov 1994 08:49:37 GMT'), undefined);
      assert.equal(parseHttpDate('Monday, 06-Nov-94 08:49:37 GMT'), undefined);
      assert.equal(parseHttpDate('Mon Nov  6 08:49:37 1994'), undefined);
    });
  });

  describe('RFC 850 two-digit years (RFC 9110 §5.6.7)', () => {
    const NOW_2025 = Date.UTC(2025, 0, 1);

    it('should read a year up to 50 years ahead as the future', () => {
      assert.equal(parseHttpDate('Saturday, 01-Jun-30 00:00:00 GMT', NOW_2025), Date.UTC(2030, 5, 1));
    });

    it('should read a year exactly 50 years ahead as the future', () => {
      assert.equal(parseHttpDate('Tuesday, 01-Jan-75 00:00:00 GMT', NOW_2025), Date.UTC(2075, 0, 1));
    });

    it('should read a year more than 50 years ahead as the most recent past year with those digits', () => {
      assert.equal(parseHttpDate('Wednesday, 01-Jan-75 00:00:01 GMT', NOW_2025), Date.UTC(1975, 0, 1, 0, 0, 1));
      assert.equal(parseHttpDate('Friday, 31-Dec-99 23:59:59 GMT', NOW_2025), Date.UTC(1999, 11, 31, 23, 59, 59));
    });

    it('should read a year more than 50 years back as the coming one late in a century', () => {
      assert.equal(parseHttpDate('Saturday, 15-Mar-10 00:00:00 GMT', Date.UTC(2090, 0, 1)), Date.UTC(2110, 2, 15));
    });

    it('should check 29 February against the resolved century', () => {
      assert.equal(parseHttpDate('Tuesday, 29-Feb-00 00:00:00 GMT', NOW_2025), Date.UTC(2000, 1, 29));
    });

    it('should default now to the current time', () => {
      assert.equal(parseHttpDate(RFC_RFC850), RFC_EXAMPLE_MS);
    });
  });

  describe('anything else', () => {
    const rejected: readonly [string, string][] = [
      ['an empty value', ''],
      ['an ISO 8601 timestamp', '1994-11-06T08:49:37Z'],
      ['a lowercase day-name', 'sun, 06 Nov 1994 08:49:37 GMT'],
      ['a lowercase month', 'Sun, 06 nov 1994 08:49:37 GMT'],
      ['a lowercase GMT', 'Sun, 06 Nov 1994 08:49:37 gmt'],
      ['an uppercase long day-name', 'SUNDAY, 06-Nov-94 08:49:37 GMT'],
      ['an unknown month', 'Sun, 06 Nox 1994 08:49:37 GMT'],
      ['UTC instead of GMT', 'Sun, 06 Nov 1994 08:49:37 UTC'],
      ['a numeric zone', 'Sun, 06 Nov 1994 08:49:37 +0000'],
      ['trailing garbage', 'Sun, 06 Nov 1994 08:49:37 GMT x'],
      ['a trailing comma', 'Sun, 06 Nov 1994 08:49:37 GMT,'],
      ['a trailing CRLF', 'Sun, 06 Nov 1994 08:49:37 GMT\r\n'],
      ['a doubled space', 'Sun,  06 Nov 1994 08:49:37 GMT'],
      ['a one-digit day in IMF-fixdate', 'Sun, 6 Nov 1994 08:49:37 GMT'],
      ['a two-digit year in IMF-fixdate', 'Sun, 06 Nov 94 08:49:37 GMT'],
      ['a non-digit in the year', 'Sun, 06 Nov 19x4 08:49:37 GMT'],
      ['missing seconds', 'Sun, 06 Nov 1994 08:49 GMT'],
      ['a dot for a colon', 'Sun, 06 Nov 1994 08.49:37 GMT'],
      ['a four-digit year in RFC 850', 'Sunday, 06-Nov-1994 08:49:37 GMT'],
      ['an abbreviated day-name in RFC 850', 'Sun, 06-Nov-94 08:49:37 GMT'],
      ['a one-space one-digit day in asctime', 'Sun Nov 6 08:49:37 1994'],
      ['a list of two dates', `${RFC_IMF_FIXDATE}, ${RFC_IMF_FIXDATE}`],
    ];
    for (const [what, value] of rejected) {
      it(`should reject ${what}`, () => {
        assert.equal(parseHttpDate(value), undefined);
      });
    }
  });

  it('should throw a TypeError for a value that is not a string', () => {
    assert.throws(() => parseHttpDate(0 as unknown as string), { name: 'TypeError', message: /value must be a string/ });
  });

  it('should throw a TypeError for a non-finite now', () => {
    assert.throws(() => parseHttpDate(RFC_RFC850, Number.NaN), { name: 'TypeError', message: /now must be/ });
  });
});
