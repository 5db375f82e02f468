// The query string of `GET /{collection}` (CONVENTIONS.md#filter-expressions, #simple-query-strings,
// #refused-parameters), parsed into a plain CollectionQuery. Pure: no store, no field validation (that needs
// the collection's known properties and happens in plan.ts).
//
// - System query options: $filter, $select, $orderby, $top, $count, $skiptoken; each at most once
//   (OData 4.01 Part 2 §5: "System query options ... MUST NOT be specified more than once").
// - `q` and `query` are refused (CONVENTIONS.md#refused-parameters), naming $filter and query
//   resources instead; $skip is refused too (keyset paging offers no jump to page N,
//   CONVENTIONS.md#paging); any other `$` option is unknown → 400.
// - json-server's own parameters (`_sort`, `_page`, `_limit`, the `_like`/`_gte`/... suffixes) are
//   refused with a 400 that names the resapi equivalent, so a user coming from json-server learns the
//   mapping instead of silently getting everything (README, Coming from json-server).
// - Every other parameter is a simple condition `field=value` (CONVENTIONS.md#simple-query-strings: `=`
//   means contains or is a member of, `&` means AND). OData 4.01 lets system options drop the `$`; resapi
//   does not, because a name without `$` is a field name here.
// - Names and values are decoded as HTML forms are (CONVENTIONS.md#query-string-decoding): "+" is a space
//   and "%2B" a plus sign, which is what URLSearchParams, Python's urlencode and curl --data-urlencode write.
import { parseFilter } from '../filter/index.js';
import { problem, type Problem } from '../protocol/problem.js';
import type { OrderKey } from './order.js';

export interface SimpleCondition {
  readonly path: readonly string[];
  readonly value: string;
}

export interface CollectionQuery {
  readonly filter?: string;
  readonly conditions: readonly SimpleCondition[];
  readonly orderby: readonly OrderKey[];
  readonly select?: readonly (readonly string[])[];
  /** `$select=*` (OData 4.01 Part 2 §5.1.3): whole items, even where a collection lists summaries by default. */
  readonly wholeItems?: true;
  readonly top?: number;
  readonly count: boolean;
}

export type ParsedQuery =
  | { readonly ok: true; readonly query: CollectionQuery; readonly skiptoken?: string }
  | { readonly ok: false; readonly problem: Problem };

const SYSTEM_OPTIONS = new Set(['$filter', '$select', '$orderby', '$top', '$count', '$skiptoken']);
const ORDER_ITEM = /^(\S+)(?:[ \t]+(asc|desc))?$/i;

export function parseQueryString(queryString: string): ParsedQuery {
  const system = new Map<string, string>();
  const conditions: SimpleCondition[] = [];
  for (const pair of queryString.split('&')) {
    if (pair === '') continue;
    const equals = pair.indexOf('=');
    const name = decode(equals === -1 ? pair : pair.slice(0, equals));
    const value = decode(equals === -1 ? '' : pair.slice(equals + 1));
    if (name === undefined || value === undefined) {
      return fail('bad-request', 'The query string is not valid percent-encoding.', '');
    }
    if (name === 'q' || name === 'query') {
      const detail =
        `Free-text '${name}' queries are not accepted: ` +
        'filter with $filter (an OData expression, e.g. $filter=price lt 10) or with field=value pairs, ' +
        'or PUT a query resource to /{collection}/$queries/{name}.';
      return fail('bad-request', detail, name);
    }
    if (name === '$skip') {
      return fail('bad-request', 'Jumping to an offset is not supported: follow @nextLink from page to page.', name);
    }
    const jsonServer = jsonServerEquivalent(name);
    if (jsonServer !== undefined) {
      return fail('bad-request', `'${name}' is a json-server parameter; resapi's equivalent: ${jsonServer}`, name);
    }
    if (name.startsWith('$')) {
      if (!SYSTEM_OPTIONS.has(name)) {
        const supported = [...SYSTEM_OPTIONS].join(', ');
        return fail('bad-request', `Unknown query option '${name}'. Supported: ${supported}.`, name);
      }
      if (system.has(name)) return fail('bad-request', `${name} may be given only once.`, name);
      system.set(name, value);
      continue;
    }
    const path = parsePath(name);
    if (path === undefined) {
      return fail('bad-request', `'${name}' is not a property path (use names like price or origin/country).`, name);
    }
    conditions.push({ path, value });
  }
  const skiptoken = system.get('$skiptoken');
  if (skiptoken !== undefined) {
    if (system.size > 1 || conditions.length > 0) {
      const detail = 'A $skiptoken carries the whole query: follow @nextLink as it is, without other options.';
      return fail('bad-request', detail, '$skiptoken');
    }
    return { ok: true, query: { conditions: [], orderby: [], count: false }, skiptoken };
  }
  return buildQuery(system, conditions);
}

function buildQuery(system: ReadonlyMap<string, string>, conditions: readonly SimpleCondition[]): ParsedQuery {
  let query: CollectionQuery = { conditions, orderby: [], count: false };
  const filter = system.get('$filter');
  if (filter !== undefined) {
    if (filter.trim() === '') {
      // Refused here, with the parser's own words and offset, so a blank filter never means "all".
      const parsed = parseFilter(filter);
      return fail('bad-request', `$filter: ${parsed.ok ? 'empty' : parsed.error.message}`, '$filter');
    }
    query = { ...query, filter };
  }
  const orderby = system.get('$orderby');
  if (orderby !== undefined) {
    const keys = parseOrderby(orderby);
    if (typeof keys === 'string') return fail('bad-request', keys, '$orderby');
    query = { ...query, orderby: keys };
  }
  const select = system.get('$select');
  if (select?.trim() === '*') {
    query = { ...query, wholeItems: true };
  } else if (select !== undefined) {
    const paths = parseSelect(select);
    if (typeof paths === 'string') return fail('bad-request', paths, '$select');
    query = { ...query, select: paths };
  }
  const top = system.get('$top');
  if (top !== undefined) {
    if (!/^\d{1,9}$/.test(top)) return fail('bad-request', '$top must be a non-negative integer.', '$top');
    query = { ...query, top: Number(top) };
  }
  const count = system.get('$count');
  if (count !== undefined) {
    if (count !== 'true' && count !== 'false') return fail('bad-request', '$count must be true or false.', '$count');
    query = { ...query, count: count === 'true' };
  }
  return { ok: true, query };
}

/** `price desc,name` → keys; or a message. */
export function parseOrderby(text: string): OrderKey[] | string {
  const keys: OrderKey[] = [];
  for (const item of text.split(',')) {
    const match = ORDER_ITEM.exec(item.trim());
    const path = match === null ? undefined : parsePath(match[1] as string);
    if (match === null || path === undefined) {
      return `'${item.trim()}' is not an order item: use a property path optionally followed by asc or desc.`;
    }
    keys.push({ path, descending: (match[2] ?? 'asc').toLowerCase() === 'desc' });
  }
  return keys;
}

/** `a,b/c` → paths; or a message. */
export function parseSelect(text: string): string[][] | string {
  const paths: string[][] = [];
  for (const item of text.split(',')) {
    const path = parsePath(item.trim());
    if (path === undefined) return `'${item.trim()}' is not a property path.`;
    paths.push(path);
  }
  return paths;
}

/** A property path in the `$filter` grammar's own terms, so every option accepts the same names. */
function parsePath(text: string): string[] | undefined {
  if (text === '') return undefined;
  const parsed = parseFilter(text);
  if (!parsed.ok || parsed.ast.kind !== 'path' || parsed.ast.variable !== null) return undefined;
  return [...parsed.ast.segments];
}

/** application/x-www-form-urlencoded decoding (WHATWG URL §5.1): "+" is a space, then percent-decoding. */
function decode(text: string): string | undefined {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}

/** json-server's parameters, each with the resapi way to say the same. */
const JSON_SERVER_OPTIONS: Readonly<Record<string, string>> = {
  _sort: '$orderby=field (or $orderby=field desc)',
  _order: '$orderby=field desc',
  _page: 'follow @nextLink from page to page (resapi has no page numbers)',
  _per_page: 'the header Prefer: maxpagesize=N',
  _limit: 'the header Prefer: maxpagesize=N, or $top=N for a total',
  _start: 'follow @nextLink (no offsets)',
  _end: '$top=N',
  _embed: 'GET the related items from their own collection with $filter',
  _expand: 'GET the related item at its own URL',
  q: "$filter=contains(field,'text')",
};
const JSON_SERVER_SUFFIXES: Readonly<Record<string, string>> = {
  _gte: 'ge',
  _lte: 'le',
  _gt: 'gt',
  _lt: 'lt',
  _ne: 'ne',
  _like: 'contains',
};

function jsonServerEquivalent(name: string): string | undefined {
  if (Object.hasOwn(JSON_SERVER_OPTIONS, name)) return JSON_SERVER_OPTIONS[name];
  for (const [suffix, operator] of Object.entries(JSON_SERVER_SUFFIXES)) {
    if (!name.endsWith(suffix) || name.length === suffix.length) continue;
    const field = name.slice(0, -suffix.length);
    return operator === 'contains' ? `$filter=contains(${field},'text')` : `$filter=${field} ${operator} value`;
  }
  return undefined;
}

function fail(type: 'bad-request', detail: string, parameter: string): ParsedQuery {
  return { ok: false, problem: problem(type, detail, parameter === '' ? {} : { errors: [{ parameter, detail }] }) };
}
