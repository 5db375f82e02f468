import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chooseMediaType } from '../../lib/protocol/negotiate.js';

const JSON_TYPE = 'application/json';
const CSV = 'text/csv';
const HTML = 'text/html';
const OFFERED = [JSON_TYPE, CSV, HTML] as const;

describe('chooseMediaType', () => {
  describe('without a usable Accept', () => {
    it('should answer the first offered type when Accept is absent', () => {
      assert.equal(chooseMediaType(undefined, [CSV, JSON_TYPE]), CSV);
    });

    it('should answer the first offered type when Accept is empty or only empty members', () => {
      assert.equal(chooseMediaType('', OFFERED), JSON_TYPE);
      assert.equal(chooseMediaType(' \t', OFFERED), JSON_TYPE);
      assert.equal(chooseMediaType(' , ,', OFFERED), JSON_TYPE);
    });

    it('should disregard a field whose members are all malformed (RFC 9110 §12.5.1)', () => {
      assert.equal(chooseMediaType('garbage, text/csv;q=2', [CSV, JSON_TYPE]), CSV);
    });

    it('should answer undefined when nothing is offered', () => {
      assert.equal(chooseMediaType(undefined, []), undefined);
      assert.equal(chooseMediaType('*/*', []), undefined);
    });
  });

  describe('ranges', () => {
    it('should answer the first offered type for */*', () => {
      assert.equal(chooseMediaType('*/*', OFFERED), JSON_TYPE);
    });

    it('should match type/* against the type only', () => {
      assert.equal(chooseMediaType('text/*', OFFERED), CSV);
      assert.equal(chooseMediaType('image/*', OFFERED), undefined);
    });

    it('should match an exact type', () => {
      assert.equal(chooseMediaType('text/html', OFFERED), HTML);
    });

    it('should compare types case-insensitively and answer the offered spelling', () => {
      assert.equal(chooseMediaType('TEXT/CSV', OFFERED), CSV);
      assert.equal(chooseMediaType('text/csv', ['Text/CSV']), 'Text/CSV');
    });

    it('should answer undefined when no range matches (→ 406)', () => {
      assert.equal(chooseMediaType('application/xml, image/png', OFFERED), undefined);
    });
  });

  describe('quality values (RFC 9110 §12.4.2)', () => {
    it('should prefer the higher q', () => {
      assert.equal(chooseMediaType('application/json;q=0.5, text/csv;q=0.9', OFFERED), CSV);
      assert.equal(chooseMediaType('text/csv;q=0.001, application/json;q=0.002', OFFERED), JSON_TYPE);
    });

    it('should exclude a type with q=0', () => {
      assert.equal(chooseMediaType('application/json;q=0', [JSON_TYPE]), undefined);
      assert.equal(chooseMediaType('application/json;q=0.000, */*;q=0.1', OFFERED), CSV);
    });

    it('should accept the boundary spellings of qvalue', () => {
      assert.equal(chooseMediaType('text/html;q=1.000, application/json;q=0.999', OFFERED), HTML);
      assert.equal(chooseMediaType('text/html;q=0., application/json;q=1.', OFFERED), JSON_TYPE);
      assert.equal(chooseMediaType('text/csv;Q=0.7, application/json;q=0.6', OFFERED), CSV);
    });

    it('should tolerate OWS around the weight', () => {
      assert.equal(chooseMediaType('application/json ; q=0.1 ,\ttext/csv\t;\tq=0.2', OFFERED), CSV);
    });

    for (const q of ['2', '1.5', '1.001', 'abc', '0.5000', '.5', '-0', '', '0.5x', '01']) {
      it(`should ignore a member whose q is ${JSON.stringify(q)}`, () => {
        // The malformed member would win if it were read; json is the only other acceptable type.
        assert.equal(chooseMediaType(`text/csv;q=${q}, application/json;q=0.1`, OFFERED), JSON_TYPE);
      });
    }
  });

  describe('specificity (RFC 9110 §12.5.1)', () => {
    it('should let the most specific matching range decide a type\'s quality', () => {
      // */* would rate json 1, but the exact range says 0.2; text/* rates csv 0.5.
      assert.equal(chooseMediaType('*/*, application/json;q=0.2, text/*;q=0.5', [JSON_TYPE, CSV]), CSV);
      assert.equal(chooseMediaType('text/csv;q=0, text/*', [CSV, HTML]), HTML);
      assert.equal(chooseMediaType('text/*;q=0, */*', [CSV, JSON_TYPE]), JSON_TYPE);
    });

    it('should rank a range with parameters above one without', () => {
      const flowed = 'text/plain;format=flowed';
      assert.equal(chooseMediaType('text/plain;q=0.3, text/plain;format=flowed;q=0.9', ['text/plain', flowed]), flowed);
      assert.equal(chooseMediaType('text/plain;q=0.3, text/plain;format=flowed;q=0', [flowed, 'text/plain']), 'text/plain');
    });

    it('should let the first of two equally specific ranges decide', () => {
      assert.equal(chooseMediaType('application/json;q=0, application/json', [JSON_TYPE]), undefined);
      assert.equal(chooseMediaType('application/json, application/json;q=0', [JSON_TYPE]), JSON_TYPE);
    });
  });

  describe('parameters', () => {
    it('should match a range\'s parameters only against an offered type that has them', () => {
      assert.equal(chooseMediaType('text/html;level=1', [HTML]), undefined);
      assert.equal(chooseMediaType('text/html;level=1', ['text/html;level=1']), 'text/html;level=1');
      assert.equal(chooseMediaType('text/html;level=2', ['text/html;level=1']), undefined);
    });

    it('should compare parameter values case-insensitively and accept quoted values', () => {
      assert.equal(chooseMediaType('text/csv;charset="UTF-8"', ['text/csv; charset=utf-8']), 'text/csv; charset=utf-8');
    });

    it('should ignore parameters after the weight (accept-ext)', () => {
      assert.equal(chooseMediaType('text/html;q=0.9;level=1', [JSON_TYPE, HTML]), HTML);
    });

    it('should keep commas inside a quoted parameter value in one member', () => {
      assert.equal(chooseMediaType('text/plain;a="x, text/csv", application/json;q=0.5', OFFERED), JSON_TYPE);
    });
  });

  describe('ties', () => {
    it('should break a tie of q by the client\'s order', () => {
      assert.equal(chooseMediaType('text/csv, application/json', OFFERED), CSV);
      assert.equal(chooseMediaType('text/html;q=0.5, text/csv;q=0.5', OFFERED), HTML);
    });

    it('should break a tie inside one range by the order of offered', () => {
      assert.equal(chooseMediaType('text/*', [HTML, CSV]), HTML);
      assert.equal(chooseMediaType('text/*', [CSV, HTML]), CSV);
    });
  });

  describe('malformed members', () => {
    for (const member of ['*/html', 'text', 'text/', '/csv', 'text/csv junk', 'text/csv;q', 'text/ csv', '*']) {
      it(`should ignore ${JSON.stringify(member)} and read the other members`, () => {
        assert.equal(chooseMediaType(`${member}, application/json;q=0.3`, [CSV, JSON_TYPE]), JSON_TYPE);
      });
    }

    it('should treat an unterminated quoted-string as running to the end of the field', () => {
      assert.equal(chooseMediaType('text/html;q=0.1, text/csv;a="open, application/json', OFFERED), HTML);
    });

    it('should read a member that follows a malformed one', () => {
      assert.equal(chooseMediaType('text/csv;q=2, text/html', OFFERED), HTML);
    });

    it('should never throw on hostile input', () => {
      for (const accept of ['"', ';;;', ',,,', '\u0000', 'a/b;c="\\', '*/*;q=0.5;q=', 'x/y;'.repeat(1000)]) {
        assert.doesNotThrow(() => chooseMediaType(accept, OFFERED));
      }
    });
  });

  describe('programmer errors', () => {
    it('should throw a TypeError for a malformed or wildcard offered type', () => {
      assert.throws(() => chooseMediaType('*/*', ['json']), { name: 'TypeError', message: /offered\[0\]/ });
      assert.throws(() => chooseMediaType('*/*', [JSON_TYPE, 'text/*']), { name: 'TypeError', message: /offered\[1\]/ });
    });

    it('should throw a TypeError when offered is not an array or accept not a string', () => {
      assert.throws(() => chooseMediaType('*/*', 'application/json' as unknown as string[]), { name: 'TypeError', message: /offered/ });
      assert.throws(() => chooseMediaType(['*/*'] as unknown as string, OFFERED), { name: 'TypeError', message: /accept/ });
    });
  });
});
