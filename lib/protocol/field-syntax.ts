// The field syntax of RFC 9110 §5.6 that every header parser reads: optional whitespace (§5.6.3),
// tokens (§5.6.2), quoted-strings (§5.6.4) and comma-separated lists (§5.6.1). One module, so the
// media-type, Accept, Prefer, entity-tag, HTTP-date and Idempotency-Key parsers all read the grammar
// the same way. Each reader takes the text and an index and returns where it stopped: `charCodeAt`
// loops, no regular expressions, no allocation beyond the value read.
//
//   OWS           = *( SP / HTAB )
//   token         = 1*tchar
//   quoted-string = DQUOTE *( qdtext / quoted-pair ) DQUOTE
//   #element      = [ element ] *( OWS "," OWS [ element ] )

export const HTAB = 0x09;
export const SP = 0x20;
export const DQUOTE = 0x22;
export const COMMA = 0x2c;
const BACKSLASH = 0x5c;
const DEL = 0x7f;
const OBS_TEXT_MAX = 0xff;

/** A token or quoted-string value read at some index; `end` is the index just past it. */
export interface Word {
  readonly value: string;
  readonly end: number;
}

/** SP or HTAB, the two characters of OWS. */
function isOws(code: number): boolean {
  return code === SP || code === HTAB;
}

/** Index of the first character at or after `i` that is not optional whitespace (OWS, §5.6.3). */
export function skipOws(text: string, i: number): number {
  let j = i;
  while (j < text.length) {
    const code = text.charCodeAt(j);
    if (!isOws(code)) break;
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

/**
 * Removes leading and trailing OWS only (RFC 9110 §5.5: a field value does not include them);
 * String#trim would also remove CR, LF and NBSP, which are not whitespace in a field.
 */
export function trimOws(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && isOws(text.charCodeAt(start))) start++;
  while (end > start && isOws(text.charCodeAt(end - 1))) end--;
  return text.slice(start, end);
}

/**
 * Is the field name `field`, as sent, the name `lower` (lower case), ASCII case-insensitively (RFC 9110
 * §5.1)? Compared in place, without a lower-cased copy.
 */
export function sameFieldName(field: string, lower: string): boolean {
  if (field.length !== lower.length) return false;
  if (field === lower) return true;
  for (let index = 0; index < field.length; index++) {
    // The names asked for are lower-case letters and "-": setting 0x20 lowers an upper-case letter, and
    // turns no other character of a token (RFC 9110 §5.6.2) into a letter or "-".
    const code = field.charCodeAt(index);
    const wanted = lower.charCodeAt(index);
    if (code !== wanted && (code | 0x20) !== wanted) return false;
  }
  return true;
}
