// What one step and one byte of `$filter` evaluation are, for the work budget of evaluation steps
// and bytes built (CONVENTIONS.md#filter-errors-and-budget; budget.ts counts them).
//
// A step stands for roughly 10 ns of work, so that a limit on steps is a limit on time without
// ever reading a clock. The weights below were set on the slowest input of each kind (on a 2.1 GHz
// AMD EPYC virtual core, Node 20, the costliest kinds run at 9–13 ns a step, so a row's 1,000,000
// steps take at most about 13 ms there). Most of the cost is fixed by the tree and worked out once
// per query; only what depends on the values read is charged as it is seen, and always before the
// work it pays for.
//
// Static (`staticSteps`), per node evaluated:
// - every node is one step; a function call CALL_STEPS more; a property path one more per segment;
// - a comparison with a date literal, year(), month(), day(), and each item of an `in` list where
//   a date is involved read a date from text: DATE_PARSE_STEPS each; any other `in` list is one
//   step more when it holds no null (a Set lookup), one per item otherwise;
// - a row pays for every node outside lambda bodies, even those `and`/`or` skip (over-counting is
//   the safe side); a lambda pays its body's steps plus VISIT_STEPS for every element it visits
//   (`visitSteps`), so the cost of nested lambdas multiplies as their work does and the row limit
//   stops them on the first item.
// Dynamic, per value:
// - a string function pays for the code units of its string arguments: contains, startswith,
//   endswith, indexof and trim one step per SCAN_UNITS_PER_STEP (searching for 'a…ab' in 'a…a'),
//   tolower and toupper one step per code unit (Unicode case mapping of 'Δ…' or 'ß…');
// - a comparison of two strings read from the item pays one step per COMPARE_UNITS_PER_STEP code
//   units of the shorter (ordering two-byte strings costs ≈ 0.3 ns per code unit); against a
//   literal it needs nothing more, the literal being part of a filter of bounded length;
// - `x in collection` pays ELEMENT_COMPARE_STEPS per element; `eq`/`ne` between arrays or objects
//   pay STRUCTURE_STEPS per pair of structures compared, ELEMENT_COMPARE_STEPS per array element
//   and MEMBER_COMPARE_STEPS per object member (large objects are hash tables in V8, and listing
//   and reading their keys is the slowest per-item work a filter can ask for) (values.ts);
// - bytes: every string that concat, substring, tolower, toupper or trim returns counts
//   BYTES_PER_CODE_UNIT per UTF-16 code unit, what it can occupy in memory. V8 concatenates and
//   slices without copying; the count bounds what a later read flattens.
// Not charged beyond their node: `length` and `$count`, which read a stored length.
import type { FilterNode, FunctionName, InListNode } from './ast.js';

const CALL_STEPS = 2;
const DATE_PARSE_STEPS = 32;
const VISIT_STEPS = 2;
const SCAN_UNITS_PER_STEP = 4;
const COMPARE_UNITS_PER_STEP = 16;
export const ELEMENT_COMPARE_STEPS = 1;
export const STRUCTURE_STEPS = 16;
export const MEMBER_COMPARE_STEPS = 32;
export const BYTES_PER_CODE_UNIT = 2;

/** How a function's cost grows: code units of its arguments read per step (0: none); does it build a string? */
export interface FunctionCost {
  readonly unitsPerStep: number;
  readonly builds: boolean;
}

const FUNCTION_COSTS: Readonly<Record<FunctionName, FunctionCost>> = Object.freeze({
  contains: { unitsPerStep: SCAN_UNITS_PER_STEP, builds: false },
  startswith: { unitsPerStep: SCAN_UNITS_PER_STEP, builds: false },
  endswith: { unitsPerStep: SCAN_UNITS_PER_STEP, builds: false },
  indexof: { unitsPerStep: SCAN_UNITS_PER_STEP, builds: false },
  trim: { unitsPerStep: SCAN_UNITS_PER_STEP, builds: true },
  tolower: { unitsPerStep: 1, builds: true },
  toupper: { unitsPerStep: 1, builds: true },
  substring: { unitsPerStep: 0, builds: true },
  concat: { unitsPerStep: 0, builds: true },
  length: { unitsPerStep: 0, builds: false },
  year: { unitsPerStep: 0, builds: false },
  month: { unitsPerStep: 0, builds: false },
  day: { unitsPerStep: 0, builds: false },
});

export function functionCost(name: FunctionName): FunctionCost {
  return FUNCTION_COSTS[name];
}

/**
 * Steps to evaluate `node` once, lambda bodies excepted (each lambda charges its body per element).
 * A loop over an explicit stack: operator chains are as long as the input allows.
 */
export function staticSteps(node: FilterNode): number {
  let steps = 0;
  const pending: FilterNode[] = [node];
  for (let current = pending.pop(); current !== undefined; current = pending.pop()) {
    steps += 1;
    switch (current.kind) {
      case 'literal': case 'date': break;
      case 'path': steps += current.segments.length; break;
      case 'not': case 'negate': pending.push(current.operand); break;
      case 'binary':
        if (current.left.type === 'date' || current.right.type === 'date') steps += DATE_PARSE_STEPS;
        pending.push(current.left, current.right);
        break;
      case 'in-list': steps += inListSteps(current); pending.push(current.operand); break;
      case 'in-path': pending.push(current.operand, current.collection); break;
      case 'count': pending.push(current.collection); break;
      case 'call':
        steps += CALL_STEPS;
        if (current.name === 'year' || current.name === 'month' || current.name === 'day') steps += DATE_PARSE_STEPS;
        pending.push(...current.args);
        break;
      case 'lambda': pending.push(current.collection); break;
    }
  }
  return steps;
}

/**
 * Beyond its node, an `in` list costs what compile.ts makes of it: a Set lookup for strings,
 * numbers and Booleans; otherwise a comparison per item, each reading a date when one is involved.
 */
function inListSteps(node: InListNode): number {
  const dated = node.operand.type === 'date' || node.items.some((item) => item.type === 'date');
  if (dated) return node.items.length * DATE_PARSE_STEPS;
  return node.items.every((item) => item.value !== null) ? 1 : node.items.length;
}

/** Steps a lambda pays for each element it visits: its body (lambdas inside it pay their own), plus the visit. */
export function visitSteps(predicate: FilterNode): number {
  return staticSteps(predicate) + VISIT_STEPS;
}

/** Steps to compare two strings whose shorter one has `units` code units. */
export function compareSteps(units: number): number {
  return Math.ceil(units / COMPARE_UNITS_PER_STEP);
}

/** Steps a string function pays for reading `args`: their string code units over its rate (other values read free). */
export function readSteps(cost: FunctionCost, args: readonly unknown[]): number {
  if (cost.unitsPerStep === 0) return 0;
  let units = 0;
  for (const arg of args) if (typeof arg === 'string') units += arg.length;
  return Math.ceil(units / cost.unitsPerStep);
}
