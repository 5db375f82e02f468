// The `$filter` syntax tree (CONVENTIONS.md#filter-grammar; OASIS OData 4.01 Part 2 §5.1.1 and the
// `commonExpr` rule of the OData ABNF). Nodes are plain tagged objects; every node carries the
// 0-based offset (UTF-16 code units) of its first character so later stages can point at it.
//
// Every node also carries its static type, worked out by the parser from literals, operators and
// function signatures (types.ts). Property paths and lambda variables are `unknown` until a row is
// read: the store is schemaless, so only literal misuse such as `'a' add 1` is caught up front.
import type { FilterDate } from './dates.js';

/** What the parser knows about a value before any row is read. */
export type StaticType = 'boolean' | 'number' | 'string' | 'date' | 'null' | 'unknown';

/** Binary operators of OData 4.01 Part 2 §5.1.1.1 (logical) and §5.1.1.2 (arithmetic). */
export type BinaryOperator =
  | 'eq' | 'ne' | 'gt' | 'ge' | 'lt' | 'le'
  | 'and' | 'or'
  | 'add' | 'sub' | 'mul' | 'div' | 'mod';

/**
 * The canonical functions of this subset, lower case (OData 4.01 Part 2 §5.1.1 "String and
 * Collection Functions", "String Functions", "Date and Time Functions").
 */
export type FunctionName =
  | 'contains' | 'startswith' | 'endswith' | 'indexof' | 'substring'
  | 'tolower' | 'toupper' | 'trim' | 'concat' | 'length'
  | 'year' | 'month' | 'day';

/** `null`, `true`, `false`, a string or a number literal. */
export interface LiteralNode {
  readonly kind: 'literal';
  readonly offset: number;
  readonly type: StaticType;
  readonly value: null | boolean | number | string;
}

/** A date (`2024-01-31`) or date-time (`2024-01-31T10:00:00Z`) literal. */
export interface DateNode {
  readonly kind: 'date';
  readonly offset: number;
  readonly type: 'date';
  readonly text: string;
  readonly value: FilterDate;
}

/**
 * A property path such as `address/city`. When the first segment names a lambda variable in
 * scope, `variable` holds it and `segments` are the rest (`t/name` → variable `t`, segments
 * `['name']`); otherwise `variable` is null and the path starts at the item.
 */
export interface PathNode {
  readonly kind: 'path';
  readonly offset: number;
  readonly type: 'unknown';
  readonly variable: string | null;
  readonly segments: readonly string[];
}

export interface NotNode {
  readonly kind: 'not';
  readonly offset: number;
  readonly type: 'boolean';
  readonly operand: FilterNode;
}

export interface NegateNode {
  readonly kind: 'negate';
  readonly offset: number;
  readonly type: 'number';
  readonly operand: FilterNode;
}

export interface BinaryNode {
  readonly kind: 'binary';
  readonly offset: number;
  readonly type: 'boolean' | 'number';
  readonly operator: BinaryOperator;
  readonly operatorOffset: number;
  readonly left: FilterNode;
  readonly right: FilterNode;
}

/** `operand in (v1, v2, ...)`; the ABNF `listExpr` admits only primitive literals. */
export interface InListNode {
  readonly kind: 'in-list';
  readonly offset: number;
  readonly type: 'boolean';
  readonly operand: FilterNode;
  readonly items: readonly (LiteralNode | DateNode)[];
}

/** `operand in path`: membership in a collection-valued property. */
export interface InPathNode {
  readonly kind: 'in-path';
  readonly offset: number;
  readonly type: 'boolean';
  readonly operand: FilterNode;
  readonly collection: PathNode;
}

/**
 * `path/$count`: the number of elements of a collection-valued property (OData 4.01 Part 2 §5.1.1
 * and the ABNF `collectionPathExpr = count …`); null when the value is missing, null or not an array.
 */
export interface CountNode {
  readonly kind: 'count';
  readonly offset: number;
  readonly type: 'number';
  readonly collection: PathNode;
}

export interface CallNode {
  readonly kind: 'call';
  readonly offset: number;
  readonly type: StaticType;
  readonly name: FunctionName;
  readonly args: readonly FilterNode[];
}

/** `path/any(v: predicate)`, `path/any()` or `path/all(v: predicate)`. */
export interface LambdaNode {
  readonly kind: 'lambda';
  readonly offset: number;
  readonly type: 'boolean';
  readonly operator: 'any' | 'all';
  readonly collection: PathNode;
  /** Null only for the argument-less `any()`. */
  readonly variable: string | null;
  readonly predicate: FilterNode | null;
}

export type FilterNode =
  | LiteralNode
  | DateNode
  | PathNode
  | NotNode
  | NegateNode
  | BinaryNode
  | InListNode
  | InPathNode
  | CountNode
  | CallNode
  | LambdaNode;

/** A left-associative chain `((base op r1) op r2) …` taken apart, innermost operation first. */
export interface Chain {
  readonly base: FilterNode;
  readonly links: readonly BinaryNode[];
}

/**
 * Unrolls the left spine of binary operators. Chains like `a or b or c …` are as long as the input
 * allows (only nesting is limited), so tree walkers loop over the links instead of recursing.
 */
export function unrollChain(node: BinaryNode): Chain {
  const links: BinaryNode[] = [];
  let current: FilterNode = node;
  while (current.kind === 'binary') {
    links.push(current);
    current = current.left;
  }
  links.reverse();
  return { base: current, links };
}
