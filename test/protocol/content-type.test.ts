import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { MediaType } from '../../lib/protocol/content-type.js';
import {
  isCsvMediaType,
  isJsonMediaType,
  parseMediaType,
  readMediaType,
} from '../../lib/protocol/content-type.js';

function parsed(value: string): MediaType {
  const type = parseMediaType(value);
  assert.ok(type !== undefined, `expected ${JSON.stringify(value)} to parse`);
  return type;
}

function parametersOf(value: string): Record<string, string> {
  return Object.fromEntries(parsed(value).parameters);
}

describe('parseMediaType', () => {
  it('should read type and subtype in lowercase', () => {
    const type = parsed('Application/JSON');
    assert.equal(type.type, 'application');
    assert.equal(type.subtype, 'json');
    assert.equal(type.parameters.size, 0);
  });

  it('should lowercase parameter names and keep values as written', () => {
    assert.deepEqual(parametersOf('text/csv; Charset=UTF-8; header=present'), { charset: 'UTF-8', header: 'present' });
  });

  it('should unquote quoted-string values and their quoted-pairs (RFC 9110 §5.6.4)', () => {
    assert.deepEqual(parametersOf('text/plain; title="a \\"b\\", c\\\\d"'), { title: 'a "b", c\\d' });
  });

  it('should accept an empty quoted-string value', () => {
    assert.deepEqual(parametersOf('text/plain; a=""'), { a: '' });
  });

  it('should tolerate OWS around the value and around ";" (RFC 9110 §5.6.6)', () => {
    assert.deepEqual(parametersOf(' \ttext/plain \t; \tcharset=utf-8 \t'), { charset: 'utf-8' });
  });

  it('should accept empty parameters and a trailing ";"', () => {
    assert.deepEqual(parametersOf('text/plain;;charset=utf-8; ;'), { charset: 'utf-8' });
  });

  it('should keep obs-text inside a quoted-string', () => {
    assert.deepEqual(parametersOf('text/plain; a="caf\u00e9"'), { a: 'caf\u00e9' });
  });

  for (const value of [
    '',
    '   ',
    'text',
    'text/',
    '/plain',
    'text /plain',
    'text/ plain',
    'text/plain/x',
    'te@xt/plain',
    'text/plain charset=utf-8',
    'text/plain; charset',
    'text/plain; charset=',
    'text/plain; charset =utf-8',
    'text/plain; charset= utf-8',
    'text/plain; charset="utf-8',
    'text/plain; charset="a\\"',
    'text/plain; a="x\u0001y"',
    'text/plain; a="x\u0100y"',
    'text/plain; a=b c',
    'text/plain; charset=utf-8; charset=latin1',
    'text/plain, text/html',
    'text/plain\r\n',
  ]) {
    it(`should refuse the malformed value ${JSON.stringify(value)}`, () => {
      assert.equal(parseMediaType(value), undefined);
    });
  }

  it('should throw a TypeError for a value that is not a string', () => {
    assert.throws(() => parseMediaType(42 as unknown as string), { name: 'TypeError', message: /value must be a string/ });
  });
});

describe('isJsonMediaType', () => {
  for (const value of ['application/json', 'application/json; charset=utf-8', 'application/problem+json', 'application/merge-patch+json', 'text/vnd.example+JSON']) {
    it(`should accept ${value}`, () => {
      assert.equal(isJsonMediaType(parsed(value)), true);
    });
  }

  for (const value of ['text/json', 'application/jsonx', 'application/json-seq', 'application/+json', 'application/xml', 'text/csv']) {
    it(`should refuse ${value}`, () => {
      assert.equal(isJsonMediaType(parsed(value)), false);
    });
  }
});

describe('isCsvMediaType', () => {
  it('should accept text/csv with or without parameters, in any case', () => {
    assert.equal(isCsvMediaType(parsed('text/csv')), true);
    assert.equal(isCsvMediaType(parsed('TEXT/CSV; charset=utf-8; header=present')), true);
  });

  it('should refuse other types', () => {
    assert.equal(isCsvMediaType(parsed('application/csv')), false);
    assert.equal(isCsvMediaType(parsed('text/plain')), false);
    assert.equal(isCsvMediaType(parsed('text/csv-schema')), false);
  });
});

describe('readMediaType', () => {
  it('should stop before a comma and report where it stopped', () => {
    const text = 'text/html;level=1 , */*';
    const syntax = readMediaType(text, 0);
    assert.deepEqual(syntax, { type: 'text', subtype: 'html', parameters: [{ name: 'level', value: '1' }], end: 17 });
  });

  it('should read wildcards as tokens and keep repeated parameters in order', () => {
    assert.deepEqual(readMediaType('*/*;q=0.5;q=1', 0), {
      type: '*',
      subtype: '*',
      parameters: [{ name: 'q', value: '0.5' }, { name: 'q', value: '1' }],
      end: 13,
    });
  });
});
