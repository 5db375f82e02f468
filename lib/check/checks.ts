// Every check of `resapi check`, by section (lib/check/sections/): the one list the runner reads, and
// the catalogue of what each check holds a server to, listed without running anything.
import { PREREQUISITES } from './prerequisites.js';
import type { Anchor, SpecReference } from './rules.js';
import { CACHING_CHECKS } from './sections/caching.js';
import { CONDITIONAL_CHECKS } from './sections/conditional.js';
import { ERROR_CHECKS } from './sections/errors.js';
import { IDEMPOTENCE_CHECKS } from './sections/idempotence.js';
import { PAGING_CHECKS } from './sections/paging.js';
import { RESOURCE_CHECKS } from './sections/resources.js';
import { WEBHOOK_CHECKS } from './sections/webhooks.js';
import { SECTIONS, type Check, type Condition, type Section } from './types.js';

export const CHECKS: readonly Check[] = [
  ...RESOURCE_CHECKS,
  ...CONDITIONAL_CHECKS,
  ...CACHING_CHECKS,
  ...IDEMPOTENCE_CHECKS,
  ...PAGING_CHECKS,
  ...ERROR_CHECKS,
  ...WEBHOOK_CHECKS,
];

/** One check as the catalogue lists it: what it is called, what it holds a server to, and where that is written. */
export interface CatalogueEntry {
  /** `section/name`, as the report and `--only` name it. */
  readonly id: string;
  readonly section: Section;
  /** The rule, in one sentence (the check's title in the report). */
  readonly rule: string;
  /** The section of CONVENTIONS.md that states the rule. */
  readonly anchor: Anchor;
  /** The RFC or OData section the rule comes from, when there is one. */
  readonly rfc?: SpecReference;
  /** The rule is the receiving scheme's: a run with another scheme cites that scheme's section instead. */
  readonly schemeRule: boolean;
  /** The ids of the checks it needs (CONVENTIONS.md#conformance-checker): when one fails, it is blocked. */
  readonly prerequisites: readonly string[];
  /** What the run must be given for it to apply (credentials, a receiver secret). */
  readonly requires: readonly Condition[];
}

/** Every check, in the order the report lists them (by section, then as declared). */
export function checksInOrder(): Check[] {
  const order = Object.keys(SECTIONS) as Section[];
  return [...CHECKS].sort((a, b) => order.indexOf(a.section) - order.indexOf(b.section));
}

/**
 * The catalogue of every check, in report order, without running any: for documentation, and for a
 * test that collects every citation the checker makes.
 */
export function checkCatalogue(): CatalogueEntry[] {
  return checksInOrder().map(({ id, section, rule, anchor, rfc, schemeRule, needs, requires }) => ({
    id,
    section,
    rule,
    anchor,
    ...(rfc === undefined ? {} : { rfc }),
    schemeRule,
    prerequisites: needs.map((name) => PREREQUISITES[name].check),
    requires,
  }));
}
