// Tests for lib/check/report.ts and lib/check/junit.ts: the lines of `resapi check` are at most 120
// characters, give the verdict, the check, its rule and the anchor of its section of CONVENTIONS.md,
// and why for anything but a PASS (cut with … to fit); with the document's URL the rule's address goes
// on an indented line of its own; the summary lists each failure as a root cause with what it blocked,
// and a score per section. `--json` is the report as it is. The JUnit XML is well-formed whatever the
// server sent, one testsuite per section, and tells a blocked check from a skipped one.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { reportJunit } from '../../lib/check/junit.js';
import { REPORT_WIDTH, reportJson, reportText } from '../../lib/check/report.js';
import type { CheckOutcome, CheckReport, SectionScore } from '../../lib/check/run.js';
import type { Exchange } from '../../lib/check/state.js';
import { SECTIONS, type Section } from '../../lib/check/types.js';
import { elementsNamed, parseXml } from './xml.js';

const DOCS = 'https://example.org/resapi/CONVENTIONS.md';
const LONG = 'a rule long enough that it cannot fit on one line of the report beside everything else it must carry';

function report(outcomes: CheckOutcome[]): CheckReport {
  const count = (verdict: string): number => outcomes.filter((outcome) => outcome.verdict === verdict).length;
  const sections: SectionScore[] = (Object.keys(SECTIONS) as Section[]).flatMap((section) => {
    const inSection = outcomes.filter((outcome) => outcome.section === section);
    if (inSection.length === 0) return [];
    const by = (verdict: string): number => inSection.filter((outcome) => outcome.verdict === verdict).length;
    const judged = by('PASS') + by('FAIL') + by('BLOCKED');
    const score = judged === 0 ? null : Math.floor((100 * by('PASS')) / judged);
    return [{ section, title: SECTIONS[section], pass: by('PASS'), fail: by('FAIL'), blocked: by('BLOCKED'), skip: by('SKIP'), score }];
  });
  return {
    baseUrl: 'http://127.0.0.1:3000',
    outcomes,
    summary: { pass: count('PASS'), fail: count('FAIL'), skip: count('SKIP'), blocked: count('BLOCKED') },
    requests: 9,
    leftBehind: [],
    rootCauses: outcomes
      .filter((outcome) => outcome.verdict === 'FAIL')
      .map((outcome) => ({ id: outcome.id, detail: outcome.detail ?? '', blocked: outcomes.filter((other) => other.blockedBy === outcome.id).map((other) => other.id) })),
    sections,
  };
}

const PASSED: CheckOutcome = {
  id: 'resources/envelope',
  section: 'resources',
  rule: 'A collection is an object with a "value" array',
  source: 'CONVENTIONS.md#collection-envelope',
  anchor: 'collection-envelope',
  result: 'pass',
  verdict: 'PASS',
  sectionTitle: SECTIONS.resources,
  prerequisites: [],
  ms: 3,
};

const FAILED: CheckOutcome = {
  id: 'conditional/if-match-stale',
  section: 'conditional',
  rule: 'A stale If-Match answers 412',
  source: 'CONVENTIONS.md#conditional-replace; RFC 9110 §13.1.1',
  anchor: 'conditional-replace',
  rfc: 'RFC 9110 §13.1.1',
  result: 'fail',
  detail: 'expected 412, got 200',
  verdict: 'FAIL',
  sectionTitle: SECTIONS.conditional,
  prerequisites: ['resources/put-create'],
  ms: 12,
};

const BLOCKED: CheckOutcome = {
  id: 'conditional/not-modified',
  section: 'conditional',
  rule: 'GET with If-None-Match answers 304',
  source: 'CONVENTIONS.md#conditional-reads',
  anchor: 'conditional-reads',
  result: 'skip',
  detail: 'blocked by conditional/if-match-stale',
  verdict: 'BLOCKED',
  blockedBy: 'conditional/if-match-stale',
  sectionTitle: SECTIONS.conditional,
  prerequisites: ['conditional/if-match-stale'],
  ms: 0,
};

const SKIPPED: CheckOutcome = {
  id: 'webhooks/accepted',
  section: 'webhooks',
  rule: 'A signed event is accepted',
  source: 'CONVENTIONS.md#durable-acceptance',
  anchor: 'durable-acceptance',
  result: 'skip',
  detail: 'no secret',
  verdict: 'SKIP',
  sectionTitle: SECTIONS.webhooks,
  prerequisites: [],
  ms: 0,
};

function withUrl(outcome: CheckOutcome): CheckOutcome {
  return { ...outcome, ruleUrl: `${DOCS}#${outcome.anchor}` };
}

/** Characters as a terminal counts them. */
function width(line: string): number {
  return [...line].length;
}

describe('reportText', () => {
  it('should give each check one line: verdict, id, rule, anchor, and why unless it passed', () => {
    const lines = reportText(report([PASSED, FAILED, BLOCKED, SKIPPED])).split('\n');
    assert.ok(lines.includes('  PASS     resources/envelope: A collection is an object with a "value" array (#collection-envelope)'), lines.join('\n'));
    assert.ok(lines.includes('  FAIL     conditional/if-match-stale: A stale If-Match answers 412 (#conditional-replace) -- expected 412, got 200'), lines.join('\n'));
    // The reason wins the room: the rule is cut to fit it.
    assert.ok(lines.includes('  BLOCKED  conditional/not-modified: GET with If-None-Match answe… (#conditional-reads) -- by conditional/if-match-stale'), lines.join('\n'));
    assert.ok(lines.includes('  SKIP     webhooks/accepted: A signed event is accepted (#durable-acceptance) -- no secret'), lines.join('\n'));
  });

  it('should cut a long rule and a long reason with … so that no line passes 120 characters', () => {
    const long = { ...FAILED, rule: LONG, detail: `expected 412, got 200 application/json ${'"x": 1, '.repeat(40)}` };
    const lines = reportText(report([{ ...PASSED, rule: LONG }, long, { ...SKIPPED, rule: LONG, detail: LONG }])).split('\n');
    for (const line of lines) assert.ok(width(line) <= REPORT_WIDTH, `${width(line)}: ${line}`);
    const failed = lines.find((line) => line.startsWith('  FAIL '));
    assert.match(failed ?? '', /^ {2}FAIL {5}conditional\/if-match-stale: a rule long enough( \S+)*… \(#conditional-replace\) -- expected 412, got 200 .*…$/);
    assert.ok(width(failed ?? '') >= REPORT_WIDTH - 2, failed);
  });

  it('should keep every line within 120 characters whatever the reason holds (line breaks, astral characters)', () => {
    const odd = { ...FAILED, detail: `line one\nline two\r\n\ttabbed ${'😀'.repeat(200)}` };
    const text = reportText(report([odd]));
    for (const line of text.split('\n')) assert.ok(width(line) <= REPORT_WIDTH, line);
    assert.doesNotMatch(text, /\t|\r/);
    assert.ok(text.split('\n').some((line) => line.includes('line one line two tabbed 😀')), text);
  });

  it('should say once, at the top, which document the anchors belong to', () => {
    const [title, legend] = reportText(report([PASSED])).split('\n');
    assert.equal(title, 'resapi check http://127.0.0.1:3000');
    assert.match(legend ?? '', /#anchor, a section of CONVENTIONS\.md/);
  });

  it('should print no URL lines without the document URL', () => {
    assert.doesNotMatch(reportText(report([PASSED, FAILED])), /https:/);
  });

  it('should put the rule URL on an indented line of its own under each check line', () => {
    const lines = reportText(report([PASSED, FAILED, SKIPPED].map(withUrl))).split('\n');
    for (const outcome of [PASSED, FAILED, SKIPPED]) {
      const at = lines.findIndex((line) => line.startsWith(`  ${outcome.verdict.padEnd(7)}  ${outcome.id}: `));
      assert.ok(at !== -1, outcome.id);
      assert.ok(lines[at]?.includes(`(#${outcome.anchor})`), lines[at]);
      assert.equal(lines[at + 1], `           ${DOCS}#${outcome.anchor}`);
    }
  });

  it('should sum up: the totals, each failure with the checks it blocked, and a score per section', () => {
    const text = reportText(report([PASSED, FAILED, BLOCKED, SKIPPED]));
    assert.match(text, /\n4 checks: 1 passed, 1 failed, 1 blocked, 1 skipped \(9 requests\)\n/);
    assert.match(text, /\n {2}conditional\/if-match-stale blocks 1 -- expected 412, got 200\n/);
    const alone = reportText(report([{ ...FAILED, id: 'conditional/if-match-list' }]));
    assert.match(alone, /\n {2}conditional\/if-match-list -- expected 412, got 200\n/);
    const table = text.slice(text.indexOf('\nSection '));
    assert.match(table, /\nSection +pass +fail +blocked +skip +score\n/);
    assert.match(table, /\nResources and the collection envelope +1 +0 +0 +0 +100%\n/);
    assert.match(table, /\nConditional requests +0 +1 +1 +0 +0%\n/);
    // Nothing judged: no score, not 0%.
    assert.match(table, /\nThe webhook receiver +0 +0 +0 +1 +-\n/);
  });

  it('should say nothing of a clean-up that left nothing, and list what one left', () => {
    assert.doesNotMatch(reportText(report([PASSED])), /remove/i);
    const left = { ...report([PASSED]), leftBehind: ['http://127.0.0.1:3000/rcheck-1/c1 (DELETE answered 500)'] };
    assert.match(reportText(left), /\nCould not remove what the run stored \(1\):\n {2}http:\/\/127\.0\.0\.1:3000\/rcheck-1\/c1 \(DELETE answered 500\)\n$/);
  });

  it('should add, with exchanges, the whole rule and reason and what was sent and seen, indented and within 120', () => {
    const exchanges: Exchange[] = [
      { method: 'PUT', path: '/rcheck-1/c1', headers: { 'If-Match': '"old"', Authorization: '(not shown)' }, body: '{"id":"c1"}', status: 200, responseHeaders: { etag: '"new"' }, responseBody: `{"id":"c1","padding":"${'x'.repeat(300)}"}` },
      { method: 'GET', path: '/rcheck-1/c1', headers: {}, error: 'connection refused (ECONNREFUSED)' },
    ];
    const lines = reportText(report([{ ...FAILED, rule: LONG, exchanges }])).split('\n');
    for (const line of lines) assert.ok(width(line) <= REPORT_WIDTH, line);
    const at = lines.findIndex((line) => line.startsWith('  FAIL '));
    assert.match(lines[at + 1] ?? '', /^ {11}rule: a rule long enough/);
    const below = lines.slice(at + 1, lines.indexOf('', at));
    assert.ok(below.every((line) => line.startsWith('           ')), below.join('\n'));
    assert.equal(below.join(' ').replace(/ +/g, ' ').includes(`rule: ${LONG} (${FAILED.source})`), true, below.join('\n'));
    assert.ok(below.some((line) => line.trim() === 'why: expected 412, got 200'), below.join('\n'));
    assert.ok(below.some((line) => line.trim() === 'needs: resources/put-create'), below.join('\n'));
    assert.ok(below.some((line) => line.trim() === '> PUT /rcheck-1/c1 | If-Match: "old" | Authorization: (not shown) | {"id":"c1"}'), below.join('\n'));
    // The answer is wrapped, not cut: its lines after the first hang under its first field.
    const answer = below.findIndex((line) => line.startsWith(' '.repeat(11) + '< 200 | '));
    const rest = below.slice(answer + 1, below.findIndex((line, index) => index > answer && !line.startsWith(' '.repeat(13))));
    assert.ok(rest.length > 0, below.join('\n'));
    const joined = [below[answer] ?? '', ...rest].map((line) => line.trim()).join(' ');
    assert.match(joined.replace(/ /g, ''), /^<200\|etag:"new"\|\{"id":"c1","padding":"x{200}/);
    assert.ok(below.some((line) => line.trim() === '< no answer: connection refused (ECONNREFUSED)'), below.join('\n'));
  });
});

describe('reportJson', () => {
  it('should carry every field of each outcome, the citation and the verdict with the rest', () => {
    const parsed = JSON.parse(reportJson(report([PASSED, withUrl(FAILED), BLOCKED]))) as CheckReport;
    assert.deepEqual(parsed.outcomes, [PASSED, withUrl(FAILED), BLOCKED]);
    assert.deepEqual(Object.keys(parsed), ['baseUrl', 'outcomes', 'summary', 'requests', 'leftBehind', 'rootCauses', 'sections']);
  });
});

describe('reportJunit', () => {
  it('should write well-formed XML: a testsuite per section, a testcase per check, failure and skipped told apart', () => {
    const root = parseXml(reportJunit(report([PASSED, FAILED, BLOCKED, SKIPPED])));
    assert.equal(root.name, 'testsuites');
    assert.deepEqual({ ...root.attributes, time: '' }, { name: 'resapi check http://127.0.0.1:3000', tests: '4', failures: '1', errors: '0', skipped: '2', time: '' });
    const suites = elementsNamed(root, 'testsuite');
    assert.deepEqual(suites.map((suite) => [suite.attributes['name'], suite.attributes['tests'], suite.attributes['failures'], suite.attributes['skipped']]), [
      [SECTIONS.resources, '1', '0', '0'],
      [SECTIONS.conditional, '2', '1', '1'],
      [SECTIONS.webhooks, '1', '0', '1'],
    ]);
    const cases = elementsNamed(root, 'testcase');
    assert.deepEqual(cases.map((testcase) => `${testcase.attributes['classname'] ?? ''} ${testcase.attributes['name'] ?? ''}`), [
      'resources resources/envelope',
      'conditional conditional/if-match-stale',
      'conditional conditional/not-modified',
      'webhooks webhooks/accepted',
    ]);
    assert.equal(cases[0]?.children.length, 0);
    const failure = elementsNamed(cases[1] as never, 'failure')[0];
    assert.equal(failure?.attributes['message'], 'expected 412, got 200');
    assert.match(failure?.text ?? '', /rule: A stale If-Match answers 412\nsee: CONVENTIONS\.md#conditional-replace; RFC 9110 §13\.1\.1/);
    assert.equal(elementsNamed(cases[2] as never, 'skipped')[0]?.attributes['message'], 'blocked by conditional/if-match-stale');
    assert.equal(elementsNamed(cases[3] as never, 'skipped')[0]?.attributes['message'], 'no secret');
  });

  it('should escape what a server sent, and replace what XML cannot carry, so the file stays readable', () => {
    const nasty = `<script>&amp; "quoted" 'single' ]]> \u0000\u0008 \ud800 tab\tand\nline`;
    const text = reportJunit(report([{ ...FAILED, detail: nasty }]));
    const failure = elementsNamed(parseXml(text), 'failure')[0];
    assert.equal(failure?.attributes['message'], `<script>&amp; "quoted" 'single' ]]> \ufffd\ufffd \ufffd tab\tand\nline`);
    assert.ok(failure?.text.startsWith(`<script>&amp; "quoted"`), failure?.text);
  });

  it('should refuse, in the test reader, what a JUnit reader would refuse', () => {
    for (const broken of ['<a><b></a></b>', '<a>1 & 2</a>', '<a x=1/>', '<a x="<"/>', '<a/><b/>', '<a>', '<a>&nbsp;</a>', '<a>\u0001</a>']) {
      assert.throws(() => parseXml(broken), Error, broken);
    }
  });
});
