// Holds the `$filter` parser to the grammar that CONVENTIONS.md#filter-grammar states, production
// by production, so the document and the parser cannot drift apart. The section is read here, not
// copied: its sample item, its precedence table and its production table are parsed from the
// Markdown, and every example in them runs through the real parser, compiler, interpreter and the
// query-string layer that answers HTTP requests.
//
// What the section promises, and what each promise is checked against:
// - an accepted example compiles against the sample item's properties (compileFilter), the query
//   string carrying it is planned without a problem (parseQueryString, planQuery), and where the
//   table gives `⇒ true` or `⇒ false`, the compiled predicate, the interpreter and the plan all say
//   whether the sample item matches;
// - a refused example fails with the stated status, error kind and offset, and both the error
//   message and the problem's detail contain the quoted text;
// - a precedence example parses to the same tree as its fully parenthesized twin;
// - the tables name every operator and function the parser knows: the names are read from the
//   parser's own sources (lib/filter/parser.ts, lib/filter/functions.ts), each name read is checked
//   against the running parser so the reading cannot silently come back empty, and the OData ABNF's
//   operator and canonical function names are held to the same rule.
// Example notation (the section explains it too): ⟨SP⟩ ⟨HTAB⟩ ⟨CR⟩ ⟨LF⟩ stand for one character,
// ⟨EMPTY⟩ for nothing, ⟨U+00A0⟩ for any code point, and ⟨text×n⟩ for n copies of text.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { JsonObject } from '../../lib/json.js';
import { compileFilter, interpretFilter, parseFilter, type FilterErrorKind } from '../../lib/filter/index.js';
import { lookupFunction } from '../../lib/filter/functions.js';
import { parseQueryString } from '../../lib/query/options.js';
import { planQuery } from '../../lib/query/plan.js';
import { knownPaths } from './corpus.js';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const SECTION_HEADING = '### Filter grammar';
const ITEM_FENCE = '```json filter-grammar-item';
const PRODUCTION_HEADER = ['ABNF rule', 'resapi production', 'Supported', 'Accepted', 'Refused'];
const PRECEDENCE_HEADER = ['Group', 'Operators', 'ABNF rules', 'resapi', 'Example'];
const SUPPORT = new Set(['yes', 'narrowed', 'widened', 'narrowed and widened', 'no']);
const KINDS: ReadonlySet<string> = new Set<FilterErrorKind>(
  ['syntax', 'unknown-function', 'unknown-property', 'too-long', 'too-deep', 'type'],
);
const NAMED: Readonly<Record<string, string>> = { SP: ' ', HTAB: '\t', CR: '\r', LF: '\n', EMPTY: '' };

/** Operator keywords of the OData 4.01 ABNF (`eqExpr` … `castExpr`, `anyExpr`, `allExpr`). */
const ABNF_OPERATORS = [
  'eq', 'ne', 'lt', 'le', 'gt', 'ge', 'has', 'in', 'and', 'or', 'not',
  'add', 'sub', 'mul', 'div', 'divby', 'mod', 'isof', 'cast', 'any', 'all',
];
const ARITHMETIC: ReadonlySet<string> = new Set(['add', 'sub', 'mul', 'div', 'divby', 'mod']);
/** Every canonical function of the OData 4.01 ABNF rules `methodCallExpr` and `boolMethodCallExpr`. */
const ABNF_FUNCTIONS = [
  'indexof', 'tolower', 'toupper', 'trim', 'substring', 'concat', 'length', 'matchesPattern', 'year', 'month',
  'day', 'hour', 'minute', 'second', 'fractionalseconds', 'totalseconds', 'date', 'time', 'round', 'floor',
  'ceiling', 'geo.distance', 'geo.length', 'totaloffsetminutes', 'mindatetime', 'maxdatetime', 'now', 'case',
  'endswith', 'startswith', 'contains', 'geo.intersects', 'hassubset', 'hassubsequence',
];

interface Accepted {
  readonly text: string;
  readonly source: string;
  readonly matches?: boolean;
}

interface Refused {
  readonly text: string;
  readonly source: string;
  readonly status: number;
  readonly kind?: FilterErrorKind;
  readonly offset?: number;
  readonly fragment: string;
}

interface Production {
  readonly rules: readonly string[];
  readonly production: string;
  readonly support: string;
  readonly accepted: readonly Accepted[];
  readonly refused: readonly Refused[];
}

interface PrecedenceRow {
  readonly group: string;
  readonly operators: readonly string[];
  readonly examples: readonly (readonly [string, string])[];
}

const section = readSection(readFileSync(`${REPO}CONVENTIONS.md`, 'utf8'));
const ITEM = JSON.parse(fencedBlock(section, ITEM_FENCE)) as JsonObject;
const KNOWN = knownPaths([ITEM]);
const knownProperty = (path: readonly string[]): boolean => KNOWN.has(path.join('/'));
const productions = table(section, PRODUCTION_HEADER).map(production);
const precedence = table(section, PRECEDENCE_HEADER).map(precedenceRow);

describe('CONVENTIONS.md#filter-grammar', () => {
  describe('the section', () => {
    it('should hold a sample item, a precedence table and a production table', () => {
      assert.equal(typeof ITEM.id, 'string');
      assert.ok(precedence.length >= 8, `only ${precedence.length} precedence rows`);
      assert.ok(productions.length >= 40, `only ${productions.length} production rows`);
    });

    it('should name each ABNF rule in one row only', () => {
      const rules = productions.flatMap((row) => row.rules);
      assert.deepEqual(rules.filter((rule, index) => rules.indexOf(rule) !== index), []);
    });

    it('should give each row examples that fit its support', () => {
      for (const row of productions) {
        const name = row.rules.join(' / ');
        assert.ok(SUPPORT.has(row.support), `${name}: supported is '${row.support}'`);
        if (row.support === 'no') assert.equal(row.accepted.length, 0, `${name} is refused yet has accepted examples`);
        else assert.ok(row.accepted.length > 0, `${name} is supported yet has no accepted example`);
        // A row that reads something states what, as an ABNF rule of its own name.
        const defined = /`([A-Za-z][\w-]*) = /u.exec(row.production)?.[1];
        if (row.support !== 'no') {
          assert.ok(defined !== undefined && row.rules.includes(defined), `${name}: no production of that name`);
        }
        if (row.support === 'no' || row.support.startsWith('narrowed')) {
          assert.ok(row.refused.length > 0, `${name} is ${row.support} yet has no refused example`);
        }
      }
    });

    it('should write no example with a bare space at either end (Markdown would drop it)', () => {
      for (const example of productions.flatMap((row) => [...row.accepted, ...row.refused])) {
        assert.doesNotMatch(example.source, /^ | $/u, example.source);
      }
    });
  });

  describe('productions', () => {
    for (const row of productions) {
      describe(row.rules.join(' / '), () => {
        for (const example of row.accepted) {
          const outcome = example.matches === undefined ? '' : `, matching: ${example.matches}`;
          it(`should accept ${label(example.source)}${outcome}`, () => checkAccepted(example));
        }
        for (const example of row.refused) {
          const where = example.kind === undefined ? '' : ` ${example.kind} at ${example.offset}`;
          it(`should refuse ${label(example.source)} with ${example.status}${where}`, () => checkRefused(example));
        }
      });
    }
  });

  describe('operator precedence', () => {
    for (const row of precedence) {
      for (const [text, grouped] of row.examples) {
        it(`should read ${label(text)} as ${label(grouped)} (${row.group})`, () => {
          assert.notEqual(text, grouped, 'an example must differ from its grouping');
          assert.deepEqual(shape(text), shape(grouped));
        });
      }
    }

    it('should list the groups in the parser\'s order, each operator in its parser group', () => {
      const parser = parserSource();
      const ranks = precedence.flatMap((row) => {
        const key = groupKey(row.group);
        const rank = key === undefined ? undefined : parser.precedence.get(key);
        return rank === undefined ? [] : [rank];
      });
      assert.deepEqual(ranks, [...ranks].sort((a, b) => b - a), 'groups out of order');
      assert.equal(new Set(ranks).size, ranks.length, 'a group listed twice');
      for (const [operator, group] of parser.infix) {
        const row = precedence.find((candidate) => candidate.operators.includes(operator));
        assert.ok(row !== undefined, `operator '${operator}' is missing from the precedence table`);
        assert.equal(groupKey(row.group), group, `operator '${operator}' is listed under ${row.group}`);
      }
    });
  });

  describe('coverage', () => {
    it('should document every infix operator the parser reads, as its ABNF rule, supported', () => {
      const { infix } = parserSource();
      assert.ok(infix.size >= 14, `read only ${infix.size} infix operators from parser.ts`);
      for (const operator of infix.keys()) {
        const parsed = parseFilter(probe(operator));
        assert.ok(parsed.ok, `'${operator}' from parser.ts does not parse: ${parsed.ok ? '' : parsed.error.message}`);
        assertDocumented(`${operator}Expr`, true);
      }
    });

    it('should document every operator the parser names as unsupported, as refused', () => {
      const { unsupported } = parserSource();
      assert.ok(unsupported.length >= 2, 'read no unsupported operators from parser.ts');
      for (const operator of unsupported) {
        const parsed = parseFilter(probe(operator));
        assert.equal(parsed.ok, false, `'${operator}' parses`);
        assertDocumented(`${operator}Expr`, false);
      }
    });

    it('should document every operator of the OData ABNF, supported exactly where the parser reads it', () => {
      for (const operator of ABNF_OPERATORS) assertDocumented(`${operator}Expr`, parseFilter(probe(operator)).ok);
    });

    it('should document every function the parser knows, each in its own supported row with an example', () => {
      const names = functionSource();
      assert.ok(names.length >= 13, `read only ${names.length} functions from functions.ts`);
      for (const name of names) {
        assert.equal(lookupFunction(name)?.name, name, `'${name}' read from functions.ts is not a function`);
        const rule = `${name}methodcallexpr`;
        const row = productions.find((candidate) => candidate.rules.some((each) => each.toLowerCase() === rule));
        assert.ok(row !== undefined, `function ${name}() has no ${name}MethodCallExpr row`);
        assert.notEqual(row.support, 'no', `function ${name}() is documented as refused`);
        const call = new RegExp(`(^|[^\\w/])${name}\\s*\\(`, 'iu');
        assert.ok(row.accepted.some((example) => call.test(example.text)), `no accepted example calls ${name}()`);
      }
    });

    it('should show every other canonical function of the OData ABNF refused, by an example that calls it', () => {
      const refusedCalls = productions.filter((row) => row.support === 'no').flatMap((row) => row.refused);
      for (const name of ABNF_FUNCTIONS) {
        if (lookupFunction(name) !== undefined) continue;
        const call = `${name}(`;
        const example = refusedCalls.find(({ text }) => text.startsWith(call) || text.includes(` ${call}`));
        assert.ok(example !== undefined, `no refused example calls ${name}()`);
      }
    });

    it('should document the literal words null, true and false', () => {
      for (const rule of ['null', 'boolean']) assertDocumented(rule, true);
    });
  });
});

function checkAccepted(example: Accepted): void {
  const plan = planned(example.text);
  if (!plan.ok) assert.fail(`the query string is refused: ${plan.problem.detail}`);
  if (isQueryString(example.text)) {
    if (example.matches !== undefined) assert.equal(plan.plan.matches(ITEM), example.matches, 'plan');
    return;
  }
  const compiled = compileFilter(example.text, { knownProperty });
  if (!compiled.ok) assert.fail(compiled.error.message);
  if (example.matches === undefined) return;
  assert.equal(compiled.predicate(ITEM), example.matches, 'compiled predicate');
  assert.equal(interpretFilter(compiled.ast, ITEM), example.matches, 'interpreter');
  assert.equal(plan.plan.matches(ITEM), example.matches, 'query plan');
}

function checkRefused(example: Refused): void {
  const plan = planned(example.text);
  if (plan.ok) assert.fail('the query string is accepted');
  assert.equal(plan.problem.status, example.status, plan.problem.detail);
  assert.ok(plan.problem.detail.includes(example.fragment), `detail ${JSON.stringify(plan.problem.detail)}`);
  if (isQueryString(example.text)) return;
  assert.ok(example.kind !== undefined && example.offset !== undefined, 'a refused filter states its kind and offset');
  const compiled = compileFilter(example.text, { knownProperty });
  if (compiled.ok) assert.fail('compiles');
  const { kind, offset, message } = compiled.error;
  assert.deepEqual({ kind, offset }, { kind: example.kind, offset: example.offset }, message);
  assert.ok(message.includes(example.fragment), `message ${JSON.stringify(message)}`);
}

/** The query string an example stands for (`?…` as written, anything else as `$filter`), planned. */
function planned(text: string): ReturnType<typeof planQuery> {
  const query = isQueryString(text) ? text.slice(1) : `$filter=${encodeURIComponent(text)}`;
  const parsed = parseQueryString(query);
  if (!parsed.ok) return parsed;
  return planQuery(parsed.query, { known: knownProperty, itemLink: (id) => `/things/${id}` });
}

function isQueryString(text: string): boolean {
  return text.startsWith('?');
}

/** The smallest well-typed filter that uses `operator` as the ABNF writes it. */
function probe(operator: string): string {
  const shapes: Readonly<Record<string, string>> = {
    not: 'not a', any: 'a/any(x: x)', all: 'a/all(x: x)', in: 'a in (1)', isof: 'isof(a)', cast: 'cast(a) eq 1',
  };
  return shapes[operator] ?? (ARITHMETIC.has(operator) ? `a ${operator} b eq c` : `a ${operator} b`);
}

function assertDocumented(rule: string, supported: boolean): void {
  const row = productions.find((candidate) => candidate.rules.includes(rule));
  assert.ok(row !== undefined, `no row for the ABNF rule ${rule}`);
  assert.equal(row.support !== 'no', supported, `${rule} is documented as '${row.support}'`);
}

/** A tree without offsets, so two spellings of one expression compare equal. */
function shape(text: string): unknown {
  const parsed = compileFilter(text, { knownProperty });
  if (!parsed.ok) assert.fail(`${label(text)}: ${parsed.error.message}`);
  const withoutOffsets = (key: string, value: unknown): unknown =>
    (key === 'offset' || key === 'operatorOffset' ? undefined : value);
  return JSON.parse(JSON.stringify(parsed.ast, withoutOffsets));
}

function label(text: string): string {
  const quoted = JSON.stringify(text);
  return quoted.length > 70 ? `${quoted.slice(0, 67)}…"` : quoted;
}

// --- Reading the section -------------------------------------------------------------------------

function readSection(document: string): string {
  const start = document.indexOf(`\n${SECTION_HEADING}\n`);
  if (start < 0) throw new Error(`CONVENTIONS.md has no '${SECTION_HEADING}' heading`);
  const body = document.slice(start + SECTION_HEADING.length + 2);
  const end = body.search(/^#{1,3} /mu);
  return end < 0 ? body : body.slice(0, end);
}

function fencedBlock(text: string, fence: string): string {
  const start = text.indexOf(`${fence}\n`);
  if (start < 0) throw new Error(`the section has no ${fence} block`);
  const body = text.slice(start + fence.length + 1);
  const end = body.indexOf('\n```');
  if (end < 0) throw new Error(`the ${fence} block is not closed`);
  return body.slice(0, end);
}

/** The body rows of the Markdown table whose header cells are `header`, as trimmed cells. */
function table(text: string, header: readonly string[]): string[][] {
  const lines = text.split('\n');
  const start = lines.findIndex((line) => line.startsWith('|') && sameCells(cells(line), header));
  if (start < 0) throw new Error(`the section has no table headed ${header.join(' | ')}`);
  const rows: string[][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    const row = cells(line);
    if (row.length !== header.length) {
      throw new Error(`a table row has ${row.length} cells, not ${header.length} (a '|' in an example?): ${line}`);
    }
    rows.push(row);
  }
  return rows;
}

function sameCells(row: readonly string[], header: readonly string[]): boolean {
  return row.length === header.length && row.every((cell, index) => cell.startsWith(header[index] ?? '\u0000'));
}

function cells(line: string): string[] {
  return line.replace(/^\|/u, '').replace(/\|\s*$/u, '').split('|').map((cell) => cell.trim());
}

function production(row: readonly string[]): Production {
  const [rules = '', abnf = '', support = '', accepted = '', refused = ''] = row;
  return {
    rules: [...rules.matchAll(/`([^`]+)`/gu)].map((match) => match[1] ?? ''),
    production: abnf,
    support,
    accepted: items(accepted).map(acceptedExample),
    refused: items(refused).map(refusedExample),
  };
}

function precedenceRow(row: readonly string[]): PrecedenceRow {
  const [group = '', operators = '', , , examples = ''] = row;
  return {
    group: group.replace(/\*/gu, ''),
    operators: [...operators.matchAll(/`([^`]+)`/gu)].map((match) => match[1] ?? ''),
    examples: items(examples).map((item) => {
      const match = /^`([^`]+)` ≡ `([^`]+)`$/u.exec(item);
      if (match === null) throw new Error(`not a precedence example: ${item}`);
      return [expand(match[1] ?? ''), expand(match[2] ?? '')] as const;
    }),
  };
}

function items(cell: string): string[] {
  return cell === '—' ? [] : cell.split('<br>').map((item) => item.trim());
}

function acceptedExample(item: string): Accepted {
  const match = /^`([^`]+)`(?: ⇒ (true|false))?$/u.exec(item);
  if (match === null) throw new Error(`not an accepted example: ${item}`);
  const source = match[1] ?? '';
  const text = expand(source);
  return match[2] === undefined ? { text, source } : { text, source, matches: match[2] === 'true' };
}

function refusedExample(item: string): Refused {
  const match = /^`([^`]+)` → (\d{3})(?: ([a-z-]+) @(\d+))? "(.+)"$/u.exec(item);
  if (match === null) throw new Error(`not a refused example: ${item}`);
  const [, source = '', status = '', kind, offset, fragment = ''] = match;
  const base = { text: expand(source), source, status: Number(status), fragment };
  if (kind === undefined) return base;
  if (!KINDS.has(kind)) throw new Error(`unknown error kind '${kind}' in: ${item}`);
  return { ...base, kind: kind as FilterErrorKind, offset: Number(offset) };
}

/** Expands the example notation: ⟨SP⟩, ⟨U+00A0⟩, ⟨EMPTY⟩, ⟨text×n⟩. */
function expand(source: string): string {
  return source.replace(/⟨([^⟩×]*)(?:×(\d+))?⟩/gu, (_match, unit: string, count: string | undefined) => {
    const codePoint = /^U\+([0-9A-F]{4,6})$/u.exec(unit);
    const text = codePoint !== null ? String.fromCodePoint(parseInt(codePoint[1] ?? '', 16)) : (NAMED[unit] ?? unit);
    return count === undefined ? text : text.repeat(Number(count));
  });
}

// --- Reading the parser's own tables -------------------------------------------------------------

interface ParserSource {
  /** Infix operator keyword → its precedence group (`PRECEDENCE` key) in parser.ts. */
  readonly infix: ReadonlyMap<string, string>;
  /** Precedence group → rank, higher binds tighter. */
  readonly precedence: ReadonlyMap<string, number>;
  readonly unsupported: readonly string[];
}

function parserSource(): ParserSource {
  const text = readFileSync(`${REPO}lib/filter/parser.ts`, 'utf8');
  const groups = /const PRECEDENCE = \{([^}]*)\}/u.exec(text)?.[1] ?? '';
  const unsupported = /UNSUPPORTED_OPERATORS[^=]*= new Set\(\[([^\]]*)\]\)/u.exec(text)?.[1] ?? '';
  const infix = [...text.matchAll(/\['(\w+)', PRECEDENCE\.(\w+)\]/gu)];
  return {
    infix: new Map(infix.map((match) => [match[1] ?? '', match[2] ?? ''])),
    precedence: new Map([...groups.matchAll(/(\w+): (\d+)/gu)].map((match) => [match[1] ?? '', Number(match[2])])),
    unsupported: [...unsupported.matchAll(/'(\w+)'/gu)].map((match) => match[1] ?? ''),
  };
}

/** The keys of the FUNCTIONS table in functions.ts. */
function functionSource(): string[] {
  const text = readFileSync(`${REPO}lib/filter/functions.ts`, 'utf8');
  const body = /const FUNCTIONS[^{]*\{([\s\S]*?)\n\}\);/u.exec(text)?.[1] ?? '';
  return [...body.matchAll(/^ {2}(\w+):/gmu)].map((match) => match[1] ?? '');
}

/** The parser's PRECEDENCE key for a group named as the spec's table names it. */
function groupKey(group: string): string | undefined {
  const keys: Readonly<Record<string, string>> = {
    Primary: 'primary', Unary: 'unary', Multiplicative: 'multiplicative', Additive: 'additive',
    Relational: 'relational', Equality: 'equality', 'Conditional AND': 'and', 'Conditional OR': 'or',
  };
  return keys[group];
}
