// The few shell forms the README's transcripts use (test/e2e/readme-tour.test.ts), read the way a POSIX
// shell reads them (POSIX.1-2017 XCU §2.2 Quoting, §2.6.3 Command Substitution, §2.7 Redirection), so
// that a line copied from the README into a terminal does what the test did. Anything beyond this
// subset throws rather than being read some other way than a shell would: `$NAME` expansion, globbing,
// pipes and the like are not used in the README, and a transcript that starts using them must teach
// this file first.

/** A piece of one word: literal text, or a `$(...)` whose output takes its place. */
export type WordPart = { readonly kind: 'text'; readonly text: string } | { readonly kind: 'command'; readonly source: string };

export type Token = { readonly kind: 'word'; readonly parts: readonly WordPart[] } | { readonly kind: 'operator'; readonly operator: '<' | '>' | '<<' };

const SPACE = ' ';
const TAB = '\t';
const NEWLINE = '\n';
const BACKSLASH = '\\';
const SINGLE = "'";
const DOUBLE = '"';
const DOLLAR = '$';

/**
 * Splits one command line (continuation lines already joined) into words and redirection operators.
 * Quotes are removed as the shell removes them; a `$(...)` inside double quotes stays a command part.
 */
export function tokenize(line: string): Token[] {
  const tokens: Token[] = [];
  let parts: WordPart[] = [];
  let text = '';
  let inWord = false;
  const endWord = (): void => {
    if (text !== '') parts.push({ kind: 'text', text });
    if (inWord) tokens.push({ kind: 'word', parts });
    parts = [];
    text = '';
    inWord = false;
  };
  let i = 0;
  while (i < line.length) {
    const char = line[i] as string;
    if (char === SPACE || char === TAB || char === NEWLINE) {
      endWord();
      i++;
    } else if (char === '<' || char === '>') {
      endWord();
      const operator = char === '<' && line[i + 1] === '<' ? '<<' : char;
      tokens.push({ kind: 'operator', operator });
      i += operator.length;
    } else if (char === SINGLE) {
      // §2.2.2: everything up to the next single quote is literal.
      const end = line.indexOf(SINGLE, i + 1);
      if (end === -1) throw new SyntaxError(`unterminated single quote at offset ${i}: ${line}`);
      text += line.slice(i + 1, end);
      inWord = true;
      i = end + 1;
    } else if (char === DOUBLE) {
      inWord = true;
      i = readDoubleQuoted(line, i + 1, (piece) => {
        if (typeof piece === 'string') text += piece;
        else {
          if (text !== '') parts.push({ kind: 'text', text });
          text = '';
          parts.push(piece);
        }
      });
    } else if (char === BACKSLASH) {
      // §2.2.1: a backslash outside quotes keeps the next character literal.
      if (i + 1 >= line.length) throw new SyntaxError(`a backslash ends the line: ${line}`);
      text += line[i + 1];
      inWord = true;
      i += 2;
    } else if (char === DOLLAR || char === '`' || '|&;()*?[]{}~#'.includes(char)) {
      throw new SyntaxError(`the tour's shell does not read ${JSON.stringify(char)} outside quotes (offset ${i}): ${line}`);
    } else {
      text += char;
      inWord = true;
      i++;
    }
  }
  endWord();
  return tokens;
}

/** Joins a word's parts, running each `$(...)` through `run`; trailing newlines of its output go (§2.6.3). */
export async function expandWord(parts: readonly WordPart[], run: (source: string) => Promise<string>): Promise<string> {
  let word = '';
  for (const part of parts) word += part.kind === 'text' ? part.text : (await run(part.source)).replace(/\n+$/, '');
  return word;
}

/** A word that must not hold a command substitution (a file name, a heredoc delimiter). */
export function literalWord(token: Token | undefined): string {
  if (token === undefined || token.kind !== 'word' || token.parts.some((part) => part.kind !== 'text')) {
    throw new SyntaxError('expected a plain word');
  }
  return token.parts.map((part) => (part.kind === 'text' ? part.text : '')).join('');
}

/** Reads from just after an opening double quote; returns the offset after the closing one. */
function readDoubleQuoted(line: string, start: number, emit: (piece: string | WordPart) => void): number {
  let i = start;
  while (i < line.length) {
    const char = line[i] as string;
    if (char === DOUBLE) return i + 1;
    if (char === BACKSLASH && '$`"\\\n'.includes(line[i + 1] ?? '')) {
      // §2.2.3: inside double quotes a backslash escapes only these characters.
      emit(line[i + 1] as string);
      i += 2;
    } else if (char === DOLLAR && line[i + 1] === '(') {
      const end = closingParenthesis(line, i + 2);
      emit({ kind: 'command', source: line.slice(i + 2, end) });
      i = end + 1;
    } else if (char === DOLLAR || char === '`') {
      throw new SyntaxError(`the tour's shell expands only $(...) inside double quotes (offset ${i}): ${line}`);
    } else {
      emit(char);
      i++;
    }
  }
  throw new SyntaxError(`unterminated double quote: ${line}`);
}

/** The `)` that closes a `$(` opened before `start`; quotes inside are skipped over. */
function closingParenthesis(line: string, start: number): number {
  let depth = 1;
  let quote = '';
  for (let i = start; i < line.length; i++) {
    const char = line[i] as string;
    if (quote !== '') {
      if (char === quote) quote = '';
    } else if (char === SINGLE || char === DOUBLE) quote = char;
    else if (char === '(') depth++;
    else if (char === ')' && --depth === 0) return i;
  }
  throw new SyntaxError(`unterminated $( in: ${line}`);
}
