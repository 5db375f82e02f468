// Media types: RFC 9110 §8.3.1 (Content-Type), §5.6.6 (parameters), §5.6.2 (token), §5.6.4
// (quoted-string), and the RFC 6839 / RFC 6838 §4.2.8 "+json" structured syntax suffix. resapi
// accepts `application/json` or `*+json` request bodies and `text/csv` for `$bulk`
// (CONVENTIONS.md#content-negotiation).
//
//   media-type      = type "/" subtype parameters
//   parameters      = *( OWS ";" OWS [ parameter ] )
//   parameter       = parameter-name "=" parameter-value
//   parameter-value = ( token / quoted-string )
//
// The field syntax itself (OWS, token, quoted-string) is read by field-syntax.ts, shared with the
// other header parsers.

import { readToken, readWord, skipOws } from './field-syntax.js';

const SLASH = 0x2f;
const SEMICOLON = 0x3b;
const EQUALS = 0x3d;

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
