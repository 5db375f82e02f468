// `$filter` for collections (CONVENTIONS.md#filter-expressions; a property that does not exist gives a
// 400, CONVENTIONS.md#filter-errors-and-budget). Three pure stages: lexer.ts (text → tokens),
// parser.ts (tokens → typed tree, with the precedence table) and compile.ts (tree → predicate,
// built once per query). interpret.ts walks the same tree for benchmarks and cross-checks.
//
// Limits, because `$filter` comes from strangers. Parsing: input longer than `maxLength`
// characters (UTF-16 code units, default 4096) → 'too-long' at offset maxLength; nesting deeper
// than `maxDepth` (default 64; each parenthesis, call, lambda, `in` list, `not` and unary minus is
// a level) → 'too-deep'. No input string makes these functions throw; only programmer errors (a
// text that is not a string, bad options) throw TypeError.
// Evaluation (CONVENTIONS.md#filter-errors-and-budget: every filter runs under a budget of evaluation
// steps and bytes built, so no request can stall the server): the 46-character
// `tags/any(a: tags/any(b: tags/any(c: c eq -1)))` is 10⁹ element visits on an item whose tags
// hold 1,000 elements, and a `concat` tree over one long string builds hundreds of megabytes.
// Given `budget` (one WorkBudget per request, shared by every row the request evaluates), the
// predicate starts a row of it on each call and charges it as it goes: per row, the steps of every
// node outside lambda bodies; per element a lambda visits, the steps of its body; and, as values
// are read, string searches and case mapping by length, `in` and structure comparison by the
// elements they walk (cost.ts says what a step is). Strings built by concat, substring, tolower,
// toupper and trim are counted in bytes. DEFAULT_BUDGET_LIMITS allows 1,000,000 steps and 16 MiB
// per row, 100,000,000 steps and 1 GiB per request (budget.ts). The moment a limit is passed the
// predicate throws BudgetExceeded, the one exception this module lets out: it must leave closures
// nested as deep as the filter, and a throw costs nothing until it happens. The caller running the
// predicate catches it at that boundary and turns it into a value (a 400 problem whose detail is
// its message, which names the limit and what to change). Without a budget the predicate charges
// nothing and never throws, as before.
//
// Property validation: after parsing, `knownProperty` is asked about every property path the
// filter reads, in source order, and the first unknown one is an 'unknown-property' error naming
// it. Inside a lambda, paths through the lambda variable are asked with the collection's path in
// front and no index: `tags/any(t: t/name eq 'x')` asks ['tags'] and then ['tags', 'name'];
// the bare variable (`t eq 'x'`) asks nothing more. A `$count` path asks about its collection
// only: `tags/$count` asks ['tags'], and `l/items/$count` inside `lines/any(l: …)` asks
// ['lines', 'items']. The caller decides what "known" means (the declared schema, or the union of
// the fields its items have, with an array's element fields counted as children of the array's
// name).
import type { JsonObject } from '../json.js';
import type { FilterNode } from './ast.js';
import { WorkBudget } from './budget.js';
import { compilePredicate } from './compile.js';
import { filterError, quote, type FilterError } from './errors.js';
import { tokenize } from './lexer.js';
import { parseTokens, type ParseOutcome } from './parser.js';

export type {
  BinaryNode, BinaryOperator, CallNode, CountNode, DateNode, FilterNode, FunctionName, InListNode, InPathNode,
  LambdaNode, LiteralNode, NegateNode, NotNode, PathNode, StaticType,
} from './ast.js';
export { BudgetExceeded, DEFAULT_BUDGET_LIMITS, WorkBudget, type BudgetLimit, type BudgetLimits } from './budget.js';
export { FilterDate } from './dates.js';
export type { FilterError, FilterErrorKind } from './errors.js';
export { interpretFilter } from './interpret.js';

const DEFAULT_MAX_LENGTH = 4096;
const DEFAULT_MAX_DEPTH = 64;
/**
 * Ceilings on the options, so no setting lets the parser or a predicate run out of stack: operator
 * chains cost no stack at any length, and 128 levels of the costliest nesting use about a third of
 * Node's default stack.
 */
const MAX_LENGTH_CEILING = 65_536;
const MAX_DEPTH_CEILING = 128;

export interface FilterLimits {
  /** Longest accepted input, in characters; default 4096, at most 65536. */
  readonly maxLength?: number;
  /** Deepest accepted nesting; default 64, at most 128. */
  readonly maxDepth?: number;
}

export interface FilterOptions extends FilterLimits {
  /**
   * Is `path` (e.g. ['address', 'city']) a property the collection knows? Asked for every property
   * path the filter reads; lambda-variable paths come with the collection path in front
   * (`tags/any(t: t/name eq 'x')` asks ['tags'] and ['tags', 'name']).
   */
  readonly knownProperty: (path: readonly string[]) => boolean;
  /**
   * The request's work budget: the predicate then starts a row of it on every call, charges it,
   * and throws BudgetExceeded once a limit is passed. Without one it never throws.
   */
  readonly budget?: WorkBudget;
}

export type Predicate = (doc: JsonObject) => boolean;

export type FilterResult =
  | { readonly ok: true; readonly predicate: Predicate; readonly ast: FilterNode }
  | { readonly ok: false; readonly error: FilterError };

export type ParseFilterResult =
  | { readonly ok: true; readonly ast: FilterNode }
  | { readonly ok: false; readonly error: FilterError };

/** Parses, validates against the collection's properties and compiles a `$filter` expression. */
export function compileFilter(text: string, options: FilterOptions): FilterResult {
  if (typeof options !== 'object' || options === null || typeof options.knownProperty !== 'function') {
    throw new TypeError('compileFilter: options.knownProperty must be a function');
  }
  if (options.budget !== undefined && !(options.budget instanceof WorkBudget)) {
    throw new TypeError('compileFilter: options.budget must be a WorkBudget');
  }
  const parsed = analyse(text, options, 'compileFilter');
  if (!parsed.ok) return parsed;
  for (const reference of parsed.references) {
    if (!options.knownProperty(reference.path)) {
      const detail = `unknown property ${quote(reference.path.join('/'))}`;
      return { ok: false, error: filterError('unknown-property', detail, reference.offset) };
    }
  }
  return { ok: true, predicate: compilePredicate(parsed.ast, options.budget ?? null), ast: parsed.ast };
}

/** Parses a `$filter` expression without checking property names (e.g. to validate its syntax). */
export function parseFilter(text: string, options: FilterLimits = {}): ParseFilterResult {
  const parsed = analyse(text, options, 'parseFilter');
  return parsed.ok ? { ok: true, ast: parsed.ast } : parsed;
}

function analyse(text: string, limits: FilterLimits, caller: string): ParseOutcome {
  if (typeof text !== 'string') throw new TypeError(`${caller}: text must be a string`);
  const maxLength = limit(limits.maxLength, DEFAULT_MAX_LENGTH, MAX_LENGTH_CEILING, `${caller}: maxLength`);
  const maxDepth = limit(limits.maxDepth, DEFAULT_MAX_DEPTH, MAX_DEPTH_CEILING, `${caller}: maxDepth`);
  if (text.length > maxLength) {
    return { ok: false, error: filterError('too-long', `filter longer than ${maxLength} characters`, maxLength) };
  }
  const lexed = tokenize(text);
  return lexed.ok ? parseTokens(lexed.tokens, maxDepth) : lexed;
}

function limit(value: number | undefined, fallback: number, ceiling: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1 || value > ceiling) {
    throw new TypeError(`${name} must be an integer from 1 to ${ceiling}`);
  }
  return value;
}
