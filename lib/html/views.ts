// The browsable pages (`text/html`, CONVENTIONS.md#html-pages): a plain server-rendered page per
// resource, no JavaScript and no external assets, so a person can walk the API in a browser, link by
// link. Pure: each view takes what it shows and returns the page's text; a list page is built a row at
// a time (ListPage) so that it knows its bytes, escaping included, before it is written
// (CONVENTIONS.md#page-byte-budget).
//
// Navigation (CONVENTIONS.md#collection-envelope): a list may offer the actions List, First,
// Previous, Next, Last, Select, Exit and Home, and a page carries only the links that apply (the
// first page has no Previous). resapi's pages offer Home, List (from an item to its collection), Next
// (when `@nextLink` exists) and Select (from a row to its detail: summaries plus a select link to the
// detail, CONVENTIONS.md#summaries). Previous and Last are never offered,
// because keyset paging walks forward only (CONVENTIONS.md#paging); nor is First, because a later
// page's address holds its query only inside the signed token, and the server builds no link it
// does not sign. Home also links to the server's own listings (`rel="related"`): they are not
// collections, so they are not rows.
import type { JsonObject, JsonValue } from '../json.js';
import { anchor, escapeHtml } from './markup.js';

export const HTML_TYPE = 'text/html';
export const HTML_CONTENT_TYPE = 'text/html; charset=utf-8';
/**
 * Sent with every page: nothing on it may run script or load anything (the style is inline), so
 * even a value that slipped past escaping would stay inert.
 */
export const HTML_SECURITY_POLICY =
  "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; base-uri 'none'; form-action 'none'";

/**
 * An item's JSON is indented only up to this size: indentation grows with depth, so a 1 MiB document
 * nested 256 deep would indent to hundreds of MiB; above it the page shows the compact JSON as sent.
 */
const PRETTY_JSON_CHARACTERS = 16 * 1024;
/** A table cell or column heading shows at most this many characters of its text. */
const CELL_CHARACTERS = 120;
const EMPTY = '<p id="empty">No items on this page.</p>';
const PAGE_END = '\n</body>\n</html>';
// The table's markup, written once so that ListPage's sizes and its text cannot disagree.
const TABLE_START = '<table id="items">\n<thead><tr><th></th>';
const HEAD_END = '</tr></thead>\n<tbody>\n';
const TABLE_END = '\n</tbody>\n</table>';
const ROW_START = '<tr><td>';
const ROW_SELECT_END = '</td>';
const ROW_END = '</tr>';
const ROW_FIXED_BYTES = ROW_START.length + ROW_SELECT_END.length + ROW_END.length;
/** `<th></th>` or `<td></td>` around a heading or a cell. */
const TAG_PAIR_BYTES = '<td></td>'.length;

export interface Navigation {
  readonly home?: string;
  readonly list?: string;
  /** Other resources this page leads to (Home's links to the server's own listings). */
  readonly related?: readonly NavLink[];
  readonly next?: string;
}

export interface NavLink {
  readonly href: string;
  readonly label: string;
}

/** A protocol fact shown on the page, such as the JSON representation's ETag. */
export interface Fact {
  readonly name: string;
  readonly value: string;
}

export interface ItemView {
  readonly title: string;
  readonly nav: Navigation;
  readonly doc: JsonObject;
  readonly facts: readonly Fact[];
  /** Parts of the item easier read as a table (a delivery's attempt log), shown after its JSON. */
  readonly tables?: readonly ItemTable[];
}

/** A table on an item's page: a row per object, a column per named field, in that order. */
export interface ItemTable {
  /** The table's `id` attribute and heading. */
  readonly id: string;
  readonly heading: string;
  readonly columns: readonly string[];
  readonly rows: readonly JsonObject[];
}

export interface ListRow {
  readonly doc: JsonObject;
  /** The detail this row selects. */
  readonly select: string;
}

export interface ListView {
  readonly title: string;
  readonly nav: Navigation;
  readonly rows: readonly ListRow[];
  readonly count?: number;
  readonly facts: readonly Fact[];
}

/** What a list page shows around its rows; Next is given when the page is written, once its end is known. */
export interface ListFrame {
  readonly title: string;
  readonly nav: Omit<Navigation, 'next'>;
  readonly count?: number;
  readonly facts: readonly Fact[];
}

export function itemPage(view: ItemView): string {
  const compact = JSON.stringify(view.doc);
  const shown = compact.length <= PRETTY_JSON_CHARACTERS ? JSON.stringify(view.doc, null, 2) : compact;
  const body = `<h2>JSON</h2>\n<pre id="json">${escapeHtml(shown)}</pre>`;
  const tables = (view.tables ?? []).map(itemTable).join('');
  return layout(view.title, view.nav, view.facts, body + tables);
}

/** An item's table, its cells escaped and clipped like a list page's. */
function itemTable(table: ItemTable): string {
  const headings = table.columns.map((column) => `<th>${escapeHtml(clip(column))}</th>`).join('');
  const rows = table.rows.map((row) => {
    const cells = table.columns.map((column) => `<td>${cell(row[column])}</td>`).join('');
    return `<tr>${cells}</tr>`;
  });
  const id = escapeHtml(table.id);
  return `\n<h2>${escapeHtml(table.heading)}</h2>\n<table id="${id}">\n<thead><tr>${headings}</tr></thead>\n` +
    `<tbody>\n${rows.join('\n')}\n</tbody>\n</table>`;
}

export function listPage(view: ListView): string {
  const { next, ...nav } = view.nav;
  const page = new ListPage({ ...view, nav });
  for (const row of view.rows) page.add(row);
  return page.text(next);
}

/**
 * A list page built a row at a time that knows its size in UTF-8 bytes as sent, escaping included,
 * before it is written, so a page can stop before it passes its byte budget
 * (CONVENTIONS.md#page-byte-budget). The table has a column per top-level field of any row, so a row
 * that brings new fields widens every row: the size counts that, and `add` stops as soon as the page
 * would pass its limit.
 */
export class ListPage {
  private readonly columns: string[] = [];
  private readonly columnIndex = new Map<string, number>();
  /** The bytes of each column's heading text, escaped. */
  private readonly headings: number[] = [];
  private readonly rows: TableRow[] = [];
  private headingBytes = 0;
  private rowBytes = 0;
  private bareFrame: number | undefined;

  constructor(private readonly frame: ListFrame) {}

  /** How many rows the page holds. */
  get rowCount(): number {
    return this.rows.length;
  }

  /**
   * Adds `row` unless the page, without a Next link, would then pass `limit` bytes: then nothing is
   * added and the answer is false.
   */
  add(row: ListRow, limit = Number.POSITIVE_INFINITY): boolean {
    const select = anchor('item', row.select, 'Select');
    const added: TableRow = { select, cells: new Map(), bytes: byteLength(select), firstColumn: this.columns.length };
    this.rows.push(added);
    this.bareFrame ??= this.frameBytes(undefined);
    let fits = true;
    for (const name of Object.keys(row.doc)) {
      if (name === '@id') continue;
      let column = this.columnIndex.get(name);
      if (column === undefined) {
        column = this.columns.length;
        const heading = byteLength(escapeHtml(clip(name)));
        this.columns.push(name);
        this.columnIndex.set(name, column);
        this.headings.push(heading);
        this.headingBytes += heading;
      }
      const html = cell(row.doc[name]);
      added.cells.set(column, html);
      added.bytes += byteLength(html);
      fits = this.bareFrame + this.tableBytes(this.rowBytes + added.bytes) <= limit;
      if (!fits) break;
    }
    if (fits && this.bareFrame + this.tableBytes(this.rowBytes + added.bytes) <= limit) {
      this.rowBytes += added.bytes;
      return true;
    }
    this.rows.pop();
    this.dropColumnsFrom(added.firstColumn);
    return false;
  }

  /** Takes the last row back out, and the columns only it brought. */
  pop(): void {
    const row = this.rows.pop();
    if (row === undefined) throw new TypeError('ListPage.pop: the page has no rows');
    this.rowBytes -= row.bytes;
    this.dropColumnsFrom(row.firstColumn);
  }

  /** The UTF-8 bytes of `text(next)`. */
  bytes(next?: string): number {
    const frame = next === undefined ? (this.bareFrame ??= this.frameBytes(undefined)) : this.frameBytes(next);
    return frame + (this.rows.length === 0 ? byteLength(EMPTY) : this.tableBytes(this.rowBytes));
  }

  /** The page, with a Next link to `next` when there is one. */
  text(next?: string): string {
    const { title, facts } = this.frame;
    const nav: Navigation = next === undefined ? this.frame.nav : { ...this.frame.nav, next };
    return layout(title, nav, facts, `${this.countText()}${this.rows.length === 0 ? EMPTY : this.table()}`);
  }

  private table(): string {
    const headings = this.columns.map((column) => `<th>${escapeHtml(clip(column))}</th>`).join('');
    const rows = this.rows.map((row) => {
      const cells = this.columns.map((_, column) => `<td>${row.cells.get(column) ?? ''}</td>`).join('');
      return `${ROW_START}${row.select}${ROW_SELECT_END}${cells}${ROW_END}`;
    });
    return `${TABLE_START}${headings}${HEAD_END}${rows.join('\n')}${TABLE_END}`;
  }

  /** The table's bytes with these rows' own bytes: every row has a cell per column, rows joined by LF. */
  private tableBytes(rowBytes: number): number {
    const columns = this.columns.length;
    const rows = this.rows.length;
    const head = byteLength(TABLE_START) + columns * TAG_PAIR_BYTES + this.headingBytes + byteLength(HEAD_END);
    const body = rowBytes + rows * (ROW_FIXED_BYTES + columns * TAG_PAIR_BYTES) + (rows - 1) + byteLength(TABLE_END);
    return head + body;
  }

  /** Everything but the table: the layout, its links and facts, and the count. */
  private frameBytes(next: string | undefined): number {
    const { title, facts } = this.frame;
    const nav: Navigation = next === undefined ? this.frame.nav : { ...this.frame.nav, next };
    return byteLength(layout(title, nav, facts, '')) + byteLength(this.countText());
  }

  private countText(): string {
    return this.frame.count === undefined ? '' : `<p id="count">${this.frame.count} matching in all.</p>\n`;
  }

  private dropColumnsFrom(first: number): void {
    for (const name of this.columns.splice(first)) this.columnIndex.delete(name);
    for (const heading of this.headings.splice(first)) this.headingBytes -= heading;
  }
}

interface TableRow {
  /** The Select link, and the row's own cells by column, as HTML. */
  readonly select: string;
  readonly cells: Map<number, string>;
  /** Their bytes. */
  bytes: number;
  /** The page's column count before this row: the columns from here on came with it. */
  readonly firstColumn: number;
}

/** A whole page: the head, the links and facts, then `main`. */
function layout(title: string, nav: Navigation, facts: readonly Fact[], main: string): string {
  const links = [
    nav.home === undefined ? '' : anchor('home', nav.home, 'Home'),
    nav.list === undefined ? '' : anchor('collection', nav.list, 'List'),
    ...(nav.related ?? []).map((link) => anchor('related', link.href, link.label)),
    nav.next === undefined ? '' : anchor('next', nav.next, 'Next'),
  ].filter((link) => link !== '');
  const shown = facts.map((fact) => `<dt>${escapeHtml(fact.name)}</dt><dd>${escapeHtml(fact.value)}</dd>`).join('');
  const head = [
    '<!doctype html>',
    '<html lang="en">',
    '<head><meta charset="utf-8"><meta name="viewport" content="width=device-width">' +
      `<title>${escapeHtml(title)}</title>`,
    `<style>${STYLE}</style></head>`,
    '<body>',
    `<nav>${links.join(' ')}</nav>`,
    `<h1>${escapeHtml(title)}</h1>`,
    facts.length === 0 ? '' : `<dl id="facts">${shown}</dl>`,
  ].filter((line) => line !== '');
  return `${head.join('\n')}\n${main}${PAGE_END}`;
}

/** A table cell: a value as text, clipped; a missing one empty. */
function cell(value: JsonValue | undefined): string {
  if (value === undefined) return '';
  return escapeHtml(clip(typeof value === 'string' ? value : JSON.stringify(value)));
}

/** At most CELL_CHARACTERS of `text`, never half a surrogate pair, with `…` when it was cut. */
function clip(text: string): string {
  if (text.length <= CELL_CHARACTERS) return text;
  const high = text.charCodeAt(CELL_CHARACTERS - 1);
  const end = high >= 0xd800 && high <= 0xdbff ? CELL_CHARACTERS - 1 : CELL_CHARACTERS;
  return `${text.slice(0, end)}…`;
}

function byteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

const STYLE = [
  'body{font:15px/1.45 system-ui,sans-serif;margin:1.5rem auto;max-width:70rem;padding:0 1rem;color:#222}',
  'nav a{margin-right:1rem}',
  'dl{display:grid;grid-template-columns:max-content auto;gap:.2rem 1rem}',
  'dt{font-weight:600}dd{margin:0;font-family:monospace}',
  'table{border-collapse:collapse;width:100%}',
  'th,td{border-bottom:1px solid #ddd;padding:.3rem .5rem;text-align:left;vertical-align:top}',
  'pre{background:#f5f5f5;padding:1rem;overflow:auto;white-space:pre-wrap;overflow-wrap:anywhere}',
].join('');
