// The report of `resapi check` as JUnit XML (`--junit FILE`, CONVENTIONS.md#conformance-checker), the
// format CI systems show natively: one <testsuite> per section of the report, one <testcase> per check
// (name: the check's id; classname: its section), a <failure> for FAIL, a <skipped> for SKIP and for
// BLOCKED, told apart by the message (a blocked one's starts "blocked by "). Every value is escaped,
// and characters XML 1.0 cannot carry at all are replaced, so a server's bytes quoted in a failure
// never make the file unreadable. Pure: a report in, text out.
import type { CheckOutcome, CheckReport } from './run.js';
import { SECTIONS, type Section } from './types.js';

export function reportJunit(report: CheckReport): string {
  const { pass, fail, skip, blocked } = report.summary;
  const total = pass + fail + skip + blocked;
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="${escapeAttribute(`resapi check ${report.baseUrl}`)}" tests="${total}" failures="${fail}" ` +
      `errors="0" skipped="${skip + blocked}" time="${seconds(report.outcomes)}">`,
  ];
  for (const section of Object.keys(SECTIONS) as Section[]) {
    const outcomes = report.outcomes.filter((outcome) => outcome.section === section);
    if (outcomes.length === 0) continue;
    const failures = outcomes.filter((outcome) => outcome.verdict === 'FAIL').length;
    const skipped = outcomes.filter((outcome) => outcome.verdict === 'SKIP' || outcome.verdict === 'BLOCKED').length;
    lines.push(
      `  <testsuite name="${escapeAttribute(SECTIONS[section])}" tests="${outcomes.length}" failures="${failures}" ` +
        `errors="0" skipped="${skipped}" time="${seconds(outcomes)}">`,
    );
    for (const outcome of outcomes) lines.push(...testcase(outcome));
    lines.push('  </testsuite>');
  }
  lines.push('</testsuites>');
  return `${lines.join('\n')}\n`;
}

function testcase(outcome: CheckOutcome): string[] {
  const open = `    <testcase name="${escapeAttribute(outcome.id)}" classname="${escapeAttribute(outcome.section)}" ` +
    `time="${(outcome.ms / 1000).toFixed(3)}"`;
  const detail = outcome.detail ?? '';
  switch (outcome.verdict) {
    case 'PASS':
      return [`${open}/>`];
    case 'FAIL': {
      const text = `${detail}\n\nrule: ${outcome.rule}\nsee: ${outcome.ruleUrl ?? outcome.source}`;
      return [
        `${open}>`,
        `      <failure message="${escapeAttribute(detail)}" type="FAIL">${escapeText(text)}</failure>`,
        '    </testcase>',
      ];
    }
    case 'BLOCKED':
    case 'SKIP':
      // A blocked check's detail already reads "blocked by <id>".
      return [`${open}>`, `      <skipped message="${escapeAttribute(detail)}"/>`, '    </testcase>'];
  }
}

function seconds(outcomes: readonly CheckOutcome[]): string {
  return (outcomes.reduce((sum, outcome) => sum + outcome.ms, 0) / 1000).toFixed(3);
}

/** Characters XML 1.0 cannot carry, escaped or not (its Char production): replaced with U+FFFD. */
const NOT_XML = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

function escapeText(value: string): string {
  return value.replace(NOT_XML, '\uFFFD').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** A double-quoted attribute value; line breaks and tabs as character references, so parsers keep them. */
function escapeAttribute(value: string): string {
  return escapeText(value)
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;')
    .replace(/\n/g, '&#10;')
    .replace(/\r/g, '&#13;')
    .replace(/\t/g, '&#9;');
}
