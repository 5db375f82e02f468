// CSV reader for `PUT /{collection}/$bulk` bodies (CONVENTIONS.md#bulk-updates), RFC 4180 §2:
//
//   file        = [header CRLF] record *(CRLF record) [CRLF]
//   record      = field *(COMMA field)
//   field       = (escaped / non-escaped)
//   escaped     = DQUOTE *(TEXTDATA / COMMA / CR / LF / 2DQUOTE) DQUOTE
//   non-escaped = *TEXTDATA
//
// Tolerances, as CONVENTIONS.md#bulk-updates allows: a UTF-8 byte order mark at the start is skipped;
// LF alone, and (deliberately beyond RFC 4180) a lone CR outside quotes, end a record like CRLF does;
// blank lines at the end of the file are not records (editors append them). A blank line anywhere else is a record
// of one empty field, so it fails the field-count check unless the header has a single column.
// Spaces are data (RFC 4180 §2.4): `a, "b"` is an error, not the field `b`.
//
// One pass over the string with charCodeAt; quoted fields jump to the next quote with indexOf, so
// the work is linear in the input. Malformed input is returned as a CsvError naming the record
// (the header is row 1, CONVENTIONS.md#bulk-updates), never thrown.

const QUOTE = 0x22;
const COMMA = 0x2c;
const CR = 0x0d;
const LF = 0x0a;
const BOM = 0xfeff;

/** Where the reader is inside the current field. */
const FIELD_START = 0;
const UNQUOTED = 1;
const QUOTED = 2;
const AFTER_QUOTE = 3;
type State = typeof FIELD_START | typeof UNQUOTED | typeof QUOTED | typeof AFTER_QUOTE;

export interface CsvError {
  readonly kind: 'csv';
  readonly message: string;
  /** 1-based record number (the header is row 1). */
  readonly row: number;
  /** 0-based code-unit offset in the text where the problem was found. */
  readonly offset: number;
}

export type CsvResult =
  | { readonly ok: true; readonly rows: readonly (readonly string[])[] }
  | { readonly ok: false; readonly error: CsvError };

/** Parses a whole CSV text into records; every record has as many fields as the first (the header). */
export function parseCsv(text: string): CsvResult {
  if (typeof text !== 'string') throw new TypeError('parseCsv: text must be a string');
  const rows: string[][] = [];
  let fields: string[] = [];
  let row = 1;
  // Blank lines seen but not yet known to be followed by a record (rows row-blanks .. row-1).
  let blanks = 0;
  let blankAt = 0; // offset of the first of those blank lines
  let state: State = FIELD_START;
  let segment = 0; // start of the unquoted field, or of the quoted text not yet copied to `value`
  let value = ''; // the decoded part of a quoted field
  let quoteAt = 0; // offset of the opening quote, for the unterminated-field error
  const n = text.length;
  let i = text.charCodeAt(0) === BOM ? 1 : 0;

  // Ends the current field at offset `end`, in whichever state it was read.
  const pushField = (end: number): void => {
    fields.push(state === UNQUOTED ? text.slice(segment, end) : state === AFTER_QUOTE ? value : '');
  };

  // Ends the current record at offset `at`; returns an error when its width differs from the header.
  const endRecord = (at: number): CsvError | undefined => {
    for (let b = row - blanks; b < row; b++) {
      const error = addRecord(rows, [''], b, blankAt);
      if (error !== undefined) return error;
    }
    blanks = 0;
    const error = addRecord(rows, fields, row, at);
    fields = [];
    row++;
    return error;
  };

  while (i < n) {
    if (state === QUOTED) {
      const close = text.indexOf('"', i);
      if (close === -1) break;
      if (text.charCodeAt(close + 1) === QUOTE) {
        // RFC 4180 §2.7: a doubled quote inside a quoted field is one quote.
        value += text.slice(segment, close + 1);
        segment = close + 2;
        i = close + 2;
      } else {
        value += text.slice(segment, close);
        state = AFTER_QUOTE;
        i = close + 1;
      }
      continue;
    }
    const c = text.charCodeAt(i);
    if (c === COMMA) {
      pushField(i);
      state = FIELD_START;
    } else if (c === CR || c === LF) {
      if (state === FIELD_START && fields.length === 0) {
        if (blanks === 0) blankAt = i;
        blanks++;
        row++;
      } else {
        pushField(i);
        const error = endRecord(i);
        if (error !== undefined) return { ok: false, error };
      }
      state = FIELD_START;
      if (c === CR && text.charCodeAt(i + 1) === LF) i++;
    } else if (state === FIELD_START) {
      if (c === QUOTE) {
        state = QUOTED;
        quoteAt = i;
        segment = i + 1;
        value = '';
      } else {
        state = UNQUOTED;
        segment = i;
      }
    } else if (state === AFTER_QUOTE) {
      return fail('text after a closing quote; a quoted field must end at a comma or line break', row, i);
    } else if (c === QUOTE) {
      return fail('a quote inside an unquoted field; quote the whole field and double inner quotes', row, i);
    }
    i++;
  }

  if (state === QUOTED) return fail('unterminated quoted field', row, quoteAt);
  // A final record without its line break (RFC 4180 §2.2); trailing blank lines are dropped.
  if (state !== FIELD_START || fields.length > 0) {
    pushField(n);
    const error = endRecord(n);
    if (error !== undefined) return { ok: false, error };
  }
  return { ok: true, rows };
}

/** Appends one record, enforcing RFC 4180 §2.4: every record has the header's field count. */
function addRecord(rows: string[][], record: string[], row: number, at: number): CsvError | undefined {
  const header = rows[0];
  if (header !== undefined && record.length !== header.length) {
    return {
      kind: 'csv',
      message: `row ${row} has ${record.length} field${record.length === 1 ? '' : 's'}; ` +
        `the header has ${header.length}`,
      row,
      offset: at,
    };
  }
  rows.push(record);
  return undefined;
}

function fail(reason: string, row: number, offset: number): CsvResult {
  return { ok: false, error: { kind: 'csv', message: `row ${row}: ${reason} (offset ${offset})`, row, offset } };
}
