// The Prefer request header: RFC 7240 §2, and the page size preference of OData 4.01 Part 1
// §8.2.8.4 (`odata.maxpagesize`, which 4.01 also accepts without the `odata.` prefix).
// CONVENTIONS.md#page-size: the client sets the page size with `Prefer: maxpagesize=N`; the caller
// clamps N and answers `Preference-Applied` with the token the client used.
//
//   Prefer     = 1#preference
//   preference = token [ BWS "=" BWS word ] *( OWS ";" [ OWS parameter ] )
//   parameter  = token [ BWS "=" BWS word ]
//   word       = token / quoted-string
import { COMMA, readToken, readWord, skipOws, skipToListEnd } from './field-syntax.js';

const SEMICOLON = 0x3b;
const EQUALS = 0x3d;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;

export type MaxPageSizeToken = 'maxpagesize' | 'odata.maxpagesize';

export interface Preferences {
  readonly maxPageSize?: number;
  /** the token as the client spelled it (lowercased), for Preference-Applied */
  readonly maxPageSizeToken?: MaxPageSizeToken;
}

/** One preference as read from a field line; `value` is undefined when none (or an empty one) was given. */
interface Preference {
  readonly name: string;
  readonly value: string | undefined;
  readonly end: number;
}

/**
 * Parses every Prefer field line (Node's req.headersDistinct['prefer']). Unknown preferences are
 * ignored (RFC 7240 §2). Token names case-insensitive. A maxpagesize that is not a positive integer
 * is ignored. When both spellings appear the first wins.
 *
 * RFC 7240 §2: "If any preference is specified more than once, only the first instance is to be
 * considered"; both spellings name one preference, so the first of either decides, even when its
 * value is unusable (then no page size is preferred at all).
 */
export function parsePrefer(lines: readonly string[] | undefined): Preferences {
  if (lines === undefined) return {};
  if (!Array.isArray(lines)) throw new TypeError('parsePrefer: lines must be an array of strings or undefined');
  for (const line of lines) {
    if (typeof line !== 'string') throw new TypeError('parsePrefer: every field line must be a string');
    const found = findMaxPageSize(line);
    if (found !== undefined) return found;
  }
  return {};
}

// The first max page size preference of one field line as Preferences, or undefined when the line
// has none. A line is a comma-separated list (RFC 9110 §5.6.1); a malformed member is skipped.
function findMaxPageSize(line: string): Preferences | undefined {
  let i = 0;
  while (i < line.length) {
    i = skipOws(line, i);
    if (i >= line.length) break;
    if (line.charCodeAt(i) === COMMA) {
      i++;
      continue;
    }
    const preference = readPreference(line, i);
    const end = preference === undefined ? i : skipOws(line, preference.end);
    if (preference === undefined || (end < line.length && line.charCodeAt(end) !== COMMA)) {
      i = skipToListEnd(line, i);
      continue;
    }
    if (preference.name === 'maxpagesize' || preference.name === 'odata.maxpagesize') {
      const size = preference.value === undefined ? undefined : parsePositiveInteger(preference.value);
      return size === undefined ? {} : { maxPageSize: size, maxPageSizeToken: preference.name };
    }
    i = end;
  }
  return undefined;
}

function readPreference(text: string, start: number): Preference | undefined {
  const nameEnd = readToken(text, start);
  if (nameEnd === start) return undefined;
  const valued = readOptionalValue(text, nameEnd);
  if (valued === undefined) return undefined;
  let end = valued.end;
  for (;;) {
    let i = skipOws(text, end);
    if (text.charCodeAt(i) !== SEMICOLON) break;
    i = skipOws(text, i + 1);
    const parameterEnd = readToken(text, i);
    if (parameterEnd === i) {
      end = i;
      continue;
    }
    // Parameters qualify a preference; none is defined for maxpagesize, so they are read and dropped.
    const parameter = readOptionalValue(text, parameterEnd);
    if (parameter === undefined) return undefined;
    end = parameter.end;
  }
  return { name: text.slice(start, nameEnd).toLowerCase(), value: valued.value, end };
}

// `[ BWS "=" BWS word ]` after a token ending at `tokenEnd`: the value and where it ends; undefined
// when "=" is not followed by a word. RFC 7240 §2: "Empty or zero-length values on both the
// preference token and within parameters are equivalent to no value being specified at all".
function readOptionalValue(text: string, tokenEnd: number): { value: string | undefined; end: number } | undefined {
  const equals = skipOws(text, tokenEnd);
  if (text.charCodeAt(equals) !== EQUALS) return { value: undefined, end: tokenEnd };
  const word = readWord(text, skipOws(text, equals + 1));
  if (word === undefined) return undefined;
  return { value: word.value === '' ? undefined : word.value, end: word.end };
}

// 1*DIGIT with a value of at least 1. A value beyond Number.MAX_SAFE_INTEGER is still a positive
// integer the client asked for; it is reported as MAX_SAFE_INTEGER so the caller's clamp applies.
function parsePositiveInteger(value: string): number | undefined {
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code < DIGIT_0 || code > DIGIT_9) return undefined;
  }
  const size = Number(value);
  if (size < 1) return undefined;
  return Number.isSafeInteger(size) ? size : Number.MAX_SAFE_INTEGER;
}
