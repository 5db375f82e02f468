// The pure decision behind `PUT /{collection}/$bulk` (CONVENTIONS.md#bulk-updates): a row's new value
// is applied only when the stored value still equals its current value, and a row already applied is
// skipped. Replacement values applied conditionally are what make the payload safe to repeat
// (CONVENTIONS.md#idempotent-methods): sending the same file twice skips every row the second time.
// Increments and percentages are refused because applying them twice compounds.
//
// This module reads the header, converts CSV text to each stored value's type, and decides every row;
// the HTTP layer commits `updates` in one atomic store write and answers `reportOf(plan)`.
// Nothing here mutates the documents handed to it.
//
// Nested members: the text/csv representation writes them as `a/b` columns, each segment escaped as
// in JSON Pointer (RFC 6901 §3; lib/csv/write.ts), so `currentDimensions/width,newDimensions/width`
// updates `dimensions.width`, and a file made from a download can be sent back.
//
// Numbers (CONVENTIONS.md#json-bodies: a number JSON cannot carry exactly → 400 on every write path,
// bulk rows included): a new value written as a decimal that no double holds exactly (`9007199254740993`,
// `1e-400`, `1e400`) makes the file a 400 naming the row, never a silently changed number.
import type { JsonObject, JsonValue } from '../json.js';
import { isJsonObject } from '../json.js';
import { isExactNumber, NUMBER_OUT_OF_RANGE, parseJson } from '../json-text.js';
import { isEscapedPointerText, unescapePointerToken } from '../json-pointer.js';
import { MAX_JSON_DEPTH } from '../writes/document.js';

const CURRENT = 'current';
const NEW = 'new';
const SLASH = '/';
// RFC 8259 §6 number grammar: `10`, `10.50`, `-3`, `1e2`; no `0x10`, `+1`, `.5`, `Infinity`, `NaN`.
// Echoed CSV text is cut short: a problem detail must not repeat a megabyte field back.
const ECHO_MAX = 64;
const DECIMAL = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/;

export interface BulkField {
  /**
   * The document member the pair updates: `currentPrice`/`newPrice` → `price`. A nested member is its
   * path as the CSV columns write it: `currentDimensions/width` → `dimensions/width` (RFC 6901 escapes).
   */
  readonly field: string;
  /** Column index of current<Field>. */
  readonly current: number;
  /** Column index of new<Field>. */
  readonly next: number;
}

export interface BulkColumns {
  /** Header name of the id column (`id` or a name ending in `Id`). */
  readonly idColumn: string;
  /** Column index of the id column. */
  readonly idIndex: number;
  readonly fields: readonly BulkField[];
}

export interface BulkProblem {
  readonly kind: 'bulk';
  readonly message: string;
  /** 1-based CSV record number; the header is row 1. */
  readonly row: number;
}

export type BulkHeaderResult = { ok: true; columns: BulkColumns } | { ok: false; problem: BulkProblem };

export interface RowOutcome {
  readonly row: number;
  readonly id: string;
  readonly outcome: 'applied' | 'skipped' | 'conflict' | 'notFound';
  /** For conflicts: field (its path text for a nested member) → stored value (null when the member is missing). */
  readonly actual?: Readonly<Record<string, JsonValue>>;
}

export interface BulkPlan {
  readonly outcomes: readonly RowOutcome[];
  /**
   * New documents for the applied rows, id → doc (the stored doc with the new values), ready for one
   * atomic store batch.
   */
  readonly updates: ReadonlyMap<string, JsonObject>;
}

export type BulkPlanResult = { ok: true; plan: BulkPlan } | { ok: false; problem: BulkProblem };

export interface BulkReport {
  readonly applied: number;
  readonly skipped: number;
  readonly conflicts: readonly { row: number; id: string; actual?: Record<string, JsonValue> }[];
  readonly notFound: readonly { row: number; id: string }[];
}

/**
 * Header row → the id column and the current<Field>/new<Field> pairs. A name matching current<Upper…>
 * or new<Upper…> is a pair column even when it also ends in `Id` (`currentAccountId` updates
 * `accountId`). Anything else that is not `id` or `…Id` is refused, as are duplicates, a `~` that is
 * not an RFC 6901 escape, and two pairs of which one updates a member of the other (`dimensions` and
 * `dimensions/width`: the outcome would depend on the column order).
 */
export function readBulkHeader(header: readonly string[]): BulkHeaderResult {
  let idIndex = -1;
  const seen = new Set<string>();
  const pairs = new Map<string, { current: number; next: number }>();
  for (const [index, name] of header.entries()) {
    if (seen.has(name)) return headerProblem(`column ${quoted(name)} appears twice`);
    seen.add(name);
    const current = fieldAfter(name, CURRENT);
    const field = current ?? fieldAfter(name, NEW);
    if (field !== undefined) {
      if (field === 'id' || field.startsWith('id/')) {
        return headerProblem(`column ${quoted(name)}: the id cannot be changed by a bulk update`);
      }
      if (!isEscapedPointerText(field)) {
        return headerProblem(`column ${quoted(name)}: "~" must be followed by 0 or 1 (RFC 6901 escapes)`);
      }
      // The write path refuses an object nested deeper (lib/writes/document.ts), so such a column could
      // never apply.
      if (deeperThan(field, MAX_JSON_DEPTH)) {
        return headerProblem(`column ${quoted(name)}: nested deeper than ${MAX_JSON_DEPTH} levels`);
      }
      const pair = pairs.get(field) ?? { current: -1, next: -1 };
      if (current !== undefined) pair.current = index;
      else pair.next = index;
      pairs.set(field, pair);
    } else if (name === 'id' || name.endsWith('Id')) {
      if (idIndex !== -1) return headerProblem(`two id columns: ${quoted(header[idIndex] ?? '')} and ${quoted(name)}`);
      idIndex = index;
    } else {
      return headerProblem(
        `unknown column ${quoted(name)}: ` +
          'expected one id column (id or <name>Id) and current<Field>/new<Field> pairs; ' +
          'increments and percentages are not accepted because applying them twice compounds',
      );
    }
  }
  const idColumn = header[idIndex];
  if (idColumn === undefined) return headerProblem('no id column (id or a name ending in Id, e.g. productId)');
  const fields: BulkField[] = [];
  for (const [field, pair] of pairs) {
    const upper = field.charAt(0).toUpperCase() + field.slice(1);
    if (pair.next === -1) return headerProblem(`column ${quoted(CURRENT + upper)} has no ${quoted(NEW + upper)}`);
    if (pair.current === -1) return headerProblem(`column ${quoted(NEW + upper)} has no ${quoted(CURRENT + upper)}`);
    fields.push({ field, current: pair.current, next: pair.next });
  }
  if (fields.length === 0) return headerProblem('no current<Field>/new<Field> pair, e.g. currentPrice,newPrice');
  // Two top-level fields never overlap, so the common header skips the check.
  const nested = fields.some(({ field }) => field.includes(SLASH));
  const overlap = nested ? firstOverlap(fields.map(({ field }) => field)) : undefined;
  if (overlap !== undefined) {
    const [outer, inner] = overlap;
    const columns = `columns for ${quoted(outer)} and ${quoted(inner)}`;
    return headerProblem(`${columns} overlap: one updates a member of the other`);
  }
  return { ok: true, columns: { idColumn, idIndex, fields } };
}

/**
 * Decides every data row (row numbers start at 2) against the stored documents. A problem (400 for
 * the whole request, nothing applied) for an empty or repeated id, or a new value that can never be
 * stored in the field's type; everything else is an outcome.
 */
export function planBulk(
  columns: BulkColumns,
  rows: readonly (readonly string[])[],
  lookup: (id: string) => JsonObject | undefined,
): BulkPlanResult {
  const outcomes: RowOutcome[] = [];
  const updates = new Map<string, JsonObject>();
  const firstRowOf = new Map<string, number>();
  const paths = columns.fields.map(({ field }) => field.split(SLASH).map(unescapePointerToken));
  for (const [index, cells] of rows.entries()) {
    const row = index + 2;
    const id = cells[columns.idIndex];
    if (id === undefined) return rowProblem(row, 'has fewer fields than the header');
    if (id === '') return rowProblem(row, `the ${columns.idColumn} field is empty`);
    const first = firstRowOf.get(id);
    if (first !== undefined) return rowProblem(row, `id ${quoted(id)} already appears on row ${first}`);
    firstRowOf.set(id, row);
    const doc = lookup(id);
    if (doc === undefined) {
      outcomes.push({ row, id, outcome: 'notFound' });
      continue;
    }
    const decided = decideRow(columns.fields, paths, cells, doc, row, id);
    if (!decided.ok) return decided;
    outcomes.push(decided.outcome);
    if (decided.updated !== undefined) updates.set(id, decided.updated);
  }
  return { ok: true, plan: { outcomes, updates } };
}

/** The JSON report body (CONVENTIONS.md#bulk-updates). */
export function reportOf(plan: BulkPlan): BulkReport {
  let applied = 0;
  let skipped = 0;
  const conflicts: { row: number; id: string; actual?: Record<string, JsonValue> }[] = [];
  const notFound: { row: number; id: string }[] = [];
  for (const { row, id, outcome, actual } of plan.outcomes) {
    if (outcome === 'applied') applied++;
    else if (outcome === 'skipped') skipped++;
    else if (outcome === 'notFound') notFound.push({ row, id });
    else conflicts.push(actual === undefined ? { row, id } : { row, id, actual: { ...actual } });
  }
  return { applied, skipped, conflicts, notFound };
}

type RowDecision =
  | { readonly ok: true; readonly outcome: RowOutcome; readonly updated?: JsonObject }
  | { readonly ok: false; readonly problem: BulkProblem };

/** CSV text converted to a value, or why it cannot be one: not of the stored type, or a number no double holds. */
type Converted =
  | { readonly ok: true; readonly value: JsonValue }
  | { readonly ok: false; readonly why: 'type' | 'inexact' };

const NOT_OF_TYPE: Converted = { ok: false, why: 'type' };
const INEXACT: Converted = { ok: false, why: 'inexact' };

/** Applied when every current matches, skipped when every field already holds its new value, else conflict. */
function decideRow(
  fields: readonly BulkField[],
  paths: readonly (readonly string[])[],
  cells: readonly string[],
  doc: JsonObject,
  row: number,
  id: string,
): RowDecision {
  let allCurrent = true;
  let allNew = true;
  const actual: [string, JsonValue][] = [];
  const changes: [readonly string[], JsonValue][] = [];
  for (const [index, { field, current, next }] of fields.entries()) {
    const path = paths[index] ?? [field];
    const currentText = cells[current];
    const nextText = cells[next];
    if (currentText === undefined || nextText === undefined) return rowProblem(row, 'has fewer fields than the header');
    const read = readForUpdate(doc, path);
    if (!read.ok) {
      // No value of this row could ever be stored there, whatever the current column says.
      const holder = field.split(SLASH).slice(0, read.depth + 1).join(SLASH);
      const found = describe(read.found);
      return rowProblem(row, `${quoted(field)} cannot be set: ${quoted(holder)} holds ${found}, not an object`);
    }
    const stored = read.value;
    const nextValue = convert(nextText, stored);
    if (!nextValue.ok && nextValue.why === 'inexact') {
      return rowProblem(row, `new value ${quoted(nextText)} for ${field} cannot be stored exactly as a number`);
    }
    if (!nextValue.ok) {
      const type = describe(stored);
      return rowProblem(row, `new value ${quoted(nextText)} for ${field} is not ${type}, the type of the stored value`);
    }
    // A current value that cannot convert (or that no double holds, so it cannot be what is stored)
    // cannot equal the stored one: a conflict, not a problem.
    const currentValue = convert(currentText, stored);
    allCurrent &&= currentValue.ok && sameJson(stored, currentValue.value);
    allNew &&= sameJson(stored, nextValue.value);
    actual.push([field, stored]);
    changes.push([path, nextValue.value]);
  }
  // Checked first, so a row whose current and new are equal is skipped, not rewritten.
  if (allNew) return { ok: true, outcome: { row, id, outcome: 'skipped' } };
  if (allCurrent) {
    let updated = doc;
    for (const [path, value] of changes) updated = withValueAt(updated, path, value);
    return { ok: true, outcome: { row, id, outcome: 'applied' }, updated };
  }
  // fromEntries defines own properties, so a field named like a prototype member stays plain data.
  return { ok: true, outcome: { row, id, outcome: 'conflict', actual: Object.fromEntries(actual) } };
}

/**
 * CSV text → a value of the stored value's type. A null (or missing) member has no type to follow,
 * so the text is read as it looks: empty → null, `true`/`false` → boolean, decimal → number,
 * anything else → string. A decimal no double holds exactly is refused there too rather than kept as
 * a string: the same text is a number in every other row, and a stored string would change its type
 * silently.
 */
function convert(text: string, stored: JsonValue): Converted {
  if (typeof stored === 'string') return { ok: true, value: text };
  if (typeof stored === 'number') return decimal(text);
  if (typeof stored === 'boolean') {
    return text === 'true' ? { ok: true, value: true } : text === 'false' ? { ok: true, value: false } : NOT_OF_TYPE;
  }
  if (stored === null) {
    if (text === '') return { ok: true, value: null };
    if (text === 'true' || text === 'false') return { ok: true, value: text === 'true' };
    return DECIMAL.test(text) ? decimal(text) : { ok: true, value: text };
  }
  // Arrays and objects travel as JSON text, as the text/csv representation writes them.
  const parsed = jsonCell(text);
  if (!parsed.ok) return parsed;
  if (Array.isArray(stored)) return Array.isArray(parsed.value) ? parsed : NOT_OF_TYPE;
  return isJsonObject(parsed.value) ? parsed : NOT_OF_TYPE;
}

function decimal(text: string): Converted {
  if (!DECIMAL.test(text)) return NOT_OF_TYPE;
  // `9007199254740993`, `1e-400` and `1e400` are decimal syntax, but no double holds them
  // (CONVENTIONS.md#json-bodies).
  return isExactNumber(text) ? { ok: true, value: Number(text) } : INEXACT;
}

/**
 * A JSON cell, read with the same rule as a JSON body. A number that overflows to Infinity is kept
 * (as Infinity): the write path refuses the row's document with the number's pointer, as it refuses
 * a PUT of it (lib/writes/document.ts), and Infinity equals no stored value, so a current that holds
 * one is a conflict. A finite number the double changed (`9007199254740993`) is refused here, because
 * no later check can tell it from the number it became.
 */
function jsonCell(text: string): Converted {
  const parsed = parseJson(text);
  if (parsed.ok) return { ok: true, value: parsed.value };
  if (parsed.error.kind === 'syntax') return NOT_OF_TYPE;
  if (parsed.error.reason === NUMBER_OUT_OF_RANGE) return { ok: true, value: JSON.parse(text) as JsonValue };
  return INEXACT;
}

/** Deep JSON equality (member order ignored), iterative so deep values cannot overflow the stack. */
function sameJson(a: JsonValue, b: JsonValue): boolean {
  const pending: [JsonValue | undefined, JsonValue | undefined][] = [[a, b]];
  for (let pair = pending.pop(); pair !== undefined; pair = pending.pop()) {
    const [x, y] = pair;
    if (x === y) continue;
    if (Array.isArray(x)) {
      if (!Array.isArray(y) || x.length !== y.length) return false;
      for (const [index, item] of x.entries()) pending.push([item, y[index]]);
    } else if (isJsonObject(x)) {
      if (!isJsonObject(y)) return false;
      const keys = Object.keys(x);
      if (keys.length !== Object.keys(y).length) return false;
      for (const key of keys) {
        if (!Object.hasOwn(y, key)) return false;
        pending.push([x[key], y[key]]);
      }
    } else {
      return false;
    }
  }
  return true;
}

type Reading =
  | { readonly ok: true; readonly value: JsonValue }
  | { readonly ok: false; readonly depth: number; readonly found: JsonValue };

/**
 * The member at `path` as lib/json.ts valueAt reads it, except that a path blocked by a value that is
 * not an object is told apart, since an update could not write there. Null when it or a member on the
 * way is missing or null (the CSV writes null
 * and missing alike as an empty field). A member on the way that holds anything but an object can
 * never hold the path: `depth` is its index in the path. hasOwn, so that `constructor` is never found
 * on the prototype.
 */
function readForUpdate(doc: JsonObject, path: readonly string[]): Reading {
  let value: JsonValue = doc;
  for (const [depth, key] of path.entries()) {
    if (!isJsonObject(value)) return { ok: false, depth: depth - 1, found: value };
    value = Object.hasOwn(value, key) ? (value[key] ?? null) : null;
    if (value === null) return { ok: true, value: null };
  }
  return { ok: true, value };
}

/**
 * A copy of `doc` with `value` at `path`, copying only the objects along the path (the document handed
 * in is never mutated) and creating the missing ones; readForUpdate has ruled out anything else on the way.
 * fromEntries defines own properties, so a key such as `__proto__` stays plain data and keeps its place.
 */
function withValueAt(doc: JsonObject, path: readonly string[], value: JsonValue): JsonObject {
  const chain: JsonObject[] = [doc];
  for (const key of path.slice(0, -1)) {
    const parent = chain[chain.length - 1] ?? {};
    const member = Object.hasOwn(parent, key) ? parent[key] : undefined;
    chain.push(isJsonObject(member) ? member : {});
  }
  let replacement = value;
  for (let depth = path.length - 1; depth >= 0; depth--) {
    replacement = Object.fromEntries([...Object.entries(chain[depth] ?? {}), [path[depth] ?? '', replacement]]);
  }
  return replacement as JsonObject;
}

/** One segment of the paths seen so far; `field` is set where a path ends. */
interface PathNode {
  field?: string;
  readonly children: Map<string, PathNode>;
}

/**
 * Two paths of which the first is a prefix of the second (`dimensions`, `dimensions/width`), or
 * undefined. A tree of segments, so a long header costs time linear in its length.
 */
function firstOverlap(fields: readonly string[]): [string, string] | undefined {
  const root: PathNode = { children: new Map() };
  for (const field of fields) {
    let node = root;
    for (const segment of field.split(SLASH)) {
      if (node.field !== undefined) return [node.field, field];
      let child = node.children.get(segment);
      if (child === undefined) {
        child = { children: new Map() };
        node.children.set(segment, child);
      }
      node = child;
    }
    // A longer path seen earlier runs through this one's end.
    const inner = node.children.size > 0 ? firstFieldUnder(node) : undefined;
    if (inner !== undefined) return [field, inner];
    node.field = field;
  }
  return undefined;
}

/** Some path ending at or below `node` (every leaf is the end of a path). */
function firstFieldUnder(node: PathNode): string | undefined {
  let current: PathNode | undefined = node;
  while (current !== undefined && current.field === undefined) current = current.children.values().next().value;
  return current?.field;
}

/** True when the path has more than `levels` segments: its last one would sit in an object nested deeper than that. */
function deeperThan(path: string, levels: number): boolean {
  let segments = 1;
  for (let slash = path.indexOf(SLASH); slash !== -1 && segments <= levels; slash = path.indexOf(SLASH, slash + 1)) {
    segments++;
  }
  return segments > levels;
}

function describe(stored: JsonValue): string {
  if (stored === null) return 'null';
  if (Array.isArray(stored)) return 'an array';
  if (typeof stored === 'object') return 'an object';
  return `a ${typeof stored}`;
}

/** `current<Upper…>` → `<lower…>`; undefined when the name is not of that form. */
function fieldAfter(name: string, prefix: string): string | undefined {
  if (name.length <= prefix.length || !name.startsWith(prefix)) return undefined;
  const first = name.charCodeAt(prefix.length);
  if (first < 0x41 || first > 0x5a) return undefined; // ASCII A-Z
  return String.fromCharCode(first + 0x20) + name.slice(prefix.length + 1);
}

function quoted(text: string): string {
  return JSON.stringify(text.length > ECHO_MAX ? `${text.slice(0, ECHO_MAX)}…` : text);
}

function headerProblem(message: string): { ok: false; problem: BulkProblem } {
  return { ok: false, problem: { kind: 'bulk', message: `row 1: ${message}`, row: 1 } };
}

function rowProblem(row: number, message: string): { ok: false; problem: BulkProblem } {
  return { ok: false, problem: { kind: 'bulk', message: `row ${row}: ${message}`, row } };
}
