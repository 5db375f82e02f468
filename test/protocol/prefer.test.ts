import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parsePrefer } from '../../lib/protocol/prefer.js';

describe('parsePrefer', () => {
  describe('maxpagesize', () => {
    it('should read both spellings and report the token used', () => {
      assert.deepEqual(parsePrefer(['maxpagesize=10']), { maxPageSize: 10, maxPageSizeToken: 'maxpagesize' });
      assert.deepEqual(parsePrefer(['odata.maxpagesize=25']), { maxPageSize: 25, maxPageSizeToken: 'odata.maxpagesize' });
    });

    it('should read the token case-insensitively and report it lowercased', () => {
      assert.deepEqual(parsePrefer(['OData.MaxPageSize=7']), { maxPageSize: 7, maxPageSizeToken: 'odata.maxpagesize' });
    });

    it('should find it among other preferences, in either position', () => {
      assert.deepEqual(parsePrefer(['odata.maxpagesize=10, return=minimal']), { maxPageSize: 10, maxPageSizeToken: 'odata.maxpagesize' });
      assert.deepEqual(parsePrefer(['return=minimal, respond-async, wait=5, maxpagesize=3']), { maxPageSize: 3, maxPageSizeToken: 'maxpagesize' });
    });

    it('should unquote a quoted value', () => {
      assert.deepEqual(parsePrefer(['maxpagesize="10"']), { maxPageSize: 10, maxPageSizeToken: 'maxpagesize' });
    });

    it('should accept BWS around "=" and OWS around members (RFC 7240 §2)', () => {
      assert.deepEqual(parsePrefer([' \tmaxpagesize \t= \t20 \t, return=minimal']), { maxPageSize: 20, maxPageSizeToken: 'maxpagesize' });
    });

    it('should ignore parameters after ";"', () => {
      assert.deepEqual(parsePrefer(['maxpagesize=10; foo=bar; baz; q="a;b,c"']), { maxPageSize: 10, maxPageSizeToken: 'maxpagesize' });
      assert.deepEqual(parsePrefer(['maxpagesize=10;;']), { maxPageSize: 10, maxPageSizeToken: 'maxpagesize' });
    });

    it('should keep leading zeros out of the number', () => {
      assert.deepEqual(parsePrefer(['maxpagesize=007']), { maxPageSize: 7, maxPageSizeToken: 'maxpagesize' });
    });

    it('should report a huge value as MAX_SAFE_INTEGER so the caller clamps it', () => {
      assert.deepEqual(parsePrefer([`maxpagesize=${'9'.repeat(400)}`]), { maxPageSize: Number.MAX_SAFE_INTEGER, maxPageSizeToken: 'maxpagesize' });
    });

    for (const value of ['0', '000', '-1', '+5', '1.5', '1e3', 'ten', '""', '" 5"', '0x10']) {
      it(`should ignore the value ${value}, which is not a positive integer`, () => {
        assert.deepEqual(parsePrefer([`maxpagesize=${value}`]), {});
      });
    }

    it('should ignore a maxpagesize without a value', () => {
      assert.deepEqual(parsePrefer(['maxpagesize']), {});
      assert.deepEqual(parsePrefer(['maxpagesize; x=1']), {});
    });
  });

  describe('repetition (RFC 7240 §2: only the first instance is considered)', () => {
    it('should let the first of the two spellings win', () => {
      assert.deepEqual(parsePrefer(['maxpagesize=5, odata.maxpagesize=9']), { maxPageSize: 5, maxPageSizeToken: 'maxpagesize' });
      assert.deepEqual(parsePrefer(['odata.maxpagesize=9, maxpagesize=5']), { maxPageSize: 9, maxPageSizeToken: 'odata.maxpagesize' });
    });

    it('should read field lines in order, the first line first', () => {
      assert.deepEqual(parsePrefer(['return=minimal', 'odata.maxpagesize=9', 'maxpagesize=5']), { maxPageSize: 9, maxPageSizeToken: 'odata.maxpagesize' });
    });

    it('should not fall back to a later instance when the first is unusable', () => {
      assert.deepEqual(parsePrefer(['maxpagesize=0, maxpagesize=10']), {});
      assert.deepEqual(parsePrefer(['maxpagesize=abc', 'odata.maxpagesize=10']), {});
    });
  });

  describe('everything else', () => {
    it('should answer no preferences for an absent header or no lines', () => {
      assert.deepEqual(parsePrefer(undefined), {});
      assert.deepEqual(parsePrefer([]), {});
      assert.deepEqual(parsePrefer(['']), {});
    });

    it('should ignore unknown preferences', () => {
      assert.deepEqual(parsePrefer(['return=representation, handling=strict, odata.track-changes']), {});
    });

    it('should not take a name that merely contains the token', () => {
      assert.deepEqual(parsePrefer(['x-maxpagesize=5, maxpagesizes=6, odata.maxpagesize.x=7']), {});
    });

    it('should not read the token inside a quoted value of another preference', () => {
      assert.deepEqual(parsePrefer(['foo="a, maxpagesize=5", maxpagesize=8']), { maxPageSize: 8, maxPageSizeToken: 'maxpagesize' });
    });

    it('should skip a malformed member and read the next one', () => {
      assert.deepEqual(parsePrefer(['=5, maxpagesize=6']), { maxPageSize: 6, maxPageSizeToken: 'maxpagesize' });
      assert.deepEqual(parsePrefer(['a=, maxpagesize=6']), { maxPageSize: 6, maxPageSizeToken: 'maxpagesize' });
      assert.deepEqual(parsePrefer(['maxpagesize=5 junk, odata.maxpagesize=6']), { maxPageSize: 6, maxPageSizeToken: 'odata.maxpagesize' });
      assert.deepEqual(parsePrefer(['return="open, maxpagesize=6', 'maxpagesize=7']), { maxPageSize: 7, maxPageSizeToken: 'maxpagesize' });
    });

    it('should never throw on hostile input', () => {
      for (const line of ['"', ';;;', ',,,', '=', '\u0000', 'a=";', 'a;b='.repeat(1000)]) {
        assert.doesNotThrow(() => parsePrefer([line]));
      }
    });

    it('should throw a TypeError for lines that are not an array of strings', () => {
      assert.throws(() => parsePrefer('maxpagesize=5' as unknown as string[]), { name: 'TypeError', message: /lines must be an array/ });
      assert.throws(() => parsePrefer([5] as unknown as string[]), { name: 'TypeError', message: /must be a string/ });
    });
  });
});
