// The equality terms of a `$filter` (CONVENTIONS.md#filter-expressions: `eq` and `in`): conditions
// `path eq literal` and `path in (literal, ...)` that the whole filter requires, because they stand alone or
// in an `and` with the rest. Each names the only values an item's property may hold for the item to match, so
// an index from values to ids (equality-index.ts) can hand a page its candidates instead of a scan of the
// collection: the page then costs what it returns (README, Performance). The filter itself is still applied
// to every candidate, so a term need only be implied by the filter, never equal to it.
//
// Only primitives written as literals count (a string, a number, true, false): `eq null` also
// matches items without the property, and a date literal compares by instant, so neither names
// the values an index holds. Paths through a lambda variable are not terms.
import type { FilterNode } from '../filter/index.js';

export type IndexedValue = string | number | boolean;

export interface EqualityTerm {
  /** The property path, from the item (`address/city` → ['address', 'city']). */
  readonly path: readonly string[];
  /** The values the property must hold one of. */
  readonly values: readonly IndexedValue[];
}

/** The equality terms the filter requires, in the order they are written. */
export function equalityTerms(filter: FilterNode): EqualityTerm[] {
  const terms: EqualityTerm[] = [];
  // An explicit stack: `and` chains may be as long as the filter, and must not become stack depth.
  const pending: FilterNode[] = [filter];
  while (pending.length > 0) {
    const node = pending.pop() as FilterNode;
    if (node.kind === 'binary' && node.operator === 'and') {
      pending.push(node.right, node.left);
      continue;
    }
    const term = termOf(node);
    if (term !== undefined) terms.push(term);
  }
  return terms;
}

function termOf(node: FilterNode): EqualityTerm | undefined {
  if (node.kind === 'binary' && node.operator === 'eq') {
    const [path, literal] = node.left.kind === 'path' ? [node.left, node.right] : [node.right, node.left];
    if (path.kind !== 'path' || path.variable !== null) return undefined;
    const value = indexable(literal);
    return value === undefined ? undefined : { path: path.segments, values: [value] };
  }
  if (node.kind === 'in-list' && node.operand.kind === 'path' && node.operand.variable === null) {
    const values: IndexedValue[] = [];
    for (const item of node.items) {
      const value = indexable(item);
      if (value === undefined) return undefined;
      values.push(value);
    }
    return { path: node.operand.segments, values };
  }
  return undefined;
}

function indexable(node: FilterNode): IndexedValue | undefined {
  if (node.kind !== 'literal') return undefined;
  const value = node.value;
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? value : undefined;
}
