// The repository stands on its own: every rule it cites is a heading of CONVENTIONS.md, cited as
// `CONVENTIONS.md#<anchor>` (or `(#<anchor>)` inside CONVENTIONS.md itself), and no file names a document
// or a path outside the repository. Lines of lib/ stay readable at 120 characters.
// The tree is read from the repository root (this file runs as build/test/conventions.test.js), not from
// build/, so comments are checked as written.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkCatalogue } from '../lib/check/checks.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CONVENTIONS = 'CONVENTIONS.md';
/** What the citation scan reads: folders walked recursively, and single files. */
const SCANNED = ['lib', 'test', 'bin', 'README.md', CONVENTIONS];
const MAX_LINE = 120;

// Built from parts so that this file does not contain what it forbids.
const FORBIDDEN: readonly { readonly what: string; readonly pattern: RegExp }[] = [
  { what: ['CON', 'TRACT'].join(''), pattern: new RegExp(`\\b${['CON', 'TRACT'].join('')}\\b`) },
  { what: ['000_', '6c4ac366240103ff'].join(''), pattern: new RegExp(['000_', '6c4ac366240103ff'].join('')) },
  { what: ['..', '/shared'].join(''), pattern: new RegExp(['\\.\\.', '/shared'].join('')) },
  { what: ['shared', '/seed'].join(''), pattern: new RegExp(['shared', '/seed'].join('')) },
  // The rules' source document cited by its short name (with a section after a comma, in parentheses,
  // as a possessive). The word on its own is the sample data that `--seed` loads, and stays.
  {
    what: 'the source document of the rules',
    pattern: /\bthe seed's\b|\bseed, [A-Z"`]|(^|\s)\(seed[,;)]|\bseed "|\bseed (rule|row|§)|\bSeed: |\bthe seed (asks|says|prefers|calls?)\b/,
  },
];

/** One line of one scanned file; `file` is relative to the repository root, with forward slashes. */
interface SourceLine {
  readonly file: string;
  readonly number: number;
  readonly text: string;
}

describe('CONVENTIONS.md citations', () => {
  const anchors = definedAnchors(readFileSync(join(ROOT, CONVENTIONS), 'utf8'));

  it('should define anchors (the headings of CONVENTIONS.md were read)', () => {
    assert.ok(anchors.size > 0, `${CONVENTIONS} defines no heading`);
  });

  it('should cite only anchors that CONVENTIONS.md defines', () => {
    const broken: string[] = [];
    for (const line of scannedLines()) {
      for (const anchor of citedAnchors(line)) {
        if (anchors.has(anchor)) continue;
        broken.push(`${where(line)}: ${CONVENTIONS}#${anchor} is not a heading of ${CONVENTIONS}`);
      }
    }
    assert.equal(broken.length, 0, `${broken.length} citation(s) of a missing anchor:\n${broken.join('\n')}`);
  });

  it('should give every check of the catalogue a rule that is an anchor of CONVENTIONS.md', () => {
    // The checker cites each rule it checks by anchor (its report line and --json carry it).
    const entries = checkCatalogue();
    assert.ok(entries.length > 0, 'checkCatalogue() should list the checks');
    const broken = entries
      .filter((entry) => !anchors.has(entry.anchor))
      .map((entry) => `check ${entry.id}: #${entry.anchor} is not a heading of ${CONVENTIONS}`);
    assert.equal(broken.length, 0, `${broken.length} check(s) citing a missing anchor:\n${broken.join('\n')}`);
  });
});

describe('self-contained repository', () => {
  it('should not mention documents or paths outside the repository', () => {
    const found: string[] = [];
    for (const line of scannedLines()) {
      for (const { what, pattern } of FORBIDDEN) {
        if (pattern.test(line.text)) found.push(`${where(line)}: mentions ${what}`);
      }
    }
    assert.equal(found.length, 0, `${found.length} mention(s) of what is outside the repository:\n${found.join('\n')}`);
  });
});

describe('lib/ line length', () => {
  it(`should keep every line of lib/ at most ${MAX_LINE} characters, URLs and comment table rows excepted`, () => {
    const long: string[] = [];
    for (const line of linesOf(filesUnder('lib'))) {
      const length = [...line.text].length;
      if (length > MAX_LINE && !isExempt(line.text)) long.push(`${where(line)}: ${length} characters`);
    }
    assert.equal(long.length, 0, `${long.length} line(s) over ${MAX_LINE} characters:\n${long.join('\n')}`);
  });
});

describe('definedAnchors', () => {
  it('should slug headings as GitHub does, numbering repeats', () => {
    const text = [
      '# resapi conventions',
      '## Cache-Control',
      '### PUT responses',
      '### `If-Match` and 412, again!',
      '## Vary ##',
      '```',
      '## not a heading',
      '```',
      '### Vary',
      '### Vary',
      '#### [Linked](https://example.com/) name_1'
    ].join('\n');
    assert.deepEqual([...definedAnchors(text)], [
      'resapi-conventions', 'cache-control', 'put-responses', 'if-match-and-412-again', 'vary', 'vary-1', 'vary-2',
      'linked-name_1'
    ]);
  });

  it('should find citations, markdown links and links inside CONVENTIONS.md', () => {
    const cited = (file: string, text: string): string[] => [...citedAnchors({ file, number: 1, text })];
    // Written as templates, so that the scan of this file finds none of these citations.
    const doc = CONVENTIONS;
    assert.deepEqual(cited('lib/a.ts', `// Strong ETag (${doc}#etags).`), ['etags']);
    assert.deepEqual(cited('README.md', `see [ETags](${doc}#etags) and [Vary](./${doc}#vary)`), ['etags', 'vary']);
    assert.deepEqual(cited(CONVENTIONS, 'as [paging](#paging) says, and [cap]: #body-cap'), ['paging']);
    assert.deepEqual(cited(CONVENTIONS, '[cap]: #body-cap'), ['body-cap']);
    assert.deepEqual(cited('README.md', 'as [paging](#paging) says'), []);
    assert.deepEqual(cited('lib/a.ts', `${doc}#Cache-Control, ${doc}# alone, ${doc}#etags.`),
      ['Cache-Control', '', 'etags']);
    assert.deepEqual(cited('lib/a.ts', `cite as \`${doc}#<anchor>\`: const url = \`\${base}${doc}#\${anchor}\`;`), []);
  });
});

/** The anchors GitHub gives the headings of a markdown text (ATX headings outside fenced code). */
function definedAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const occurrences = new Map<string, number>();
  let fence: string | undefined;
  for (const line of markdown.split(/\r?\n/)) {
    const fenceMark = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fenceMark !== undefined) {
      if (fence === undefined) fence = fenceMark;
      else if (fenceMark[0] === fence[0] && fenceMark.length >= fence.length) fence = undefined;
      continue;
    }
    if (fence !== undefined) continue;
    const heading = /^ {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/.exec(line);
    if (heading === null) continue;
    // github-slugger: a slug already taken gets -1, -2, … (the first free one).
    const base = slug(headingText(heading[1] ?? ''));
    let anchor = base;
    while (anchors.has(anchor)) {
      const count = (occurrences.get(base) ?? 0) + 1;
      occurrences.set(base, count);
      anchor = `${base}-${count}`;
    }
    anchors.add(anchor);
  }
  return anchors;
}

/** The text a heading renders as: links and images by their text, HTML tags dropped. */
function headingText(source: string): string {
  return source.replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/<[^>]*>/g, '');
}

/** GitHub's slug: lower case, keep letters, digits, spaces, hyphens and underscores, each space → "-". */
function slug(text: string): string {
  return text.trim().toLowerCase().replace(/[^\p{L}\p{M}\p{N} _-]/gu, '').replace(/ /g, '-');
}

/** The anchors a line cites: `CONVENTIONS.md#<anchor>` anywhere, and `](#<anchor>)` links inside CONVENTIONS.md. */
function* citedAnchors(line: SourceLine): Generator<string> {
  for (const match of line.text.matchAll(/CONVENTIONS\.md#([\p{L}\p{M}\p{N}_-]*)/gu)) {
    const anchor = match[1] ?? '';
    // A placeholder (`CONVENTIONS.md#<anchor>`) or a template that builds citations cites nothing itself.
    if (anchor === '' && /^(?:<|\$?\{)/.test(line.text.slice((match.index ?? 0) + match[0].length))) continue;
    yield anchor;
  }
  if (line.file !== CONVENTIONS) return;
  for (const match of line.text.matchAll(/\]\(#([^)\s]*)\)|^ {0,3}\[[^\]]+\]:[ \t]*#(\S*)/gu)) {
    yield match[1] ?? match[2] ?? '';
  }
}

/** A URL makes a line as long as it must be; so does a table row in a comment. */
function isExempt(text: string): boolean {
  return /https?:\/\//.test(text) || /^\s*(?:\/\/|\*)\s*\|/.test(text);
}

function where(line: SourceLine): string {
  return `${line.file}:${line.number}`;
}

/** Every line of every scanned file. */
function scannedLines(): Generator<SourceLine> {
  return linesOf(SCANNED.flatMap((entry) => (entry.includes('.') ? [entry] : filesUnder(entry))));
}

function* linesOf(files: readonly string[]): Generator<SourceLine> {
  for (const file of files) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    if (text.includes('\u0000')) continue; // not text
    const lines = text.split(/\r?\n/);
    for (let index = 0; index < lines.length; index++) yield { file, number: index + 1, text: lines[index] ?? '' };
  }
}

/** Files under `folder` (relative to the root), recursively, sorted, as root-relative paths with "/". */
function filesUnder(folder: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(join(ROOT, folder), { withFileTypes: true })) {
    const path = `${folder}/${entry.name}`;
    if (entry.isDirectory()) files.push(...filesUnder(path));
    else if (entry.isFile()) files.push(path);
  }
  return files.sort();
}
