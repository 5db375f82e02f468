// The reader every write path uses for JSON text (CONVENTIONS.md#json-bodies, RFC 8259).
//
// JSON.parse makes the value: it is native and fast. It is not enough on its own, for two reasons:
// - its error message is V8's, and may quote the input, while a 400 must say what is wrong in resapi's
//   own words with the offset, never the parser's message or a slice of the body
//   (CONVENTIONS.md#json-bodies). When JSON.parse throws, a charCodeAt scanner over the RFC 8259
//   grammar finds the offset and says what is wrong in fixed words;
// - it rounds numbers silently: `9007199254740993` becomes …992, `1e-400` becomes 0, `1e400` becomes
//   Infinity. A number that JSON cannot carry exactly through a parse and a serialize is a 400 on every
//   write path (CONVENTIONS.md#json-bodies). So after JSON.parse succeeds, the number literals of the
//   text are looked at, and the first one that the stored value would not write back is reported with
//   its offset and JSON Pointer (RFC 6901).
//
// Exact means: the decimal value the literal writes equals the decimal value of the double it parses
// to, written in JavaScript's shortest round-trip form (`String(number)`). So `1.0`, `1e2` and
// `5e-324` are exact (the stored value is the number the client wrote, spelled its shortest way) and
// `0.10000000000000000555` is not (it would come back as `0.1`). The comparison is of decimal digit
// strings and exponents, never of floating-point values. A negative zero (`-0`, `-0.0e5`) is refused
// on its own: its decimal value is 0's, but JSON.stringify writes the double -0 as `0`, so the stored
// value would come back as another number than the one sent (CONVENTIONS.md#json-bodies).
//
// Both scans are iterative and linear: bodies nest up to 100,000 levels in the tests.

import { escapePointerToken } from './json-pointer.js';
import type { JsonValue } from './json.js';

export interface JsonTextError {
  readonly kind: 'syntax' | 'number';
  /** 0-based UTF-16 offset into the text. */
  readonly offset: number;
  /** RFC 6901 pointer of the offending number (kind 'number'). */
  readonly pointer?: string;
  /** `reason` followed by ` at offset <offset>`. */
  readonly message: string;
  /** The fixed words alone, for callers that give the position another way (`number out of range`). */
  readonly reason: string;
}

export type JsonParse =
  | { readonly ok: true; readonly value: JsonValue }
  | { readonly ok: false; readonly error: JsonTextError };

export const NUMBER_OUT_OF_RANGE = 'number out of range';
const NUMBER_INEXACT = 'number cannot be stored exactly';
export const NEGATIVE_ZERO = 'negative zero cannot be stored';

const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const QUOTE = 0x22;
const PLUS = 0x2b;
const COMMA = 0x2c;
const MINUS = 0x2d;
const DOT = 0x2e;
const SLASH = 0x2f;
const DIGIT_0 = 0x30;
const DIGIT_1 = 0x31;
const DIGIT_9 = 0x39;
const COLON = 0x3a;
const UPPER_A = 0x41;
const UPPER_E = 0x45;
const UPPER_F = 0x46;
const OPEN_BRACKET = 0x5b;
const BACKSLASH = 0x5c;
const CLOSE_BRACKET = 0x5d;
const LOWER_A = 0x61;
const LOWER_B = 0x62;
const LOWER_E = 0x65;
const LOWER_F = 0x66;
const LOWER_N = 0x6e;
const LOWER_R = 0x72;
const LOWER_T = 0x74;
const LOWER_U = 0x75;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/**
 * Literals needing no exact check: at most 15 digits and an exponent of at most 280 either way. Any
 * decimal of at most 15 significant digits within the normal double range survives decimal → double
 * → shortest decimal unchanged (DBL_DIG = 15, IEEE 754 binary64: two such decimals are never closer
 * than two adjacent doubles), and 15 digits (between 1e-14 and 1e15, leading zeros counted) times
 * 10^±280 stay between 1e-294 and 1e295, inside the normal range (2.2e-308 to 1.8e308). Prices,
 * counts, ids, timestamps and `1.5e-7` all fall here; a literal of 16+ digits (such as
 * 0.30000000000000004) or a larger exponent takes the exact check: one Number() and one String().
 */
const MAX_UNCHECKED_DIGITS = 15;
const MAX_UNCHECKED_EXPONENT = 280;
/** A double's shortest round-trip form never needs more significant digits than this. */
const MAX_DOUBLE_DIGITS = 17;

/** RFC 8259 §3: the only bare words a JSON text holds. */
const LITERAL_NAMES: readonly string[] = ['true', 'false', 'null'];

/** Where the walker is: which token it expects next. */
const VALUE = 0; // after `:`, after `,` in an array, at the start
const ARRAY_START = 1; // after `[`: a value or `]`
const OBJECT_START = 2; // after `{`: a key or `}`
const KEY = 3; // after `,` in an object
const AFTER_KEY = 4; // `:`
const AFTER_VALUE = 5; // `,` or the container's close; at the top level, only whitespace
type WalkState =
  | typeof VALUE
  | typeof ARRAY_START
  | typeof OBJECT_START
  | typeof KEY
  | typeof AFTER_KEY
  | typeof AFTER_VALUE;

/** JSON text → the value, or the first thing wrong with it (syntax, or a number JSON cannot carry exactly). */
export function parseJson(text: string): JsonParse {
  let value: JsonValue;
  try {
    value = JSON.parse(text) as JsonValue;
  } catch (error) {
    const found = walk(text, -1);
    // JSON.parse threw on a text the grammar accepts: not a wire error (say, out of memory), so not a 400.
    if (found.kind !== 'error') throw error;
    return { ok: false, error: textError('syntax', found.offset, found.reason) };
  }
  const number = firstUnstorableNumber(text);
  if (number === undefined) return { ok: true, value };
  const at = walk(text, number.offset);
  const pointer = at.kind === 'value' ? at.pointer : '';
  return { ok: false, error: { ...textError('number', number.offset, number.reason), pointer } };
}

/**
 * True when `text` is one RFC 8259 number literal whose value a double holds exactly (see the header).
 * For CSV cells.
 */
export function isExactNumber(text: string): boolean {
  const step = scanNumber(text, 0);
  return step.ok && step.end === text.length && numberProblem(text) === undefined;
}

function textError(kind: 'syntax' | 'number', offset: number, reason: string): JsonTextError {
  return { kind, offset, message: `${reason} at offset ${offset}`, reason };
}

/**
 * The first number literal of a valid JSON text that JSON cannot carry exactly. The text is known to
 * be valid (JSON.parse accepted it), so outside strings a `-` or a digit can only start a number and
 * strings can be jumped over with indexOf.
 */
function firstUnstorableNumber(text: string): { offset: number; reason: string } | undefined {
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = closingQuote(text, i);
      continue;
    }
    if (c !== MINUS && !isDigit(c)) continue;
    let end = i + 1;
    let digits = c === MINUS ? 0 : 1;
    // Whether the mantissa holds a digit other than 0: a negative literal without one is -0.
    let nonZero = c !== MINUS && c !== DIGIT_0;
    for (let d = text.charCodeAt(end); isDigit(d) || d === DOT; d = text.charCodeAt(++end)) {
      if (d === DOT) continue;
      digits++;
      if (d !== DIGIT_0) nonZero = true;
    }
    // The exponent's magnitude; only compared with MAX_UNCHECKED_EXPONENT, so it stops growing past it.
    let exponent = 0;
    const e = text.charCodeAt(end);
    if (e === LOWER_E || e === UPPER_E) {
      const sign = text.charCodeAt(++end);
      if (sign === PLUS || sign === MINUS) end++;
      for (let d = text.charCodeAt(end); isDigit(d); d = text.charCodeAt(++end)) {
        if (exponent <= MAX_UNCHECKED_EXPONENT) exponent = exponent * 10 + (d - DIGIT_0);
      }
    }
    if (c === MINUS && !nonZero) return { offset: i, reason: NEGATIVE_ZERO };
    if (digits > MAX_UNCHECKED_DIGITS || exponent > MAX_UNCHECKED_EXPONENT) {
      const reason = numberProblem(text.slice(i, end));
      if (reason !== undefined) return { offset: i, reason };
    }
    i = end - 1;
  }
  return undefined;
}

/** Offset of the quote closing the string opened at `open`, in a valid text. */
function closingQuote(text: string, open: number): number {
  let close = text.indexOf('"', open + 1);
  while (close !== -1) {
    // Escaped when preceded by an odd number of backslashes. Each run is counted once: it lies
    // between this quote and the previous one, so the whole search stays linear.
    let backslashes = 0;
    while (text.charCodeAt(close - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return close;
    close = text.indexOf('"', close + 1);
  }
  return text.length;
}

/** Why a number literal (valid RFC 8259 syntax) cannot be stored as written, or undefined when it can. */
function numberProblem(literal: string): string | undefined {
  const value = Number(literal);
  if (!Number.isFinite(value)) return NUMBER_OUT_OF_RANGE;
  const shortest = String(value);
  // Most checked literals were written by JSON.stringify of a double (0.30000000000000004): already shortest.
  if (shortest === literal) return undefined;
  const written = decimalOf(literal);
  // `-0` writes the value 0 exactly, but the double -0 is serialized as `0`: refused, never changed.
  if (written.digits === '' && literal.charCodeAt(0) === MINUS) return NEGATIVE_ZERO;
  if (written.digits.length > MAX_DOUBLE_DIGITS) return NUMBER_INEXACT;
  const stored = decimalOf(shortest);
  return written.digits === stored.digits && written.exponent === stored.exponent ? undefined : NUMBER_INEXACT;
}

/**
 * A decimal literal as its significant digits (no leading or trailing zeros) and the power of ten of
 * the last one: `-12.50e3` → { digits: '125', exponent: 2 }. Zero, however spelled, is { '', 0 }. The
 * sign is left out: a finite double keeps the literal's sign, and -0 and 0 are the same decimal value.
 * An exponent too large for Number() to hold exactly only occurs when the value is 0 or Infinity,
 * which the caller decides before comparing.
 */
function decimalOf(literal: string): { digits: string; exponent: number } {
  let mark = literal.length;
  for (let i = 0; i < literal.length; i++) {
    const c = literal.charCodeAt(i);
    if (c === LOWER_E || c === UPPER_E) {
      mark = i;
      break;
    }
  }
  const mantissa = literal.slice(literal.charCodeAt(0) === MINUS ? 1 : 0, mark);
  const dot = mantissa.indexOf('.');
  const fraction = dot === -1 ? '' : mantissa.slice(dot + 1);
  const all = (dot === -1 ? mantissa : mantissa.slice(0, dot)) + fraction;
  let first = 0;
  while (first < all.length && all.charCodeAt(first) === DIGIT_0) first++;
  let last = all.length;
  while (last > first && all.charCodeAt(last - 1) === DIGIT_0) last--;
  if (first === last) return { digits: '', exponent: 0 };
  const written = mark === literal.length ? 0 : Number(literal.slice(mark + 1));
  return { digits: all.slice(first, last), exponent: written - fraction.length + (all.length - last) };
}

type Step =
  | { readonly ok: true; readonly end: number }
  | { readonly ok: false; readonly offset: number; readonly reason: string };

/**
 * End offset of the number starting at `start` (RFC 8259 §6), or what is wrong with it:
 *    number = [ minus ] int [ frac ] [ exp ];  int = zero / ( digit1-9 *DIGIT )
 *    frac = decimal-point 1*DIGIT;  exp = e [ minus / plus ] 1*DIGIT
 */
function scanNumber(text: string, start: number): Step {
  let i = start;
  if (text.charCodeAt(i) === MINUS) i++;
  const c = text.charCodeAt(i);
  if (c === DIGIT_0) i++;
  else if (c >= DIGIT_1 && c <= DIGIT_9) i = afterDigits(text, i + 1);
  else return unexpected(text, i);
  if (text.charCodeAt(i) === DOT) {
    if (!isDigit(text.charCodeAt(i + 1))) return unexpected(text, i + 1);
    i = afterDigits(text, i + 1);
  }
  const e = text.charCodeAt(i);
  if (e === LOWER_E || e === UPPER_E) {
    i++;
    const sign = text.charCodeAt(i);
    if (sign === PLUS || sign === MINUS) i++;
    if (!isDigit(text.charCodeAt(i))) return unexpected(text, i);
    i = afterDigits(text, i);
  }
  return { ok: true, end: i };
}

/** End offset of the string opened at `open` (RFC 8259 §7), or what is wrong with it. */
function scanString(text: string, open: number): Step {
  for (let i = open + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) return { ok: true, end: i + 1 };
    if (c < SPACE) return { ok: false, offset: i, reason: 'control character in string' };
    if (c !== BACKSLASH) continue;
    const escaped = text.charCodeAt(i + 1);
    if (escaped === LOWER_U) {
      for (let k = i + 2; k < i + 6; k++) {
        if (!isHexDigit(text.charCodeAt(k))) {
          return k < text.length
            ? { ok: false, offset: i, reason: 'invalid escape' }
            : { ok: false, offset: open, reason: 'unterminated string' };
        }
      }
      i += 5;
    } else if (isSimpleEscape(escaped)) {
      i++;
    } else {
      return i + 1 < text.length
        ? { ok: false, offset: i, reason: 'invalid escape' }
        : { ok: false, offset: open, reason: 'unterminated string' };
    }
  }
  return { ok: false, offset: open, reason: 'unterminated string' };
}

/** One open container. For an object, the span of the current member's key as written (quotes included). */
interface Frame {
  readonly array: boolean;
  index: number;
  keyStart: number;
  keyEnd: number;
}

type Walked =
  | { readonly kind: 'error'; readonly offset: number; readonly reason: string }
  | { readonly kind: 'value'; readonly pointer: string }
  | { readonly kind: 'end' };

/**
 * The RFC 8259 grammar as a state machine with an explicit stack (no recursion):
 *    JSON-text = ws value ws;  object = { [ member *( , member ) ] };  member = string : value;
 *    array = [ [ value *( , value ) ] ];  value = false / null / true / object / array / number / string
 * Stops at the first error, or at the value starting at `target` (returning its pointer), or at the end.
 */
function walk(text: string, target: number): Walked {
  const stack: Frame[] = [];
  let state: WalkState = VALUE;
  let i = 0;
  for (;;) {
    i = afterWhitespace(text, i);
    if (i >= text.length) {
      return state === AFTER_VALUE && stack.length === 0
        ? { kind: 'end' }
        : { kind: 'error', offset: i, reason: 'unexpected end of input' };
    }
    const c = text.charCodeAt(i);
    const top = stack.at(-1);
    if (state === AFTER_VALUE) {
      if (top === undefined) return unexpectedCharacter(i);
      if (c === COMMA) {
        top.index++;
        state = top.array ? VALUE : KEY;
        i++;
      } else if (c === (top.array ? CLOSE_BRACKET : CLOSE_BRACE)) {
        stack.pop();
        i++;
      } else {
        return unexpectedCharacter(i);
      }
    } else if (state === OBJECT_START || state === KEY) {
      if (state === OBJECT_START && c === CLOSE_BRACE) {
        stack.pop();
        state = AFTER_VALUE;
        i++;
        continue;
      }
      if (c !== QUOTE || top === undefined) return unexpectedCharacter(i);
      const key = scanString(text, i);
      if (!key.ok) return { kind: 'error', offset: key.offset, reason: key.reason };
      top.keyStart = i;
      top.keyEnd = key.end;
      state = AFTER_KEY;
      i = key.end;
    } else if (state === AFTER_KEY) {
      if (c !== COLON) return unexpectedCharacter(i);
      state = VALUE;
      i++;
    } else if (state === ARRAY_START && c === CLOSE_BRACKET) {
      stack.pop();
      state = AFTER_VALUE;
      i++;
    } else {
      // A value starts here.
      if (i === target) return { kind: 'value', pointer: pointerOf(text, stack) };
      if (c === OPEN_BRACE || c === OPEN_BRACKET) {
        stack.push({ array: c === OPEN_BRACKET, index: 0, keyStart: 0, keyEnd: 0 });
        state = c === OPEN_BRACKET ? ARRAY_START : OBJECT_START;
        i++;
        continue;
      }
      const step =
        c === QUOTE ? scanString(text, i) : c === MINUS || isDigit(c) ? scanNumber(text, i) : scanWord(text, i);
      if (!step.ok) return { kind: 'error', offset: step.offset, reason: step.reason };
      state = AFTER_VALUE;
      i = step.end;
    }
  }
}

/** `true`, `false` or `null` starting at `start`. */
function scanWord(text: string, start: number): Step {
  const first = text.charCodeAt(start);
  const word = LITERAL_NAMES.find((name) => name.charCodeAt(0) === first);
  if (word === undefined) return unexpected(text, start);
  for (let k = 1; k < word.length; k++) {
    if (text.charCodeAt(start + k) !== word.charCodeAt(k)) return unexpected(text, start + k);
  }
  return { ok: true, end: start + word.length };
}

/** RFC 6901 pointer of the value about to start inside the open containers. */
function pointerOf(text: string, stack: readonly Frame[]): string {
  let pointer = '';
  for (const frame of stack) {
    // The key was checked by scanString, so JSON.parse of its literal cannot throw.
    const token = frame.array ? String(frame.index) : (JSON.parse(text.slice(frame.keyStart, frame.keyEnd)) as string);
    pointer += `/${escapePointerToken(token)}`;
  }
  return pointer;
}

function unexpected(text: string, offset: number): Step {
  return { ok: false, offset, reason: offset >= text.length ? 'unexpected end of input' : 'unexpected character' };
}

function unexpectedCharacter(offset: number): Walked {
  return { kind: 'error', offset, reason: 'unexpected character' };
}

/** RFC 8259 §2: ws = *( %x20 / %x09 / %x0A / %x0D ). */
function afterWhitespace(text: string, start: number): number {
  let i = start;
  for (let c = text.charCodeAt(i); c === SPACE || c === TAB || c === LF || c === CR; c = text.charCodeAt(++i));
  return i;
}

function afterDigits(text: string, start: number): number {
  let i = start;
  while (isDigit(text.charCodeAt(i))) i++;
  return i;
}

function isDigit(c: number): boolean {
  return c >= DIGIT_0 && c <= DIGIT_9;
}

function isHexDigit(c: number): boolean {
  return isDigit(c) || (c >= UPPER_A && c <= UPPER_F) || (c >= LOWER_A && c <= LOWER_F);
}

/** RFC 8259 §7: \" \\ \/ \b \f \n \r \t (\u is handled apart). */
function isSimpleEscape(c: number): boolean {
  return (
    c === QUOTE || c === BACKSLASH || c === SLASH ||
    c === LOWER_B || c === LOWER_F || c === LOWER_N || c === LOWER_R || c === LOWER_T
  );
}
