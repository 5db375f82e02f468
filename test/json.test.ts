// Reading a member path of a JSON value (lib/json.ts valueAt): the one reader that queries, sort keys
// and filters share.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { valueAt, type JsonObject } from '../lib/json.js';

describe('valueAt', () => {
  const doc: JsonObject = { a: { b: { c: 3 } }, s: 'text', n: 0, f: false, arr: [{ x: 1 }], nil: null };

  it('should follow a path through nested objects', () => {
    assert.equal(valueAt(doc, ['a', 'b', 'c']), 3);
    assert.deepEqual(valueAt(doc, ['a', 'b']), { c: 3 });
  });

  it('should return the document itself for the empty path', () => {
    assert.equal(valueAt(doc, []), doc);
  });

  it('should keep falsy values', () => {
    assert.equal(valueAt(doc, ['n']), 0);
    assert.equal(valueAt(doc, ['f']), false);
    assert.equal(valueAt(doc, ['s']), 'text');
  });

  it('should return null for a missing step', () => {
    assert.equal(valueAt(doc, ['missing']), null);
    assert.equal(valueAt(doc, ['a', 'missing', 'c']), null);
    assert.equal(valueAt(doc, ['nil', 'x']), null);
  });

  it('should return null when a step is not an object', () => {
    assert.equal(valueAt(doc, ['s', 'length']), null);
    assert.equal(valueAt(doc, ['n', 'x']), null);
    assert.equal(valueAt(doc, ['arr', '0']), null);
    assert.equal(valueAt(doc, ['arr', 'x']), null);
    assert.equal(valueAt(doc, ['arr', 'length']), null);
  });

  it('should not read inherited properties such as __proto__ or constructor', () => {
    assert.equal(valueAt({}, ['__proto__']), null);
    assert.equal(valueAt({}, ['constructor']), null);
    assert.equal(valueAt({ a: {} }, ['a', 'toString']), null);
  });

  it('should read an own __proto__ key as data', () => {
    const parsed = JSON.parse('{"__proto__": {"x": 7}, "y": 1}') as JsonObject;
    assert.deepEqual(valueAt(parsed, ['__proto__']), { x: 7 });
    assert.equal(valueAt(parsed, ['__proto__', 'x']), 7);
  });
});

