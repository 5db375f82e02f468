// Literal tokens as syntax-tree nodes: the subset of the ABNF `primitiveLiteral` that `$filter`
// accepts here (CONVENTIONS.md#filter-grammar: `null true false`, strings with `''` escaping,
// numbers, dates).
//   nullValue = 'null' ; booleanValue = "true" / "false" ; string ; decimalValue ; dateValue ;
//   dateTimeOffsetValueInUrl
// The OData ABNF writes case-sensitive strings in single quotes and case-insensitive ones in double
// quotes (RFC 5234 §2.3), so `null` matches exactly and `true`/`false` in any case: `TRUE` and
// `False` are Booleans, while `NULL` stays a property path (`null` and property names are
// case-sensitive, CONVENTIONS.md#filter-grammar).
import type { DateNode, LiteralNode } from './ast.js';
import type { Token } from './lexer.js';

/** The value of a literal word (`null` exactly, `true`/`false` in any case); undefined otherwise. */
function literalWord(word: string): null | boolean | undefined {
  if (word === 'null') return null;
  const lower = word.toLowerCase();
  return lower === 'true' ? true : lower === 'false' ? false : undefined;
}

/** Is this word `null` (exact case), `true` or `false` (any case)? */
export function isLiteralWord(word: string): boolean {
  return literalWord(word) !== undefined;
}

/** The literal node a token stands for, or null when the token is not a literal. */
export function literalNode(token: Token): LiteralNode | DateNode | null {
  switch (token.kind) {
    case 'string': return { kind: 'literal', offset: token.offset, type: 'string', value: token.value };
    case 'number': return { kind: 'literal', offset: token.offset, type: 'number', value: token.value };
    case 'date': return { kind: 'date', offset: token.offset, type: 'date', text: token.text, value: token.value };
    case 'word': {
      const value = literalWord(token.text);
      if (value === undefined) return null;
      return { kind: 'literal', offset: token.offset, type: value === null ? 'null' : 'boolean', value };
    }
    default: return null;
  }
}
