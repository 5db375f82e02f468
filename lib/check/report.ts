// The report of `resapi check` (CONTRACT §9: "one line per rule (PASS/FAIL with the seed rule it
// checks) and a summary"): lines grouped under the seed's sections, each with the result, the check's
// id, the rule and where it is written, and for a failure what was seen; or the same as one JSON
// document (`--json`). Pure: a report in, text out.
import type { CheckReport } from './run.js';
import { SECTIONS, type Section } from './types.js';

export function reportText(report: CheckReport): string {
  const lines = [`resapi check ${report.baseUrl}`];
  let section: Section | undefined;
  for (const outcome of report.outcomes) {
    if (outcome.section !== section) {
      section = outcome.section;
      lines.push('', SECTIONS[section]);
    }
    const detail = outcome.detail === undefined ? '' : outcome.result === 'fail' ? ` -- seen: ${outcome.detail}` : ` -- ${outcome.detail}`;
    lines.push(`  ${outcome.result.toUpperCase()}  ${outcome.id}: ${outcome.rule} (${outcome.source})${detail}`);
  }
  const { pass, fail, skip } = report.summary;
  lines.push('', `${report.outcomes.length} checks: ${pass} passed, ${fail} failed, ${skip} skipped (${report.requests} requests)`);
  if (report.leftBehind.length > 0) lines.push(`Could not remove what the run stored: ${report.leftBehind.join('; ')}`);
  return `${lines.join('\n')}\n`;
}

export function reportJson(report: CheckReport): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}
