// Static type rules of `$filter`, applied by the parser as it builds each node
// (CONVENTIONS.md#filter-grammar; OASIS OData 4.01 Part 2 §5.1.1.1 "Logical Operators": "The six
// comparison operators can be used with all primitive values"; §5.1.1.2: arithmetic operators "require
// operands that evaluate to numeric types"; "OData does not define an implicit conversion between
// string and numeric types").
//
// Only what is certain before reading a row is rejected: a literal or an operator result of the
// wrong type, e.g. `'a' add 1`, `not 5`, `contains(name, 3)`, `name eq 'a' and 5`, `'a' eq 1`.
// Property paths are `unknown` (the store is schemaless) and `null` fits everywhere, so they always
// pass; at run time a value of the wrong type makes the expression null or false (values.ts).
// Dates compare with strings, because stored dates are strings.
import type { BinaryNode, BinaryOperator, CallNode, FilterNode, StaticType } from './ast.js';
import { filterError, quote, type FilterError } from './errors.js';
import type { FunctionSpec } from './functions.js';

export const BOOLEAN: readonly StaticType[] = ['boolean'];
export const NUMBER: readonly StaticType[] = ['number'];

const NOT_HINT = " ('not' binds tighter than comparisons: write not (a eq b))";

export function isArithmetic(operator: BinaryOperator): boolean {
  return operator === 'add' || operator === 'sub' || operator === 'mul' || operator === 'div' || operator === 'mod';
}

/** Operand types of a binary node: Booleans for and/or, numbers for arithmetic, else comparable. */
export function checkBinary(node: BinaryNode, operatorText: string): FilterError | null {
  const { operator, left, right } = node;
  const logical = operator === 'and' || operator === 'or';
  if (logical || isArithmetic(operator)) {
    const expected = logical ? BOOLEAN : NUMBER;
    const name = quote(operatorText);
    return expectType(left, expected, `the left operand of ${name}`) ??
      expectType(right, expected, `the right operand of ${name}`);
  }
  const hint = left.kind === 'not' ? NOT_HINT : '';
  return expectComparable(left.type, right.type, operatorText, node.operatorOffset, hint);
}

/** Error unless `node` can have one of the `expected` types; `what` names the operand. */
export function expectType(node: FilterNode, expected: readonly StaticType[], what: string): FilterError | null {
  if (node.type === 'unknown' || node.type === 'null' || expected.includes(node.type)) return null;
  const types = expected.map(article).join(' or ');
  return filterError('type', `${what} must be ${types}, not ${article(node.type)}`, node.offset);
}

/** Error unless values of the two types can be compared with `eq`, `gt`, `in`, … */
export function expectComparable(
  left: StaticType, right: StaticType, operator: string, offset: number, hint = '',
): FilterError | null {
  if (comparable(left, right)) return null;
  const detail = `${quote(operator)} cannot compare ${article(left)} with ${article(right)}${hint}`;
  return filterError('type', detail, offset);
}

/**
 * A call: its arity (a 'syntax' error, as each function's ABNF rule fixes it), its argument types,
 * and the literal checks the spec asks of `substring`.
 */
export function checkCall(spec: FunctionSpec, node: CallNode): FilterError | null {
  const args = node.args;
  if (args.length < spec.minArgs || args.length > spec.maxArgs) {
    const count = spec.minArgs === spec.maxArgs ? `${spec.minArgs}` : `${spec.minArgs} or ${spec.maxArgs}`;
    const noun = spec.maxArgs === 1 ? 'argument' : 'arguments';
    return filterError('syntax', `${spec.name}() takes ${count} ${noun}, not ${args.length}`, node.offset);
  }
  for (const [index, arg] of args.entries()) {
    const problem = expectType(arg, spec.params[index] ?? [], `argument ${index + 1} of ${spec.name}()`);
    if (problem !== null) return problem;
  }
  if (spec.name !== 'substring') return null;
  for (const [index, arg] of args.entries()) {
    if (index === 0 || arg.kind !== 'literal' || typeof arg.value !== 'number') continue;
    // "A negative length M is a bad request"; positions are Edm.Int32.
    if (!Number.isInteger(arg.value) || (index === 2 && arg.value < 0)) {
      const what = index === 1 ? 'the start' : 'the length';
      const integer = index === 2 ? 'a non-negative integer' : 'an integer';
      return filterError('type', `${what} of substring() must be ${integer}`, arg.offset);
    }
  }
  return null;
}

function comparable(left: StaticType, right: StaticType): boolean {
  if (left === right || left === 'unknown' || right === 'unknown' || left === 'null' || right === 'null') return true;
  return (left === 'date' && right === 'string') || (left === 'string' && right === 'date');
}

function article(type: StaticType): string {
  return type === 'null' ? 'null' : `${type === 'unknown' ? 'an' : 'a'} ${type}`;
}
