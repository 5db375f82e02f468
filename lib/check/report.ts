// The report of `resapi check` (CONVENTIONS.md#conformance-checker): lines grouped under the report's
// sections, each with the result, the check's id, the rule and the anchor of its section of
// CONVENTIONS.md (`#etags`), and for a failure what was seen; with the document's URL (`--docs-base`),
// the rule's full address on an indented line of its own under the check's line. Or the same as one
// JSON document (`--json`). Pure: a report in, text out.
import type { CheckOutcome, CheckReport } from './run.js';
import { CONVENTIONS_DOCUMENT } from './rules.js';
import { SECTIONS, type Section } from './types.js';

/** Where the rule's URL starts: under the check's id, past `  PASS  `. */
const URL_INDENT = ' '.repeat(8);

export function reportText(report: CheckReport): string {
  const lines = [
    `resapi check ${report.baseUrl}`,
    `Each check cites its rule as #anchor, a section of ${CONVENTIONS_DOCUMENT}.`,
  ];
  let section: Section | undefined;
  for (const outcome of report.outcomes) {
    if (outcome.section !== section) {
      section = outcome.section;
      lines.push('', SECTIONS[section]);
    }
    lines.push(checkLine(outcome));
    if (outcome.ruleUrl !== undefined) lines.push(`${URL_INDENT}${outcome.ruleUrl}`);
  }
  const { pass, fail, skip } = report.summary;
  const counts = `${pass} passed, ${fail} failed, ${skip} skipped`;
  lines.push('', `${report.outcomes.length} checks: ${counts} (${report.requests} requests)`);
  if (report.leftBehind.length > 0) lines.push(`Could not remove what the run stored: ${report.leftBehind.join('; ')}`);
  return `${lines.join('\n')}\n`;
}

export function reportJson(report: CheckReport): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}

/** `  FAIL  conditional/replace: <rule> (#conditional-replace) -- seen: <what>`. */
function checkLine(outcome: CheckOutcome): string {
  const { result, id, rule, anchor, detail } = outcome;
  const said = detail === undefined ? '' : result === 'fail' ? ` -- seen: ${detail}` : ` -- ${detail}`;
  return `  ${result.toUpperCase()}  ${id}: ${rule} (#${anchor})${said}`;
}
