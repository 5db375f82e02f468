// Run-time semantics of `$filter`, shared by the compiler and the interpreter so the two can only
// differ in how they walk the tree (CONVENTIONS.md#filter-expressions; OASIS OData 4.01 Part 2 §5.1.1.1
// "Logical Operators", §5.1.1.2 "Arithmetic Operators", §5.1.1 "Lambda Operators" and "Path
// Expressions").
//
// - A missing property reads as null ("Dynamic properties … if they are not defined on an
//   instance, they evaluate to null"), and so does a path through null or through a non-object.
//   Own properties only: `constructor` or `__proto__` never reach Object.prototype.
// - `eq`: null equals only null, so `x eq null` is true for null or missing. Values of different
//   JSON types are never equal (no coercion: "OData does not define an implicit conversion between
//   string and numeric types"). Arrays and objects are equal when they have the same structure and
//   values (§5.1.1.1.1). A date literal equals a string that reads as the same instant (dates.ts).
//   `ne` is exactly `not eq`, so `status ne 'done'` keeps items without a status.
// - `gt ge lt le`: false when either side is null or the types differ; numbers by value, strings
//   ordinally by UTF-16 code unit (JavaScript's `<`; no locale), booleans false < true, dates by
//   instant. Arrays and objects have no order.
// - `and`, `or`, `not` use three-valued logic: null is "unknown"; false and null → false,
//   true or null → true, not null → null (§5.1.1.1.7–9). A value that is not a boolean where a
//   boolean is needed (`not name` with a string name) counts as null. Only a final `true` selects
//   an item ("Resources for which the expression evaluates to false or to null … are omitted").
// - Arithmetic: numbers only; null or any other type → null. JSON has one number type (RFC 8259
//   §6), so every number is treated as Edm.Double and `div` divides exactly (`7 div 2` is 3.5);
//   this departs from the integer `div` of Edm.Int32 operands. Division or modulo by zero, and any
//   result that is not finite, is null rather than the request failing (a row-level fault must not
//   turn into a 4xx for the whole query).
// - Lambdas fold with the same three-valued logic: `any` is an `or` over the elements, `all` an
//   `and`. A null or missing collection is empty (`any` false, `all` true, so `not c/any(…)` and
//   `c/all(not …)` agree); a value that is not an array gives null. `c/$count` is the number of
//   elements, null when `c` is null, missing or not an array (as `length` of a non-string is null).
// The comparisons whose work grows with the values (of two strings, of structures, `x in c`)
// take the request's WorkBudget when the compiler has one and charge it as cost.ts says; the
// interpreter passes none.
import { valueAt, type JsonObject, type JsonValue } from '../json.js';
import type { BinaryOperator } from './ast.js';
import type { WorkBudget } from './budget.js';
import { ELEMENT_COMPARE_STEPS, MEMBER_COMPARE_STEPS, STRUCTURE_STEPS, compareSteps } from './cost.js';
import { FilterDate, parseDateText } from './dates.js';

export type Value = JsonValue | FilterDate;
/** A Boolean in three-valued logic: null is "unknown". */
export type Truth = boolean | null;

export type ComparisonOperator = 'eq' | 'ne' | 'gt' | 'ge' | 'lt' | 'le';
export type ArithmeticOperator = 'add' | 'sub' | 'mul' | 'div' | 'mod';

export function truth(value: Value): Truth {
  return typeof value === 'boolean' ? value : null;
}

export function not3(value: Truth): Truth {
  return value === null ? null : !value;
}

export function and3(left: Truth, right: Truth): Truth {
  if (left === false || right === false) return false;
  return left === true && right === true ? true : null;
}

export function or3(left: Truth, right: Truth): Truth {
  if (left === true || right === true) return true;
  return left === false && right === false ? false : null;
}

/** A member path of a value (lib/json.ts valueAt): a date has no members; everything else is JSON. */
export function readPath(root: Value, segments: readonly string[]): Value {
  if (root instanceof FilterDate) return segments.length === 0 ? root : null;
  return valueAt(root, segments);
}

/** `a eq b`; with a budget, it pays for the strings and structures it compares (cost.ts). */
export function equals(a: Value, b: Value, budget: WorkBudget | null = null): boolean {
  if (a === null || b === null) return a === b;
  if (a instanceof FilterDate || b instanceof FilterDate) {
    const left = instantOf(a);
    return left !== null && left === instantOf(b);
  }
  if (typeof a !== 'object' || typeof b !== 'object') {
    if (budget !== null) chargeStrings(a, b, budget);
    return a === b;
  }
  return structurallyEqual(a, b, budget);
}

/** Sign of a − b, or null when the two have no order (null, mixed types, structures). */
export function order(a: Value, b: Value): number | null {
  if (a === null || b === null) return null;
  if (a instanceof FilterDate || b instanceof FilterDate) {
    const left = instantOf(a);
    const right = instantOf(b);
    return left === null || right === null ? null : Math.sign(left - right);
  }
  if ((typeof a === 'number' && typeof b === 'number') || (typeof a === 'string' && typeof b === 'string')) {
    return a < b ? -1 : a > b ? 1 : 0;
  }
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  return null;
}

/**
 * The comparison for one operator, chosen once so compiled code does not switch per row; with a
 * budget, it pays for the strings and structures it compares.
 */
export function comparison(
  operator: ComparisonOperator,
  budget: WorkBudget | null = null,
): (a: Value, b: Value) => boolean {
  if (budget !== null) {
    if (operator === 'eq') return (a, b) => equals(a, b, budget);
    if (operator === 'ne') return (a, b) => !equals(a, b, budget);
    const compare = comparison(operator);
    return (a, b) => {
      chargeStrings(a, b, budget);
      return compare(a, b);
    };
  }
  switch (operator) {
    case 'eq': return equals;
    case 'ne': return (a, b) => !equals(a, b);
    case 'gt': return (a, b) => ordered(a, b, (sign) => sign > 0);
    case 'ge': return (a, b) => ordered(a, b, (sign) => sign >= 0);
    case 'lt': return (a, b) => ordered(a, b, (sign) => sign < 0);
    case 'le': return (a, b) => ordered(a, b, (sign) => sign <= 0);
  }
}

export function arithmetic(operator: ArithmeticOperator): (a: Value, b: Value) => number | null {
  const compute = numericOperation(operator);
  return (a, b) => (typeof a === 'number' && typeof b === 'number' ? compute(a, b) : null);
}

export function negate(value: Value): number | null {
  return typeof value === 'number' ? -value : null;
}

export function isComparison(operator: BinaryOperator): operator is ComparisonOperator {
  return operator === 'eq' || operator === 'ne' || operator === 'gt' || operator === 'ge' ||
    operator === 'lt' || operator === 'le';
}

/** `operand in (items)`: membership by `eq`. */
export function isMember(value: Value, items: readonly Value[], budget: WorkBudget | null = null): boolean {
  for (const item of items) if (equals(value, item, budget)) return true;
  return false;
}

/**
 * `operand in collection`: false unless the collection is an array holding an equal element. With
 * a budget, every element is charged a step up front (a miss compares them all).
 */
export function isElement(value: Value, collection: Value, budget: WorkBudget | null = null): boolean {
  if (!Array.isArray(collection)) return false;
  budget?.chargeSteps(collection.length * ELEMENT_COMPARE_STEPS);
  return isMember(value, collection, budget);
}

/** `collection/$count`: the number of elements of an array; null for anything else (missing included). */
export function countOf(collection: Value): number | null {
  return Array.isArray(collection) ? collection.length : null;
}

/** `any`/`all` over a collection, with `test` deciding each element (see the header). */
export function foldLambda(operator: 'any' | 'all', collection: Value, test: (element: JsonValue) => Truth): Truth {
  if (collection === null) return operator === 'all';
  if (!Array.isArray(collection)) return null;
  const decisive = operator === 'any';
  let unknown = false;
  for (const element of collection) {
    const verdict = test(element);
    if (verdict === decisive) return decisive;
    if (verdict === null) unknown = true;
  }
  return unknown ? null : !decisive;
}

/** Two strings compare code unit by code unit, up to the shorter one's length: pay for that. */
function chargeStrings(a: Value, b: Value, budget: WorkBudget): void {
  if (typeof a === 'string' && typeof b === 'string') budget.chargeSteps(compareSteps(Math.min(a.length, b.length)));
}

function ordered(a: Value, b: Value, accept: (sign: number) => boolean): boolean {
  const sign = order(a, b);
  return sign !== null && accept(sign);
}

function numericOperation(operator: ArithmeticOperator): (x: number, y: number) => number | null {
  switch (operator) {
    case 'add': return (x, y) => finite(x + y);
    case 'sub': return (x, y) => finite(x - y);
    case 'mul': return (x, y) => finite(x * y);
    case 'div': return (x, y) => (y === 0 ? null : finite(x / y));
    case 'mod': return (x, y) => (y === 0 ? null : finite(x % y));
  }
}

function finite(result: number): number | null {
  return Number.isFinite(result) ? result : null;
}

function instantOf(value: Value): number | null {
  if (value instanceof FilterDate) return value.instant;
  if (typeof value !== 'string') return null;
  return parseDateText(value, 'optional')?.instant ?? null;
}

/**
 * Deep equality of JSON structures with an explicit stack: stored documents may nest deeply.
 * Primitive members are compared on the spot and only pairs of structures are queued, so a long
 * array of numbers allocates nothing. A budget is charged before the work it pays for: each pair
 * of structures as it is queued (STRUCTURE_STEPS), and its elements or members before they are
 * read (ELEMENT_COMPARE_STEPS, MEMBER_COMPARE_STEPS; cost.ts).
 */
function structurallyEqual(a: Structure, b: Structure, budget: WorkBudget | null): boolean {
  budget?.chargeSteps(STRUCTURE_STEPS);
  const pending: Structure[] = [a, b];
  for (
    let y = pending.pop(), x = pending.pop();
    x !== undefined && y !== undefined;
    y = pending.pop(), x = pending.pop()
  ) {
    if (Array.isArray(x) || Array.isArray(y)) {
      if (!Array.isArray(x) || !Array.isArray(y) || x.length !== y.length) return false;
      budget?.chargeSteps(x.length * ELEMENT_COMPARE_STEPS);
      for (let index = 0; index < x.length; index += 1) {
        if (!queueEqual(x[index] ?? null, y[index] ?? null, pending, budget)) return false;
      }
      continue;
    }
    const keys = Object.keys(x);
    budget?.chargeSteps(keys.length * MEMBER_COMPARE_STEPS);
    if (keys.length !== Object.keys(y).length) return false;
    for (const key of keys) {
      if (!Object.hasOwn(y, key) || !queueEqual(x[key] ?? null, y[key] ?? null, pending, budget)) return false;
    }
  }
  return true;
}

type Structure = JsonObject | JsonValue[];

/** False when two members certainly differ; queues them when both are structures still to compare. */
function queueEqual(x: JsonValue, y: JsonValue, pending: Structure[], budget: WorkBudget | null): boolean {
  if (budget !== null) chargeStrings(x, y, budget);
  if (x === y) return true;
  if (typeof x !== 'object' || typeof y !== 'object' || x === null || y === null) return false;
  budget?.chargeSteps(STRUCTURE_STEPS);
  pending.push(x, y);
  return true;
}
