// The README's transcripts (the blocks marked `<!-- transcript: ID -->`): finding them, splitting each
// into the commands typed and what was printed, writing a block back, and comparing a block with what a
// real run printed, with a diff a reader can act on.
import { literalWord, tokenize } from './shell.js';

export interface TypedCommand {
  /** The command as one line, continuation backslash-newlines removed (what the shell runs). */
  readonly line: string;
  /** The heredoc's text when the command reads one (`cat > f <<'EOF'`), lines and final newline included. */
  readonly heredoc: string | undefined;
  /** Exactly what the block shows for the command: `$ `, its lines, and any heredoc with its delimiter. */
  readonly typed: string;
}

export interface Transcript {
  readonly id: string;
  readonly commands: readonly TypedCommand[];
  /** The block's content between the fences, final newline included. */
  readonly text: string;
}

/** A marker, then a ```console fence; the content runs to the next fence at the start of a line. */
const BLOCK = /^<!-- transcript: (\S+) -->\n```console\n([\s\S]*?)^```$/gm;
const PROMPT = '$ ';
/** Lines of unchanged context kept around each difference. */
const CONTEXT = 2;

export function readTranscripts(readme: string): Transcript[] {
  return [...readme.matchAll(BLOCK)].map((match) => ({ id: match[1] as string, text: match[2] as string, commands: readCommands(match[1] as string, match[2] as string) }));
}

/** The block as a run printed it: each command as typed, then its output (which ends with a newline, as a terminal shows it). */
export function renderTranscript(commands: readonly TypedCommand[], outputs: readonly string[]): string {
  return commands.map((command, index) => command.typed + terminal(outputs[index] ?? '')).join('');
}

/** The README with the content of the named blocks replaced; every other byte is kept. */
export function replaceTranscripts(readme: string, contents: ReadonlyMap<string, string>): string {
  return readme.replace(BLOCK, (whole: string, id: string) => {
    const content = contents.get(id);
    return content === undefined ? whole : `<!-- transcript: ${id} -->\n\`\`\`console\n${content}\`\`\``;
  });
}

/** Undefined when the block matches what was printed; else a report naming the block, with a line diff. */
export function compareTranscript(id: string, expected: string, actual: string): string | undefined {
  if (expected === actual) return undefined;
  const lines = diffLines(expected.split('\n'), actual.split('\n'));
  const shown = new Set<number>();
  lines.forEach((line, index) => {
    if (line.mark === ' ') return;
    for (let near = index - CONTEXT; near <= index + CONTEXT; near++) shown.add(near);
  });
  let report = `README transcript ${id} differs from what the server printed (- README, + server):\n`;
  let skipped = false;
  lines.forEach((line, index) => {
    if (!shown.has(index)) {
      if (!skipped) report += '  ...\n';
      skipped = true;
      return;
    }
    skipped = false;
    // JSON.stringify shows what a terminal hides: trailing spaces, a CR, a missing final newline.
    report += `${line.mark} ${JSON.stringify(line.text)}\n`;
  });
  return report;
}

interface DiffLine {
  readonly mark: ' ' | '-' | '+';
  readonly text: string;
}

/** A longest-common-subsequence line diff; blocks are a few dozen lines, so the table is small. */
function diffLines(before: readonly string[], after: readonly string[]): DiffLine[] {
  const rows = before.length + 1;
  const columns = after.length + 1;
  const common = new Array<number>(rows * columns).fill(0);
  for (let i = before.length - 1; i >= 0; i--) {
    for (let j = after.length - 1; j >= 0; j--) {
      common[i * columns + j] = before[i] === after[j] ? (common[(i + 1) * columns + j + 1] as number) + 1 : Math.max(common[(i + 1) * columns + j] as number, common[i * columns + j + 1] as number);
    }
  }
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < before.length || j < after.length) {
    if (i < before.length && j < after.length && before[i] === after[j]) {
      out.push({ mark: ' ', text: before[i++] as string });
      j++;
    } else if (i < before.length && (j === after.length || (common[(i + 1) * columns + j] as number) >= (common[i * columns + j + 1] as number))) {
      // On a tie the README's line comes first, as in a unified diff.
      out.push({ mark: '-', text: before[i++] as string });
    } else {
      out.push({ mark: '+', text: after[j++] as string });
    }
  }
  return out;
}

function readCommands(id: string, text: string): TypedCommand[] {
  const lines = text.split('\n');
  const commands: TypedCommand[] = [];
  let i = 0;
  while (i < lines.length) {
    const first = lines[i] as string;
    if (!first.startsWith(PROMPT)) {
      // Output of the previous command; text before the first prompt would be output of nothing.
      if (commands.length === 0 && first !== '') throw new SyntaxError(`transcript ${id}: output before the first "$ " command: ${first}`);
      i++;
      continue;
    }
    const typedLines = [first];
    // A backslash at the end of a line continues the command (POSIX XCU §2.2.1).
    while ((typedLines[typedLines.length - 1] as string).endsWith('\\')) {
      if (i + typedLines.length >= lines.length) throw new SyntaxError(`transcript ${id}: a continued line ends the block`);
      typedLines.push(lines[i + typedLines.length] as string);
    }
    i += typedLines.length;
    const line = typedLines.join('\n').slice(PROMPT.length).replace(/\\\n/g, '');
    const tokens = tokenize(line);
    const here = tokens.findIndex((token) => token.kind === 'operator' && token.operator === '<<');
    let heredoc: string | undefined;
    if (here !== -1) {
      const delimiter = literalWord(tokens[here + 1]);
      const end = lines.indexOf(delimiter, i);
      if (end === -1) throw new SyntaxError(`transcript ${id}: heredoc ${delimiter} never ends`);
      heredoc = lines.slice(i, end).map((bodyLine) => `${bodyLine}\n`).join('');
      typedLines.push(...lines.slice(i, end + 1));
      i = end + 1;
    }
    commands.push({ line, heredoc, typed: `${typedLines.join('\n')}\n` });
  }
  return commands;
}

function terminal(output: string): string {
  return output === '' || output.endsWith('\n') ? output : `${output}\n`;
}
