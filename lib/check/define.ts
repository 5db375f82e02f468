// How a section file declares its checks (lib/check/sections/).
import type { Citation } from './rules.js';
import type { Check, CheckContext, Section } from './types.js';

/**
 * A check of `section` named `name` (its id is `section/name`) that holds a server to `rule`, one
 * sentence, written where `citation` says.
 */
export function check(
  section: Section,
  name: string,
  citation: Citation,
  rule: string,
  run: (context: CheckContext) => Promise<void>,
): Check {
  const { anchor, rfc } = citation;
  return { id: `${section}/${name}`, section, rule, anchor, ...(rfc === undefined ? {} : { rfc }), run };
}

export const JSON_BODY = { 'Content-Type': 'application/json' } as const;

/** A JSON body that may only create, never replace (CONVENTIONS.md#conditional-create). */
export const JSON_CREATE_ONLY = { ...JSON_BODY, 'If-None-Match': '*' } as const;
