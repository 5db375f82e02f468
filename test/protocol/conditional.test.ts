// Tests for lib/http/conditional.ts: RFC 9110 §13.1 preconditions, evaluated in §13.2.2 order.
// Each rule is tested from both sides: the case it decides, and the neighbouring case it must not.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { evaluatePreconditions, hasEntityTagPrecondition } from '../../lib/protocol/conditional.js';
import type { PreconditionFields, PreconditionVerdict, Validators } from '../../lib/protocol/conditional.js';

const ETAG = '"v1"';
/** Half a second past the minute, so a comparison that forgets HTTP's one-second resolution shows. */
const LAST_MODIFIED = Date.UTC(2024, 0, 15, 12, 0, 0, 500);
const NOW = Date.UTC(2024, 5, 1);
const CURRENT: Validators = { etag: ETAG, lastModified: LAST_MODIFIED };

/** The Last-Modified the server sent for CURRENT, and one second either side of it. */
const AT = 'Mon, 15 Jan 2024 12:00:00 GMT';
const BEFORE = 'Mon, 15 Jan 2024 11:59:59 GMT';
const AFTER = 'Mon, 15 Jan 2024 12:00:01 GMT';

const PROCEED: PreconditionVerdict = { kind: 'proceed' };
const NOT_MODIFIED: PreconditionVerdict = { kind: 'not-modified' };
const failed = (field: 'If-Match' | 'If-Unmodified-Since' | 'If-None-Match'): PreconditionVerdict => ({
  kind: 'failed',
  field,
});

/** Evaluates with the clock fixed at NOW. */
function check(method: string, fields: PreconditionFields, current: Validators | undefined): PreconditionVerdict {
  return evaluatePreconditions(method, fields, current, { now: NOW });
}

describe('evaluatePreconditions', () => {
  describe('without preconditions', () => {
    it('should proceed for a read of an existing resource and a write of an absent one', () => {
      assert.deepEqual(check('GET', {}, CURRENT), PROCEED);
      assert.deepEqual(check('PUT', {}, undefined), PROCEED);
    });

    it('should treat a field with no field lines as absent', () => {
      const empty: PreconditionFields = { ifMatch: [], ifNoneMatch: [], ifModifiedSince: [], ifUnmodifiedSince: [] };
      assert.deepEqual(check('PUT', empty, CURRENT), PROCEED);
      assert.deepEqual(check('GET', empty, CURRENT), PROCEED);
    });
  });

  describe('If-Match (RFC 9110 §13.1.1)', () => {
    it('should proceed when the tag matches the current one', () => {
      assert.deepEqual(check('PUT', { ifMatch: ['"v1"'] }, CURRENT), PROCEED);
    });

    it('should fail when the tag differs', () => {
      assert.deepEqual(check('PUT', { ifMatch: ['"v2"'] }, CURRENT), failed('If-Match'));
    });

    it('should proceed when any member of a list matches, and fail when none does', () => {
      assert.deepEqual(check('PUT', { ifMatch: ['"a", "v1", "b"'] }, CURRENT), PROCEED);
      assert.deepEqual(check('PUT', { ifMatch: ['"a", "b"'] }, CURRENT), failed('If-Match'));
    });

    it('should use the strong comparison, so a weak tag never matches', () => {
      assert.deepEqual(check('PUT', { ifMatch: ['W/"v1"'] }, CURRENT), failed('If-Match'));
      const weakCurrent: Validators = { etag: 'W/"v1"' };
      assert.deepEqual(check('PUT', { ifMatch: ['W/"v1"'] }, weakCurrent), failed('If-Match'));
      assert.deepEqual(check('PUT', { ifMatch: ['"v1"'] }, weakCurrent), failed('If-Match'));
    });

    it('should combine several field lines into one list', () => {
      assert.deepEqual(check('PUT', { ifMatch: ['"a"', '"v1"'] }, CURRENT), PROCEED);
      assert.deepEqual(check('PUT', { ifMatch: ['"a"', '"b"'] }, CURRENT), failed('If-Match'));
    });

    it('should ignore empty list elements and odd whitespace', () => {
      assert.deepEqual(check('PUT', { ifMatch: [', , "a"', ' ,\t"v1" , '] }, CURRENT), PROCEED);
    });

    it('should make "*" true when the resource exists and false when it does not', () => {
      assert.deepEqual(check('PUT', { ifMatch: ['*'] }, CURRENT), PROCEED);
      assert.deepEqual(check('PUT', { ifMatch: ['*'] }, undefined), failed('If-Match'));
    });

    it('should fail a tag when the resource does not exist', () => {
      assert.deepEqual(check('DELETE', { ifMatch: ['"v1"'] }, undefined), failed('If-Match'));
    });

    it('should apply to reads too', () => {
      assert.deepEqual(check('GET', { ifMatch: ['"v2"'] }, CURRENT), failed('If-Match'));
      assert.deepEqual(check('GET', { ifMatch: ['"v1"'] }, CURRENT), PROCEED);
    });
  });

  describe('If-Unmodified-Since (RFC 9110 §13.1.4)', () => {
    it('should proceed when the resource was not modified after the date', () => {
      assert.deepEqual(check('PUT', { ifUnmodifiedSince: [AFTER] }, CURRENT), PROCEED);
    });

    it('should fail when the resource was modified after the date', () => {
      assert.deepEqual(check('PUT', { ifUnmodifiedSince: [BEFORE] }, CURRENT), failed('If-Unmodified-Since'));
    });

    it('should compare in whole seconds, so the Last-Modified the server sent passes', () => {
      assert.deepEqual(check('PUT', { ifUnmodifiedSince: [AT] }, CURRENT), PROCEED);
    });

    it('should be ignored when If-Match is present', () => {
      assert.deepEqual(check('PUT', { ifMatch: ['"v1"'], ifUnmodifiedSince: [BEFORE] }, CURRENT), PROCEED);
    });

    it('should be ignored when the value is not a valid HTTP-date', () => {
      assert.deepEqual(check('PUT', { ifUnmodifiedSince: ['yesterday'] }, CURRENT), PROCEED);
      assert.deepEqual(check('PUT', { ifUnmodifiedSince: ['Mon, 15 Jan 2024 11:59:59'] }, CURRENT), PROCEED);
    });

    it('should be ignored when sent as two field lines', () => {
      assert.deepEqual(check('PUT', { ifUnmodifiedSince: [BEFORE, BEFORE] }, CURRENT), PROCEED);
    });

    it('should be ignored when the value is a list of dates', () => {
      assert.deepEqual(check('PUT', { ifUnmodifiedSince: [`${BEFORE}, ${BEFORE}`] }, CURRENT), PROCEED);
    });

    it('should be ignored when the resource has no modification date', () => {
      assert.deepEqual(check('PUT', { ifUnmodifiedSince: [BEFORE] }, { etag: ETAG }), PROCEED);
    });

    it('should be ignored when the resource does not exist (unlike If-Match)', () => {
      assert.deepEqual(check('PUT', { ifUnmodifiedSince: [BEFORE] }, undefined), PROCEED);
    });

    it('should accept the obsolete RFC 850 and asctime formats', () => {
      assert.deepEqual(
        check('PUT', { ifUnmodifiedSince: ['Monday, 15-Jan-24 11:59:59 GMT'] }, CURRENT),
        failed('If-Unmodified-Since'),
      );
      assert.deepEqual(check('PUT', { ifUnmodifiedSince: ['Mon Jan 15 11:59:59 2024'] }, CURRENT), failed('If-Unmodified-Since'));
    });

    it('should apply to every method', () => {
      assert.deepEqual(check('GET', { ifUnmodifiedSince: [BEFORE] }, CURRENT), failed('If-Unmodified-Since'));
      assert.deepEqual(check('DELETE', { ifUnmodifiedSince: [BEFORE] }, CURRENT), failed('If-Unmodified-Since'));
    });
  });

  describe('If-None-Match (RFC 9110 §13.1.2)', () => {
    it('should answer not-modified to GET and HEAD when a tag matches', () => {
      assert.deepEqual(check('GET', { ifNoneMatch: ['"v1"'] }, CURRENT), NOT_MODIFIED);
      assert.deepEqual(check('HEAD', { ifNoneMatch: ['"v1"'] }, CURRENT), NOT_MODIFIED);
    });

    it('should fail other methods when a tag matches', () => {
      assert.deepEqual(check('PUT', { ifNoneMatch: ['"v1"'] }, CURRENT), failed('If-None-Match'));
      assert.deepEqual(check('DELETE', { ifNoneMatch: ['"v1"'] }, CURRENT), failed('If-None-Match'));
      assert.deepEqual(check('POST', { ifNoneMatch: ['"v1"'] }, CURRENT), failed('If-None-Match'));
    });

    it('should proceed when no tag matches', () => {
      assert.deepEqual(check('GET', { ifNoneMatch: ['"v2"'] }, CURRENT), PROCEED);
      assert.deepEqual(check('PUT', { ifNoneMatch: ['"v2"'] }, CURRENT), PROCEED);
    });

    it('should use the weak comparison, so W/ on either side still matches', () => {
      assert.deepEqual(check('GET', { ifNoneMatch: ['W/"v1"'] }, CURRENT), NOT_MODIFIED);
      assert.deepEqual(check('GET', { ifNoneMatch: ['"v1"'] }, { etag: 'W/"v1"' }), NOT_MODIFIED);
      assert.deepEqual(check('PUT', { ifNoneMatch: ['W/"v1"'] }, CURRENT), failed('If-None-Match'));
    });

    it('should match when any member of a list matches', () => {
      assert.deepEqual(check('GET', { ifNoneMatch: ['"a", W/"v1"'] }, CURRENT), NOT_MODIFIED);
    });

    it('should combine several field lines into one list', () => {
      assert.deepEqual(check('GET', { ifNoneMatch: ['"a"', '"v1"'] }, CURRENT), NOT_MODIFIED);
      assert.deepEqual(check('GET', { ifNoneMatch: ['"a"', '"b"'] }, CURRENT), PROCEED);
    });

    it('should ignore empty list elements and odd whitespace', () => {
      assert.deepEqual(check('GET', { ifNoneMatch: [', , "v1"'] }, CURRENT), NOT_MODIFIED);
      assert.deepEqual(check('GET', { ifNoneMatch: ['\t"a" ,, W/"v1"\t'] }, CURRENT), NOT_MODIFIED);
    });

    it('should make "*" match an existing resource', () => {
      assert.deepEqual(check('GET', { ifNoneMatch: ['*'] }, CURRENT), NOT_MODIFIED);
      assert.deepEqual(check('PUT', { ifNoneMatch: ['*'] }, CURRENT), failed('If-None-Match'));
    });

    it('should let "*" and tags proceed when the resource does not exist (create-only PUT)', () => {
      assert.deepEqual(check('PUT', { ifNoneMatch: ['*'] }, undefined), PROCEED);
      assert.deepEqual(check('PUT', { ifNoneMatch: ['"v1"'] }, undefined), PROCEED);
    });

    it('should treat method names case-sensitively, so "get" is not a read', () => {
      assert.deepEqual(check('get', { ifNoneMatch: ['"v1"'] }, CURRENT), failed('If-None-Match'));
      assert.deepEqual(check('Head', { ifNoneMatch: ['"v1"'] }, CURRENT), failed('If-None-Match'));
    });
  });

  describe('If-Modified-Since (RFC 9110 §13.1.3)', () => {
    it('should answer not-modified when the resource was not modified after the date', () => {
      assert.deepEqual(check('GET', { ifModifiedSince: [AFTER] }, CURRENT), NOT_MODIFIED);
      assert.deepEqual(check('HEAD', { ifModifiedSince: [AFTER] }, CURRENT), NOT_MODIFIED);
    });

    it('should proceed when the resource was modified after the date', () => {
      assert.deepEqual(check('GET', { ifModifiedSince: [BEFORE] }, CURRENT), PROCEED);
    });

    it('should compare in whole seconds, so the Last-Modified the server sent is not modified', () => {
      assert.deepEqual(check('GET', { ifModifiedSince: [AT] }, CURRENT), NOT_MODIFIED);
    });

    it('should be ignored for methods other than GET and HEAD', () => {
      assert.deepEqual(check('PUT', { ifModifiedSince: [AT] }, CURRENT), PROCEED);
      assert.deepEqual(check('DELETE', { ifModifiedSince: [AT] }, CURRENT), PROCEED);
      assert.deepEqual(check('get', { ifModifiedSince: [AT] }, CURRENT), PROCEED);
    });

    it('should be ignored when If-None-Match is present', () => {
      assert.deepEqual(check('GET', { ifNoneMatch: ['"v2"'], ifModifiedSince: [AT] }, CURRENT), PROCEED);
    });

    it('should be ignored when the value is not a valid HTTP-date', () => {
      assert.deepEqual(check('GET', { ifModifiedSince: ['not a date'] }, CURRENT), PROCEED);
      assert.deepEqual(check('GET', { ifModifiedSince: ['Tue, 15 Jan 2024 12:00:00 GMT'] }, CURRENT), PROCEED);
    });

    it('should be ignored when sent as two field lines', () => {
      assert.deepEqual(check('GET', { ifModifiedSince: [AT, AT] }, CURRENT), PROCEED);
    });

    it('should be ignored when the value is a list of dates', () => {
      assert.deepEqual(check('GET', { ifModifiedSince: [`${AT}, ${AT}`] }, CURRENT), PROCEED);
    });

    it('should be ignored when the resource has no modification date', () => {
      assert.deepEqual(check('GET', { ifModifiedSince: [AT] }, { etag: ETAG }), PROCEED);
    });

    it('should be ignored when the resource does not exist', () => {
      assert.deepEqual(check('GET', { ifModifiedSince: [AT] }, undefined), PROCEED);
    });

    it("should be ignored when the date is later than the server's clock, and honoured once it is not", () => {
      const oneSecondAfterNow = 'Sat, 01 Jun 2024 00:00:01 GMT';
      assert.deepEqual(check('GET', { ifModifiedSince: [oneSecondAfterNow] }, CURRENT), PROCEED);
      const later = evaluatePreconditions('GET', { ifModifiedSince: [oneSecondAfterNow] }, CURRENT, { now: NOW + 1000 });
      assert.deepEqual(later, NOT_MODIFIED);
    });

    it('should honour a date equal to the server clock', () => {
      assert.deepEqual(check('GET', { ifModifiedSince: ['Sat, 01 Jun 2024 00:00:00 GMT'] }, CURRENT), NOT_MODIFIED);
    });

    it('should use Date.now() when no clock is given', () => {
      const farFuture = 'Fri, 31 Dec 9999 23:59:59 GMT';
      assert.deepEqual(evaluatePreconditions('GET', { ifModifiedSince: [farFuture] }, CURRENT), PROCEED);
      const atThatTime = { now: Date.UTC(9999, 11, 31, 23, 59, 59) };
      assert.deepEqual(evaluatePreconditions('GET', { ifModifiedSince: [farFuture] }, CURRENT, atThatTime), NOT_MODIFIED);
    });

    it('should accept the obsolete RFC 850 and asctime formats', () => {
      assert.deepEqual(check('GET', { ifModifiedSince: ['Monday, 15-Jan-24 12:00:00 GMT'] }, CURRENT), NOT_MODIFIED);
      assert.deepEqual(check('GET', { ifModifiedSince: ['Mon Jan 15 12:00:00 2024'] }, CURRENT), NOT_MODIFIED);
    });
  });

  describe('evaluation order (RFC 9110 §13.2.2)', () => {
    it('should report a failed If-Match before a matching If-None-Match', () => {
      assert.deepEqual(check('GET', { ifMatch: ['"v2"'], ifNoneMatch: ['"v1"'] }, CURRENT), failed('If-Match'));
    });

    it('should go on to If-None-Match after a passing If-Match', () => {
      assert.deepEqual(check('GET', { ifMatch: ['"v1"'], ifNoneMatch: ['"v1"'] }, CURRENT), NOT_MODIFIED);
      assert.deepEqual(check('PUT', { ifMatch: ['"v1"'], ifNoneMatch: ['"v1"'] }, CURRENT), failed('If-None-Match'));
    });

    it('should go on to If-Modified-Since after a passing If-Match', () => {
      assert.deepEqual(check('GET', { ifMatch: ['"v1"'], ifModifiedSince: [AT] }, CURRENT), NOT_MODIFIED);
    });

    it('should report a failed If-Unmodified-Since before a matching If-None-Match', () => {
      const fields: PreconditionFields = { ifUnmodifiedSince: [BEFORE], ifNoneMatch: ['*'] };
      assert.deepEqual(check('PUT', fields, CURRENT), failed('If-Unmodified-Since'));
    });

    it('should report a failed If-Unmodified-Since before an If-Modified-Since that would give 304', () => {
      const fields: PreconditionFields = { ifUnmodifiedSince: [BEFORE], ifModifiedSince: [AT] };
      assert.deepEqual(check('GET', fields, CURRENT), failed('If-Unmodified-Since'));
    });

    it('should go on to If-None-Match after a passing If-Unmodified-Since', () => {
      const fields: PreconditionFields = { ifUnmodifiedSince: [AFTER], ifNoneMatch: ['*'] };
      assert.deepEqual(check('PUT', fields, CURRENT), failed('If-None-Match'));
    });

    it('should fail one of If-Match: * and If-None-Match: * whether or not the resource exists', () => {
      const fields: PreconditionFields = { ifMatch: ['*'], ifNoneMatch: ['*'] };
      assert.deepEqual(check('PUT', fields, CURRENT), failed('If-None-Match'));
      assert.deepEqual(check('PUT', fields, undefined), failed('If-Match'));
    });
  });

  describe('malformed entity-tag fields', () => {
    const malformedValues: readonly [string, readonly string[]][] = [
      ['an unquoted tag', ['v1']],
      ['an unquoted weak tag', ['W/v1']],
      ['a lowercase weak prefix', ['w/"v1"']],
      ['"*" mixed with a tag', ['*, "v1"']],
      ['"*" and a tag on separate field lines', ['*', '"v1"']],
      ['an unterminated tag', ['"v1']],
      ['two tags without a comma', ['"a" "v1"']],
    ];
    for (const [what, lines] of malformedValues) {
      it(`should answer malformed to If-Match with ${what}`, () => {
        const verdict = check('PUT', { ifMatch: lines }, CURRENT);
        assert.equal(verdict.kind, 'malformed');
        assert.equal(verdict.kind === 'malformed' && verdict.field, 'If-Match');
      });

      it(`should answer malformed to If-None-Match with ${what}`, () => {
        const verdict = check('GET', { ifNoneMatch: lines }, CURRENT);
        assert.equal(verdict.kind, 'malformed');
        assert.equal(verdict.kind === 'malformed' && verdict.field, 'If-None-Match');
      });
    }

    it('should read an empty list (If-None-Match: ,) as no match: a read proceeds, If-Match fails', () => {
      for (const lines of [[','], [''], [' , ,']]) {
        assert.deepEqual(check('GET', { ifNoneMatch: lines }, CURRENT), { kind: 'proceed' }, JSON.stringify(lines));
        assert.deepEqual(check('DELETE', { ifMatch: lines }, CURRENT), failed('If-Match'), JSON.stringify(lines));
      }
    });

    it('should not take an empty list for the condition a PUT must carry (RFC 6585 §3)', () => {
      assert.equal(hasEntityTagPrecondition({ ifNoneMatch: [','] }), false);
      assert.equal(hasEntityTagPrecondition({ ifMatch: [''], ifNoneMatch: [' , '] }), false);
      assert.equal(hasEntityTagPrecondition({ ifNoneMatch: ['*'] }), true);
      assert.equal(hasEntityTagPrecondition({ ifMatch: ['v1'] }), true, 'a malformed field is answered 400, not 428');
    });

    it('should name the field and the expected syntax in the detail', () => {
      assert.deepEqual(check('PUT', { ifMatch: ['v1'] }, CURRENT), {
        kind: 'malformed',
        field: 'If-Match',
        detail: 'If-Match must be "*" or a comma-separated list of entity-tags such as "abc" or W/"abc".',
      });
    });

    it('should answer malformed whether or not the resource exists', () => {
      assert.equal(check('PUT', { ifNoneMatch: ['v1'] }, undefined).kind, 'malformed');
      assert.equal(check('PUT', { ifMatch: ['v1'] }, undefined).kind, 'malformed');
    });

    it('should check the syntax of both fields before evaluating either', () => {
      const verdict = check('PUT', { ifMatch: ['"v2"'], ifNoneMatch: ['v1'] }, CURRENT);
      assert.equal(verdict.kind === 'malformed' && verdict.field, 'If-None-Match');
    });

    it('should report If-Match first when both fields are malformed', () => {
      const verdict = check('PUT', { ifMatch: ['v1'], ifNoneMatch: ['v1'] }, CURRENT);
      assert.equal(verdict.kind === 'malformed' && verdict.field, 'If-Match');
    });
  });

  describe('programmer errors', () => {
    it('should throw a TypeError for a method that is not a string', () => {
      assert.throws(() => evaluatePreconditions(undefined as unknown as string, {}, CURRENT), {
        name: 'TypeError',
        message: /method/,
      });
    });

    it('should throw a TypeError for a current ETag that is not an entity-tag', () => {
      assert.throws(() => check('GET', {}, { etag: 'v1' }), { name: 'TypeError', message: /current\.etag/ });
    });

    it('should throw a TypeError for a lastModified that is not a finite number', () => {
      assert.throws(() => check('GET', {}, { etag: ETAG, lastModified: Number.NaN }), {
        name: 'TypeError',
        message: /current\.lastModified/,
      });
    });

    it('should throw a TypeError for a clock that is not a finite number', () => {
      assert.throws(() => evaluatePreconditions('GET', {}, CURRENT, { now: Number.NaN }), {
        name: 'TypeError',
        message: /options\.now/,
      });
    });
  });
});

describe('hasEntityTagPrecondition', () => {
  it('should be false without any precondition', () => {
    assert.equal(hasEntityTagPrecondition({}), false);
  });

  it('should be false with only date preconditions', () => {
    assert.equal(hasEntityTagPrecondition({ ifModifiedSince: [AT], ifUnmodifiedSince: [AT] }), false);
  });

  it('should be false when the entity-tag fields have no field lines', () => {
    assert.equal(hasEntityTagPrecondition({ ifMatch: [], ifNoneMatch: [] }), false);
  });

  it('should be true with If-Match', () => {
    assert.equal(hasEntityTagPrecondition({ ifMatch: ['"v1"'] }), true);
  });

  it('should be true with If-None-Match', () => {
    assert.equal(hasEntityTagPrecondition({ ifNoneMatch: ['*'] }), true);
  });

  it('should be true even when the value is malformed, which evaluatePreconditions reports', () => {
    assert.equal(hasEntityTagPrecondition({ ifMatch: ['v1'] }), true);
  });
});
