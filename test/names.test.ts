// Tests for lib/names.ts: collection names and resource ids (CONVENTIONS.md#names; RFC 3986 §2.3
// unreserved characters; §5.2.4 dot-segments).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isCollectionName, isResourceId, isSystemSegment } from '../lib/names.js';

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
