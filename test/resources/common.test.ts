// Tests for the pure functions of lib/resources/common.ts: JSON object bodies
// (CONVENTIONS.md#json-bodies; RFC 8259) and the problems of precondition verdicts
// (CONVENTIONS.md#precondition-order).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseJsonObject, verdictProblem } from '../../lib/resources/common.js';
import { MAX_JSON_DEPTH } from '../../lib/writes/document.js';
import type { Problem } from '../../lib/protocol/problem.js';
import type { JsonObject } from '../../lib/json.js';

function parsed(text: string | Buffer): JsonObject {
  const result = parseJsonObject(typeof text === 'string' ? Buffer.from(text, 'utf8') : text);
  assert.ok(result.ok, result.ok ? '' : result.problem.detail);
  return result.doc;
}

function refused(text: string | Buffer): Problem {
  const result = parseJsonObject(typeof text === 'string' ? Buffer.from(text, 'utf8') : text);
  assert.equal(result.ok, false, `accepted ${String(text).slice(0, 60)}`);
  return result.ok ? assert.fail('unreachable') : result.problem;
}

/** `depth` nested objects in all, the root included: {"a":{"a":...{}}}. */
function nestedObjects(depth: number): string {
  return '{"a":'.repeat(depth - 1) + '{}' + '}'.repeat(depth - 1);
}

describe('parseJsonObject', () => {
  it('should parse a JSON object', () => {
    assert.deepEqual(parsed('{"id":"1","price":9.5,"tags":["a"],"meta":{"x":null},"ok":true}'), {
      id: '1',
      price: 9.5,
      tags: ['a'],
      meta: { x: null },
      ok: true,
    });
  });

  it('should parse an empty object and tolerate JSON whitespace around it', () => {
    assert.deepEqual(parsed(' \t\r\n{}\n'), {});
  });

  it('should refuse invalid UTF-8 as invalid-json (RFC 8259 §8.1)', () => {
    const p = refused(Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]));
    assert.equal(p.type, 'invalid-json');
    assert.equal(p.status, 400);
    assert.match(p.detail, /UTF-8/);
  });

  it('should refuse an overlong UTF-8 encoding and a lone surrogate encoded as UTF-8', () => {
    assert.equal(refused(Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc0, 0xaf, 0x22, 0x7d])).type, 'invalid-json');
    assert.equal(refused(Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x7d])).type, 'invalid-json');
  });

  it('should ignore a leading byte order mark, as RFC 8259 §8.1 allows a parser to', () => {
    assert.deepEqual(parsed(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a":1}')])), { a: 1 });
  });

  it('should refuse a byte order mark anywhere but the start', () => {
    assert.equal(refused('{"a":1}\ufeff').type, 'invalid-json');
    assert.equal(refused(Buffer.from([0xef, 0xbb, 0xbf, 0xef, 0xbb, 0xbf, 0x7b, 0x7d])).type, 'invalid-json');
  });

  it('should refuse malformed JSON as invalid-json', () => {
    for (const text of ['', '{', '{"a":1,}', "{'a':1}", '{"a":NaN}', '{"a":Infinity}', '{"a":01}', '{} {}', '{"a":1}x']) {
      const p = refused(text);
      assert.equal(p.type, 'invalid-json', text);
      assert.equal(p.status, 400, text);
    }
  });

  it('should refuse a JSON value that is not an object (CONVENTIONS.md#json-bodies)', () => {
    for (const text of ['[]', '[{"a":1}]', '"text"', 'null', '42', 'true', 'false']) {
      const p = refused(text);
      assert.equal(p.type, 'invalid-body', text);
      assert.equal(p.status, 400, text);
      assert.deepEqual(p.errors, [{ pointer: '', detail: 'expected an object' }], text);
    }
  });

  it('should refuse 1e400, which JSON.stringify would store as null', () => {
    const p = refused('{"price":1e400}');
    assert.equal(p.type, 'invalid-body');
    assert.equal(p.status, 400);
    assert.deepEqual(p.errors, [{ pointer: '/price', detail: 'number out of range' }]);
  });

  it('should refuse an out-of-range number anywhere in the tree, pointing at it (RFC 6901)', () => {
    assert.deepEqual(refused('{"a":[1,-1e400]}').errors, [{ pointer: '/a/1', detail: 'number out of range' }]);
    assert.deepEqual(refused('{"a/b":{"~c":1E999}}').errors, [{ pointer: '/a~1b/~0c', detail: 'number out of range' }]);
  });

  it('should refuse a number a double does not hold exactly, pointing at it, instead of storing another', () => {
    for (const literal of ['9007199254740993', '1e-400', '123456789012345678901234567890', '0.10000000000000000555']) {
      const p = refused(`{"id":"x","price":${literal}}`);
      assert.equal(p.type, 'invalid-body', literal);
      assert.equal(p.status, 400, literal);
      assert.deepEqual(p.errors, [{ pointer: '/price', detail: 'number cannot be stored exactly' }], literal);
      assert.equal(p.detail, 'The body holds a number JSON cannot carry as written: number cannot be stored exactly at offset 18.', literal);
    }
    assert.deepEqual(refused('{"a":{"b~/":[0,9007199254740993]}}').errors, [{ pointer: '/a/b~0~1/1', detail: 'number cannot be stored exactly' }]);
  });

  it('should accept exact spellings of a number and keep the number they write', () => {
    const doc = parsed('{"a":1.0,"b":1e2,"c":100,"d":0.1,"e":0.0,"f":5e-324,"g":9007199254740992}');
    assert.deepEqual(doc, { a: 1, b: 100, c: 100, d: 0.1, e: 0, f: 5e-324, g: 9007199254740992 });
    assert.equal(JSON.stringify(doc), '{"a":1,"b":100,"c":100,"d":0.1,"e":0,"f":5e-324,"g":9007199254740992}');
  });

  it('should refuse -0, which JSON would write back as 0, pointing at it', () => {
    assert.deepEqual(refused('{"e":-0}').errors, [{ pointer: '/e', detail: 'negative zero cannot be stored' }]);
  });

  it("should describe malformed JSON in resapi's words with the offset, never the body's characters or V8's", () => {
    const p = refused('{"secret-token-abc": }');
    assert.equal(p.type, 'invalid-json');
    assert.equal(p.detail, 'The body is not valid JSON: unexpected character at offset 21.');
    for (const text of ['{"secret-token-abc": }', '{"a":secret}', '{"secret', '{"a":"secret\\q"}', "{'secret':1}"]) {
      const detail = refused(text).detail;
      assert.match(detail, /^The body is not valid JSON: [a-z ]+ at offset \d+\.$/, text);
      assert.doesNotMatch(detail, /secret|Unexpected token|position/, text);
    }
  });

  it('should accept the largest finite double', () => {
    assert.deepEqual(parsed('{"n":1.7976931348623157e308,"m":-1e308}'), { n: 1.7976931348623157e308, m: -1e308 });
  });

  it('should accept 200 levels of nesting and refuse 300', () => {
    assert.equal(parseJsonObject(Buffer.from(nestedObjects(200))).ok, true);
    const p = refused(nestedObjects(300));
    assert.equal(p.type, 'invalid-body');
    assert.match(p.detail, /nested deeper than/);
  });

  it('should put the limit exactly at MAX_JSON_DEPTH levels', () => {
    assert.equal(parseJsonObject(Buffer.from(nestedObjects(MAX_JSON_DEPTH))).ok, true);
    assert.equal(parseJsonObject(Buffer.from(nestedObjects(MAX_JSON_DEPTH + 1))).ok, false);
  });

  it('should count arrays as nesting levels too', () => {
    const arrays = (n: number): string => `{"a":${'['.repeat(n)}${']'.repeat(n)}}`;
    assert.equal(parseJsonObject(Buffer.from(arrays(MAX_JSON_DEPTH - 1))).ok, true);
    assert.equal(parseJsonObject(Buffer.from(arrays(MAX_JSON_DEPTH))).ok, false);
  });

  it('should refuse 100000 levels of nesting as a problem, not a stack overflow', () => {
    const p = refused(`{"a":${'['.repeat(100_000)}${']'.repeat(100_000)}}`);
    assert.equal(p.status, 400);
  });

  it('should keep {"__proto__": {"x": 1}} as own data without polluting Object.prototype', () => {
    const doc = parsed('{"__proto__":{"x":1},"name":"a"}');
    assert.equal(Object.hasOwn(doc, '__proto__'), true);
    assert.deepEqual(Object.getOwnPropertyDescriptor(doc, '__proto__')?.value, { x: 1 });
    assert.equal(Object.getPrototypeOf(doc), Object.prototype);
    assert.equal((doc as Record<string, unknown>)['x'], undefined);
    assert.equal(({} as Record<string, unknown>)['x'], undefined);
    assert.equal(JSON.stringify(doc), '{"__proto__":{"x":1},"name":"a"}');
  });

  it('should keep constructor and prototype keys as plain data', () => {
    const doc = parsed('{"constructor":{"prototype":{"polluted":true}}}');
    assert.deepEqual(Object.keys(doc), ['constructor']);
    assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
  });
});

describe('verdictProblem', () => {
  it('should make a failed precondition a 412 that names the field and tells the client to GET and retry', () => {
    for (const field of ['If-Match', 'If-None-Match', 'If-Unmodified-Since'] as const) {
      const p = verdictProblem({ kind: 'failed', field });
      assert.equal(p.type, 'precondition-failed');
      assert.equal(p.status, 412);
      assert.match(p.detail, new RegExp(field));
      assert.match(p.detail, /GET/);
    }
  });

  it('should make a malformed validator field a 400 that names the header', () => {
    const p = verdictProblem({ kind: 'malformed', field: 'If-Match', detail: 'expected an entity-tag' });
    assert.equal(p.type, 'invalid-header');
    assert.equal(p.status, 400);
    assert.match(p.detail, /If-Match/);
    assert.match(p.detail, /expected an entity-tag/);
    assert.deepEqual(p.errors, [{ header: 'If-Match', detail: 'expected an entity-tag' }]);
  });
});
