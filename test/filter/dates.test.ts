import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FilterDate, parseDateText } from '../../lib/filter/dates.js';

describe('parseDateText', () => {
  it('should read a date as midnight UTC with its components', () => {
    const date = parseDateText('2024-02-29', 'required');
    assert.ok(date instanceof FilterDate);
    assert.deepEqual([date.year, date.month, date.day, date.instant], [2024, 2, 29, Date.UTC(2024, 1, 29)]);
  });

  it('should keep the components as written and move the instant by the offset', () => {
    const date = parseDateText('2023-12-31T23:30:00-05:00', 'required');
    assert.deepEqual([date?.year, date?.month, date?.day], [2023, 12, 31]);
    assert.equal(date?.instant, Date.UTC(2024, 0, 1, 4, 30));
  });

  it('should accept optional seconds, fractions truncated to milliseconds, and lower-case t and z', () => {
    assert.equal(parseDateText('2024-01-01T10:00Z', 'required')?.instant, Date.UTC(2024, 0, 1, 10));
    assert.equal(parseDateText('2024-01-01t10:00:01.123999z', 'required')?.instant, Date.UTC(2024, 0, 1, 10, 0, 1, 123));
    assert.equal(parseDateText('2024-01-01T10:00:01.5Z', 'required')?.instant, Date.UTC(2024, 0, 1, 10, 0, 1, 500));
  });

  it('should require a time zone only when asked to', () => {
    assert.equal(parseDateText('2024-01-01T10:00:00', 'required'), null);
    assert.equal(parseDateText('2024-01-01T10:00:00', 'optional')?.instant, Date.UTC(2024, 0, 1, 10));
  });

  it('should honour leap years and month lengths', () => {
    assert.equal(parseDateText('2023-02-29', 'optional'), null);
    assert.equal(parseDateText('1900-02-29', 'optional'), null);
    assert.ok(parseDateText('2000-02-29', 'optional'));
    assert.equal(parseDateText('2024-04-31', 'optional'), null);
    assert.equal(parseDateText('2024-13-01', 'optional'), null);
    assert.equal(parseDateText('2024-00-01', 'optional'), null);
  });

  it('should read years below 100 as written, not as 19xx', () => {
    assert.equal(parseDateText('0099-01-01', 'optional')?.instant, new Date('0099-01-01T00:00:00Z').getTime());
  });

  it('should refuse other shapes and out-of-range times', () => {
    for (const text of ['2024-1-01', '24-01-01', '2024-01-01 10:00Z', '2024-01-01T1:00Z', '2024-01-01T24:00Z',
      '2024-01-01T10:60Z', '2024-01-01T10:00:61Z', '2024-01-01T10:00+24:00', '2024-01-01T10:00+01:60', ' 2024-01-01',
      '2024-01-01T10:00:00.1234567890123Z', '']) {
      assert.equal(parseDateText(text, 'optional'), null, text);
    }
  });

  it('should read the longest accepted form, 38 code units, and refuse longer texts', () => {
    const longest = '2024-01-31T10:00:00.123456789012+02:00';
    assert.equal(longest.length, 38);
    assert.equal(parseDateText(longest, 'required')?.instant, Date.UTC(2024, 0, 31, 8, 0, 0, 123));
    assert.equal(parseDateText(`${longest} `, 'optional'), null);
    assert.equal(parseDateText(`2024-01-31${'x'.repeat(1_000_000)}`, 'optional'), null);
  });

  it('should accept a leap second', () => {
    assert.equal(parseDateText('2016-12-31T23:59:60Z', 'required')?.instant, Date.UTC(2017, 0, 1));
  });
});
