// How a section file declares its checks (lib/check/sections/).
import type { PrerequisiteName } from './prerequisites.js';
import type { Citation } from './rules.js';
import type { Check, CheckContext, Condition, Section } from './types.js';

/** Where a check's rule is written, and what it needs before it can judge it. */
export interface Declaration extends Citation {
  readonly needs?: readonly PrerequisiteName[];
  readonly requires?: readonly Condition[];
  /** The rule is the receiving scheme's: another scheme's runs cite that scheme's section. */
  readonly schemeRule?: boolean;
}

/**
 * A check of `section` named `name` (its id is `section/name`) that holds a server to `rule`, one
 * sentence, written where `declaration` says, run only once everything it `needs` holds and in a run
 * given what it `requires`.
 */
export function check(
  section: Section,
  name: string,
  declaration: Declaration,
  rule: string,
  run: (context: CheckContext) => Promise<void>,
): Check {
  const { anchor, rfc, needs = [], requires = [], schemeRule = false } = declaration;
  const cited = rfc === undefined ? { anchor } : { anchor, rfc };
  return { id: `${section}/${name}`, section, rule, ...cited, schemeRule, needs, requires, run };
}

export const JSON_BODY = { 'Content-Type': 'application/json' } as const;

/** A JSON body that may only create, never replace (CONVENTIONS.md#conditional-create). */
export const JSON_CREATE_ONLY = { ...JSON_BODY, 'If-None-Match': '*' } as const;
