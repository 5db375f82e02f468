// The canonical functions of this `$filter` subset, in one table read by every stage: the parser
// (arity, argument types), and the compiler and interpreter (`apply`). CONVENTIONS.md#filter-grammar
// lists them; OASIS OData 4.01 Part 2 §5.1.1 "String and Collection Functions", "String Functions" and
// "Date and Time Functions" define them; the ABNF gives each one exact arity, e.g.
//   substringMethodCallExpr = "substring" OPEN BWS commonExpr BWS COMMA BWS commonExpr BWS
//                             [ COMMA BWS commonExpr BWS ] CLOSE
// Names are case-insensitive ("4.01 Services MUST support case-insensitive canonical function
// names"). "If a parameter of a canonical function is null, the function returns null"; so does a
// parameter of the wrong JSON type at run time. Strings are measured and cut in UTF-16 code units,
// the same unit as the ordinal comparison and the error offsets. String matching is case-sensitive.
// Specifics:
// - substring: the start is 0-based; a start past the end gives ''; a negative start counts from
//   the end ("if supported"); a negative or non-integer length or start gives null (the spec calls
//   a negative length a bad request; the parser rejects a negative literal length).
// - length also counts the elements of an array (the 4.01 `length(Collection)` overload); the
//   other collection overloads (`contains` of ordered collections, `concat` of collections) are not
//   in this subset and give null.
// - year, month, day read a date literal or a string holding a date or date-time (dates.ts), in
//   the time zone the value is written in.
import type { FunctionName, StaticType } from './ast.js';
import { FilterDate, parseDateText } from './dates.js';
import type { Value } from './values.js';

export interface FunctionSpec {
  readonly name: FunctionName;
  readonly minArgs: number;
  readonly maxArgs: number;
  /** Static types each parameter accepts; `null` and `unknown` are always accepted as well. */
  readonly params: readonly (readonly StaticType[])[];
  readonly result: StaticType;
  /** Called with exactly as many values as the call has arguments. */
  readonly apply: (args: readonly Value[]) => Value;
}

const STRING: readonly StaticType[] = ['string'];
const NUMBER: readonly StaticType[] = ['number'];
const DATE: readonly StaticType[] = ['date', 'string'];

const FUNCTIONS: Readonly<Record<FunctionName, FunctionSpec>> = Object.freeze({
  contains: stringTest('contains', (s, t) => s.includes(t)),
  startswith: stringTest('startswith', (s, t) => s.startsWith(t)),
  endswith: stringTest('endswith', (s, t) => s.endsWith(t)),
  indexof: {
    name: 'indexof', minArgs: 2, maxArgs: 2, params: [STRING, STRING], result: 'number',
    apply: ([s, t]) => (typeof s === 'string' && typeof t === 'string' ? s.indexOf(t) : null),
  },
  substring: {
    name: 'substring', minArgs: 2, maxArgs: 3, params: [STRING, NUMBER, NUMBER], result: 'string',
    apply: (args) => substring(args),
  },
  tolower: stringMap('tolower', (s) => s.toLowerCase()),
  toupper: stringMap('toupper', (s) => s.toUpperCase()),
  trim: stringMap('trim', (s) => s.trim()),
  concat: {
    name: 'concat', minArgs: 2, maxArgs: 2, params: [STRING, STRING], result: 'string',
    apply: ([s, t]) => (typeof s === 'string' && typeof t === 'string' ? s + t : null),
  },
  length: {
    name: 'length', minArgs: 1, maxArgs: 1, params: [STRING], result: 'number',
    apply: ([s]) => (typeof s === 'string' || Array.isArray(s) ? s.length : null),
  },
  year: datePart('year', (date) => date.year),
  month: datePart('month', (date) => date.month),
  day: datePart('day', (date) => date.day),
});

/** The function called `name` in any letter case, or undefined for an unknown function. */
export function lookupFunction(name: string): FunctionSpec | undefined {
  const lower = name.toLowerCase();
  return isFunctionName(lower) ? FUNCTIONS[lower] : undefined;
}

/** The specification of a function the parser already resolved. */
export function functionSpec(name: FunctionName): FunctionSpec {
  return FUNCTIONS[name];
}

function isFunctionName(name: string): name is FunctionName {
  return Object.hasOwn(FUNCTIONS, name);
}

function stringTest(name: FunctionName, test: (s: string, t: string) => boolean): FunctionSpec {
  return {
    name, minArgs: 2, maxArgs: 2, params: [STRING, STRING], result: 'boolean',
    apply: ([s, t]) => (typeof s === 'string' && typeof t === 'string' ? test(s, t) : null),
  };
}

function stringMap(name: FunctionName, map: (s: string) => string): FunctionSpec {
  return {
    name, minArgs: 1, maxArgs: 1, params: [STRING], result: 'string',
    apply: ([s]) => (typeof s === 'string' ? map(s) : null),
  };
}

function datePart(name: FunctionName, part: (date: FilterDate) => number): FunctionSpec {
  return {
    name, minArgs: 1, maxArgs: 1, params: [DATE], result: 'number',
    apply: ([value]) => {
      const date =
        value instanceof FilterDate ? value : typeof value === 'string' ? parseDateText(value, 'optional') : null;
      return date === null ? null : part(date);
    },
  };
}

function substring(args: readonly Value[]): Value {
  const [s, start, length] = args;
  if (typeof s !== 'string' || typeof start !== 'number' || !Number.isInteger(start)) return null;
  const from = start < 0 ? Math.max(0, s.length + start) : Math.min(start, s.length);
  if (args.length < 3) return s.slice(from);
  if (typeof length !== 'number' || !Number.isInteger(length) || length < 0) return null;
  return s.slice(from, from + length);
}
