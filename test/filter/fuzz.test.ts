// Property-based tests of the `$filter` stages on random input (`$filter` comes from strangers:
// CONVENTIONS.md#filter-errors-and-budget). Seeded, so a failure reproduces: the assertion message
// carries the input. Properties: compileFilter returns a result or an error and never throws;
// errors carry a known kind and an offset inside the input that the message repeats; nothing hangs;
// and wherever a random filter compiles, the compiled predicate and the interpreter agree on every
// item.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { JsonObject } from '../../lib/json.js';
import { compileFilter, interpretFilter, type FilterErrorKind, type FilterResult } from '../../lib/filter/index.js';
import { FIXTURE, knownProperty } from './corpus.js';
import { mulberry32 } from '../support/random.js';

const KINDS: readonly FilterErrorKind[] = ['syntax', 'unknown-function', 'unknown-property', 'too-long', 'too-deep', 'type'];
const ALPHABET = "abceilnoqrstxyzAEZT019 \t\n()',/:-+.$@#\"[]{}!*Δ\u0000\ud800_";
const TOKENS = [
  'eq', 'ne', 'gt', 'ge', 'lt', 'le', 'and', 'or', 'not', 'in', 'add', 'sub', 'mul', 'div', 'mod', 'has', 'EQ', 'Not',
  '(', ')', ',', ':', '/', '-', "'", "'a'", "'O''Brien'", "''", '1', '-2.5', '1e3', '0', '2024-01-31',
  '2024-01-31T10:00:00Z', 'null', 'true', 'false', 'NULL', 'name', 'price', 'qty', 'tags', 'items', 'address',
  'address/city', 'createdAt', 't', 'i', 't/qty', 'i/qty', 'any', 'all', 'tags/any(t:', 'items/all(i:', 'tags/any()',
  'contains(', 'startswith(', 'substring(', 'tolower(', 'length(', 'year(', 'concat(', 'foo(', '$it', '@', ' ',
];
const TIMEOUT = { timeout: 10_000 };

function pick<T>(random: () => number, choices: readonly T[]): T {
  const choice = choices[Math.floor(random() * choices.length)];
  if (choice === undefined) throw new TypeError('pick from an empty list');
  return choice;
}

/** Compiles without letting anything escape, and checks the shape of whatever comes back. */
function checkedCompile(text: string, options: { maxLength?: number; maxDepth?: number } = {}): FilterResult {
  let result: FilterResult | undefined;
  assert.doesNotThrow(() => { result = compileFilter(text, { knownProperty, ...options }); }, JSON.stringify(text));
  assert.ok(result !== undefined);
  if (result.ok) {
    assert.equal(typeof result.predicate, 'function');
  } else {
    const { kind, offset, message } = result.error;
    assert.ok(KINDS.includes(kind), `${JSON.stringify(text)}: kind ${kind}`);
    assert.ok(Number.isInteger(offset) && offset >= 0 && offset <= text.length, `${JSON.stringify(text)}: offset ${offset}`);
    assert.ok(message.endsWith(` at offset ${offset}`), `${JSON.stringify(text)}: ${message}`);
  }
  return result;
}

/** Where a filter compiles, the predicate and the interpreter must select the same items. */
function assertImplementationsAgree(text: string, result: FilterResult, docs: readonly JsonObject[]): void {
  if (!result.ok) return;
  for (const doc of docs) {
    assert.equal(result.predicate(doc), interpretFilter(result.ast, doc), `${text} on ${String(doc.id)}`);
  }
}

/** A random well-formed Boolean filter over the fixture's properties. */
function randomFilter(random: () => number, depth: number): string {
  const op = (ops: readonly string[]): string => {
    const name = pick(random, ops);
    return random() < 0.2 ? name.toUpperCase() : name;
  };
  const numberTerm = (): string => pick(random, ['price', 'qty', 'rating', '-qty', 'length(name)', 'year(createdAt)',
    'indexof(name, \'a\')', '2', '-1.5', '0', '1e2', 'null', `(qty ${op(['add', 'sub', 'mul', 'div', 'mod'])} ${pick(random, ['2', '0', 'price'])})`]);
  const stringTerm = (): string => pick(random, ['name', 'category', 'address/city', 'tolower(name)', "'Alpha'", "''",
    'substring(name, 1)', "concat(name, 'x')", 'code', 'createdAt', 'null']);
  if (depth <= 0 || random() < 0.3) {
    return pick(random, [
      () => `${numberTerm()} ${op(['eq', 'ne', 'gt', 'ge', 'lt', 'le'])} ${numberTerm()}`,
      () => `${stringTerm()} ${op(['eq', 'ne', 'gt', 'lt'])} ${stringTerm()}`,
      () => `${op(['contains', 'startswith', 'endswith'])}(${stringTerm()}, ${pick(random, ["'a'", "'l'", "''", 'name'])})`,
      () => `tags/${op(['any', 'all'])}(t: t ${op(['eq', 'ne'])} ${pick(random, ["'sale'", "'new'", 'null'])})`,
      () => `items/${op(['any', 'all'])}(i: i/qty ${op(['gt', 'le', 'eq'])} ${numberTerm()})`,
      () => `createdAt ${op(['gt', 'lt', 'eq', 'ge'])} ${pick(random, ['2024-01-01', '2023-12-31T23:00:00Z', "'2024'"])}`,
      () => `${pick(random, ['qty', 'price', 'name', 'category'])} in (${pick(random, ["3, 10, 'tools'", 'null', '0', "'Alpha', 25"])})`,
      () => pick(random, ['active', 'true', 'false', 'null', 'tags/any()', "'sale' in tags", 'address eq null']),
    ])();
  }
  return pick(random, [
    () => `${randomFilter(random, depth - 1)} ${op(['and', 'or'])} ${randomFilter(random, depth - 1)}`,
    () => `not (${randomFilter(random, depth - 1)})`,
    () => `(${randomFilter(random, depth - 1)})`,
    () => `${randomFilter(random, depth - 1)} ${op(['eq', 'ne'])} ${pick(random, ['true', 'false', 'null'])}`,
  ])();
}

describe('compileFilter on random input', () => {
  it('should return a result or an error for random character strings', TIMEOUT, () => {
    const random = mulberry32(0xf117e5);
    for (let round = 0; round < 4000; round += 1) {
      const length = Math.floor(random() * 48);
      let text = '';
      for (let i = 0; i < length; i += 1) text += pick(random, [...ALPHABET]);
      assertImplementationsAgree(text, checkedCompile(text), FIXTURE);
    }
  });

  it('should return a result or an error for random token soups', TIMEOUT, () => {
    const random = mulberry32(0x50c1a1);
    let compiled = 0;
    for (let round = 0; round < 4000; round += 1) {
      const count = 1 + Math.floor(random() * 16);
      const parts: string[] = [];
      for (let i = 0; i < count; i += 1) parts.push(pick(random, TOKENS));
      const text = parts.join(random() < 0.8 ? ' ' : '');
      const result = checkedCompile(text);
      if (result.ok) compiled += 1;
      assertImplementationsAgree(text, result, FIXTURE);
    }
    assert.ok(compiled > 0, 'no token soup compiled, so agreement was never checked');
  });

  it('should compile random well-formed filters and agree with the interpreter on every item', TIMEOUT, () => {
    const random = mulberry32(0xa9ee);
    const selections = new Set<number>();
    for (let round = 0; round < 1500; round += 1) {
      const text = randomFilter(random, 3);
      const result = checkedCompile(text);
      assert.ok(result.ok, `${text}: ${result.ok ? '' : result.error.message}`);
      assertImplementationsAgree(text, result, FIXTURE);
      selections.add(FIXTURE.filter(result.predicate).length);
    }
    assert.ok(selections.size > 5, 'random filters should select varied numbers of items');
  });
});

describe('compileFilter on hostile input', () => {
  it('should stop at the length limit before looking at the text', TIMEOUT, () => {
    const tooLong = checkedCompile('('.repeat(100_000));
    assert.equal(tooLong.ok ? '' : tooLong.error.kind, 'too-long');
    const result = checkedCompile('('.repeat(65_536), { maxLength: 65_536, maxDepth: 128 });
    assert.equal(result.ok ? '' : result.error.kind, 'too-deep');
  });

  it('should refuse every kind of deep nesting without exhausting the stack', TIMEOUT, () => {
    const options = { maxLength: 65_536, maxDepth: 128 };
    const deep = [
      '('.repeat(20_000), 'not '.repeat(10_000), '-'.repeat(30_000), '- '.repeat(20_000), 'tolower('.repeat(5_000),
      Array.from({ length: 4_000 }, (_, level) => `tags/any(t${level}:`).join(''), 'a in ('.repeat(8_000), 'a eq ('.repeat(8_000), `${'(not '.repeat(8_000)}a`,
    ];
    for (const text of deep) {
      const result = checkedCompile(text, options);
      assert.equal(result.ok ? '' : result.error.kind, text.startsWith('a in') ? 'syntax' : 'too-deep', text.slice(0, 20));
    }
  });

  it('should run the deepest accepted nesting and the longest flat chains', TIMEOUT, () => {
    const options = { maxLength: 65_536, maxDepth: 128 };
    let nested = 'active';
    for (let level = 1; level < 128; level += 1) nested = `active or active and qty eq qty gt qty eq (${nested})`;
    const flat = [nested, `active${' or active'.repeat(6_500)}`, `qty${' add qty'.repeat(8_000)} gt 0`, `active${' eq active'.repeat(6_500)}`];
    const doc: JsonObject = { active: false, qty: 1 };
    for (const text of flat) {
      const result = checkedCompile(text, options);
      assert.ok(result.ok, result.ok ? '' : result.error.message);
      assert.equal(result.predicate(doc), interpretFilter(result.ast, doc));
    }
  });
});
