// Tests for lib/http/problem.ts: RFC 9457 problem details, which never leak internal
// error details to callers (CONVENTIONS.md#problem-details).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PROBLEM_TYPES, PROBLEM_TYPE_PREFIX, problem, problemBody } from '../../lib/protocol/problem.js';
import type { ProblemType } from '../../lib/protocol/problem.js';

const TYPES = Object.keys(PROBLEM_TYPES) as ProblemType[];
const SERVER_ERRORS = TYPES.filter((type) => PROBLEM_TYPES[type].status >= 500);
const INTERNAL = 'ENOENT: open /srv/resapi/data/store/journal.log at Journal.append (lib/store/fs.ts:42:7)';

describe('PROBLEM_TYPES', () => {
  it('should map every type to an error status and a title', () => {
    for (const type of TYPES) {
      const { status, title } = PROBLEM_TYPES[type];
      assert.ok(Number.isInteger(status) && status >= 400 && status <= 599, type);
      assert.ok(title.length > 0, type);
    }
  });

  it('should hold every error status the conventions use (CONVENTIONS.md#problem-details)', () => {
    const statuses = new Set<number>(TYPES.map((type) => PROBLEM_TYPES[type].status));
    for (const status of [400, 401, 404, 405, 406, 409, 412, 413, 415, 422, 428, 500, 503]) {
      assert.ok(statuses.has(status), String(status));
    }
  });

  it('should have at least one server error, so the leak tests below test something', () => {
    assert.ok(SERVER_ERRORS.length >= 2);
  });
});

describe('problem', () => {
  it('should take status and title from the table and keep a client error detail', () => {
    const p = problem('precondition-failed', 'The If-Match precondition is not met.');
    assert.equal(p.type, 'precondition-failed');
    assert.equal(p.status, 412);
    assert.equal(p.title, 'Precondition Failed');
    assert.equal(p.detail, 'The If-Match precondition is not met.');
  });

  it('should never carry the given detail on a 5xx problem', () => {
    for (const type of SERVER_ERRORS) {
      const p = problem(type, INTERNAL);
      assert.equal(p.status, PROBLEM_TYPES[type].status);
      assert.ok(p.detail.length > 0, type);
      assert.ok(!p.detail.includes('ENOENT') && !p.detail.includes('/srv/'), type);
    }
  });

  it('should give a 503 a detail that asks for a retry, and a 500 one that names X-Request-Id', () => {
    assert.match(problem('unavailable', INTERNAL).detail, /Retry-After/);
    assert.match(problem('internal', INTERNAL).detail, /X-Request-Id/);
  });

  it('should keep the errors and headers extras', () => {
    const p = problem('method-not-allowed', 'Use GET.', { headers: { Allow: 'GET, HEAD' }, errors: [{ parameter: '$top', detail: 'x' }] });
    assert.deepEqual(p.headers, { Allow: 'GET, HEAD' });
    assert.deepEqual(p.errors, [{ parameter: '$top', detail: 'x' }]);
  });

  it('should not add errors or headers keys when none are given', () => {
    const p = problem('not-found', 'No such item.');
    assert.equal(Object.hasOwn(p, 'errors'), false);
    assert.equal(Object.hasOwn(p, 'headers'), false);
  });
});

describe('problemBody', () => {
  it('should write the four RFC 9457 members with the type as a tag URI', () => {
    const body: unknown = JSON.parse(problemBody(problem('not-found', 'No item /products/1.')));
    assert.deepEqual(body, {
      type: `${PROBLEM_TYPE_PREFIX}not-found`,
      title: 'Not Found',
      status: 404,
      detail: 'No item /products/1.',
    });
  });

  it('should make a type that is an absolute URI (RFC 9457 §3.1.1)', () => {
    for (const type of TYPES) {
      const uri = new URL(PROBLEM_TYPE_PREFIX + type);
      assert.equal(uri.protocol, 'tag:');
      assert.equal(uri.href, PROBLEM_TYPE_PREFIX + type);
    }
  });

  it('should write errors when there are some, and leave the member out when the list is empty', () => {
    const errors = [{ pointer: '/price', detail: 'must be number' }];
    const withErrors: unknown = JSON.parse(problemBody(problem('invalid-body', 'Bad body.', { errors })));
    assert.deepEqual((withErrors as { errors: unknown }).errors, errors);
    const empty: unknown = JSON.parse(problemBody(problem('invalid-body', 'Bad body.', { errors: [] })));
    assert.equal(Object.hasOwn(empty as object, 'errors'), false);
  });

  it('should never write response header fields into the body', () => {
    const text = problemBody(problem('unauthorized', 'Send a key.', { headers: { 'WWW-Authenticate': 'Bearer' } }));
    assert.doesNotMatch(text, /WWW-Authenticate/);
  });

  it('should never let internal text of a 5xx reach the body, in detail or in errors', () => {
    for (const type of SERVER_ERRORS) {
      const text = problemBody(problem(type, INTERNAL, { errors: [{ detail: INTERNAL }] }));
      assert.ok(!text.includes('ENOENT') && !text.includes('/srv/') && !text.includes('fs.ts'), `${type}: ${text}`);
    }
  });

  it('should escape a detail so the body stays valid JSON', () => {
    const detail = 'quote " backslash \\ newline \n end';
    const body = JSON.parse(problemBody(problem('bad-request', detail))) as { detail: string };
    assert.equal(body.detail, detail);
  });
});
