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
  const table = new CsvTable();
  for (const doc of docs) table.add(doc);
  return { columns: table.columns(), rows: table.cells() };
}

/**
 * A CSV text built a row at a time that knows its own size in UTF-8 bytes before it is written, so a
 * page can stop before it passes its byte budget (CONVENTIONS.md#page-byte-budget). Every row has a
 * field for every column, so a document that brings new columns makes every row longer: the sizes
 * count that, and `add` stops as soon as the text would pass its limit, before any text is built.
 *
 * Columns are looked up in a tree of member names rather than by their path text: a path repeats its
 * parents' names, so path texts could be far longer than the documents (a long name over many nested
 * members); the tree costs what the documents hold, and a column's text is made only to be written.
 */
export class CsvTable {
  private readonly root: ColumnNode = {
    parent: undefined, key: '', bytes: 0, quotes: 0, special: false, bom: false, column: -1,
  };
  private readonly columnNodes: ColumnNode[] = [];
  private readonly rowsAdded: Row[] = [];
  /** The header's fields and the rows' fields, in bytes as written (quoted where they must be). */
  private headerFieldBytes = 0;
  private rowFieldBytes = 0;
  /** Rows whose every field is empty: written `""` while the table has one column. */
  private emptyRows = 0;

  /** How many rows the table holds. */
  get rows(): number {
    return this.rowsAdded.length;
  }

  /** The UTF-8 bytes of `text()`. */
  get bytes(): number {
    return this.measure(this.rowFieldBytes, this.emptyRows);
  }

  /**
   * Adds `doc` as the next row, unless the text would then pass `limit` bytes: then nothing is added and
   * the answer is false. The flattening stops as soon as the columns and fields seen pass the limit.
   */
  add(doc: JsonObject, limit = Number.POSITIVE_INFINITY): boolean {
    const row: Row = { cells: new Map(), bytes: 0, firstColumn: this.columnNodes.length };
    this.rowsAdded.push(row);
    let fits = true;
    flattenInto(this.root, doc, (node, text) => {
      if (node.column < 0) {
        node.column = this.columnNodes.length;
        this.columnNodes.push(node);
        this.headerFieldBytes += headerFieldBytes(node);
      }
      row.cells.set(node.column, text);
      row.bytes += fieldBytes(text);
      // The row counts as not empty here: a lower bound, enough to stop early; the exact check is below.
      fits = this.measure(this.rowFieldBytes + row.bytes, this.emptyRows) <= limit;
      return fits;
    });
    if (fits && this.measure(this.rowFieldBytes + row.bytes, this.emptyRows + (row.bytes === 0 ? 1 : 0)) <= limit) {
      this.rowFieldBytes += row.bytes;
      if (row.bytes === 0) this.emptyRows++;
      return true;
    }
    this.dropColumnsFrom(row.firstColumn);
    this.rowsAdded.pop();
    return false;
  }

  /** Takes the last row back out, and the columns only it brought. */
  pop(): void {
    const row = this.rowsAdded.pop();
    if (row === undefined) throw new TypeError('CsvTable.pop: the table has no rows');
    this.rowFieldBytes -= row.bytes;
    if (row.bytes === 0) this.emptyRows--;
    this.dropColumnsFrom(row.firstColumn);
  }

  /** The column names, in first-seen order. */
  columns(): string[] {
    return this.columnNodes.map(pathText);
  }

  /** The rows' cells as text, one per column (empty where a row has no such member). */
  cells(): string[][] {
    return this.rowsAdded.map((row) => this.columnNodes.map((_, column) => row.cells.get(column) ?? ''));
  }

  /** The table as RFC 4180 text: what `writeCsv` writes for its columns and cells. */
  text(): string {
    const width = this.columnNodes.length;
    if (width === 0) return writeCsv([], this.cells());
    const records = [writeRecord(this.columns())];
    // Most fields of a wide table are empty: a row is its own fields in column order, with the commas
    // of the empty ones between them written in runs.
    for (const row of this.rowsAdded) {
      const parts: string[] = [];
      let at = 0;
      for (const [column, text] of [...row.cells].sort((a, b) => a[0] - b[0])) {
        parts.push(','.repeat(column - at), writeField(text));
        at = column;
      }
      parts.push(','.repeat(width - 1 - at));
      const record = parts.join('');
      // One empty field alone would be a blank line (see writeRecord).
      records.push(record === '' ? '""' : record);
    }
    records.push('');
    return records.join(CRLF);
  }

  /** The size of the text with these row totals (see writeCsv and writeRecord for the shapes counted). */
  private measure(rowFieldBytes: number, emptyRows: number): number {
    const columns = this.columnNodes.length;
    if (columns === 0) return 0;
    // Fields joined by commas, CRLF after each record; a lone empty field is written `""`.
    const header = this.headerFieldBytes + columns + 1 + (columns === 1 && this.headerFieldBytes === 0 ? 2 : 0);
    const rows = rowFieldBytes + this.rowsAdded.length * (columns + 1) + (columns === 1 ? 2 * emptyRows : 0);
    return header + rows;
  }

  private dropColumnsFrom(first: number): void {
    for (const node of this.columnNodes.splice(first)) {
      this.headerFieldBytes -= headerFieldBytes(node);
      node.column = -1;
    }
  }
}

/** One member name below its parent's path, with what writing the path as a header field takes. */
interface ColumnNode {
  readonly parent: ColumnNode | undefined;
  /** The member name escaped as a JSON Pointer token. */
  readonly key: string;
  /** The path text's UTF-8 bytes, and the quotes, commas, CR or LF and leading BOM that make it quoted. */
  readonly bytes: number;
  readonly quotes: number;
  readonly special: boolean;
  readonly bom: boolean;
  /** Its index among the table's columns, or -1 while no row has a field there. */
  column: number;
  children?: Map<string, ColumnNode>;
}

interface Row {
  /** The row's own fields by column, as text before quoting. */
  readonly cells: Map<number, string>;
  /** Their bytes as written. */
  bytes: number;
  /** The table's column count before this row: the columns from here on came with it. */
  readonly firstColumn: number;
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

/** The node of `key` below `parent`, made on first sight with the measures of its path. */
function childOf(parent: ColumnNode, key: string): ColumnNode {
  parent.children ??= new Map();
  let child = parent.children.get(key);
  if (child === undefined) {
    const token = escapePointerToken(key);
    const top = parent.parent === undefined;
    let quotes = 0;
    let special = false;
    for (let i = 0; i < token.length; i++) {
      const c = token.charCodeAt(i);
      if (c === QUOTE) quotes++;
      special ||= c === QUOTE || c === COMMA || c === CR || c === LF;
    }
    child = {
      parent,
      key: token,
      bytes: parent.bytes + (top ? 0 : 1) + Buffer.byteLength(token, 'utf8'),
      quotes: parent.quotes + quotes,
      special: parent.special || special,
      bom: top ? token.charCodeAt(0) === BOM : parent.bom,
      column: -1,
    };
    parent.children.set(key, child);
  }
  return child;
}

/** The path text of a column: its names from the top, joined by `/`. */
function pathText(node: ColumnNode): string {
  const keys: string[] = [];
  for (let at: ColumnNode | undefined = node; at?.parent !== undefined; at = at.parent) keys.push(at.key);
  return keys.reverse().join('/');
}

/** A header field's bytes as written by writeField. */
function headerFieldBytes(node: ColumnNode): number {
  return node.special || node.bom ? node.bytes + node.quotes + 2 : node.bytes;
}

/** A field's bytes as written by writeField: quoted, its quotes doubled, when it must be. */
function fieldBytes(field: string): number {
  let quote = field.charCodeAt(0) === BOM;
  let quotes = 0;
  for (let i = 0; i < field.length; i++) {
    const c = field.charCodeAt(i);
    if (c === QUOTE) quotes++;
    quote ||= c === QUOTE || c === COMMA || c === CR || c === LF;
  }
  const bytes = Buffer.byteLength(field, 'utf8');
  return quote ? bytes + quotes + 2 : bytes;
}

/**
 * Walks one document depth-first with an explicit stack, so deep nesting cannot overflow the call
 * stack, handing each leaf's column node and text to `emit`; stops when `emit` answers false.
 */
function flattenInto(root: ColumnNode, doc: JsonObject, emit: (node: ColumnNode, text: string) => boolean): void {
  const stack: { readonly node: ColumnNode; readonly object: JsonObject; readonly keys: string[]; next: number }[] = [
    { node: root, object: doc, keys: Object.keys(doc), next: 0 },
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
    const node = childOf(top.node, key);
    const keys = isJsonObject(value) ? Object.keys(value) : undefined;
    if (keys !== undefined && keys.length > 0) {
      stack.push({ node, object: value as JsonObject, keys, next: 0 });
      continue;
    }
    if (!emit(node, cellText(value))) return;
  }
}

function cellText(value: JsonValue): string {
  if (value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}
