// Tests for lib/names.ts: collection names and resource ids (CONVENTIONS.md#names; RFC 3986 §2.3
// unreserved characters; §5.2.4 dot-segments).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  eventIdProblem, inboxItemIdProblem, isCollectionName, isEventId, isResourceId, isSystemSegment, pathSegment,
} from '../lib/names.js';

describe('isCollectionName', () => {
  it('should accept a letter followed by letters, digits, "_" and "-"', () => {
    for (const name of ['a', 'Z', 'products', 'order-lines', 'order_lines', 'v2', 'A-1_b']) {
      assert.equal(isCollectionName(name), true, name);
    }
  });

  it('should accept 64 characters and refuse 65', () => {
    assert.equal(isCollectionName('a'.repeat(64)), true);
    assert.equal(isCollectionName('a'.repeat(65)), false);
  });

  it('should refuse an empty name and names that do not start with a letter', () => {
    for (const name of ['', '1a', '_a', '-a', '$a', '.a', '~a']) {
      assert.equal(isCollectionName(name), false, name);
    }
  });

  it('should refuse characters outside the name alphabet', () => {
    for (const name of ['a.b', 'a~b', 'a b', 'a/b', 'a%2F', 'caf\u00e9', 'a$', 'products\n', '\nproducts', 'a\u0000']) {
      assert.equal(isCollectionName(name), false, JSON.stringify(name));
    }
  });
});

describe('isResourceId', () => {
  it('should accept every RFC 3986 unreserved character', () => {
    for (const id of ['a', 'Z', '0', '-', '_', '~', 'abc-DEF_123.~', '01hq3v5d8x']) {
      assert.equal(isResourceId(id), true, id);
    }
  });

  it('should accept 128 characters and refuse 129', () => {
    assert.equal(isResourceId('1'.repeat(128)), true);
    assert.equal(isResourceId('1'.repeat(129)), false);
  });

  it('should refuse "." and ".." but accept other dot runs', () => {
    assert.equal(isResourceId('.'), false);
    assert.equal(isResourceId('..'), false);
    assert.equal(isResourceId('...'), true);
    assert.equal(isResourceId('.a'), true);
    assert.equal(isResourceId('a..'), true);
  });

  it('should refuse an empty id and characters that would need percent-encoding', () => {
    for (const id of ['', 'a/b', 'a%2Fb', 'a b', 'a+b', 'a?b', 'a#b', 'a:b', 'a@b', 'caf\u00e9', '1\n', 'a\u0000', '$id']) {
      assert.equal(isResourceId(id), false, JSON.stringify(id));
    }
  });
});

describe('isSystemSegment', () => {
  it('should be true for a segment that starts with "$"', () => {
    for (const segment of ['$', '$health', '$undoDelete', '$$']) assert.equal(isSystemSegment(segment), true, segment);
  });

  it('should be false otherwise', () => {
    for (const segment of ['', 'health', 'a$', ' $x', '%24x']) assert.equal(isSystemSegment(segment), false, segment);
  });
});

describe('eventIdProblem', () => {
  it('should accept 1-255 code points of well-formed text, astral characters counting one each', () => {
    for (const id of ['a', 'evt_1', 'caf\u00e9 / 1', '\u{1F600}'.repeat(255), 'x'.repeat(255)]) {
      assert.equal(eventIdProblem(id), undefined, id);
      assert.equal(isEventId(id), true);
    }
  });

  it('should refuse an empty id and one of 256 code points, naming the limit', () => {
    for (const id of ['', 'x'.repeat(256), `x${'\u{1F600}'.repeat(255)}`, 'x'.repeat(1 << 20)]) {
      assert.match(eventIdProblem(id) ?? '', /1-255 code points/, `${id.length} units`);
    }
  });

  it('should refuse a lone surrogate wherever it stands, naming its offset', () => {
    assert.match(eventIdProblem('\ud800') ?? '', /lone surrogate \(\\ud800\) at UTF-16 offset 0/);
    assert.match(eventIdProblem('evt-\udc00') ?? '', /\\udc00\) at UTF-16 offset 4/);
    assert.match(eventIdProblem('\u{1F600}\udc00\ud800') ?? '', /\\udc00\) at UTF-16 offset 2/);
  });
});

describe('inboxItemIdProblem (CONVENTIONS.md#inbox)', () => {
  it('should accept an event id, and a source name, ":" and an event id of up to 255 code points', () => {
    for (const id of ['evt_1', 'a:b', `stripe:${'x'.repeat(255)}`, `${'s'.repeat(64)}:${'\u{1F600}'.repeat(255)}`]) {
      assert.equal(inboxItemIdProblem(id), undefined, id.slice(0, 20));
    }
  });

  it('should refuse 256 code points that are no source name and event id, and a named one whose event id is too long', () => {
    for (const id of ['x'.repeat(256), `stripe:${'x'.repeat(256)}`, `${'s'.repeat(65)}:x${'y'.repeat(250)}`, `1abc:${'x'.repeat(255)}`, '', 'stripe:\ud800']) {
      assert.notEqual(inboxItemIdProblem(id), undefined, id.slice(0, 20));
    }
  });
});

describe('pathSegment', () => {
  it('should percent-encode a name as UTF-8', () => {
    assert.equal(pathSegment('a/b c'), 'a%2Fb%20c');
    assert.equal(pathSegment('\u{1F600}'), '%F0%9F%98%80');
  });

  it('should not throw on a lone surrogate, writing U+FFFD in its place', () => {
    assert.equal(pathSegment('\ud800-old'), '%EF%BF%BD-old');
  });
});
