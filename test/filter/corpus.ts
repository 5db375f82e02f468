// The `$filter` corpus: a fixture of twelve items and the cases every filter implementation must
// agree on (CONVENTIONS.md#filter-expressions). Written from OASIS OData 4.01 Part 2 §5.1.1 (URL
// Conventions) and the OData ABNF; each group cites the section it exercises. A valid case lists
// the exact ids it must match, sorted; an invalid case gives the error kind and, where meaningful,
// the offset. Not a test file: corpus.test.ts runs it against the compiler and the interpreter.
import type { JsonObject, JsonValue } from '../../lib/json.js';
import type { FilterErrorKind } from '../../lib/filter/index.js';

export const FIXTURE: readonly JsonObject[] = [
  {
    id: 'a01', name: 'Alpha', category: 'tools', price: 10, qty: 3, rating: 4.5, active: true,
    tags: ['sale', 'new'], items: [{ sku: 'x1', qty: 2 }, { sku: 'x2', qty: 5 }],
    address: { city: 'Paris', zip: '75001' }, createdAt: '2024-01-31', note: '  padded  ', code: '10',
  },
  {
    id: 'b02', name: "O'Brien", category: 'books', price: 25.5, qty: 0, rating: 3, active: false,
    tags: ['sale'], items: [], address: { city: 'Dublin', zip: null }, createdAt: '2024-02-29T23:30:00Z',
    note: 'say "hi"',
  },
  {
    id: 'c03', name: 'charlie', category: 'Tools', price: -5, qty: 10, rating: null, active: true,
    tags: [], items: [{ sku: 'c1', qty: 0 }], address: null, createdAt: '2023-12-31T23:59:59-05:00',
  },
  {
    id: 'd04', name: 'Delta Δ', category: 'books', price: 0, qty: 7, rating: 5,
    tags: ['new', 'Sale'], items: [{ sku: 'd1', qty: 1 }], address: { city: 'paris' },
    createdAt: '2024-03-15T08:00:00+02:00',
  },
  {
    id: 'e05', name: 'echo', category: null, price: 1000, qty: -2, rating: 2.25, active: null,
    address: { city: 'Berlin', zip: '10115', geo: { lat: 52.5 } }, createdAt: '2022-06-01',
  },
  {
    id: 'f06', name: 'Foxtrot', category: 'games', price: 0.1, qty: 1, rating: 4, active: true,
    tags: ['clearance', 'sale', 'new'], items: [{ sku: 'f1', qty: 3 }, { sku: 'f2', qty: null }],
    createdAt: 'not a date',
  },
  {
    id: 'g07', name: '', category: 'tools', price: 100, qty: 100, rating: 1.5, active: false,
    tags: ['new'], items: [{ sku: 'g1', qty: 10 }], address: { city: 'London', zip: 'SW1' },
    createdAt: '2024-12-31T23:59:59.999Z',
  },
  {
    id: 'h08', name: 'hotel', price: null, qty: 4, active: true, tags: 'sale',
    items: [{ sku: 'h1', qty: 4 }, { sku: 'h2', qty: 6 }], createdAt: '2021-02-28', code: 42,
  },
  {
    id: 'i09', name: 'India', category: 'books', price: 12.75, qty: 3, rating: -1, active: true,
    tags: ['sale', null], items: [{ sku: 'i1' }], address: { city: 'Paris', zip: '75002' },
    createdAt: '2024-01-01T00:00:00Z',
  },
  {
    id: 'j10', name: 'JULIET', category: 'games', price: 25, qty: 3, rating: 3.5, active: false,
    tags: [], items: [{ sku: 'j1', qty: 1 }, { sku: 'j2', qty: 2 }, { sku: 'j3', qty: 3 }],
    address: { city: 'Rome', zip: '00100' }, createdAt: '2024-07-04', nested: { deep: { value: 7 } },
  },
  {
    id: 'k11', name: 'kilo  spaced', category: 'tools', price: 7, qty: 0, rating: 0, active: true,
    tags: ['new', 'new'], createdAt: '2023-01-01T12:00:00Z', matrix: [[1, 2], [3]],
  },
  { id: 'l12', name: 'Lima' },
];

/** Every property path the fixture's items have; an array's element fields count under its name. */
export function knownPaths(items: readonly JsonObject[]): ReadonlySet<string> {
  const paths = new Set<string>();
  const visit = (value: JsonValue, prefix: string): void => {
    if (Array.isArray(value)) {
      for (const element of value) visit(element, prefix);
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, child] of Object.entries(value)) {
        const path = prefix === '' ? key : `${prefix}/${key}`;
        paths.add(path);
        visit(child, path);
      }
    }
  };
  for (const item of items) visit(item, '');
  return paths;
}

const KNOWN = knownPaths(FIXTURE);
export const knownProperty = (path: readonly string[]): boolean => KNOWN.has(path.join('/'));

export interface ValidCase {
  readonly filter: string;
  readonly ids: readonly string[];
}

export interface InvalidCase {
  readonly filter: string;
  readonly kind: FilterErrorKind;
  readonly offset?: number;
}

const ALL = FIXTURE.map((item) => String(item.id));
const except = (...ids: string[]): string[] => ALL.filter((id) => !ids.includes(id));

export const VALID: readonly ValidCase[] = [
  // §5.1.1.1.1–2 eq / ne; ABNF stringLiteral (SQUOTE-in-string) and decimalLiteral (sign, ".", "e").
  { filter: "name eq 'Alpha'", ids: ['a01'] },
  { filter: "name eq 'alpha'", ids: [] },
  { filter: "name eq 'O''Brien'", ids: ['b02'] },
  { filter: "name eq ''", ids: ['g07'] },
  { filter: 'price eq 10', ids: ['a01'] },
  { filter: 'price eq 10.0', ids: ['a01'] },
  { filter: 'price eq 25', ids: ['j10'] },
  { filter: 'price eq 2.5e1', ids: ['j10'] },
  { filter: 'price eq 25.50', ids: ['b02'] },
  { filter: 'price eq -5', ids: ['c03'] },
  { filter: 'price eq 1E3', ids: ['e05'] },
  { filter: 'price eq 1e+3', ids: ['e05'] },
  { filter: 'price eq +10', ids: ['a01'] },
  { filter: 'price eq 0.1', ids: ['f06'] },
  { filter: 'price eq -0', ids: ['d04'] },
  { filter: 'rating eq 2.25', ids: ['e05'] },
  { filter: 'rating eq -1', ids: ['i09'] },
  { filter: 'active eq true', ids: ['a01', 'c03', 'f06', 'h08', 'i09', 'k11'] },
  { filter: 'active eq false', ids: ['b02', 'g07', 'j10'] },
  { filter: 'active ne true', ids: ['b02', 'd04', 'e05', 'g07', 'j10', 'l12'] },
  { filter: "name ne 'Alpha'", ids: except('a01') },
  { filter: "category eq 'tools'", ids: ['a01', 'g07', 'k11'] },
  { filter: "address/city eq 'Paris'", ids: ['a01', 'i09'] },
  { filter: 'address/geo/lat eq 52.5', ids: ['e05'] },
  { filter: 'nested/deep/value eq 7', ids: ['j10'] },
  { filter: "id eq 'l12'", ids: ['l12'] },
  // No coercion between JSON types (§5.1.1 "Numeric Promotion": no string ↔ number conversion).
  { filter: "code eq '10'", ids: ['a01'] },
  { filter: 'code eq 10', ids: [] },
  { filter: 'code eq 42', ids: ['h08'] },
  { filter: "code eq '42'", ids: [] },
  { filter: "tags eq 'sale'", ids: ['h08'] },
  { filter: 'name gt 5', ids: [] },
  { filter: 'code gt 5', ids: ['h08'] },

  // Null: §5.1.1.1.1 ("null … is equal to itself, and only to itself"), §5.1.1.1.3 ("If any operand
  // is null, the operator returns false"), §5.1 "Dynamic properties … evaluate to null".
  { filter: 'category eq null', ids: ['e05', 'h08', 'l12'] },
  { filter: 'null eq category', ids: ['e05', 'h08', 'l12'] },
  { filter: 'category ne null', ids: ['a01', 'b02', 'c03', 'd04', 'f06', 'g07', 'i09', 'j10', 'k11'] },
  { filter: 'active eq null', ids: ['d04', 'e05', 'l12'] },
  { filter: 'address eq null', ids: ['c03', 'f06', 'h08', 'k11', 'l12'] },
  { filter: 'address/zip eq null', ids: ['b02', 'c03', 'd04', 'f06', 'h08', 'k11', 'l12'] },
  { filter: 'address/zip ne null', ids: ['a01', 'e05', 'g07', 'i09', 'j10'] },
  { filter: 'address/geo eq null', ids: except('e05') },
  { filter: 'createdAt eq null', ids: ['l12'] },
  { filter: 'null eq null', ids: ALL },
  { filter: 'null ne null', ids: [] },
  { filter: 'price gt null', ids: [] },
  { filter: 'price le null', ids: [] },
  { filter: 'rating ge null', ids: [] },
  { filter: 'address gt null', ids: [] },

  // §5.1.1.1.3–6 gt ge lt le: numbers, ordinal strings (code units), false < true.
  { filter: 'price gt 25', ids: ['b02', 'e05', 'g07'] },
  { filter: 'price ge 25', ids: ['b02', 'e05', 'g07', 'j10'] },
  { filter: 'price lt 0', ids: ['c03'] },
  { filter: 'price le 0', ids: ['c03', 'd04'] },
  { filter: 'price lt 1', ids: ['c03', 'd04', 'f06'] },
  { filter: 'qty ge 3 and qty le 7', ids: ['a01', 'd04', 'h08', 'i09', 'j10'] },
  { filter: "name gt 'a'", ids: ['c03', 'e05', 'h08', 'k11'] },
  { filter: "name lt 'B'", ids: ['a01', 'g07'] },
  { filter: "name ge 'Z'", ids: ['c03', 'e05', 'h08', 'k11'] },
  { filter: "name gt 'Delta'", ids: except('a01', 'g07') },
  { filter: "id ge 'k'", ids: ['k11', 'l12'] },
  { filter: 'active gt false', ids: ['a01', 'c03', 'f06', 'h08', 'i09', 'k11'] },
  { filter: 'active lt true', ids: ['b02', 'g07', 'j10'] },

  // §5.1.1.1.7–9 and / or / not with null as "unknown"; §5.1.2: only true selects.
  { filter: 'active eq true and price gt 10', ids: ['i09'] },
  { filter: 'price lt 0 or price gt 100', ids: ['c03', 'e05'] },
  { filter: 'not (price gt 10)', ids: ['a01', 'c03', 'd04', 'f06', 'h08', 'k11', 'l12'] },
  { filter: 'active', ids: ['a01', 'c03', 'f06', 'h08', 'i09', 'k11'] },
  { filter: 'not active', ids: ['b02', 'g07', 'j10'] },
  { filter: 'not not active', ids: ['a01', 'c03', 'f06', 'h08', 'i09', 'k11'] },
  { filter: 'active or price gt 100', ids: ['a01', 'c03', 'e05', 'f06', 'h08', 'i09', 'k11'] },
  { filter: 'active and price gt 100', ids: [] },
  { filter: 'not (active and price gt 100)', ids: except('e05') },
  { filter: 'active or false', ids: ['a01', 'c03', 'f06', 'h08', 'i09', 'k11'] },
  { filter: 'not (active or false)', ids: ['b02', 'g07', 'j10'] },
  { filter: 'active eq true or active eq false', ids: except('d04', 'e05', 'l12') },
  { filter: 'true', ids: ALL },
  { filter: 'false', ids: [] },
  { filter: 'null', ids: [] },
  { filter: 'not null', ids: [] },
  { filter: 'not false', ids: ALL },
  // ABNF booleanValue = "true" / "false": double-quoted ABNF strings match in any case.
  { filter: 'active eq True', ids: ['a01', 'c03', 'f06', 'h08', 'i09', 'k11'] },
  { filter: 'active eq FALSE', ids: ['b02', 'g07', 'j10'] },
  { filter: 'TRUE', ids: ALL },
  { filter: 'not fAlSe and active in (tRuE)', ids: ['a01', 'c03', 'f06', 'h08', 'i09', 'k11'] },
  { filter: 'name', ids: [] },

  // §5.1.1 "Operator Precedence": and over or, not over comparisons; 4.01 case-insensitive names.
  { filter: 'price gt 100 or price lt 0 and qty gt 50', ids: ['e05'] },
  { filter: '(price gt 100 or price lt 0) and qty gt 50', ids: [] },
  { filter: "active eq false and name eq 'JULIET' or name eq 'Alpha'", ids: ['a01', 'j10'] },
  { filter: "active eq false and (name eq 'JULIET' or name eq 'Alpha')", ids: ['j10'] },
  { filter: 'not active eq true', ids: ['b02', 'g07', 'j10'] },
  { filter: "name EQ 'Alpha' Or price Gt 100", ids: ['a01', 'e05'] },
  { filter: 'NOT (price GT 10)', ids: ['a01', 'c03', 'd04', 'f06', 'h08', 'k11', 'l12'] },
  { filter: 'price gt 10 AND price LT 30', ids: ['b02', 'i09', 'j10'] },
  { filter: 'price gt 5 eq true', ids: ['a01', 'b02', 'e05', 'g07', 'i09', 'j10', 'k11'] },

  // §5.1.1.1.11 in: a parenthesized list of literals (ABNF listExpr, at least one) or a collection.
  // `in` is a Primary operator in the precedence table, so `not qty in (…)` is `not (qty in (…))`.
  { filter: "name in ('Alpha', 'echo', 'nobody')", ids: ['a01', 'e05'] },
  { filter: 'price in (10, 25, -5)', ids: ['a01', 'c03', 'j10'] },
  { filter: 'price in (25.5)', ids: ['b02'] },
  { filter: 'price IN (10)', ids: ['a01'] },
  { filter: "category in ('tools', null)", ids: ['a01', 'e05', 'g07', 'h08', 'k11', 'l12'] },
  { filter: 'not (qty in (0, 3))', ids: ['c03', 'd04', 'e05', 'f06', 'g07', 'h08', 'l12'] },
  { filter: 'not qty in (0, 3)', ids: ['c03', 'd04', 'e05', 'f06', 'g07', 'h08', 'l12'] },
  { filter: "name in ('alpha')", ids: [] },
  { filter: 'active in (true)', ids: ['a01', 'c03', 'f06', 'h08', 'i09', 'k11'] },
  { filter: 'createdAt in (2024-01-31, 2022-06-01)', ids: ['a01', 'e05'] },
  { filter: "'sale' in tags", ids: ['a01', 'b02', 'f06', 'i09'] },
  { filter: 'null in tags', ids: ['i09'] },
  { filter: "'new' in tags and not ('sale' in tags)", ids: ['d04', 'g07', 'k11'] },

  // §5.1.1.2 arithmetic: left-associative, mul/div/mod over add/sub, null in → null out;
  // JSON numbers are doubles, so div divides exactly; division or modulo by zero is null.
  { filter: 'price add 5 eq 15', ids: ['a01'] },
  { filter: 'price sub 5 eq 5', ids: ['a01'] },
  { filter: 'price mul 2 eq 51', ids: ['b02'] },
  { filter: 'price div 2 eq 5', ids: ['a01'] },
  { filter: 'qty div 2 eq 1.5', ids: ['a01', 'i09', 'j10'] },
  { filter: 'qty mod 2 eq 1', ids: ['a01', 'd04', 'f06', 'i09', 'j10'] },
  { filter: 'qty mod 2 eq 0', ids: ['b02', 'c03', 'e05', 'g07', 'h08', 'k11'] },
  { filter: '-qty eq 2', ids: ['e05'] },
  { filter: '- price gt 0', ids: ['c03'] },
  { filter: 'price add qty gt 100', ids: ['e05', 'g07'] },
  { filter: 'qty add 1 mul 2 eq 8', ids: [] },
  { filter: '(qty add 1) mul 2 eq 8', ids: ['a01', 'i09', 'j10'] },
  { filter: 'qty sub 1 sub 1 eq 1', ids: ['a01', 'i09', 'j10'] },
  { filter: 'qty div 2 div 2 eq 0.75', ids: ['a01', 'i09', 'j10'] },
  { filter: 'price div 0 eq null', ids: ALL },
  { filter: 'qty mod 0 eq null', ids: ALL },
  { filter: 'price div 0 gt 0', ids: [] },
  { filter: 'price add null eq null', ids: ALL },
  { filter: 'price mul 1e308 mul 10 eq null', ids: except('d04', 'f06') },
  { filter: 'code add 1 eq 11', ids: [] },
  { filter: 'rating mul -1 gt 0', ids: ['i09'] },
  { filter: '(4 add 5) mod (4 sub 1) eq 0', ids: ALL },

  // §5.1.1 "String and Collection Functions" and "String Functions": case-sensitive matching,
  // positions and lengths in UTF-16 code units, null (or a non-string) in → null out.
  { filter: "contains(name, 'li')", ids: ['c03'] },
  { filter: "contains(tolower(name), 'li')", ids: ['c03', 'j10', 'l12'] },
  { filter: "CONTAINS(name, 'A')", ids: ['a01'] },
  { filter: "contains(name, '''')", ids: ['b02'] },
  { filter: "contains(name, 'Δ')", ids: ['d04'] },
  { filter: 'contains(name, null)', ids: [] },
  { filter: "contains(id, '0')", ids: except('k11', 'l12') },
  { filter: "startswith(name, 'A')", ids: ['a01'] },
  { filter: "startswith(name, '')", ids: ALL },
  { filter: "endswith(name, 'o')", ids: ['e05'] },
  { filter: "EndsWith(toupper(name), 'O')", ids: ['e05'] },
  { filter: "not contains(name, 'o')", ids: ['a01', 'b02', 'c03', 'd04', 'g07', 'i09', 'j10', 'l12'] },
  { filter: "not contains(category, 'o')", ids: ['f06', 'j10'] },
  { filter: "indexof(name, 'l') eq 1", ids: ['a01'] },
  { filter: "indexof(name, 'zz') eq -1", ids: ALL },
  { filter: 'length(name) eq 5', ids: ['a01', 'h08', 'i09'] },
  { filter: 'length(name) eq 0', ids: ['g07'] },
  { filter: "length(name) eq 7 and contains(name, 'Δ')", ids: ['d04'] },
  { filter: 'length(tags) eq 2', ids: ['a01', 'd04', 'i09', 'k11'] },
  { filter: 'length(tags) eq 0', ids: ['c03', 'j10'] },
  { filter: 'length(items) gt 1', ids: ['a01', 'f06', 'h08', 'j10'] },
  { filter: "substring(name, 1) eq 'lpha'", ids: ['a01'] },
  { filter: "substring(name, 1, 2) eq 'ch'", ids: ['e05'] },
  { filter: "substring(name, 10) eq ''", ids: except('k11') },
  { filter: "substring(name, -3) eq 'ima'", ids: ['l12'] },
  { filter: "substring(name, 0, 0) eq ''", ids: ALL },
  { filter: "tolower(name) eq 'juliet'", ids: ['j10'] },
  { filter: "tolower(name) lt 'b'", ids: ['a01', 'g07'] },
  { filter: "toupper(category) eq 'TOOLS'", ids: ['a01', 'c03', 'g07', 'k11'] },
  { filter: "trim(note) eq 'padded'", ids: ['a01'] },
  { filter: 'trim(name) eq name', ids: ALL },
  { filter: "concat(name, '!') eq 'echo!'", ids: ['e05'] },
  { filter: "concat(concat(address/city, ', '), category) eq 'Paris, tools'", ids: ['a01'] },
  { filter: 'concat(name, null) eq null', ids: ALL },

  // §5.1.1 "Date and Time Functions" (components as written, in the value's own time zone) and
  // ABNF date / dateTimeOffsetValue literals, compared by instant with dates stored as strings.
  { filter: 'year(createdAt) eq 2024', ids: ['a01', 'b02', 'd04', 'g07', 'i09', 'j10'] },
  { filter: 'year(createdAt) eq 2023', ids: ['c03', 'k11'] },
  { filter: 'month(createdAt) eq 2', ids: ['b02', 'h08'] },
  { filter: 'day(createdAt) eq 31', ids: ['a01', 'c03', 'g07'] },
  { filter: 'year(createdAt) eq null', ids: ['f06', 'l12'] },
  { filter: 'Year(2024-02-29) eq 2024', ids: ALL },
  { filter: 'day(2024-02-29T10:00:00-08:00) eq 29', ids: ALL },
  { filter: 'createdAt gt 2024-01-01', ids: ['a01', 'b02', 'c03', 'd04', 'g07', 'j10'] },
  { filter: 'createdAt ge 2024-01-01', ids: ['a01', 'b02', 'c03', 'd04', 'g07', 'i09', 'j10'] },
  { filter: 'createdAt lt 2023-06-01', ids: ['e05', 'h08', 'k11'] },
  { filter: 'createdAt eq 2024-01-31', ids: ['a01'] },
  { filter: 'createdAt eq 2024-01-01T00:00:00Z', ids: ['i09'] },
  { filter: 'createdAt eq 2024-01-01T04:59:59Z', ids: ['c03'] },
  { filter: 'createdAt eq 2024-01-01T05:59:59+01:00', ids: ['c03'] },
  { filter: 'createdAt gt 2024-12-31T23:59:59Z', ids: ['g07'] },
  { filter: 'createdAt ge 2024-03-15T06:00Z', ids: ['d04', 'g07', 'j10'] },
  { filter: 'createdAt gt 2024-01-01 and createdAt lt 2024-02-01', ids: ['a01', 'c03'] },
  { filter: "createdAt eq '2024-01-31'", ids: ['a01'] },
  { filter: "createdAt gt '2024'", ids: ['a01', 'b02', 'd04', 'f06', 'g07', 'i09', 'j10'] },
  { filter: '2024-01-01 lt 2024-01-02', ids: ALL },

  // §5.1.1 "Lambda Operators": any (false on empty; `any()` tests non-emptiness), all (true on
  // empty); a missing collection is empty, a non-array one is unknown; the lambda variable wins
  // over a property of the same name; unprefixed paths read the item.
  { filter: "tags/any(t: t eq 'sale')", ids: ['a01', 'b02', 'f06', 'i09'] },
  { filter: "tags/ANY(t: t eq 'sale')", ids: ['a01', 'b02', 'f06', 'i09'] },
  { filter: "tags/any(x: x eq 'sale' or x eq 'clearance')", ids: ['a01', 'b02', 'f06', 'i09'] },
  { filter: "tags/any(t: tolower(t) eq 'sale')", ids: ['a01', 'b02', 'd04', 'f06', 'i09'] },
  { filter: 'tags/any(t: length(t) gt 5)', ids: ['f06'] },
  { filter: 'tags/any()', ids: ['a01', 'b02', 'd04', 'f06', 'g07', 'i09', 'k11'] },
  { filter: 'not tags/any()', ids: ['c03', 'e05', 'j10', 'l12'] },
  { filter: "tags/all(t: t eq 'new')", ids: ['c03', 'e05', 'g07', 'j10', 'k11', 'l12'] },
  { filter: 'tags/all(t: t ne null)', ids: except('h08', 'i09') },
  { filter: "not tags/all(t: t ne 'sale')", ids: ['a01', 'b02', 'f06', 'i09'] },
  { filter: "tags/any(t: t eq 'sale') eq false", ids: ['c03', 'd04', 'e05', 'g07', 'j10', 'k11', 'l12'] },
  { filter: "tags/any(name: name eq 'new')", ids: ['a01', 'd04', 'f06', 'g07', 'k11'] },
  { filter: 'items/any(i: i/qty gt 4)', ids: ['a01', 'g07', 'h08'] },
  { filter: 'items/all(i: i/qty gt 0)', ids: ['a01', 'b02', 'd04', 'e05', 'g07', 'h08', 'j10', 'k11', 'l12'] },
  { filter: 'items/any(i: i/qty eq null)', ids: ['f06', 'i09'] },
  { filter: "items/any(i: i/sku eq 'j2' and i/qty eq 2)", ids: ['j10'] },
  { filter: 'items/any(i: i/qty eq qty)', ids: ['h08', 'j10'] },
  { filter: "items/any(i: i/sku in ('x1', 'h2'))", ids: ['a01', 'h08'] },
  { filter: "items/any(i: i/qty gt 2) and tags/any(t: t eq 'new')", ids: ['a01', 'f06', 'g07'] },
  { filter: 'items/any(i: items/any(j: j/qty gt i/qty))', ids: ['a01', 'h08', 'j10'] },
  { filter: 'matrix/any(row: row/any(cell: cell eq 3))', ids: ['k11'] },
  { filter: 'matrix/all(row: row/any())', ids: ALL },

  // OData 4.01 ABNF collectionPathExpr `count = '/$count'`: the number of elements of a collection;
  // null when the collection is missing, null or not an array.
  { filter: 'tags/$count gt 2', ids: ['f06'] },
  { filter: 'tags/$count eq 0', ids: ['c03', 'j10'] },
  { filter: 'tags/$count eq null', ids: ['e05', 'h08', 'l12'] },
  { filter: 'items/$count eq 0', ids: ['b02'] },
  { filter: 'tags/$count add 1 ge 3', ids: ['a01', 'd04', 'f06', 'i09', 'k11'] },
  { filter: 'length(tags) eq tags/$count', ids: except('h08') },
  { filter: 'name/$count eq null', ids: ALL },
  { filter: 'items/any(i: i/qty eq items/$count)', ids: ['a01', 'd04', 'j10'] },
  { filter: 'matrix/any(row: row/$count eq 1)', ids: ['k11'] },

  // §5.1.1 "Path Expressions", equality of structured values (§5.1.1.1.1), grouping (§5.1.1.3),
  // and whitespace (ABNF BWS; CONVENTIONS.md#filter-grammar: surrounding whitespace is tolerated).
  { filter: 'address/city eq address/city', ids: ALL },
  { filter: 'address eq address', ids: ALL },
  { filter: 'items eq items', ids: ALL },
  { filter: 'tags ne tags', ids: [] },
  { filter: '  price eq 10  ', ids: ['a01'] },
  { filter: 'price\teq\t10', ids: ['a01'] },
  { filter: 'price eq 10\r\n', ids: ['a01'] },
  { filter: '(price eq 10)', ids: ['a01'] },
  { filter: '((((price eq 10))))', ids: ['a01'] },
  { filter: "contains (name, 'li')", ids: ['c03'] },
  { filter: `${'('.repeat(64)}true${')'.repeat(64)}`, ids: ALL },
  { filter: `${'not '.repeat(64)}true`, ids: ALL },
  { filter: `name eq '${'a'.repeat(4086)}'`, ids: [] },
];

export const INVALID: readonly InvalidCase[] = [
  // ABNF lexical rules: stringLiteral, decimalLiteral, date, dateTimeOffsetValue, odataIdentifier.
  { filter: "name eq 'Alpha", kind: 'syntax', offset: 8 },
  { filter: 'price eq 1.', kind: 'syntax', offset: 11 },
  { filter: 'price eq 1e', kind: 'syntax', offset: 11 },
  { filter: 'price eq .5', kind: 'syntax', offset: 9 },
  { filter: 'price eq 5abc', kind: 'syntax', offset: 10 },
  { filter: 'price eq 1e999', kind: 'syntax', offset: 9 },
  { filter: 'price # 5', kind: 'syntax', offset: 6 },
  { filter: 'price eq "x"', kind: 'syntax', offset: 9 },
  { filter: 'price eq [1]', kind: 'syntax', offset: 9 },
  { filter: 'price eq +', kind: 'syntax', offset: 9 },
  { filter: 'name eq @p', kind: 'syntax', offset: 8 },
  { filter: '$it/price eq 1', kind: 'syntax', offset: 0 },
  { filter: 'createdAt eq 2024-13-01', kind: 'syntax', offset: 13 },
  { filter: 'createdAt eq 2024-02-30', kind: 'syntax', offset: 13 },
  { filter: 'createdAt eq 2023-02-29', kind: 'syntax', offset: 13 },
  { filter: 'createdAt eq 2024-01-31T10:00:00', kind: 'syntax', offset: 13 },
  { filter: 'createdAt eq 2024-01-31T25:00:00Z', kind: 'syntax', offset: 13 },
  { filter: 'createdAt eq 2024-01-31T10:00:00Zx', kind: 'syntax', offset: 33 },
  { filter: `${'n'.repeat(129)} eq 1`, kind: 'syntax', offset: 0 },

  // ABNF commonExpr structure: missing operands, trailing garbage, unbalanced parentheses.
  { filter: '', kind: 'syntax', offset: 0 },
  { filter: '   ', kind: 'syntax', offset: 3 },
  { filter: 'price eq', kind: 'syntax', offset: 8 },
  { filter: 'price eq 10)', kind: 'syntax', offset: 11 },
  { filter: '(price eq 10', kind: 'syntax', offset: 12 },
  { filter: 'price eq 10 price', kind: 'syntax', offset: 12 },
  { filter: 'price 10', kind: 'syntax', offset: 6 },
  { filter: 'price eq 10 and', kind: 'syntax', offset: 15 },
  { filter: "name eq 'a' 'b'", kind: 'syntax', offset: 12 },
  { filter: 'price eq -', kind: 'syntax', offset: 10 },
  { filter: 'not', kind: 'syntax', offset: 3 },
  { filter: ',', kind: 'syntax', offset: 0 },
  { filter: '/price eq 1', kind: 'syntax', offset: 0 },
  { filter: 'price eq 1 /', kind: 'syntax', offset: 11 },
  { filter: 'price / 2 eq 5', kind: 'syntax', offset: 8 },
  { filter: 'address/ city eq 1', kind: 'syntax', offset: 9 },
  { filter: "address//city eq 'x'", kind: 'syntax', offset: 8 },
  { filter: 'price has 1', kind: 'syntax', offset: 6 },
  { filter: 'price divby 2 eq 1', kind: 'syntax', offset: 6 },
  { filter: 'price eq 5 - 3', kind: 'syntax', offset: 11 },
  { filter: 'eq 10', kind: 'syntax', offset: 3 },

  // Function calls (ABNF methodCallExpr): separators and exact arity.
  { filter: "contains(name 'a')", kind: 'syntax', offset: 14 },
  { filter: 'contains(name,)', kind: 'syntax', offset: 14 },
  { filter: "contains(name, 'a'", kind: 'syntax', offset: 18 },
  { filter: 'contains(name)', kind: 'syntax', offset: 0 },
  { filter: "price eq 1 or contains(name, 'a', 'b')", kind: 'syntax', offset: 14 },
  { filter: "substring(name) eq 'a'", kind: 'syntax', offset: 0 },
  { filter: "substring(name, 1, 2, 3) eq 'a'", kind: 'syntax', offset: 0 },
  { filter: 'length() eq 0', kind: 'syntax', offset: 0 },
  { filter: "tolower(name, name) eq 'a'", kind: 'syntax', offset: 0 },

  // in (ABNF inExpr / listExpr: primitive literals only).
  { filter: 'price in 5', kind: 'syntax', offset: 9 },
  { filter: 'price in (1, price)', kind: 'syntax', offset: 13 },
  { filter: 'price in (1,)', kind: 'syntax', offset: 12 },
  { filter: 'price in (1 2)', kind: 'syntax', offset: 12 },
  { filter: 'price in (1', kind: 'syntax', offset: 11 },
  { filter: 'qty in ()', kind: 'syntax', offset: 8 },
  { filter: 'qty in (  ) or true', kind: 'syntax', offset: 10 },

  // Lambdas (ABNF anyExpr / allExpr).
  { filter: "tags/any(t t eq 'x')", kind: 'syntax', offset: 11 },
  { filter: 'tags/all()', kind: 'syntax', offset: 9 },
  { filter: 'tags/any(t: )', kind: 'syntax', offset: 12 },
  { filter: "tags/any(t: t eq 'a'", kind: 'syntax', offset: 20 },
  { filter: "tags/any(t: tags/any(t: t eq 'a'))", kind: 'syntax', offset: 21 },
  { filter: 'tags/any(null: true)', kind: 'syntax', offset: 9 },
  { filter: 'any(t: t eq 1)', kind: 'syntax', offset: 0 },
  { filter: "tags/any(t: t eq 'a')/x eq 1", kind: 'syntax', offset: 21 },

  // $count ends a collection path and is written exactly so (ABNF count = '/$count').
  { filter: '$count eq 1', kind: 'syntax', offset: 0 },
  { filter: 'tags/$count/x eq 1', kind: 'syntax', offset: 5 },
  { filter: 'tags/$COUNT eq 1', kind: 'syntax', offset: 5 },
  { filter: 'tags/ $count eq 1', kind: 'syntax', offset: 6 },
  { filter: "tags/any(t: $count eq 1)", kind: 'syntax', offset: 12 },
  { filter: 'nope/$count eq 1', kind: 'unknown-property', offset: 0 },
  { filter: "tags/$count eq 'a'", kind: 'type', offset: 12 },
  { filter: 'tags/$count', kind: 'type', offset: 0 },

  // Unknown functions: not in this subset, or not canonical at all.
  { filter: 'foo(name)', kind: 'unknown-function', offset: 0 },
  { filter: 'round(price) eq 1', kind: 'unknown-function', offset: 0 },
  { filter: 'name eq upper(name)', kind: 'unknown-function', offset: 8 },
  { filter: 'now() gt createdAt', kind: 'unknown-function', offset: 0 },
  { filter: "matchesPattern(name, '^A')", kind: 'unknown-function', offset: 0 },
  { filter: "address/city/contains(x, 'a')", kind: 'unknown-function', offset: 13 },

  // Unknown properties → 4xx (CONVENTIONS.md#filter-errors-and-budget). Names are case-sensitive,
  // and so is `null` (ABNF nullValue = 'null'): `NULL` is a property path.
  { filter: 'nope eq 1', kind: 'unknown-property', offset: 0 },
  { filter: "address/country eq 'FR'", kind: 'unknown-property', offset: 0 },
  { filter: "name eq 'x' or Name eq 'y'", kind: 'unknown-property', offset: 15 },
  { filter: 'NULL eq null', kind: 'unknown-property', offset: 0 },
  { filter: 'price eq NULL', kind: 'unknown-property', offset: 9 },
  { filter: "tags/any(t: t/label eq 'x')", kind: 'unknown-property', offset: 12 },
  { filter: 'items/any(i: i/price gt 1)', kind: 'unknown-property', offset: 13 },
  { filter: "Tags/any(t: t eq 'sale')", kind: 'unknown-property', offset: 0 },
  { filter: "contains(Name, 'a')", kind: 'unknown-property', offset: 9 },
  { filter: 'price in missing', kind: 'unknown-property', offset: 9 },

  // Types known before any row is read (§5.1.1.1, §5.1.1.2, function signatures).
  { filter: "price add 'a' eq 1", kind: 'type', offset: 10 },
  { filter: "'a' add 1 eq 2", kind: 'type', offset: 0 },
  { filter: 'not 5', kind: 'type', offset: 4 },
  { filter: 'not price gt 5', kind: 'type', offset: 10 },
  { filter: 'price eq 1 and 5', kind: 'type', offset: 15 },
  { filter: '5', kind: 'type', offset: 0 },
  { filter: "'abc'", kind: 'type', offset: 0 },
  { filter: 'price add 1', kind: 'type', offset: 0 },
  { filter: "name eq 1 eq 'a'", kind: 'type', offset: 10 },
  { filter: "'a' eq 1", kind: 'type', offset: 4 },
  { filter: '5 eq 2024-01-01', kind: 'type', offset: 2 },
  { filter: 'contains(name, 3)', kind: 'type', offset: 15 },
  { filter: 'length(5) eq 1', kind: 'type', offset: 7 },
  { filter: 'year(true) eq 2024', kind: 'type', offset: 5 },
  { filter: "-'a' eq 1", kind: 'type', offset: 1 },
  { filter: "substring(name, 1.5) eq 'a'", kind: 'type', offset: 16 },
  { filter: "substring(name, 0, -1) eq 'a'", kind: 'type', offset: 19 },
  { filter: "1 in ('a')", kind: 'type', offset: 6 },
  { filter: 'tags/any(t: 5)', kind: 'type', offset: 12 },
  { filter: 'price add 2024-01-01 gt 1', kind: 'type', offset: 10 },
  { filter: '1 add (price gt 1) eq 2', kind: 'type', offset: 7 },
  { filter: 'price in tags/any()', kind: 'type', offset: 9 },
  { filter: 'price add 1 in (2) eq 3', kind: 'type', offset: 10 },

  // Limits: longer than 4 KiB or nested deeper than 64 → 400 (CONVENTIONS.md#filter-errors-and-budget).
  { filter: `name eq '${'a'.repeat(4087)}'`, kind: 'too-long', offset: 4096 },
  { filter: 'x'.repeat(100_000), kind: 'too-long', offset: 4096 },
  { filter: `${'('.repeat(65)}true${')'.repeat(65)}`, kind: 'too-deep', offset: 64 },
  { filter: `${'not '.repeat(65)}true`, kind: 'too-deep', offset: 256 },
  { filter: `${'tolower('.repeat(65)}name${')'.repeat(65)} eq 'a'`, kind: 'too-deep', offset: 519 },
  { filter: `${'- '.repeat(65)}price eq 1`, kind: 'too-deep', offset: 128 },
  { filter: `qty in ${'('.repeat(64)}1${')'.repeat(64)}`, kind: 'syntax', offset: 8 },
];
