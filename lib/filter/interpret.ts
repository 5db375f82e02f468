// A plain tree-walking evaluator of `$filter` trees (CONVENTIONS.md#filter-expressions). It is not used
// to serve requests: the benchmark measures the compiled predicate against it, and the tests run every
// corpus case through both, so a bug in either walk shows up as a disagreement. Both share the
// semantics of values.ts and functions.ts; only the walking differs.
import type { JsonObject } from '../json.js';
import { unrollChain, type BinaryNode, type FilterNode, type LambdaNode } from './ast.js';
import { functionSpec } from './functions.js';
import {
  and3, arithmetic, comparison, countOf, foldLambda, isComparison, isElement, isMember, negate, not3, or3, readPath,
  truth, type Value,
} from './values.js';

/** Lambda variables in scope, by name; names are unique in scope (the parser forbids shadowing). */
type Variables = Map<string, Value>;

/** Evaluates `ast` for one item; true only where the filter is true (false and null drop the item). */
export function interpretFilter(ast: FilterNode, doc: JsonObject): boolean {
  return evaluate(ast, doc, new Map()) === true;
}

function evaluate(node: FilterNode, doc: JsonObject, variables: Variables): Value {
  switch (node.kind) {
    case 'literal':
    case 'date':
      return node.value;
    case 'path':
      return readPath(node.variable === null ? doc : (variables.get(node.variable) ?? null), node.segments);
    case 'not':
      return not3(truth(evaluate(node.operand, doc, variables)));
    case 'negate':
      return negate(evaluate(node.operand, doc, variables));
    case 'binary':
      return evaluateChain(node, doc, variables);
    case 'in-list':
      return isMember(evaluate(node.operand, doc, variables), node.items.map((item) => item.value));
    case 'in-path':
      return isElement(evaluate(node.operand, doc, variables), evaluate(node.collection, doc, variables));
    case 'count':
      return countOf(evaluate(node.collection, doc, variables));
    case 'call':
      return functionSpec(node.name).apply(node.args.map((arg) => evaluate(arg, doc, variables)));
    case 'lambda':
      return evaluateLambda(node, doc, variables);
  }
}

/** Left-associative chains are walked in a loop: their length is not limited, only nesting is. */
function evaluateChain(node: BinaryNode, doc: JsonObject, variables: Variables): Value {
  const { base, links } = unrollChain(node);
  let value = evaluate(base, doc, variables);
  for (const link of links) value = evaluateLink(link, value, doc, variables);
  return value;
}

function evaluateLink(link: BinaryNode, left: Value, doc: JsonObject, variables: Variables): Value {
  if (link.operator === 'and') {
    const first = truth(left);
    return first === false ? false : and3(first, truth(evaluate(link.right, doc, variables)));
  }
  if (link.operator === 'or') {
    const first = truth(left);
    return first === true ? true : or3(first, truth(evaluate(link.right, doc, variables)));
  }
  const right = evaluate(link.right, doc, variables);
  return isComparison(link.operator)
    ? comparison(link.operator)(left, right)
    : arithmetic(link.operator)(left, right);
}

function evaluateLambda(node: LambdaNode, doc: JsonObject, variables: Variables): Value {
  const collection = evaluate(node.collection, doc, variables);
  const { variable, predicate } = node;
  if (variable === null || predicate === null) return foldLambda(node.operator, collection, () => true);
  const verdict = foldLambda(node.operator, collection, (element) => {
    variables.set(variable, element);
    return truth(evaluate(predicate, doc, variables));
  });
  variables.delete(variable);
  return verdict;
}
