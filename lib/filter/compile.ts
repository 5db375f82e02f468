// Stage 3 of `$filter`: syntax tree → JavaScript predicate, built once per query
// (CONVENTIONS.md#filter-expressions).
//
// Each node becomes a closure over its children's closures, so the per-row work is plain function
// calls: no switch on node kinds, no tree walk, no `eval` or `new Function` (the filter text comes
// from strangers). The semantics live in values.ts and functions.ts and are shared with the
// interpreter (interpret.ts), which the tests run over the same corpus to keep the two in step.
//
// Chains of binary operators (`a or b or c …`, `x add y add z …`) are unrolled into a loop over
// their links; recursion is left for nesting, which the parser limits.
// Lambda variables live in a per-row array of slots: a variable's slot is its lambda nesting
// level, fixed at compile time (the parser forbids shadowing, so names are unique in scope).
// A few shapes get a faster closure with the same meaning: a comparison with a string, number or
// boolean literal uses JavaScript's operators directly, and `x in (literals…)` uses a Set.
//
// With a WorkBudget (budget.ts), the predicate charges the steps and bytes that cost.ts defines:
// the row's static steps once per row, a lambda body's steps once per element, and the value-
// dependent costs where they arise. Without one, every closure is exactly the unbudgeted one: the
// choice is made here, at compile time, so an unbudgeted predicate never tests for a budget.
import type { JsonObject } from '../json.js';
import {
  unrollChain,
  type BinaryNode,
  type CallNode,
  type FilterNode,
  type InListNode,
  type LambdaNode,
  type PathNode,
} from './ast.js';
import type { WorkBudget } from './budget.js';
import { BYTES_PER_CODE_UNIT, functionCost, readSteps, staticSteps, visitSteps } from './cost.js';
import { functionSpec } from './functions.js';
import {
  and3, arithmetic, comparison, countOf, foldLambda, isComparison, isElement, isMember, negate, not3, or3,
  readPath, truth, type Value,
} from './values.js';

type Evaluator = (doc: JsonObject, slots: Value[]) => Value;
type Step = (value: Value, doc: JsonObject, slots: Value[]) => Value;
type Scope = readonly string[];

type Test = (doc: JsonObject, slots: Value[]) => boolean;

/**
 * Compiles a tree from the parser into a predicate that is true only where the filter is true.
 * With a budget, each call starts a row of it and may throw BudgetExceeded.
 */
export function compilePredicate(ast: FilterNode, budget: WorkBudget | null = null): (doc: JsonObject) => boolean {
  const test = compileTest(ast, [], budget);
  // One slot array per predicate: rows are tested one at a time, and lambdas overwrite their slot.
  const slots: Value[] = [];
  if (budget === null) return (doc) => test(doc, slots);
  const rowSteps = staticSteps(ast);
  return (doc) => {
    budget.beginRow();
    budget.chargeSteps(rowSteps);
    return test(doc, slots);
  };
}

/**
 * "Is this true?" rather than "what is its three-valued value?": a row matches only where the filter
 * is true (OData 4.01 Part 2 §5.1.1: "The $filter ... selects all items for which the expression
 * evaluates to true"), and `a and b` is true exactly when both are true, `a or b` when either is.
 * So runs of `and` / `or` at the top are tested with plain short-circuit booleans, without building
 * the null-aware values that only matter under `not`.
 */
function compileTest(node: FilterNode, scope: Scope, budget: WorkBudget | null): Test {
  if (node.kind === 'binary' && (node.operator === 'and' || node.operator === 'or')) {
    const operator = node.operator;
    const operands: FilterNode[] = [];
    let current: FilterNode = node;
    while (current.kind === 'binary' && current.operator === operator) {
      operands.push(current.right);
      current = current.left;
    }
    operands.push(current);
    operands.reverse();
    const tests = operands.map((operand) => compileTest(operand, scope, budget));
    const [first, second] = tests as [Test, Test];
    if (tests.length === 2) {
      return operator === 'and'
        ? (doc, slots) => first(doc, slots) && second(doc, slots)
        : (doc, slots) => first(doc, slots) || second(doc, slots);
    }
    return operator === 'and'
      ? (doc, slots) => tests.every((test) => test(doc, slots))
      : (doc, slots) => tests.some((test) => test(doc, slots));
  }
  if (node.kind === 'lambda' && node.variable !== null && node.predicate !== null) {
    return lambdaTest(node, node.variable, node.predicate, scope, budget);
  }
  const fused = fusedComparison(node, scope);
  if (fused !== undefined) return fused;
  const evaluate = compileNode(node, scope, budget);
  return (doc, slots) => evaluate(doc, slots) === true;
}

/**
 * `any` is true when some element's predicate is true, `all` when the collection is null (OData:
 * vacuously) or every element's predicate is true; an element whose predicate is false or null
 * decides as foldLambda does, without building a callback per row.
 */
function lambdaTest(
  node: LambdaNode,
  variable: string,
  predicate: FilterNode,
  scope: Scope,
  budget: WorkBudget | null,
): Test {
  const collection = compilePath(node.collection, scope);
  const slot = scope.length;
  const inner = compileTest(predicate, [...scope, variable], budget);
  if (budget !== null) return chargedLambdaTest(node.operator, collection, slot, inner, budget, visitSteps(predicate));
  if (node.operator === 'any') {
    return (doc, slots) => {
      const value = collection(doc, slots);
      if (!Array.isArray(value)) return false;
      for (const element of value) {
        slots[slot] = element;
        if (inner(doc, slots)) return true;
      }
      return false;
    };
  }
  return (doc, slots) => {
    const value = collection(doc, slots);
    if (value === null) return true;
    if (!Array.isArray(value)) return false;
    for (const element of value) {
      slots[slot] = element;
      if (!inner(doc, slots)) return false;
    }
    return true;
  };
}

/** lambdaTest's loops, charging the body's steps before each element. */
function chargedLambdaTest(
  operator: 'any' | 'all', collection: Evaluator, slot: number, inner: Test, budget: WorkBudget, steps: number,
): Test {
  if (operator === 'any') {
    return (doc, slots) => {
      const value = collection(doc, slots);
      if (!Array.isArray(value)) return false;
      for (const element of value) {
        budget.chargeSteps(steps);
        slots[slot] = element;
        if (inner(doc, slots)) return true;
      }
      return false;
    };
  }
  return (doc, slots) => {
    const value = collection(doc, slots);
    if (value === null) return true;
    if (!Array.isArray(value)) return false;
    for (const element of value) {
      budget.chargeSteps(steps);
      slots[slot] = element;
      if (!inner(doc, slots)) return false;
    }
    return true;
  };
}

/**
 * The commonest filter, `property op literal` on a top-level property against a string, number or
 * boolean, as one closure. It reads `doc[name]` without the own-property check: an inherited member
 * of Object.prototype is a function or an object, which is never `===` a primitive and fails the
 * `typeof` guard of an ordering, exactly as the missing property (null) it stands for would; and
 * `ne` is true for both.
 */
function fusedComparison(node: FilterNode, scope: Scope): Test | undefined {
  if (node.kind !== 'binary' || !isComparison(node.operator)) return undefined;
  const { left, right, operator } = node;
  if (left.kind !== 'path' || right.kind !== 'literal' || right.value === null) return undefined;
  const constant = right.value;
  const type = typeof constant;
  let read: (doc: JsonObject, slots: Value[]) => Value;
  if (left.variable === null && left.segments.length === 1) {
    const name = left.segments[0] as string;
    read = (doc) => doc[name] ?? null;
  } else if (left.variable !== null && left.segments.length === 0) {
    // A bare lambda variable: the array element itself (`tags/any(t: t eq 'sale')`).
    const slot = scope.indexOf(left.variable);
    read = (_doc, slots) => slots[slot] ?? null;
  } else {
    return undefined;
  }
  switch (operator) {
    case 'eq': return (doc, slots) => read(doc, slots) === constant;
    case 'ne': return (doc, slots) => read(doc, slots) !== constant;
    case 'gt':
      return (doc, slots) => {
        const value = read(doc, slots);
        return typeof value === type && (value as typeof constant) > constant;
      };
    case 'ge':
      return (doc, slots) => {
        const value = read(doc, slots);
        return typeof value === type && (value as typeof constant) >= constant;
      };
    case 'lt':
      return (doc, slots) => {
        const value = read(doc, slots);
        return typeof value === type && (value as typeof constant) < constant;
      };
    case 'le':
      return (doc, slots) => {
        const value = read(doc, slots);
        return typeof value === type && (value as typeof constant) <= constant;
      };
  }
}

function compileNode(node: FilterNode, scope: Scope, budget: WorkBudget | null): Evaluator {
  switch (node.kind) {
    case 'literal':
    case 'date': {
      const value = node.value;
      return () => value;
    }
    case 'path': return compilePath(node, scope);
    case 'not': {
      const operand = compileNode(node.operand, scope, budget);
      return (doc, slots) => not3(truth(operand(doc, slots)));
    }
    case 'negate': {
      const operand = compileNode(node.operand, scope, budget);
      return (doc, slots) => negate(operand(doc, slots));
    }
    case 'binary': return compileChain(node, scope, budget);
    case 'in-list': return compileInList(node, scope, budget);
    case 'in-path': {
      const operand = compileNode(node.operand, scope, budget);
      const collection = compilePath(node.collection, scope);
      if (budget !== null) return (doc, slots) => isElement(operand(doc, slots), collection(doc, slots), budget);
      return (doc, slots) => isElement(operand(doc, slots), collection(doc, slots));
    }
    case 'count': {
      const collection = compilePath(node.collection, scope);
      return (doc, slots) => countOf(collection(doc, slots));
    }
    case 'call': return compileCall(node, scope, budget);
    case 'lambda': return compileLambda(node, scope, budget);
  }
}

function compilePath(node: PathNode, scope: Scope): Evaluator {
  const segments = node.segments;
  if (node.variable !== null) {
    const slot = scope.indexOf(node.variable);
    return (_doc, slots) => readPath(slots[slot] ?? null, segments);
  }
  const [first] = segments;
  if (segments.length !== 1 || first === undefined) return (doc) => readPath(doc, segments);
  // The item itself is always an object, so a top-level property needs only the own-key check.
  return (doc) => (Object.hasOwn(doc, first) ? (doc[first] ?? null) : null);
}

/** A left-associative chain runs as a loop, so its length never turns into stack depth. */
function compileChain(node: BinaryNode, scope: Scope, budget: WorkBudget | null): Evaluator {
  const { base, links } = unrollChain(node);
  const first = compileNode(base, scope, budget);
  const steps = links.map((link) => compileStep(link, scope, budget));
  const [only] = steps;
  if (steps.length === 1 && only !== undefined) return (doc, slots) => only(first(doc, slots), doc, slots);
  return (doc, slots) => {
    let value = first(doc, slots);
    for (const step of steps) value = step(value, doc, slots);
    return value;
  };
}

/** One link `… op right`: combines the value so far with the right operand. */
function compileStep(link: BinaryNode, scope: Scope, budget: WorkBudget | null): Step {
  const right = compileNode(link.right, scope, budget);
  const operator = link.operator;
  if (operator === 'and') {
    return (value, doc, slots) => {
      const first = truth(value);
      return first === false ? false : and3(first, truth(right(doc, slots)));
    };
  }
  if (operator === 'or') {
    return (value, doc, slots) => {
      const first = truth(value);
      return first === true ? true : or3(first, truth(right(doc, slots)));
    };
  }
  if (!isComparison(operator)) {
    const compute = arithmetic(operator);
    return (value, doc, slots) => compute(value, right(doc, slots));
  }
  if (link.right.kind !== 'literal' && link.right.kind !== 'date') {
    // Only here can both sides be structures; against a literal, eq is `===` or reads a date.
    const compare = comparison(operator, budget);
    return (value, doc, slots) => compare(value, right(doc, slots));
  }
  const compare = comparison(operator);
  const constant = link.right.value;
  if (constant === null || typeof constant === 'object' || link.left.kind === 'date') {
    return (value) => compare(value, constant);
  }
  // Against a string, number or boolean constant (and no date literal on the left), eq is `===`
  // and an ordering holds only between values of the constant's own type.
  const type = typeof constant;
  switch (operator) {
    case 'eq': return (value) => value === constant;
    case 'ne': return (value) => value !== constant;
    case 'gt': return (value) => typeof value === type && (value as typeof constant) > constant;
    case 'ge': return (value) => typeof value === type && (value as typeof constant) >= constant;
    case 'lt': return (value) => typeof value === type && (value as typeof constant) < constant;
    case 'le': return (value) => typeof value === type && (value as typeof constant) <= constant;
  }
}

function compileInList(node: InListNode, scope: Scope, budget: WorkBudget | null): Evaluator {
  const operand = compileNode(node.operand, scope, budget);
  const items: Value[] = node.items.map((item) => item.value);
  const primitive = node.operand.kind !== 'date' &&
    items.every((item) => typeof item === 'string' || typeof item === 'number' || typeof item === 'boolean');
  if (!primitive) return (doc, slots) => isMember(operand(doc, slots), items);
  // Set membership is SameValueZero, which agrees with `eq` on strings, finite numbers, booleans.
  const members: ReadonlySet<Value> = new Set(items);
  return (doc, slots) => {
    const value = operand(doc, slots);
    return typeof value !== 'object' && members.has(value);
  };
}

function compileCall(node: CallNode, scope: Scope, budget: WorkBudget | null): Evaluator {
  const apply = functionSpec(node.name).apply;
  const args = node.args.map((arg) => compileNode(arg, scope, budget));
  if (budget !== null) return chargedCall(node, apply, args, budget);
  const [first, second] = args;
  if (args.length === 1 && first !== undefined) return (doc, slots) => apply([first(doc, slots)]);
  if (args.length === 2 && first !== undefined && second !== undefined) {
    return (doc, slots) => apply([first(doc, slots), second(doc, slots)]);
  }
  return (doc, slots) => apply(args.map((arg) => arg(doc, slots)));
}

/**
 * A call that pays for the string code units it reads before running, and for the string it
 * builds once it has it (cost.ts).
 */
function chargedCall(
  node: CallNode,
  apply: (args: readonly Value[]) => Value,
  args: readonly Evaluator[],
  budget: WorkBudget,
): Evaluator {
  const cost = functionCost(node.name);
  return (doc, slots) => {
    const values = args.map((arg) => arg(doc, slots));
    const reads = readSteps(cost, values);
    if (reads > 0) budget.chargeSteps(reads);
    const result = apply(values);
    if (cost.builds && typeof result === 'string') budget.chargeBytes(result.length * BYTES_PER_CODE_UNIT);
    return result;
  };
}

function compileLambda(node: LambdaNode, scope: Scope, budget: WorkBudget | null): Evaluator {
  const collection = compilePath(node.collection, scope);
  const operator = node.operator;
  if (node.variable === null || node.predicate === null) {
    return (doc, slots) => foldLambda(operator, collection(doc, slots), () => true);
  }
  const slot = scope.length;
  const predicate = compileNode(node.predicate, [...scope, node.variable], budget);
  if (budget !== null) {
    const steps = visitSteps(node.predicate);
    return (doc, slots) => foldLambda(operator, collection(doc, slots), (element) => {
      budget.chargeSteps(steps);
      slots[slot] = element;
      return truth(predicate(doc, slots));
    });
  }
  return (doc, slots) => foldLambda(operator, collection(doc, slots), (element) => {
    slots[slot] = element;
    return truth(predicate(doc, slots));
  });
}
