// Cache-Control (RFC 9111 §5.2): `#cache-directive`, each `token [ "=" ( token / quoted-string ) ]`,
// names case-insensitive. Read by the client's private cache (request and response directives,
// CONVENTIONS.md#cache-control, CONVENTIONS.md#client-library) and by `resapi check`. A member that does
// not parse is skipped and the list read on (§5.2: a cache ignores what it does not understand);
// when a directive appears twice the first one counts. Delta-seconds (§1.2.2) that overflow are
// taken as 2^31, as the RFC asks.
import { COMMA, readToken, readWord, skipOws, skipToListEnd } from './field-syntax.js';

export type CacheDirectives = ReadonlyMap<string, string | true>;

/** The greatest delta-seconds a cache must handle (RFC 9111 §1.2.2). */
const MAX_DELTA_SECONDS = 2_147_483_648;

export function parseCacheControl(lines: readonly string[] | string | undefined): CacheDirectives {
  const directives = new Map<string, string | true>();
  for (const text of typeof lines === 'string' ? [lines] : (lines ?? [])) {
    let i = 0;
    while (i < text.length) {
      i = skipOws(text, i);
      const nameEnd = readToken(text, i);
      if (nameEnd > i) {
        const name = text.slice(i, nameEnd).toLowerCase();
        let j = skipOws(text, nameEnd);
        let value: string | true = true;
        let valid = true;
        if (text[j] === '=') {
          const word = readWord(text, skipOws(text, j + 1));
          if (word === undefined) valid = false;
          else {
            value = word.value;
            j = skipOws(text, word.end);
          }
        }
        const ended = j >= text.length || text.charCodeAt(j) === COMMA;
        if (valid && ended && !directives.has(name)) directives.set(name, value);
      }
      i = skipToListEnd(text, i) + 1;
    }
  }
  return directives;
}

/** A directive's delta-seconds (`max-age=60`), or undefined when absent or not digits. */
export function deltaSeconds(directives: CacheDirectives, name: string): number | undefined {
  const value = directives.get(name);
  if (typeof value !== 'string' || !/^\d+$/.test(value)) return undefined;
  return Math.min(Number(value), MAX_DELTA_SECONDS);
}
