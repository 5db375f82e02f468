// Tests for lib/protocol/field-syntax.ts: the RFC 9110 §5.6 readers every header parser shares.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readToken, readWord, skipOws, skipToListEnd, trimOws } from '../../lib/protocol/field-syntax.js';

describe('field syntax readers', () => {
  it('should skip spaces and tabs only', () => {
    assert.equal(skipOws(' \t x', 0), 3);
    assert.equal(skipOws('x', 0), 0);
    assert.equal(skipOws('\r\nx', 0), 0);
  });

  it('should read a token up to the first non-tchar', () => {
    assert.equal(readToken("a!#$%&'*+-.^_`|~9Z(", 0), 18);
    assert.equal(readToken('"x"', 0), 0);
  });

  it('should read a token or a quoted-string as a word', () => {
    assert.deepEqual(readWord('abc;', 0), { value: 'abc', end: 3 });
    assert.deepEqual(readWord('"a,b";', 0), { value: 'a,b', end: 5 });
    assert.equal(readWord(';', 0), undefined);
    assert.equal(readWord('"open', 0), undefined);
  });

  it('should find the next comma outside quoted-strings', () => {
    assert.equal(skipToListEnd('a="x,\\"y,", b', 0), 10);
    assert.equal(skipToListEnd('a="x,', 0), 5);
    assert.equal(skipToListEnd('abc', 0), 3);
  });

  it('should trim spaces and tabs, and nothing else, from both ends', () => {
    assert.equal(trimOws(' \t a b \t'), 'a b');
    assert.equal(trimOws('\u00a0x\r\n'), '\u00a0x\r\n');
    assert.equal(trimOws(''), '');
  });
});
