// JSON Pointer tokens (lib/json-pointer.ts, RFC 6901 §3–4).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { escapePointerToken, isEscapedPointerText, pointerOf, unescapePointerToken } from '../lib/json-pointer.js';

describe('JSON Pointer tokens', () => {
  it('should escape "~" before "/" and unescape "~1" before "~0", so every name survives the round trip', () => {
    assert.equal(escapePointerToken('a/b'), 'a~1b');
    assert.equal(escapePointerToken('m~n'), 'm~0n');
    assert.equal(escapePointerToken('~1'), '~01', 'a name that looks like an escape is escaped itself');
    assert.equal(unescapePointerToken('~01'), '~1', 'RFC 6901 §4: ~01 is ~1, not /');
    for (const name of ['plain', 'a/b', 'm~n', '~1', '~0/~1', '', '/']) assert.equal(unescapePointerToken(escapePointerToken(name)), name);
  });

  it('should tell escaped text from text with a lone "~"', () => {
    assert.equal(isEscapedPointerText('a~0b~1c'), true);
    assert.equal(isEscapedPointerText('no tilde'), true);
    assert.equal(isEscapedPointerText('a~2b'), false);
    assert.equal(isEscapedPointerText('ends~'), false);
  });

  it('should build the pointer of a member, array indexes included (RFC 6901 §5 examples)', () => {
    assert.equal(pointerOf([]), '');
    assert.equal(pointerOf(['foo', 0]), '/foo/0');
    assert.equal(pointerOf(['a/b']), '/a~1b');
    assert.equal(pointerOf(['m~n']), '/m~0n');
    assert.equal(pointerOf(['']), '/');
  });
});
