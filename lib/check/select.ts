// `--only` and `--skip` (CONVENTIONS.md#conformance-checker): each names checks by id
// (`conditional/replace`) or a whole section (`conditional`, or `conditional/`). A name that is neither
// is a usage error, listed, never silently ignored: a typo must not turn into a green run of nothing.
import type { Check } from './types.js';
import { SECTIONS, type Section } from './types.js';

export interface Selection {
  /** The checks asked for, in report order (prerequisites they need come in on their own). */
  readonly chosen: readonly Check[];
  /** The ids `--skip` names: never run, and what needs them is skipped. */
  readonly excluded: ReadonlySet<string>;
}

/** The names among `selectors` that are neither a check id nor a section. */
export function unknownSelectors(checks: readonly Check[], selectors: readonly string[]): string[] {
  const ids = new Set(checks.map((check) => check.id));
  return selectors.filter((selector) => !ids.has(selector) && sectionOf(selector) === undefined);
}

/** The checks `only` and `skip` leave; throws a TypeError naming every unknown selector. */
export function select(
  checks: readonly Check[],
  only: readonly string[] | undefined,
  skip: readonly string[] | undefined,
): Selection {
  const unknown = unknownSelectors(checks, [...(only ?? []), ...(skip ?? [])]);
  if (unknown.length > 0) throw new TypeError(`no check or section is named ${unknown.join(', ')}`);
  const skipped = new Set(checks.filter((check) => matches(check, skip ?? [])).map((check) => check.id));
  const chosen = checks.filter(
    (check) => (only === undefined || only.length === 0 || matches(check, only)) && !skipped.has(check.id),
  );
  return { chosen, excluded: skipped };
}

function matches(check: Check, selectors: readonly string[]): boolean {
  return selectors.some((selector) => selector === check.id || sectionOf(selector) === check.section);
}

/** The section `selector` names (`paging` or `paging/`), if it names one. */
function sectionOf(selector: string): Section | undefined {
  const name = selector.endsWith('/') ? selector.slice(0, -1) : selector;
  return Object.hasOwn(SECTIONS, name) ? (name as Section) : undefined;
}
