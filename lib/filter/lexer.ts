// Stage 1 of `$filter`: text → tokens (CONVENTIONS.md#filter-grammar; OData ABNF construction rules).
//
// The input is the already percent-decoded query option value, so the ABNF's "%20" / "%27"
// alternatives never reach this module. Rules read here:
//   BWS / RWS        = *( SP / HTAB ) — CR and LF are tolerated as well (surrounding whitespace
//                      is tolerated, CONVENTIONS.md#filter-grammar)
//   odataIdentifier  = identifierLeadingCharacter *127identifierCharacter
//                      leading: ALPHA / "_" / Unicode L, Nl; then also DIGIT / Nd, Mn, Mc, Pc, Cf
//   stringLiteral    = SQUOTE *( SQUOTE-in-string / pchar-no-SQUOTE ) SQUOTE ; '' is one quote
//   decimalLiteral   = [ SIGN ] 1*DIGIT [ "." 1*DIGIT ] [ "e" [ SIGN ] 1*DIGIT ]
//   date, dateTimeOffsetValue — see dates.ts
// Keywords (`eq`, `not`, `null`, function names) are plain words here; the parser decides what a
// word means from its position, because OData keeps operators and property names apart that way.
// `-` directly before a digit belongs to the number (`-5` is one literal); otherwise it is the
// negation operator. `$count` (ABNF `count = '/$count'`, single-quoted, so case-sensitive) is the
// one `$` word read here, a token of its own so it can never pass for a property or variable name;
// the parser decides where it may stand. `NaN`, `INF`, GUIDs, durations, `$it` and the JSON array
// syntax are not in this subset.
import { parseDateText, type FilterDate } from './dates.js';
import { filterError, quote, type FilterError } from './errors.js';

export type PunctuationKind = 'open' | 'close' | 'comma' | 'colon' | 'slash' | 'minus' | 'end';

/** The `$count` segment of a collection path. */
const COUNT_SEGMENT = '$count';

export type Token =
  | { readonly kind: 'word'; readonly offset: number; readonly text: string }
  | { readonly kind: 'string'; readonly offset: number; readonly text: string; readonly value: string }
  | { readonly kind: 'number'; readonly offset: number; readonly text: string; readonly value: number }
  | { readonly kind: 'date'; readonly offset: number; readonly text: string; readonly value: FilterDate }
  | { readonly kind: PunctuationKind | 'count'; readonly offset: number; readonly text: string };

export type LexResult =
  | { readonly ok: true; readonly tokens: readonly Token[] }
  | { readonly ok: false; readonly error: FilterError };

const HTAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const SP = 0x20;
const DOLLAR = 0x24;
const SQUOTE = 0x27;
const PLUS = 0x2b;
const MINUS = 0x2d;
const DOT = 0x2e;
const COLON = 0x3a;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;
const UPPER_E = 0x45;
const LOWER_E = 0x65;
const UPPER_T = 0x54;
const LOWER_T = 0x74;
const UPPER_Z = 0x5a;
const LOWER_Z = 0x7a;
const UNDERSCORE = 0x5f;
const MAX_IDENTIFIER = 128;

const PUNCTUATION: ReadonlyMap<string, PunctuationKind> = new Map([
  ['(', 'open'], [')', 'close'], [',', 'comma'], [':', 'colon'], ['/', 'slash'],
]);
const LEADING_UNICODE = /^[\p{L}\p{Nl}]$/u;
const FOLLOWING_UNICODE = /^[\p{L}\p{Nl}\p{Nd}\p{Mn}\p{Mc}\p{Pc}\p{Cf}]$/u;

/** Splits the filter text into tokens, ending with an `end` token; or the first lexical error. */
export function tokenize(text: string): LexResult {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const code = text.charCodeAt(i);
    if (code === SP || code === HTAB || code === CR || code === LF) {
      i += 1;
      continue;
    }
    const ch = text.charAt(i);
    const punctuation = PUNCTUATION.get(ch);
    const signed = (code === MINUS || code === PLUS) && isDigit(text.charCodeAt(i + 1));
    let scanned: Token | FilterError;
    if (punctuation !== undefined) scanned = { kind: punctuation, offset: i, text: ch };
    else if (code === SQUOTE) scanned = scanString(text, i);
    else if (isDigit(code) || signed) scanned = scanNumberOrDate(text, i);
    else if (code === MINUS) scanned = { kind: 'minus', offset: i, text: ch };
    else if (code === DOLLAR && isCountSegment(text, i)) scanned = { kind: 'count', offset: i, text: COUNT_SEGMENT };
    else if (identifierLength(text, i, true) > 0) scanned = scanWord(text, i);
    else {
      const character = String.fromCodePoint(text.codePointAt(i) ?? code);
      scanned = filterError('syntax', `unexpected character ${quote(character)}`, i);
    }
    if (isError(scanned)) return { ok: false, error: scanned };
    tokens.push(scanned);
    i = scanned.offset + scanned.text.length;
  }
  tokens.push({ kind: 'end', offset: text.length, text: '' });
  return { ok: true, tokens };
}

/** A token as an error message names it: `string 'a'`, `number 5`, `')'`, `end of input`. */
export function describeToken(token: Token): string {
  switch (token.kind) {
    case 'end': return 'end of input';
    case 'string': return `string ${quote(token.value)}`;
    case 'number': case 'date': return `${token.kind} ${token.text}`;
    default: return quote(token.text);
  }
}

function isError(scanned: Token | FilterError): scanned is FilterError {
  return 'message' in scanned;
}

/** `$count` exactly, not the start of a longer name such as `$counter`. */
function isCountSegment(text: string, i: number): boolean {
  return text.startsWith(COUNT_SEGMENT, i) && identifierLength(text, i + COUNT_SEGMENT.length, false) === 0;
}

function scanString(text: string, start: number): Token | FilterError {
  const parts: string[] = [];
  let from = start + 1;
  for (;;) {
    const close = text.indexOf("'", from);
    if (close < 0) return filterError('syntax', 'unterminated string literal', start);
    parts.push(text.slice(from, close));
    // SQUOTE-in-string: two quotes stand for one and the string goes on.
    if (text.charCodeAt(close + 1) !== SQUOTE) {
      return { kind: 'string', offset: start, text: text.slice(start, close + 1), value: parts.join("'") };
    }
    from = close + 2;
  }
}

function scanNumberOrDate(text: string, start: number): Token | FilterError {
  const dateEnd = dateTimeEnd(text, start);
  if (dateEnd > start) {
    const literal = text.slice(start, dateEnd);
    const value = parseDateText(literal, 'required');
    if (value === null) {
      const detail = `invalid date or date-time ${quote(literal)} ` +
        '(dates are yyyy-mm-dd; date-times need a time zone, Z or ±hh:mm)';
      return filterError('syntax', detail, start);
    }
    return endsCleanly(text, dateEnd) ?? { kind: 'date', offset: start, text: literal, value };
  }
  let i = start;
  if (!isDigit(text.charCodeAt(i))) i += 1;
  i = skipDigits(text, i);
  if (text.charCodeAt(i) === DOT) {
    if (!isDigit(text.charCodeAt(i + 1))) return filterError('syntax', "expected a digit after '.' in a number", i + 1);
    i = skipDigits(text, i + 1);
  }
  const e = text.charCodeAt(i);
  if (e === LOWER_E || e === UPPER_E) {
    let j = i + 1;
    const sign = text.charCodeAt(j);
    if (sign === PLUS || sign === MINUS) j += 1;
    if (!isDigit(text.charCodeAt(j))) return filterError('syntax', 'expected a digit in the exponent of a number', j);
    i = skipDigits(text, j);
  }
  const literal = text.slice(start, i);
  const value = Number(literal);
  if (!Number.isFinite(value)) return filterError('syntax', `number ${quote(literal)} is out of range`, start);
  return endsCleanly(text, i) ?? { kind: 'number', offset: start, text: literal, value };
}

/** A literal must not run straight into a name or another literal (`5abc`, `1.5.2`, `2024-01-01T`). */
function endsCleanly(text: string, end: number): FilterError | null {
  const next = text.charCodeAt(end);
  if (next === DOT || next === COLON || next === SQUOTE || identifierLength(text, end, false) > 0) {
    return filterError('syntax', `unexpected ${quote(text.charAt(end))} after a literal`, end);
  }
  return null;
}

/** End of a `yyyy-mm-dd[Thh:mm[:ss[.f+]][Z|±hh:mm]]` shape at `start`, or `start` when there is none. */
function dateTimeEnd(text: string, start: number): number {
  if (!(digitsAt(text, start, 4) && text.charCodeAt(start + 4) === MINUS && digitsAt(text, start + 5, 2) &&
    text.charCodeAt(start + 7) === MINUS && digitsAt(text, start + 8, 2))) return start;
  let i = start + 10;
  const t = text.charCodeAt(i);
  if ((t !== UPPER_T && t !== LOWER_T) || !digitsAt(text, i + 1, 2) || text.charCodeAt(i + 3) !== COLON ||
    !digitsAt(text, i + 4, 2)) return i;
  i += 6;
  if (text.charCodeAt(i) === COLON && digitsAt(text, i + 1, 2)) {
    i += 3;
    if (text.charCodeAt(i) === DOT && isDigit(text.charCodeAt(i + 1))) i = skipDigits(text, i + 1);
  }
  const zone = text.charCodeAt(i);
  if (zone === UPPER_Z || zone === LOWER_Z) return i + 1;
  if ((zone === PLUS || zone === MINUS) && digitsAt(text, i + 1, 2) && text.charCodeAt(i + 3) === COLON &&
    digitsAt(text, i + 4, 2)) return i + 6;
  return i;
}

function scanWord(text: string, start: number): Token | FilterError {
  let i = start + identifierLength(text, start, true);
  let count = 1;
  for (let step = identifierLength(text, i, false); step > 0; step = identifierLength(text, i, false)) {
    i += step;
    count += 1;
  }
  if (count > MAX_IDENTIFIER) {
    return filterError('syntax', `name longer than ${MAX_IDENTIFIER} characters`, start);
  }
  return { kind: 'word', offset: start, text: text.slice(start, i) };
}

/** UTF-16 length of the identifier character at `i` (2 for an astral one), or 0 when there is none. */
function identifierLength(text: string, i: number, leading: boolean): number {
  const code = text.codePointAt(i);
  if (code === undefined) return 0;
  if ((code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a) || code === UNDERSCORE) return 1;
  if (isDigit(code)) return leading ? 0 : 1;
  if (code < 0x80) return 0;
  const ch = String.fromCodePoint(code);
  return (leading ? LEADING_UNICODE : FOLLOWING_UNICODE).test(ch) ? ch.length : 0;
}

function isDigit(code: number): boolean {
  return code >= DIGIT_0 && code <= DIGIT_9;
}

function digitsAt(text: string, i: number, count: number): boolean {
  for (let k = 0; k < count; k += 1) if (!isDigit(text.charCodeAt(i + k))) return false;
  return true;
}

function skipDigits(text: string, i: number): number {
  let j = i;
  while (isDigit(text.charCodeAt(j))) j += 1;
  return j;
}
