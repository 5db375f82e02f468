// Literal tokens as syntax-tree nodes: the subset of the ABNF `primitiveLiteral` that `$filter`
// accepts here (CONTRACT §5: "`null true false`, strings with `''` escaping, numbers …, dates").
//   null = %s"null" ; boolean = "true" / "false" ; stringLiteral ; decimalLiteral ; date ;
//   dateTimeOffsetLiteral
// `null`, `true` and `false` are matched case-sensitively (CONTRACT §5: "`null` and property names
// are case-sensitive"; the ABNF lets booleans be any case, a deliberate departure so that `True`
// stays a property path like `NULL`).
import type { DateNode, LiteralNode } from './ast.js';
import type { Token } from './lexer.js';

const LITERAL_WORDS: ReadonlyMap<string, null | boolean> = new Map([['null', null], ['true', true], ['false', false]]);

/** Is this word `null`, `true` or `false` (exact case)? */
export function isLiteralWord(word: string): boolean {
  return LITERAL_WORDS.has(word);
}

/** The literal node a token stands for, or null when the token is not a literal. */
export function literalNode(token: Token): LiteralNode | DateNode | null {
  switch (token.kind) {
    case 'string': return { kind: 'literal', offset: token.offset, type: 'string', value: token.value };
    case 'number': return { kind: 'literal', offset: token.offset, type: 'number', value: token.value };
    case 'date': return { kind: 'date', offset: token.offset, type: 'date', text: token.text, value: token.value };
    case 'word': {
      const value = LITERAL_WORDS.get(token.text);
      if (value === undefined) return null;
      return { kind: 'literal', offset: token.offset, type: value === null ? 'null' : 'boolean', value };
    }
    default: return null;
  }
}
