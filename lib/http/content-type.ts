// Media types: RFC 9110 §8.3.1 (Content-Type), §5.6.6 (parameters), §5.6.2 (token), §5.6.4
// (quoted-string), and the RFC 6839 / RFC 6838 §4.2.8 "+json" structured syntax suffix. CONTRACT §3
// accepts `application/json` or `*+json` request bodies and `text/csv` for `$bulk`.
//
//   media-type      = type "/" subtype parameters
//   parameters      = *( OWS ";" OWS [ parameter ] )
//   parameter       = parameter-name "=" parameter-value
//   parameter-value = ( token / quoted-string )
//
// The field-syntax readers at the end of this file (OWS, token, word, list skipping) are exported
// because the Accept parser (negotiate.ts) and the Prefer parser (prefer.ts) read the same grammar.

const HTAB = 0x09;
const SP = 0x20;
const DQUOTE = 0x22;
const COMMA = 0x2c;
const SLASH = 0x2f;
const SEMICOLON = 0x3b;
const EQUALS = 0x3d;
const BACKSLASH = 0x5c;
const DEL = 0x7f;
const OBS_TEXT_MAX = 0xff;

/** A parsed media type: type, subtype and parameter names lowercased; parameter values unquoted. */
export interface MediaType {
  readonly type: string;
  readonly subtype: string;
  readonly parameters: ReadonlyMap<string, string>;
}

/** One parameter as written, in order (the Accept parser needs the order to find its weight). */
export interface MediaParameter {
  readonly name: string;
  readonly value: string;
}

/** A media type read from inside a longer field value; `end` is the index just past it. */
export interface MediaTypeSyntax {
  readonly type: string;
  readonly subtype: string;
  readonly parameters: readonly MediaParameter[];
  readonly end: number;
}

/** A token or quoted-string value read at some index; `end` is the index just past it. */
export interface Word {
  readonly value: string;
  readonly end: number;
}

/** Parses a whole Content-Type field value; undefined when it is malformed. */
export function parseMediaType(value: string): MediaType | undefined {
  if (typeof value !== 'string') throw new TypeError('parseMediaType: value must be a string');
  const syntax = readMediaType(value, skipOws(value, 0));
  if (syntax === undefined || skipOws(value, syntax.end) !== value.length) return undefined;
  const parameters = new Map<string, string>();
  for (const { name, value: parameterValue } of syntax.parameters) {
    // RFC 9110 does not say which of two `charset`s wins; a sender that repeats one is not trusted.
    if (parameters.has(name)) return undefined;
    parameters.set(name, parameterValue);
  }
  return { type: syntax.type, subtype: syntax.subtype, parameters };
}

/** application/json, or any `+json` structured syntax suffix such as application/problem+json (RFC 6839 §3.1). */
export function isJsonMediaType(type: MediaType): boolean {
  if (type.type === 'application' && type.subtype === 'json') return true;
  // RFC 6838 §4.2.8: the suffix follows a non-empty name, so a bare "+json" subtype is not one.
  return type.subtype.length > '+json'.length && type.subtype.endsWith('+json');
}

/** text/csv (RFC 4180 §3, RFC 7111); its `charset` and `header` parameters do not change the answer. */
export function isCsvMediaType(type: MediaType): boolean {
  return type.type === 'text' && type.subtype === 'csv';
}

/**
 * Reads `type "/" subtype parameters` starting at `start` (no leading OWS) and stops before whatever
 * follows it (a comma, the end, or garbage the caller must judge). Wildcards are tokens too (`*` is
 * a tchar), so Accept's media-range reads with this and the caller decides where `*` may appear.
 */
export function readMediaType(text: string, start: number): MediaTypeSyntax | undefined {
  const typeEnd = readToken(text, start);
  if (typeEnd === start || text.charCodeAt(typeEnd) !== SLASH) return undefined;
  const subtypeEnd = readToken(text, typeEnd + 1);
  if (subtypeEnd === typeEnd + 1) return undefined;
  const parameters: MediaParameter[] = [];
  let end = subtypeEnd;
  for (;;) {
    let i = skipOws(text, end);
    if (text.charCodeAt(i) !== SEMICOLON) break;
    i = skipOws(text, i + 1);
    const nameEnd = readToken(text, i);
    if (nameEnd === i) {
      // §5.6.6 allows an empty parameter (`text/plain; ; charset=utf-8`, or a trailing ";").
      end = i;
      continue;
    }
    // §5.6.6: no whitespace is allowed around "=" in a media type parameter.
    if (text.charCodeAt(nameEnd) !== EQUALS) return undefined;
    const word = readWord(text, nameEnd + 1);
    if (word === undefined) return undefined;
    parameters.push({ name: text.slice(i, nameEnd).toLowerCase(), value: word.value });
    end = word.end;
  }
  return {
    type: text.slice(start, typeEnd).toLowerCase(),
    subtype: text.slice(typeEnd + 1, subtypeEnd).toLowerCase(),
    parameters,
    end,
  };
}

/** Index of the first character at or after `i` that is not optional whitespace (OWS, §5.6.3). */
export function skipOws(text: string, i: number): number {
  let j = i;
  while (j < text.length) {
    const code = text.charCodeAt(j);
    if (code !== SP && code !== HTAB) break;
    j++;
  }
  return j;
}

/** Index just past the token starting at `i` (§5.6.2); equals `i` when there is none. */
export function readToken(text: string, i: number): number {
  let j = i;
  while (j < text.length && isTokenCode(text.charCodeAt(j))) j++;
  return j;
}

/** Reads `token / quoted-string` at `i` (a parameter value, §5.6.6); undefined when neither is there. */
export function readWord(text: string, i: number): Word | undefined {
  if (text.charCodeAt(i) === DQUOTE) return readQuotedString(text, i);
  const end = readToken(text, i);
  return end === i ? undefined : { value: text.slice(i, end), end };
}

/**
 * Index of the next list separator (a comma outside any quoted-string, §5.6.1) at or after `i`, or
 * the end of `text`: how a list parser skips a malformed member and carries on with the next one.
 */
export function skipToListEnd(text: string, i: number): number {
  let j = i;
  let quoted = false;
  while (j < text.length) {
    const code = text.charCodeAt(j);
    if (quoted && code === BACKSLASH) j++;
    else if (code === DQUOTE) quoted = !quoted;
    else if (!quoted && code === COMMA) return j;
    j++;
  }
  return text.length;
}

// quoted-string = DQUOTE *( qdtext / quoted-pair ) DQUOTE                       (§5.6.4)
// qdtext        = HTAB / SP / %x21 / %x23-5B / %x5D-7E / obs-text
// quoted-pair   = "\" ( HTAB / SP / VCHAR / obs-text )
function readQuotedString(text: string, start: number): Word | undefined {
  let value = '';
  let chunkStart = start + 1;
  for (let i = start + 1; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === DQUOTE) return { value: value + text.slice(chunkStart, i), end: i + 1 };
    if (code === BACKSLASH) {
      if (i + 1 >= text.length || !isQuotedPairCode(text.charCodeAt(i + 1))) return undefined;
      value += text.slice(chunkStart, i);
      chunkStart = i + 1;
      i++;
    } else if (!isQuotedPairCode(code)) {
      return undefined;
    }
  }
  return undefined;
}

// HTAB / SP / VCHAR / obs-text: every qdtext code, plus DQUOTE and "\" once escaped.
function isQuotedPairCode(code: number): boolean {
  return code === HTAB || (code >= SP && code !== DEL && code <= OBS_TEXT_MAX);
}

// tchar = "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." / "^" / "_" / "`" / "|" / "~"
//       / DIGIT / ALPHA                                                        (§5.6.2)
function isTokenCode(code: number): boolean {
  if (code >= 0x30 && code <= 0x39) return true; // DIGIT
  if ((code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a)) return true; // ALPHA
  switch (code) {
    case 0x21: case 0x23: case 0x24: case 0x25: case 0x26: case 0x27: case 0x2a: case 0x2b:
    case 0x2d: case 0x2e: case 0x5e: case 0x5f: case 0x60: case 0x7c: case 0x7e:
      return true;
    default:
      return false;
  }
}
