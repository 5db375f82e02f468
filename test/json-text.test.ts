// Tests for lib/json-text.ts: the JSON reader of every write path (CONVENTIONS.md#json-bodies;
// RFC 8259; RFC 6901 pointers). Numbers are stored exactly or refused; errors are resapi's words
// with the offset.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { JsonValue } from '../lib/json.js';
import { isExactNumber, parseJson, type JsonTextError } from '../lib/json-text.js';
import { mulberry32 } from './support/random.js';

function value(text: string): JsonValue {
  const result = parseJson(text);
  if (!result.ok) assert.fail(`refused ${text.slice(0, 60)}: ${result.error.message}`);
  return result.value;
}

function error(text: string): JsonTextError {
  const result = parseJson(text);
  if (result.ok) assert.fail(`accepted ${text.slice(0, 60)}`);
  return result.error;
}

/** The exact rational value of a decimal literal, as numerator and denominator (no floating point). */
function rational(literal: string): { numerator: bigint; denominator: bigint } {
  const [mantissa = '', exponentText = '0'] = literal.toLowerCase().split('e');
  const negative = mantissa.startsWith('-');
  const [whole = '', fraction = ''] = mantissa.replace('-', '').split('.');
  const exponent = Number(exponentText) - fraction.length;
  let numerator = BigInt(whole + fraction) * (negative ? -1n : 1n);
  let denominator = 1n;
  if (exponent >= 0) numerator *= 10n ** BigInt(exponent);
  else denominator = 10n ** BigInt(-exponent);
  return { numerator, denominator };
}

/**
 * An oracle written apart from lib/json.ts: exact when the literal and String(Number(literal)) are the
 * same rational, and the double is not -0 (which JSON writes as 0).
 */
function exactByRationals(literal: string): boolean {
  const parsed = Number(literal);
  if (!Number.isFinite(parsed) || Object.is(parsed, -0)) return false;
  const written = rational(literal);
  const stored = rational(String(parsed));
  return written.numerator * stored.denominator === stored.numerator * written.denominator;
}

describe('parseJson', () => {
  it('should return the value JSON.parse returns for valid JSON', () => {
    for (const text of ['{}', '[]', ' {"a":[1,2.5,-3,true,false,null,"x\\"y\\\\"],"b":{"c":{}}} ', '"text"', '0', 'null', '[[[]]]', '{"é😀":"\\u00e9\\ud83d\\ude00"}']) {
      assert.deepEqual(value(text), JSON.parse(text), text);
    }
  });

  it('should accept the exact spellings of a number and give the double they write', () => {
    const cases: [string, number][] = [
      ['1.0', 1],
      ['1e2', 100],
      ['1E+2', 100],
      ['100', 100],
      ['0.1', 0.1],
      ['0e999999999999999999999', 0],
      ['-0.5', -0.5],
      ['1.7976931348623157e308', Number.MAX_VALUE],
      ['5e-324', Number.MIN_VALUE],
      ['0.30000000000000004', 0.1 + 0.2],
      ['100000000000000000000000', 1e23],
      ['9007199254740992', 2 ** 53],
      ['1e0000000000000000000000000005', 1e5],
    ];
    for (const [literal, expected] of cases) assert.equal((value(`{"n":${literal}}`) as { n: number }).n, expected, literal);
  });

  it('should refuse a number that a double does not hold exactly, pointing at it', () => {
    for (const literal of ['9007199254740993', '1e-400', '123456789012345678901234567890', '0.10000000000000000555', '-2e-324', '4.9406564584124654e-324']) {
      assert.deepEqual(error(`{"price":${literal}}`), {
        kind: 'number',
        offset: 9,
        pointer: '/price',
        reason: 'number cannot be stored exactly',
        message: 'number cannot be stored exactly at offset 9',
      }, literal);
    }
  });

  it('should refuse a negative zero however it is spelled, since JSON writes it back as 0', () => {
    for (const literal of ['-0', '-0.0', '-0e5', '-0.000E-400', '-0e999999999999999999999']) {
      assert.deepEqual(error(`{"t":[1,${literal}]}`), {
        kind: 'number',
        offset: 8,
        pointer: '/t/1',
        reason: 'negative zero cannot be stored',
        message: 'negative zero cannot be stored at offset 8',
      }, literal);
    }
    assert.equal(error('{"t":-1e-400}').reason, 'number cannot be stored exactly', 'a non-zero literal that rounds to -0 is inexact');
    assert.deepEqual(value('{"a":0,"b":-0.01,"c":"-0","d":0.0}'), { a: 0, b: -0.01, c: '-0', d: 0 });
  });

  it('should refuse a number that overflows to Infinity as out of range', () => {
    for (const literal of ['1e400', '-1e999', '1' + '0'.repeat(400)]) {
      const found = error(`[0,${literal}]`);
      assert.equal(found.kind, 'number', literal);
      assert.equal(found.pointer, '/1', literal);
      assert.equal(found.message, 'number out of range at offset 3', literal);
    }
  });

  it('should report the first unstorable number in text order, with an RFC 6901 pointer', () => {
    const found = error('{"a/b":{"~c":[0,1e-400]},"z":1e400}');
    assert.equal(found.pointer, '/a~1b/~0c/1');
    assert.equal(found.offset, 16);
    assert.equal(error('{"k\\"\\u0041":[1e400]}').pointer, '/k"A/0');
    assert.equal(error('{"":{"":9007199254740993}}').pointer, '//');
  });

  it('should not look at digits inside strings, escaped quotes and backslashes included', () => {
    assert.deepEqual(value('{"s":"9007199254740993","t":"\\"1e400","u":"\\\\","v":"-1e-400\\\\\\""}'), {
      s: '9007199254740993',
      t: '"1e400',
      u: '\\',
      v: '-1e-400\\"',
    });
    assert.equal(error('{"u":"\\\\\\\\","n":1e-400}').offset, 16);
  });

  it('should name a syntax error in fixed words with its offset', () => {
    const cases: [string, string][] = [
      ['', 'unexpected end of input at offset 0'],
      ['{', 'unexpected end of input at offset 1'],
      ['{"a":1,}', 'unexpected character at offset 7'],
      ["{'a':1}", 'unexpected character at offset 1'],
      ['{"a":NaN}', 'unexpected character at offset 5'],
      ['{"a":Infinity}', 'unexpected character at offset 5'],
      ['{"a":01}', 'unexpected character at offset 6'],
      ['{"a":-}', 'unexpected character at offset 6'],
      ['{"a":1.}', 'unexpected character at offset 7'],
      ['{"a":1e}', 'unexpected character at offset 7'],
      ['{"a":+1}', 'unexpected character at offset 5'],
      ['{"a" 1}', 'unexpected character at offset 5'],
      ['{} {}', 'unexpected character at offset 3'],
      ['{"a":1}x', 'unexpected character at offset 7'],
      ['[1,2', 'unexpected end of input at offset 4'],
      ['[1 2]', 'unexpected character at offset 3'],
      ['tru', 'unexpected end of input at offset 3'],
      ['nul!', 'unexpected character at offset 3'],
      ['\ufeff{}', 'unexpected character at offset 0'],
      ['{"a":"x', 'unterminated string at offset 5'],
      ['{"a":"x\\', 'unterminated string at offset 5'],
      ['{"a":"\\q"}', 'invalid escape at offset 6'],
      ['{"a":"\\u12G4"}', 'invalid escape at offset 6'],
      ['{"a":"\u0001"}', 'control character in string at offset 6'],
      ['{"a\nb":1}', 'control character in string at offset 3'],
    ];
    for (const [text, message] of cases) {
      const found = error(text);
      assert.deepEqual({ kind: found.kind, message: found.message }, { kind: 'syntax', message }, JSON.stringify(text));
      assert.equal(found.pointer, undefined);
    }
  });

  it('should never repeat the text or V8 wording in a syntax error', () => {
    for (const text of ['{"secret-token-abc": }', '{"secret": secret}', '["secret"', 'secret', '{"a":"secret\u0000"}']) {
      const found = error(text);
      assert.match(found.message, /^[a-z ]+ at offset \d+$/, text);
      assert.doesNotMatch(found.message, /secret|Unexpected token|JSON/, text);
    }
  });

  it('should walk 100000 levels of nesting without recursion, in valid and broken text alike', () => {
    const depth = 100_000;
    assert.equal(parseJson('['.repeat(depth) + ']'.repeat(depth)).ok, true);
    assert.equal(error('['.repeat(depth) + ']'.repeat(depth - 1)).message, `unexpected end of input at offset ${2 * depth - 1}`);
    const deepNumber = error(`${'['.repeat(depth)}1e400${']'.repeat(depth)}`);
    assert.equal(deepNumber.offset, depth);
    assert.equal(deepNumber.pointer, '/0'.repeat(depth));
  });

  it('should agree with JSON.parse on which mutated texts are JSON (property)', () => {
    const random = mulberry32(0x750e);
    const seed = '{"a":[1,-2.5e3,true,null,"x\\u0041\\n"],"b":{"c":"d"},"e":0}';
    const pieces = ['{', '}', '[', ']', ',', ':', '"', '\\', '-', '.', 'e', '0', '1', ' ', 'x', 'u', 'n', 't'];
    let valid = 0;
    for (let run = 0; run < 5000; run++) {
      let text = seed;
      for (let edits = 1 + Math.floor(random() * 3); edits > 0; edits--) {
        const at = Math.floor(random() * (text.length + 1));
        const piece = pieces[Math.floor(random() * pieces.length)] ?? '';
        text = random() < 0.5 ? text.slice(0, at) + piece + text.slice(at) : text.slice(0, at) + text.slice(at + 1);
      }
      let parses = true;
      try {
        JSON.parse(text);
      } catch {
        parses = false;
      }
      const result = parseJson(text);
      // A syntax error exactly when JSON.parse throws; a text it reads may still hold a number made
      // unstorable by the edits (`e3` → `e3111`).
      const kind = result.ok ? 'none' : result.error.kind;
      assert.ok(parses ? kind !== 'syntax' : kind === 'syntax', JSON.stringify(text));
      if (!result.ok) assert.ok(result.error.offset >= 0 && result.error.offset <= text.length, JSON.stringify(text));
      if (parses) valid++;
    }
    assert.ok(valid > 500 && valid < 4500, `valid ${valid}: the mutations should land on both sides`);
  });
});

describe('isExactNumber', () => {
  it('should accept RFC 8259 number literals a double holds exactly', () => {
    for (const text of ['0', '-0.5', '1', '1.0', '1e2', '1.5E-3', '0.1', '9007199254740992', '5e-324', '1.7976931348623157e308']) {
      assert.equal(isExactNumber(text), true, text);
    }
  });

  it('should refuse inexact and out-of-range literals', () => {
    for (const text of ['-0', '-0.0e3', '9007199254740993', '1e-400', '1e400', '-1e999', '123456789012345678901234567890', '0.10000000000000000555']) {
      assert.equal(isExactNumber(text), false, text);
    }
  });

  it('should refuse text that is not one RFC 8259 number literal', () => {
    for (const text of ['', ' 1', '1 ', '+1', '.5', '1.', '01', '-', '1e', '1e+', '0x10', 'Infinity', 'NaN', '--1', '1,5', '"1"']) {
      assert.equal(isExactNumber(text), false, JSON.stringify(text));
    }
  });

  it('should agree with exact rational arithmetic on random literals, as parseJson does with its fast path (property)', () => {
    const random = mulberry32(0xe7ac7);
    let exact = 0;
    for (let run = 0; run < 3000; run++) {
      const digits = 1 + Math.floor(random() * 22);
      let significand = String(1 + Math.floor(random() * 9));
      for (let k = 1; k < digits; k++) significand += String(Math.floor(random() * 10));
      const point = Math.floor(random() * digits);
      const mantissa = point === 0 ? significand : `${significand.slice(0, point)}.${significand.slice(point)}`;
      const exponent = Math.floor(random() * 660) - 330;
      const literal = `${random() < 0.5 ? '-' : ''}${mantissa}${random() < 0.2 ? '' : `e${exponent}`}`;
      const expected = exactByRationals(literal);
      assert.equal(isExactNumber(literal), expected, literal);
      // parseJson skips the exact check for short literals with small exponents; this proves it safe.
      assert.equal(parseJson(`[${literal}]`).ok, expected, literal);
      if (expected) exact++;
    }
    assert.ok(exact > 300 && exact < 2700, `exact ${exact}: the literals should land on both sides`);
  });
});
