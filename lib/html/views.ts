// The browsable pages (`text/html`, CONVENTIONS.md#html-pages): a plain server-rendered page per
// resource, no JavaScript and no external assets, so a person can walk the API in a browser, link by
// link. Pure: each view takes what it shows and returns the page's text.
//
// Navigation (CONVENTIONS.md#collection-envelope): a list may offer the actions List, First,
// Previous, Next, Last, Select, Exit and Home, and a page carries only the links that apply (the
// first page has no Previous). resapi's pages offer Home, List (from an item to its collection), Next
// (when `@nextLink` exists) and Select (from a row to its detail: summaries plus a select link to the
// detail, CONVENTIONS.md#summaries). Previous and Last are never offered,
// because keyset paging walks forward only (CONVENTIONS.md#paging); nor is First, because a later
// page's address holds its query only inside the signed token, and the server builds no link it
// does not sign.
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
/** A table cell shows at most this much of a nested value. */
const CELL_CHARACTERS = 120;

export interface Navigation {
  readonly home?: string;
  readonly list?: string;
  readonly next?: string;
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

export function itemPage(view: ItemView): string {
  const compact = JSON.stringify(view.doc);
  const shown = compact.length <= PRETTY_JSON_CHARACTERS ? JSON.stringify(view.doc, null, 2) : compact;
  const body = `<h2>JSON</h2>\n<pre id="json">${escapeHtml(shown)}</pre>`;
  return layout(view.title, view.nav, view.facts, body);
}

export function listPage(view: ListView): string {
  const columns = columnsOf(view.rows);
  const count = view.count === undefined ? '' : `<p id="count">${view.count} matching in all.</p>\n`;
  if (view.rows.length === 0) {
    return layout(view.title, view.nav, view.facts, `${count}<p id="empty">No items on this page.</p>`);
  }
  const head = `<tr><th></th>${columns.map((column) => `<th>${escapeHtml(column)}</th>`).join('')}</tr>`;
  const rows = view.rows.map((row) => {
    const cells = columns.map((column) => `<td>${cell(row.doc[column])}</td>`).join('');
    return `<tr><td>${anchor('item', row.select, 'Select')}</td>${cells}</tr>`;
  });
  const table = `<table id="items">\n<thead>${head}</thead>\n<tbody>\n${rows.join('\n')}\n</tbody>\n</table>`;
  return layout(view.title, view.nav, view.facts, `${count}${table}`);
}

function layout(title: string, nav: Navigation, facts: readonly Fact[], main: string): string {
  const links = [
    nav.home === undefined ? '' : anchor('home', nav.home, 'Home'),
    nav.list === undefined ? '' : anchor('collection', nav.list, 'List'),
    nav.next === undefined ? '' : anchor('next', nav.next, 'Next'),
  ].filter((link) => link !== '');
  const shown = facts.map((fact) => `<dt>${escapeHtml(fact.name)}</dt><dd>${escapeHtml(fact.value)}</dd>`).join('');
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head><meta charset="utf-8"><meta name="viewport" content="width=device-width">' +
      `<title>${escapeHtml(title)}</title>`,
    `<style>${STYLE}</style></head>`,
    '<body>',
    `<nav>${links.join(' ')}</nav>`,
    `<h1>${escapeHtml(title)}</h1>`,
    facts.length === 0 ? '' : `<dl id="facts">${shown}</dl>`,
    main,
    '</body>',
    '</html>',
    '',
  ]
    .filter((line) => line !== '')
    .join('\n');
}

/** The top-level fields of the rows, in the order they are first met; `@id` is the Select link. */
function columnsOf(rows: readonly ListRow[]): string[] {
  const columns = new Set<string>();
  for (const row of rows) for (const name of Object.keys(row.doc)) if (name !== '@id') columns.add(name);
  return [...columns];
}

function cell(value: JsonValue | undefined): string {
  if (value === undefined) return '';
  const shown = typeof value === 'string' ? value : JSON.stringify(value);
  return escapeHtml(shown.length > CELL_CHARACTERS ? `${shown.slice(0, CELL_CHARACTERS)}…` : shown);
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
