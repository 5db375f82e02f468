// How a section file declares its checks (lib/check/sections/).
import type { Check, CheckContext, Section } from './types.js';

/** A check of `section` named `name` (its id is `section/name`). */
export function check(section: Section, name: string, rule: string, source: string, run: (context: CheckContext) => Promise<void>): Check {
  return { id: `${section}/${name}`, section, rule, source, run };
}

export const JSON_BODY = { 'Content-Type': 'application/json' } as const;
