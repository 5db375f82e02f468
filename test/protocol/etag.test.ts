// Tests for lib/http/etag.ts: RFC 9110 §8.8.3 entity-tags, §13.1.1-2 lists, §5.6.1 empty elements.
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseEntityTag, parseEntityTagList, strongCompare, strongEtag, weakCompare } from '../../lib/protocol/etag.js';
import type { EntityTag } from '../../lib/protocol/etag.js';

const strong = (opaque: string): EntityTag => ({ weak: false, opaque });
const weak = (opaque: string): EntityTag => ({ weak: true, opaque });

describe('strongEtag', () => {
  it('should be a quoted 22-character base64url string', () => {
    assert.match(strongEtag('{"id":"1"}'), /^"[A-Za-z0-9_-]{22}"$/);
  });

  it('should be the first 128 bits of SHA-256, base64url-encoded (vectors computed outside Node)', () => {
    assert.equal(strongEtag(''), '"47DEQpj8HBSa-_TImW-5JA"');
    assert.equal(strongEtag('abc'), '"ungWv48Bz-pBQUDeXa4iIw"');
  });

  it('should keep only the 16th byte\'s 2 bits in its last character, whatever the 17th byte holds', () => {
    // The tag is cut from the whole digest's base64url, whose 22nd character also carries 4 bits of
    // the 17th byte: every value of those bits must come out as the 16 bytes alone encode.
    const lastChars = new Set<string>();
    for (let index = 0; index < 2000; index++) {
      const text = `{"n":${index}}`;
      const expected = createHash('sha256').update(text).digest().subarray(0, 16).toString('base64url');
      const tag = strongEtag(text);
      assert.equal(tag, `"${expected}"`);
      lastChars.add(tag.charAt(22));
    }
    assert.deepEqual([...lastChars].sort(), ['A', 'Q', 'g', 'w']);
  });

  it('should hash a string as UTF-8, so it equals the same bytes given as a Uint8Array', () => {
    assert.equal(strongEtag('é'), '"SplVfkAzw1Od4utlRyAXyg"');
    assert.equal(strongEtag(new Uint8Array([0xc3, 0xa9])), strongEtag('é'));
  });

  it('should change when a single byte changes', () => {
    assert.notEqual(strongEtag('{"price":10}'), strongEtag('{"price":11}'));
  });

  it('should produce a tag that parseEntityTag reads back as strong', () => {
    const tag = strongEtag('x');
    assert.deepEqual(parseEntityTag(tag), { weak: false, opaque: tag });
  });

  it('should throw a TypeError for anything but bytes or a string', () => {
    assert.throws(() => strongEtag(42 as unknown as string), { name: 'TypeError', message: /strongEtag/ });
  });
});

describe('parseEntityTag', () => {
  it('should read a strong tag, keeping its quotes', () => {
    assert.deepEqual(parseEntityTag('"abc"'), strong('"abc"'));
  });

  it('should read a weak tag', () => {
    assert.deepEqual(parseEntityTag('W/"abc"'), weak('"abc"'));
  });

  it('should read the empty opaque-tag', () => {
    assert.deepEqual(parseEntityTag('""'), strong('""'));
  });

  it('should accept every etagc class: %x21, %x23-7E and obs-text', () => {
    assert.deepEqual(parseEntityTag('"!#~\u0080\u00ff"'), strong('"!#~\u0080\u00ff"'));
  });

  it('should allow surrounding OWS', () => {
    assert.deepEqual(parseEntityTag(' \t"abc"\t '), strong('"abc"'));
  });

  const rejected: readonly [string, string][] = [
    ['an unquoted tag', 'abc'],
    ['an empty value', ''],
    ['a lowercase weak prefix', 'w/"abc"'],
    ['a space after W/', 'W/ "abc"'],
    ['W/ alone', 'W/'],
    ['a missing closing quote', '"abc'],
    ['a space inside the tag', '"a b"'],
    ['a DEL inside the tag', '"a\u007fb"'],
    ['a control character inside the tag', '"a\u0001b"'],
    ['a character above obs-text', '"a\u0100b"'],
    ['text after the tag', '"abc"x'],
    ['two tags', '"a", "b"'],
    ['"*"', '*'],
  ];
  for (const [what, value] of rejected) {
    it(`should reject ${what}`, () => {
      assert.equal(parseEntityTag(value), undefined);
    });
  }

  it('should throw a TypeError for a value that is not a string', () => {
    assert.throws(() => parseEntityTag(undefined as unknown as string), { name: 'TypeError', message: /parseEntityTag/ });
  });
});

describe('parseEntityTagList', () => {
  it('should read "*" as any', () => {
    assert.deepEqual(parseEntityTagList('*'), { any: true });
  });

  it('should read "*" surrounded by OWS as any', () => {
    assert.deepEqual(parseEntityTagList(' \t* '), { any: true });
  });

  it('should read one tag', () => {
    assert.deepEqual(parseEntityTagList('"a"'), { any: false, tags: [strong('"a"')] });
  });

  it('should read a list of strong and weak tags in order', () => {
    assert.deepEqual(parseEntityTagList('"a", W/"b","c"'), {
      any: false,
      tags: [strong('"a"'), weak('"b"'), strong('"c"')],
    });
  });

  it('should ignore empty list elements and odd OWS (RFC 9110 §5.6.1)', () => {
    assert.deepEqual(parseEntityTagList(', , "a"'), { any: false, tags: [strong('"a"')] });
    assert.deepEqual(parseEntityTagList('\t"a" ,,\t, W/"b" ,'), { any: false, tags: [strong('"a"'), weak('"b"')] });
  });

  it('should keep a comma inside a tag as part of the tag', () => {
    assert.deepEqual(parseEntityTagList('"a,b"'), { any: false, tags: [strong('"a,b"')] });
  });

  it('should read a value with no element as the empty list (RFC 9110 §5.6.1: #entity-tag may be empty)', () => {
    for (const value of ['', '  ', ',', ' , ,']) assert.deepEqual(parseEntityTagList(value), { any: false, tags: [] }, JSON.stringify(value));
  });

  const malformed: readonly [string, string][] = [
    ['"*" followed by a tag', '*, "a"'],
    ['a tag followed by "*"', '"a", *'],
    ['"*" twice', '*, *'],
    ['"**"', '**'],
    ['an unquoted tag', 'abc'],
    ['an unquoted member after a good one', '"a", b'],
    ['two tags without a comma', '"a" "b"'],
    ['a lowercase weak prefix', 'w/"a"'],
    ['an unterminated tag', '"a", "b'],
    ['a bad character in a member', '"a", "b c"'],
  ];
  for (const [what, value] of malformed) {
    it(`should return undefined for ${what}`, () => {
      assert.equal(parseEntityTagList(value), undefined);
    });
  }

  it('should throw a TypeError for a value that is not a string', () => {
    assert.throws(() => parseEntityTagList(['"a"'] as unknown as string), { name: 'TypeError', message: /parseEntityTagList/ });
  });
});

describe('strongCompare and weakCompare', () => {
  // The example table of RFC 9110 §8.8.3.2.
  const table: readonly [EntityTag, EntityTag, boolean, boolean][] = [
    [weak('"1"'), weak('"1"'), false, true],
    [weak('"1"'), weak('"2"'), false, false],
    [weak('"1"'), strong('"1"'), false, true],
    [strong('"1"'), strong('"1"'), true, true],
  ];
  for (const [a, b, strongResult, weakResult] of table) {
    const name = `${a.weak ? 'W/' : ''}${a.opaque} vs ${b.weak ? 'W/' : ''}${b.opaque}`;
    it(`should compare ${name} as strong=${strongResult}, weak=${weakResult}`, () => {
      assert.equal(strongCompare(a, b), strongResult);
      assert.equal(strongCompare(b, a), strongResult);
      assert.equal(weakCompare(a, b), weakResult);
      assert.equal(weakCompare(b, a), weakResult);
    });
  }

  it('should compare opaque-tags character by character (case matters)', () => {
    assert.equal(strongCompare(strong('"abc"'), strong('"ABC"')), false);
    assert.equal(weakCompare(strong('"abc"'), strong('"ABC"')), false);
  });
});
