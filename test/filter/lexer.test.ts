import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeToken, tokenize, type Token } from '../../lib/filter/lexer.js';

function tokens(text: string): readonly Token[] {
  const result = tokenize(text);
  assert.ok(result.ok, result.ok ? '' : result.error.message);
  return result.tokens;
}

/** `kind:text@offset` for each token, the end token included. */
function shape(text: string): string[] {
  return tokens(text).map((token) => `${token.kind}:${token.text}@${token.offset}`);
}

function lexError(text: string): { kind: string; offset: number; message: string } {
  const result = tokenize(text);
  assert.equal(result.ok, false, `${text} lexed`);
  if (result.ok) throw new TypeError('unreachable');
  return result.error;
}

describe('tokenize', () => {
  it('should split words, punctuation and literals with their offsets', () => {
    assert.deepEqual(shape("tags/any(t: t eq 'x')"), [
      'word:tags@0', 'slash:/@4', 'word:any@5', 'open:(@8', 'word:t@9', 'colon::@10', 'word:t@12',
      'word:eq@14', "string:'x'@17", 'close:)@20', 'end:@21',
    ]);
  });

  it('should skip spaces, tabs and line breaks', () => {
    assert.deepEqual(shape(' \ta\r\n,'), ['word:a@2', 'comma:,@5', 'end:@6']);
  });

  it('should read doubled single quotes as one quote', () => {
    const [token] = tokens("'O''Brien'''");
    assert.equal(token?.kind, 'string');
    assert.equal(token?.kind === 'string' ? token.value : '', "O'Brien'");
    assert.equal(token?.text, "'O''Brien'''");
  });

  it('should read the empty string and a string of quotes', () => {
    const values = tokens("'' ''''").flatMap((token) => (token.kind === 'string' ? [token.value] : []));
    assert.deepEqual(values, ['', "'"]);
  });

  it('should read integers, decimals, exponents and signs as numbers', () => {
    const numbers = tokens('7 -5 +3 1.25 1e3 1.5E-2 2e+1 007').flatMap((token) => (token.kind === 'number' ? [token.value] : []));
    assert.deepEqual(numbers, [7, -5, 3, 1.25, 1000, 0.015, 20, 7]);
  });

  it('should make a minus before a non-digit the negation operator', () => {
    assert.deepEqual(shape('- x -(1)'), ['minus:-@0', 'word:x@2', 'minus:-@4', 'open:(@5', 'number:1@6', 'close:)@7', 'end:@8']);
  });

  it('should read dates and date-times as date tokens', () => {
    const dates = tokens('2024-01-31 2024-01-31T10:00Z 2024-01-31t10:00:05.123456+05:30').flatMap((token) =>
      (token.kind === 'date' ? [`${token.text}=${token.value.instant}`] : []));
    assert.deepEqual(dates, [
      `2024-01-31=${Date.UTC(2024, 0, 31)}`,
      `2024-01-31T10:00Z=${Date.UTC(2024, 0, 31, 10)}`,
      `2024-01-31t10:00:05.123456+05:30=${Date.UTC(2024, 0, 31, 4, 30, 5, 123)}`,
    ]);
  });

  it('should read a four-digit number that is not a date as a number', () => {
    assert.deepEqual(shape('2024 2024-1'), ['number:2024@0', 'number:2024@5', 'number:-1@9', 'end:@11']);
  });

  it('should accept Unicode letters in names and reject names over 128 characters', () => {
    assert.deepEqual(shape('prix_été Δx'), ['word:prix_été@0', 'word:Δx@9', 'end:@11']);
    assert.deepEqual(shape('𝒳y'), ['word:𝒳y@0', 'end:@3']);
    assert.equal(tokens('a'.repeat(128)).length, 2);
    assert.deepEqual(lexError(`x ${'a'.repeat(129)}`).offset, 2);
  });

  it('should not start a name with a digit', () => {
    assert.equal(lexError('1abc').offset, 1);
  });

  it('should report an unterminated string at its opening quote', () => {
    const error = lexError("name eq 'abc");
    assert.deepEqual([error.kind, error.offset], ['syntax', 8]);
    assert.match(error.message, /unterminated string literal at offset 8$/);
  });

  it('should report malformed numbers where they go wrong', () => {
    assert.equal(lexError('1.').offset, 2);
    assert.equal(lexError('1.x').offset, 2);
    assert.equal(lexError('1e').offset, 2);
    assert.equal(lexError('1e-').offset, 3);
    assert.equal(lexError('1.5.2').offset, 3);
    assert.equal(lexError('12ab').offset, 2);
    assert.match(lexError('1e400').message, /out of range at offset 0$/);
  });

  it('should reject impossible dates and date-times without a time zone', () => {
    for (const text of ['2023-02-29', '2024-00-10', '2024-04-31', '2024-01-01T24:00Z', '2024-01-01T10:60Z',
      '2024-01-01T10:00:00', '2024-01-01T10:00+24:00']) {
      const error = lexError(`x eq ${text}`);
      assert.deepEqual([error.kind, error.offset], ['syntax', 5], text);
    }
  });

  it('should reject a literal that runs into another token', () => {
    assert.equal(lexError('2024-01-01T').offset, 10);
    assert.equal(lexError("5'a'").offset, 1);
  });

  it('should name an unexpected character, control characters escaped', () => {
    assert.match(lexError('a # b').message, /unexpected character '#' at offset 2$/);
    assert.match(lexError('a \u0000').message, /'\\u0000' at offset 2$/);
    assert.equal(lexError('+').offset, 0);
  });
});

describe('describeToken', () => {
  it('should name tokens the way error messages quote them', () => {
    const names = tokens("a 'b' 5 2024-01-01 )").map(describeToken);
    assert.deepEqual(names, ["'a'", "string 'b'", 'number 5', 'date 2024-01-01', "')'", 'end of input']);
  });
});
