// Tests for the catalogue of `resapi check` (lib/check/checks.ts) and its citations
// (lib/check/rules.ts): every check cites a section of CONVENTIONS.md that exists, by the anchor GitHub
// gives its heading, and an RFC or OData section only by its public name; and nothing in the checker
// cites anything but those.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CHECKS, checkCatalogue } from '../../lib/check/checks.js';
import { ANCHORS, citationText, isAnchor, isDocumentUrl, ruleUrl } from '../../lib/check/rules.js';
import { runChecks } from '../../lib/check/run.js';
import { SECTIONS } from '../../lib/check/types.js';
import { REPO } from '../support/binary.js';

/**
 * The planning documents the checker's texts once cited, by name, and how they were cited. The names
 * are spelled in pieces so that this file does not itself mention them: nothing in the repository
 * cites a document outside it.
 */
const [PLAN, SOURCE] = [['CON', 'TRACT'].join(''), ['se', 'ed'].join('')];
const OUTSIDE_CITATION = new RegExp(`${PLAN}|\\bthe ${SOURCE}\\b|\\b${SOURCE}'s|\\b${SOURCE}, `, 'i');

/** An RFC section list (`RFC 9110 §13.1.1`, `RFC 9111 §5.2.2.7, §5.2.2.9`, `RFC 7240`) or an OData one. */
const SPEC_REFERENCE = /^(RFC \d{4}( §\d+(\.\d+)*(, §\d+(\.\d+)*)*)?|OData 4\.01 Part [1-3] §\d+(\.\d+)*)$/;

/** The anchors GitHub makes of the document's headings: lowercase, punctuation dropped, spaces as hyphens. */
function documentAnchors(): Set<string> {
  const text = readFileSync(join(REPO, 'CONVENTIONS.md'), 'utf8');
  const anchors = new Set<string>();
  for (const match of text.matchAll(/^#{1,6} +(.+?) *#* *$/gm)) {
    const slug = (match[1] as string).toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
    let unique = slug;
    for (let n = 1; anchors.has(unique); n++) unique = `${slug}-${n}`;
    anchors.add(unique);
  }
  return anchors;
}

/** Every .ts file under `folder` (relative to the repository), recursively. */
function sources(folder: string): string[] {
  return readdirSync(join(REPO, folder), { recursive: true, encoding: 'utf8' })
    .filter((path) => path.endsWith('.ts'))
    .map((path) => join(folder, path));
}

describe('checkCatalogue', () => {
  const catalogue = checkCatalogue();

  it('should list every check once, in the order the report lists sections', () => {
    assert.equal(catalogue.length, CHECKS.length);
    assert.equal(new Set(catalogue.map((entry) => entry.id)).size, catalogue.length, 'two checks share an id');
    const order = Object.keys(SECTIONS);
    const sections = catalogue.map((entry) => order.indexOf(entry.section));
    assert.deepEqual(sections, [...sections].sort((a, b) => a - b));
    for (const entry of catalogue) assert.ok(entry.id.startsWith(`${entry.section}/`), entry.id);
  });

  it('should give every check a rule sentence and the anchor of a section of CONVENTIONS.md', () => {
    const headings = documentAnchors();
    for (const entry of catalogue) {
      assert.ok(entry.rule.trim() !== '', `${entry.id} has no rule`);
      assert.ok(isAnchor(entry.anchor), `${entry.id} cites #${entry.anchor}, not an anchor of the list`);
      assert.ok(headings.has(entry.anchor), `${entry.id} cites CONVENTIONS.md#${entry.anchor}, which is no heading of it`);
    }
  });

  it('should cite an RFC or OData section only by its public name', () => {
    const cited = catalogue.filter((entry) => entry.rfc !== undefined);
    assert.ok(cited.length > 0, 'no check cites an RFC');
    for (const entry of cited) assert.match(entry.rfc as string, SPEC_REFERENCE, entry.id);
  });

  it('should keep citations out of the rule sentences, which say what is checked', () => {
    for (const entry of catalogue) {
      assert.doesNotMatch(entry.rule, OUTSIDE_CITATION, entry.id);
      assert.doesNotMatch(entry.rule, /§|CONVENTIONS\.md/, entry.id);
    }
  });
});

describe('ANCHORS', () => {
  it('should name only headings of CONVENTIONS.md', () => {
    const headings = documentAnchors();
    assert.deepEqual(ANCHORS.filter((anchor) => !headings.has(anchor)), []);
  });

  it('should tell an anchor from another string', () => {
    assert.equal(isAnchor('etags'), true);
    assert.equal(isAnchor('#etags'), false);
    assert.equal(isAnchor('CONVENTIONS.md#etags'), false);
    assert.equal(isAnchor('ETags'), false);
  });
});

describe('citationText and ruleUrl', () => {
  it('should write the citation as the repository does, with the RFC after the anchor', () => {
    assert.equal(citationText({ anchor: 'etags' }), 'CONVENTIONS.md#etags');
    assert.equal(citationText({ anchor: 'etags', rfc: 'RFC 9110 §8.8.3' }), 'CONVENTIONS.md#etags; RFC 9110 §8.8.3');
  });

  it('should put the anchor after the document URL as its fragment', () => {
    assert.equal(ruleUrl('https://example.org/resapi/CONVENTIONS.md', 'vary'), 'https://example.org/resapi/CONVENTIONS.md#vary');
  });
});

describe('isDocumentUrl', () => {
  it('should take an absolute http(s) URL, with or without a query', () => {
    for (const url of ['https://example.org/resapi/CONVENTIONS.md', 'http://127.0.0.1:8080/CONVENTIONS.md?raw=1', 'https://docs.example']) {
      assert.equal(isDocumentUrl(url), true, url);
    }
  });

  it('should refuse a relative URL, another scheme, a missing host, a fragment or a space', () => {
    for (const url of ['', 'CONVENTIONS.md', '//example.org/C.md', 'file:///C.md', 'https://', 'https:///C.md', 'https://example.org/C.md#etags', 'https://example.org/a b.md']) {
      assert.equal(isDocumentUrl(url), false, url);
    }
  });

  it('should make runChecks refuse such a docsBase before sending anything', async () => {
    await assert.rejects(runChecks('http://127.0.0.1:9', { docsBase: 'CONVENTIONS.md' }), { name: 'TypeError', message: /options\.docsBase/ });
  });
});

describe('the documents', () => {
  /** The text of the section under `heading` (to the next heading of its level or above). */
  function section(path: string, heading: RegExp): string {
    const text = readFileSync(join(REPO, path), 'utf8');
    const start = text.search(heading);
    assert.ok(start !== -1, `${path} has no ${String(heading)}`);
    const level = /^#+/.exec(text.slice(start))?.[0].length ?? 2;
    const rest = text.slice(text.indexOf('\n', start));
    const next = rest.search(new RegExp(`^#{1,${level}} `, 'm'));
    return next === -1 ? rest : rest.slice(0, next);
  }

  it('should give the real number of checks in the README and in CONVENTIONS.md, not an estimate', () => {
    for (const [path, heading] of [['README.md', /^### The checker$/m], ['CONVENTIONS.md', /^## Conformance checker$/m]] as const) {
      const text = section(path, heading);
      assert.doesNotMatch(text, /about \w+ checks/i, path);
      const stated = /\b(\d+) checks\b/.exec(text)?.[1];
      assert.equal(Number(stated), CHECKS.length, `${path} says ${String(stated)} checks; there are ${CHECKS.length}`);
    }
  });
});

describe('the checker source', () => {
  it('should cite no document outside the repository', () => {
    for (const path of [...sources('lib/check'), 'lib/cli/check.ts', 'lib/cli/args.ts']) {
      const text = readFileSync(join(REPO, path), 'utf8');
      assert.doesNotMatch(text, OUTSIDE_CITATION, path);
    }
  });
});
