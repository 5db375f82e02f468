// A CollectionQuery checked against the collection's known properties and compiled once into
// functions (CONVENTIONS.md#filter-errors-and-budget: unknown properties in $filter, $select, $orderby
// or field=value → 400). The resulting plan is applied to rows without looking at the query again.
import { compileFilter, WorkBudget, type FilterError } from '../filter/index.js';
import { problem, type Problem } from '../protocol/problem.js';
import { valueAt, type JsonObject, type JsonValue } from '../json.js';
import type { StoredRecord } from '../store/types.js';
import type { CollectionQuery, SimpleCondition } from './options.js';
import { equalityTerms, type EqualityTerm } from './equality.js';

export interface QueryPlan {
  readonly query: CollectionQuery;
  /**
   * Is this item a match? May throw BudgetExceeded (lib/filter/budget.ts) once the request's filter
   * work passes its budget; the page builder turns that into a 400.
   */
  readonly matches: (doc: JsonObject) => boolean;
  /** Filter work done so far by this plan's request (steps), so a long scan knows when to yield. */
  readonly work: () => number;
  /** The item as returned: whole, or the `$select` summary with its `@id` select link. */
  readonly project: (record: StoredRecord) => JsonObject;
  /** Equality terms the filter requires (equality.ts): what an index can hand a page as its candidates. */
  readonly equalities: readonly EqualityTerm[];
}

export type PlanResult =
  | { readonly ok: true; readonly plan: QueryPlan }
  | { readonly ok: false; readonly problem: Problem };

export interface PlanContext {
  /** Is this a property of the collection? (`id` always is.) */
  readonly known: (path: readonly string[]) => boolean;
  /** The link to one item, for `@id`. */
  readonly itemLink: (id: string) => string;
}

/** Every plan gets its own budget: one request's filter work, however many pages it scans. */

export function planQuery(query: CollectionQuery, context: PlanContext): PlanResult {
  const known = (path: readonly string[]): boolean => (path.length === 1 && path[0] === 'id') || context.known(path);
  for (const [option, paths] of [
    ['$orderby', query.orderby.map((key) => key.path)],
    ['$select', query.select ?? []],
  ] as const) {
    const unknown = paths.find((path) => !known(path));
    if (unknown !== undefined) return unknownProperty(option, unknown);
  }
  const unknownCondition = query.conditions.find((condition) => !known(condition.path));
  if (unknownCondition !== undefined) return unknownProperty(unknownCondition.path.join('/'), unknownCondition.path);
  const predicates: ((doc: JsonObject) => boolean)[] = query.conditions.map(conditionPredicate);
  const budget = new WorkBudget();
  let equalities: EqualityTerm[] = [];
  if (query.filter !== undefined) {
    const compiled = compileFilter(query.filter, { knownProperty: known, budget });
    if (!compiled.ok) return { ok: false, problem: filterProblem(compiled.error) };
    predicates.push(compiled.predicate);
    equalities = equalityTerms(compiled.ast);
  }
  const matches = (doc: JsonObject): boolean => predicates.every((predicate) => predicate(doc));
  const select = query.select;
  const project =
    select === undefined
      ? (record: StoredRecord) => record.doc
      : (record: StoredRecord) => summary(record.doc, select, context.itemLink(record.id));
  return { ok: true, plan: { query, matches, project, work: () => budget.steps, equalities } };
}

/**
 * `=` means contains or is a member of (CONVENTIONS.md#simple-query-strings): for strings, case-insensitive
 * contains; for arrays, membership; for numbers and booleans, equality of the written value.
 */
export function conditionPredicate(condition: SimpleCondition): (doc: JsonObject) => boolean {
  const wanted = condition.value;
  const lowered = wanted.toLowerCase();
  return (doc) => {
    const value = valueAt(doc, condition.path);
    if (typeof value === 'string') return value.toLowerCase().includes(lowered);
    if (Array.isArray(value)) return value.some((element) => writtenAs(element, wanted));
    return writtenAs(value, wanted);
  };
}

/** Does `wanted`, as written in a URL, denote this scalar? */
function writtenAs(value: JsonValue, wanted: string): boolean {
  if (typeof value === 'string') return value === wanted;
  if (typeof value === 'number') return /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(wanted) && Number(wanted) === value;
  if (typeof value === 'boolean') return wanted === String(value);
  return false;
}

/** `$select=a,b/c` → `{ "@id": link, "a": ..., "b": { "c": ... } }`; a missing field is null. */
function summary(doc: JsonObject, select: readonly (readonly string[])[], link: string): JsonObject {
  const out: JsonObject = { '@id': link };
  for (const path of select) {
    let target = out;
    for (let index = 0; index < path.length - 1; index++) {
      const segment = path[index] as string;
      const existing = Object.hasOwn(target, segment) ? target[segment] : undefined;
      // A copy, never the stored object itself: `$select=b,b/x` must not write `x` into the record.
      const isObject = typeof existing === 'object' && existing !== null && !Array.isArray(existing);
      const next: JsonObject = isObject ? { ...existing } : {};
      defineData(target, segment, next);
      target = next;
    }
    defineData(target, path[path.length - 1] as string, valueAt(doc, path));
  }
  return out;
}

/** Sets an own data property even for names like `__proto__` (plain assignment would set the prototype). */
function defineData(target: JsonObject, key: string, value: JsonValue): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function unknownProperty(option: string, path: readonly string[]): PlanResult {
  const name = path.join('/');
  const detail = `'${name}' is not a property of this collection.`;
  return { ok: false, problem: problem('bad-request', detail, { errors: [{ parameter: option, detail }] }) };
}

function filterProblem(error: FilterError): Problem {
  return problem('bad-request', `$filter: ${error.message}`, {
    errors: [{ parameter: '$filter', detail: error.message }],
  });
}
