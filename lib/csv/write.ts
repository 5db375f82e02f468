// The `text/csv` representation of a collection page, in flattened columns
// (CONVENTIONS.md#content-negotiation), written as RFC 4180 §2: header record first, CRLF after every
// record, fields quoted only when they must be.
//
// Flattening (a JSON document has no single CSV form, so these choices are ours):
// - nested object members become columns named by their path, `dimensions/width`, the same `/` path
//   syntax as `$select` and `$filter` (CONVENTIONS.md#select-and-orderby). A key that itself holds
//   `/` or `~` is escaped as in JSON Pointer (RFC 6901 §3: `~` → `~0`, `/` → `~1`), so two different
//   members never share a column;
// - arrays and empty objects are written as their JSON text (a row cannot hold a list);
// - strings as they are, numbers and booleans as their JSON text;
// - null and a missing member are both an empty field: CSV has no null (RFC 4180 has no types), and
//   the `$bulk` reader reads an empty field back as null;
// - columns in first-seen order across the documents, depth-first in each document's member order.
//
// Formula injection (OWASP "CSV Injection"): cells starting with `=`, `+`, `-` or `@` are NOT
// prefixed or altered. This is a reference implementation of HTTP representations: the CSV must carry
// the stored data exactly (negative numbers start with `-`), round-trip through the `$bulk` reader,
// and have a stable ETag of its bytes. Whoever opens the file in a spreadsheet owns that risk; the
// docs say so.
import { escapePointerToken } from '../json-pointer.js';
import type { JsonObject, JsonValue } from '../json.js';
import { isJsonObject } from '../json.js';

const QUOTE = 0x22;
const COMMA = 0x2c;
const CR = 0x0d;
const LF = 0x0a;
const BOM = 0xfeff;
const CRLF = '\r\n';

export interface FlatRows {
  readonly columns: readonly string[];
  readonly rows: readonly (readonly string[])[];
}

/** Flattens JSON objects into one table of text cells (see the header comment for the rules). */
export function flattenRows(docs: readonly JsonObject[]): FlatRows {
  const columns: string[] = [];
  const indexOf = new Map<string, number>();
  const cellsPerDoc = docs.map((doc) => {
    const cells = new Map<number, string>();
    flattenInto(doc, (column, text) => {
      let index = indexOf.get(column);
      if (index === undefined) {
        index = columns.length;
        indexOf.set(column, index);
        columns.push(column);
      }
      cells.set(index, text);
    });
    return cells;
  });
  const rows = cellsPerDoc.map((cells) => columns.map((_, index) => cells.get(index) ?? ''));
  return { columns, rows };
}

/** Writes a header and records as RFC 4180 text, CRLF after every record (§2.1). */
export function writeCsv(columns: readonly string[], rows: readonly (readonly string[])[]): string {
  if (columns.length === 0) {
    // A record has at least one field, so zero columns can only be written as an empty file.
    if (rows.length > 0) throw new TypeError('writeCsv: rows need at least one column');
    return '';
  }
  let out = writeRecord(columns) + CRLF;
  for (const [index, row] of rows.entries()) {
    if (row.length !== columns.length) {
      throw new TypeError(`writeCsv: rows[${index}] has ${row.length} fields; columns has ${columns.length}`);
    }
    out += writeRecord(row) + CRLF;
  }
  return out;
}

function writeRecord(fields: readonly string[]): string {
  // One empty field alone would be a blank line, which readers drop; `""` keeps the record.
  if (fields.length === 1 && fields[0] === '') return '""';
  return fields.map(writeField).join(',');
}

/** RFC 4180 §2.6–2.7: quote a field holding a comma, quote, CR or LF, doubling its quotes. */
function writeField(field: string): string {
  // A leading BOM would be taken for the file's byte order mark by the reader, so it is quoted too.
  let quote = field.charCodeAt(0) === BOM;
  for (let i = 0; i < field.length && !quote; i++) {
    const c = field.charCodeAt(i);
    quote = c === QUOTE || c === COMMA || c === CR || c === LF;
  }
  return quote ? `"${field.replaceAll('"', '""')}"` : field;
}

/** Walks one document depth-first with an explicit stack, so deep nesting cannot overflow the call stack. */
function flattenInto(doc: JsonObject, emit: (column: string, text: string) => void): void {
  const stack: { readonly prefix: string; readonly object: JsonObject; readonly keys: string[]; next: number }[] = [
    { prefix: '', object: doc, keys: Object.keys(doc), next: 0 },
  ];
  for (let top = stack.at(-1); top !== undefined; top = stack.at(-1)) {
    const key = top.keys[top.next];
    if (key === undefined) {
      stack.pop();
      continue;
    }
    top.next++;
    const value = top.object[key];
    if (value === undefined) continue;
    const column = top.prefix + escapePointerToken(key);
    if (isJsonObject(value) && Object.keys(value).length > 0) {
      stack.push({ prefix: `${column}/`, object: value, keys: Object.keys(value), next: 0 });
    } else {
      emit(column, cellText(value));
    }
  }
}

function cellText(value: JsonValue): string {
  if (value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}
