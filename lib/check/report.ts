// The report of `resapi check` (CONVENTIONS.md#conformance-checker), as text: one line per check of at
// most 120 characters, under the report's sections: the verdict (PASS, FAIL, SKIP, BLOCKED), the
// check's id, its rule and the anchor of its section of CONVENTIONS.md (`#etags`), and for anything
// but a PASS why, cut with … to fit (the rule gives way first, down to a minimum). With `verbose`
// outcomes, indented lines under each check give the whole rule, the whole reason and what was sent
// and seen (each request and answer wrapped, never cut: it is what a reader opens --verbose for);
// with the document's URL (`--docs-base`), the rule's address goes on an indented line of its own,
// which may be longer. Then the summary: the totals, each failure as a root cause with the checks it
// blocked, and a table of sections with a score each. Or the same as one JSON document (`--json`).
// Pure: a report in, text out.
import type { CheckOutcome, CheckReport, RootCause, SectionScore } from './run.js';
import { CONVENTIONS_DOCUMENT } from './rules.js';
import type { Exchange } from './state.js';
import { SECTIONS, type Section } from './types.js';

/** The longest line the report writes (but the rule URLs of --docs-base). */
export const REPORT_WIDTH = 120;
/** Where everything under a check line starts: under its id, past `  BLOCKED  `. */
const INDENT = ' '.repeat(11);
/** Where a request or an answer that takes more than one line goes on, under its first field. */
const HANGING = ' '.repeat(13);
/** Characters of the rule a line keeps however long the reason is. */
const MIN_RULE = 28;
/** The table's columns after the section's title. */
const COLUMNS = ['pass', 'fail', 'blocked', 'skip', 'score'] as const;

export function reportText(report: CheckReport): string {
  const lines = [
    fit(`resapi check ${report.baseUrl}`, REPORT_WIDTH),
    `Each line: verdict, check, its rule and #anchor, a section of ${CONVENTIONS_DOCUMENT}; then why, unless PASS.`,
  ];
  let section: Section | undefined;
  for (const outcome of report.outcomes) {
    if (outcome.section !== section) {
      section = outcome.section;
      lines.push('', SECTIONS[section]);
    }
    lines.push(checkLine(outcome));
    if (outcome.ruleUrl !== undefined) lines.push(`${INDENT}${outcome.ruleUrl}`);
    if (outcome.exchanges !== undefined) lines.push(...verboseLines(outcome, outcome.exchanges));
  }
  lines.push('', ...summaryLines(report));
  return `${lines.join('\n')}\n`;
}

export function reportJson(report: CheckReport): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}

/**
 * `  FAIL     conditional/replace: <rule> (#conditional-replace) -- <why>`, at most REPORT_WIDTH long;
 * a blocked check's why is `by <the failed check>`.
 */
export function checkLine(outcome: CheckOutcome): string {
  const { verdict, id, rule, anchor, detail, blockedBy } = outcome;
  const head = `  ${verdict.padEnd(7)}  ${id}: `;
  const cite = ` (#${anchor})`;
  // "BLOCKED … -- by resources/put-create": the verdict already says the rest of "blocked by".
  const reason = blockedBy !== undefined && detail?.startsWith('blocked by ') === true ? detail.slice(8) : detail;
  const why = reason === undefined ? '' : ` -- ${reason}`;
  const room = REPORT_WIDTH - length(head) - length(cite);
  const ruleRoom = Math.min(length(rule), Math.max(MIN_RULE, room - length(why)));
  return `${head}${fit(rule, ruleRoom)}${cite}${fit(why, room - ruleRoom)}`;
}

function summaryLines(report: CheckReport): string[] {
  const { pass, fail, blocked, skip } = report.summary;
  const counts = `${pass} passed, ${fail} failed, ${blocked} blocked, ${skip} skipped`;
  const lines = [`${report.outcomes.length} checks: ${counts} (${report.requests} requests)`];
  if (report.rootCauses.length > 0) {
    lines.push('', 'Failures, one per root cause, with the checks each one blocked:');
    for (const cause of report.rootCauses) lines.push(causeLine(cause));
  }
  lines.push('', ...sectionTable(report.sections));
  if (report.leftBehind.length > 0) {
    lines.push('', `Could not remove what the run stored (${report.leftBehind.length}):`);
    for (const what of report.leftBehind) lines.push(fit(`  ${what}`, REPORT_WIDTH));
  }
  return lines;
}

/** `  resources/put-create blocks 38 -- expected 201, got 200 …`; a failure that blocked nothing, without the count. */
function causeLine(cause: RootCause): string {
  const blocks = cause.blocked.length === 0 ? '' : ` blocks ${cause.blocked.length}`;
  return fit(`  ${cause.id}${blocks} -- ${cause.detail}`, REPORT_WIDTH);
}

/** Each section's counts and score: pass / (pass + fail + blocked), skips left out. */
function sectionTable(sections: readonly SectionScore[]): string[] {
  const titleWidth = Math.max('Section'.length, ...sections.map((section) => section.title.length));
  const cell = (text: string, index: number): string => text.padStart((COLUMNS[index] as string).length + 2);
  const row = (title: string, cells: readonly string[]): string =>
    `${title.padEnd(titleWidth)}${cells.map(cell).join('')}`;
  return [
    row('Section', COLUMNS),
    ...sections.map((section) =>
      row(section.title, [
        String(section.pass),
        String(section.fail),
        String(section.blocked),
        String(section.skip),
        section.score === null ? '-' : `${section.score}%`,
      ]),
    ),
  ];
}

/** The whole rule, the whole reason, what the check needs, and each request with its answer. */
function verboseLines(outcome: CheckOutcome, exchanges: readonly Exchange[]): string[] {
  const lines = wrap(`rule: ${outcome.rule} (${outcome.source})`);
  if (outcome.detail !== undefined) lines.push(...wrap(`why: ${outcome.detail}`));
  if (outcome.prerequisites.length > 0) lines.push(...wrap(`needs: ${outcome.prerequisites.join(', ')}`));
  for (const exchange of exchanges) {
    const fields = Object.entries(exchange.headers).map(([name, value]) => `${name}: ${value}`);
    const body = exchange.body === undefined ? [] : [exchange.body];
    const sent = [`> ${exchange.method} ${exchange.path}`, ...fields, ...body];
    lines.push(...wrap(sent.join(' | '), HANGING));
    if (exchange.error !== undefined) {
      lines.push(...wrap(`< no answer: ${exchange.error}`, HANGING));
      continue;
    }
    const answer = Object.entries(exchange.responseHeaders ?? {}).map(([name, value]) => `${name}: ${value}`);
    const seenBody = exchange.responseBody === undefined ? [] : [exchange.responseBody];
    lines.push(...wrap(`< ${[String(exchange.status), ...answer, ...seenBody].join(' | ')}`, HANGING));
  }
  return lines;
}

/**
 * `text` in lines under the check's id, each at most REPORT_WIDTH, broken at spaces where it can be;
 * lines after the first start at `hanging`.
 */
function wrap(text: string, hanging = INDENT): string[] {
  const lines: string[] = [];
  let indent = INDENT;
  let rest = [...oneLine(text).replace(/ +/g, ' ')];
  while (rest.length > REPORT_WIDTH - indent.length) {
    const width = REPORT_WIDTH - indent.length;
    const space = rest.lastIndexOf(' ', width);
    const cut = space > width / 2 ? space : width;
    lines.push(`${indent}${rest.slice(0, cut).join('')}`);
    rest = rest.slice(rest[cut] === ' ' ? cut + 1 : cut);
    indent = hanging;
  }
  lines.push(`${indent}${rest.join('')}`);
  return lines;
}

/**
 * `text` on one line (line breaks and tabs as spaces, other control characters as U+FFFD) cut to
 * `width` characters (code points), its last one … when cut; '' when there is no room.
 */
function fit(text: string, width: number): string {
  const characters = [...oneLine(text)];
  if (characters.length <= width) return characters.join('');
  if (width <= 0) return '';
  return `${characters.slice(0, width - 1).join('').trimEnd()}…`;
}

function oneLine(text: string): string {
  return text.replace(/[\r\n\t]+/g, ' ').replace(/[\u0000-\u001f\u007f]/g, '\ufffd');
}

/** Characters (code points), as a terminal counts them, not UTF-16 units. */
function length(text: string): number {
  return [...text].length;
}
