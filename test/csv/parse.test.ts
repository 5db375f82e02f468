import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseCsv } from '../../lib/csv/parse.js';
import type { CsvError, CsvResult } from '../../lib/csv/parse.js';

function rowsOf(result: CsvResult): readonly (readonly string[])[] {
  if (!result.ok) assert.fail(`expected ok, got ${result.error.message}`);
  return result.rows;
}

function errorOf(result: CsvResult): CsvError {
  if (result.ok) assert.fail(`expected an error, got ${JSON.stringify(result.rows)}`);
  return result.error;
}

describe('parseCsv', () => {
  it('should read a header and records separated by CRLF', () => {
    assert.deepEqual(rowsOf(parseCsv('productId,currentPrice,newPrice\r\np1,10,12\r\np2,5,6\r\n')), [
      ['productId', 'currentPrice', 'newPrice'],
      ['p1', '10', '12'],
      ['p2', '5', '6'],
    ]);
  });

  it('should accept LF line endings and a missing final line break', () => {
    assert.deepEqual(rowsOf(parseCsv('a,b\n1,2\n3,4')), [['a', 'b'], ['1', '2'], ['3', '4']]);
  });

  it('should treat a lone CR outside quotes as a line break', () => {
    assert.deepEqual(rowsOf(parseCsv('a,b\r1,2\r')), [['a', 'b'], ['1', '2']]);
  });

  it('should skip a UTF-8 byte order mark at the start only', () => {
    assert.deepEqual(rowsOf(parseCsv('\uFEFFid,x\n1,\uFEFFy\n')), [['id', 'x'], ['1', '\uFEFFy']]);
  });

  it('should keep commas, quotes, CRLF, LF and a lone CR inside quoted fields', () => {
    const text = 'a,b\r\n"x,y","say ""hi"""\r\n"line1\r\nline2","one\rtwo\nthree"\r\n';
    assert.deepEqual(rowsOf(parseCsv(text)), [
      ['a', 'b'],
      ['x,y', 'say "hi"'],
      ['line1\r\nline2', 'one\rtwo\nthree'],
    ]);
  });

  it('should read empty fields, quoted or not', () => {
    assert.deepEqual(rowsOf(parseCsv('a,b,c\n,,\n"",x,""\n,"",\n')), [
      ['a', 'b', 'c'],
      ['', '', ''],
      ['', 'x', ''],
      ['', '', ''],
    ]);
  });

  it('should read a trailing comma at the end of the file as a last empty field', () => {
    assert.deepEqual(rowsOf(parseCsv('a,b\n1,')), [['a', 'b'], ['1', '']]);
  });

  it('should return no records for an empty text or a lone byte order mark', () => {
    assert.deepEqual(rowsOf(parseCsv('')), []);
    assert.deepEqual(rowsOf(parseCsv('\uFEFF')), []);
  });

  it('should not count trailing blank lines as records', () => {
    assert.deepEqual(rowsOf(parseCsv('a,b\r\n1,2\r\n\r\n')), [['a', 'b'], ['1', '2']]);
    assert.deepEqual(rowsOf(parseCsv('a,b\n1,2\n\n\n')), [['a', 'b'], ['1', '2']]);
  });

  it('should read a blank line inside a one-column file as an empty field', () => {
    assert.deepEqual(rowsOf(parseCsv('id\n\nx\n')), [['id'], [''], ['x']]);
  });

  it('should keep a quoted empty field on the last line as a record', () => {
    assert.deepEqual(rowsOf(parseCsv('id\n""\n')), [['id'], ['']]);
  });

  it('should keep spaces around fields as data', () => {
    assert.deepEqual(rowsOf(parseCsv('a,b\n 1 , 2\n')), [['a', 'b'], [' 1 ', ' 2']]);
  });

  it('should reject a quote inside an unquoted field, naming the row and offset', () => {
    const error = errorOf(parseCsv('a,b\n1,2\nx,ab"c\n'));
    assert.equal(error.kind, 'csv');
    assert.equal(error.row, 3);
    assert.equal(error.offset, 12);
    assert.match(error.message, /^row 3: a quote inside an unquoted field/);
  });

  it('should reject a space before an opening quote as a quote inside an unquoted field', () => {
    assert.equal(errorOf(parseCsv('a,b\n1, "2"\n')).row, 2);
  });

  it('should reject text after a closing quote', () => {
    const error = errorOf(parseCsv('a,b\n"x"y,2\n'));
    assert.equal(error.row, 2);
    assert.equal(error.offset, 7);
    assert.match(error.message, /text after a closing quote/);
  });

  it('should report an unterminated quoted field at the row where it started', () => {
    const error = errorOf(parseCsv('a,b\n1,2\n3,"open\nstill open\r\nand more'));
    assert.equal(error.row, 3);
    assert.equal(error.offset, 10);
    assert.match(error.message, /unterminated quoted field/);
  });

  it('should reject a row with more or fewer fields than the header, naming that row', () => {
    const more = errorOf(parseCsv('a,b\n1,2\n3,4,5\n'));
    assert.equal(more.row, 3);
    assert.match(more.message, /^row 3 has 3 fields; the header has 2$/);
    assert.equal(errorOf(parseCsv('a,b\n1\n')).row, 2);
  });

  it('should count a record spanning several lines as one row', () => {
    assert.equal(errorOf(parseCsv('a,b\n"x\ny\nz",1\n2\n')).row, 3);
  });

  it('should reject a blank line inside a file of several columns, naming its row', () => {
    const error = errorOf(parseCsv('a,b\n1,2\n\n3,4\n'));
    assert.equal(error.row, 3);
    assert.equal(error.offset, 8);
  });

  it('should read a long quoted field of doubled quotes without recursion', () => {
    const inner = '""'.repeat(200_000);
    const rows = rowsOf(parseCsv(`a\n"${inner}"\n`));
    assert.equal(rows[1]?.[0]?.length, 200_000);
  });

  it('should throw a TypeError when given something other than a string', () => {
    assert.throws(() => parseCsv(42 as unknown as string), { name: 'TypeError', message: /text must be a string/ });
  });
});
