// JSON Pointer tokens (RFC 6901): how a member's name is written inside a path, so that a name holding
// "/" or "~" is never mistaken for a nested path. Problems point at members with these (RFC 9457
// `errors[].pointer`), the field registry and the CSV columns name nested members with them, and a
// bulk file's nested columns are read back with them (CONVENTIONS.md#problem-details, #bulk-updates).

/** RFC 6901 §3: "~" → "~0", then "/" → "~1". */
export function escapePointerToken(token: string): string {
  if (!token.includes('~') && !token.includes('/')) return token;
  return token.replaceAll('~', '~0').replaceAll('/', '~1');
}

/** RFC 6901 §4: "~1" → "/" before "~0" → "~", so "~01" is "~1" and not "/". */
export function unescapePointerToken(token: string): string {
  if (!token.includes('~')) return token;
  return token.replaceAll('~1', '/').replaceAll('~0', '~');
}

/** RFC 6901 §3: in escaped text, "~" only ever starts "~0" or "~1". */
export function isEscapedPointerText(text: string): boolean {
  for (let at = text.indexOf('~'); at !== -1; at = text.indexOf('~', at + 2)) {
    const next = text[at + 1];
    if (next !== '0' && next !== '1') return false;
  }
  return true;
}

/** The pointer to the member reached through `tokens` ("" for the whole document). */
export function pointerOf(tokens: readonly (string | number)[]): string {
  let pointer = '';
  for (const token of tokens) pointer += `/${escapePointerToken(String(token))}`;
  return pointer;
}
