// Tests for lib/check/report.ts: the lines of `resapi check` cite each rule's section of
// CONVENTIONS.md by anchor, and with the document's URL put the rule's address on an indented line of
// its own; `--json` is the report as it is, with the citation beside the fields it always had.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { reportJson, reportText } from '../../lib/check/report.js';
import type { CheckOutcome, CheckReport } from '../../lib/check/run.js';

const DOCS = 'https://example.org/resapi/CONVENTIONS.md';

function report(outcomes: CheckOutcome[]): CheckReport {
  const count = (result: string): number => outcomes.filter((outcome) => outcome.result === result).length;
  return { baseUrl: 'http://127.0.0.1:3000', outcomes, summary: { pass: count('pass'), fail: count('fail'), skip: count('skip') }, requests: 9, leftBehind: [] };
}

const PASSED: CheckOutcome = {
  id: 'resources/envelope',
  section: 'resources',
  rule: 'A collection is an object with a "value" array',
  source: 'CONVENTIONS.md#collection-envelope',
  anchor: 'collection-envelope',
  result: 'pass',
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
};

const SKIPPED: CheckOutcome = {
  id: 'webhooks/accepted',
  section: 'webhooks',
  rule: 'A signed event is accepted',
  source: 'CONVENTIONS.md#durable-acceptance',
  anchor: 'durable-acceptance',
  result: 'skip',
  detail: 'no secret',
};

function withUrl(outcome: CheckOutcome): CheckOutcome {
  return { ...outcome, ruleUrl: `${DOCS}#${outcome.anchor}` };
}

describe('reportText', () => {
  it('should end each check line with the anchor of its rule, before what was seen', () => {
    const lines = reportText(report([PASSED, FAILED, SKIPPED])).split('\n');
    assert.ok(lines.includes('  PASS  resources/envelope: A collection is an object with a "value" array (#collection-envelope)'), lines.join('\n'));
    assert.ok(lines.includes('  FAIL  conditional/if-match-stale: A stale If-Match answers 412 (#conditional-replace) -- seen: expected 412, got 200'), lines.join('\n'));
    assert.ok(lines.includes('  SKIP  webhooks/accepted: A signed event is accepted (#durable-acceptance) -- no secret'), lines.join('\n'));
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
      const at = lines.findIndex((line) => line.startsWith(`  ${outcome.result.toUpperCase()}  ${outcome.id}: `));
      assert.ok(at !== -1, outcome.id);
      assert.ok(lines[at]?.includes(`(#${outcome.anchor})`), lines[at]);
      assert.equal(lines[at + 1], `        ${DOCS}#${outcome.anchor}`);
    }
    assert.match(lines.at(-2) ?? '', /^3 checks: 1 passed, 1 failed, 1 skipped \(9 requests\)$/);
  });
});

describe('reportJson', () => {
  it('should carry every field of each outcome, the citation with the rest', () => {
    const parsed = JSON.parse(reportJson(report([PASSED, withUrl(FAILED)]))) as CheckReport;
    assert.deepEqual(parsed.outcomes, [PASSED, withUrl(FAILED)]);
    assert.deepEqual(Object.keys(parsed), ['baseUrl', 'outcomes', 'summary', 'requests', 'leftBehind']);
  });
});
