// Tests for lib/writes/document.ts: what every stored document must be (CONVENTIONS.md#items) and the
// declared collection schema (CONVENTIONS.md#configuration-file).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { checkId, checkSchema, shapeProblem, MAX_JSON_DEPTH } from '../../lib/writes/document.js';
import type { CollectionConfig } from '../../lib/config.js';
import type { JsonObject } from '../../lib/json.js';

describe('shapeProblem', () => {
  it('should accept a JSON object nested up to MAX_JSON_DEPTH levels', () => {
    let doc: JsonObject = {};
    for (let level = 1; level < MAX_JSON_DEPTH; level++) doc = { a: doc };
    assert.equal(shapeProblem(doc), undefined);
    assert.deepEqual(shapeProblem({ a: doc }), { pointer: '/a'.repeat(MAX_JSON_DEPTH), detail: `nested deeper than ${MAX_JSON_DEPTH} levels` });
  });

  it('should refuse what is not an object, and numbers JSON cannot carry, pointing at them', () => {
    for (const value of [[], 'x', 1, null, true]) assert.deepEqual(shapeProblem(value), { pointer: '', detail: 'expected an object' });
    assert.deepEqual(shapeProblem({ a: [1, Number.POSITIVE_INFINITY] }), { pointer: '/a/1', detail: 'number out of range' });
    assert.deepEqual(shapeProblem({ 'x/y': Number.NaN }), { pointer: '/x~1y', detail: 'number out of range' });
    assert.deepEqual(shapeProblem({ t: { v: -0 } }), { pointer: '/t/v', detail: 'negative zero cannot be stored' });
    assert.equal(shapeProblem({ t: 0, u: -0.5 }), undefined);
  });
});

describe('checkId', () => {
  it('should accept only the path id in "id"', () => {
    assert.equal(checkId({ id: 'a', n: 1 }, 'a'), undefined);
    for (const doc of [{ n: 1 }, { id: 'b' }, { id: 1 }] as JsonObject[]) {
      assert.deepEqual(checkId(doc, 'a')?.errors, [{ pointer: '/id', detail: 'must be "a"' }], JSON.stringify(doc));
    }
  });
});

describe('checkSchema', () => {
  const config: CollectionConfig = {
    schema: { name: 'string', price: 'number', active: 'boolean', meta: 'object', tags: 'array' },
  };

  it('should accept anything when the collection has no config or no schema', () => {
    assert.equal(checkSchema({ anything: [1, { x: 2 }] }, undefined), undefined);
    assert.equal(checkSchema({ anything: 1 }, { cacheControl: 'max-age=60' }), undefined);
  });

  it('should accept a body whose fields are all declared and of the declared type', () => {
    assert.equal(checkSchema({ id: '1', name: 'a', price: 1.5, active: false, meta: { a: 1 }, tags: ['x'] }, config), undefined);
  });

  it('should accept a body that leaves declared fields out', () => {
    assert.equal(checkSchema({ id: '1', name: 'a' }, config), undefined);
  });

  it('should accept null for any declared field', () => {
    assert.equal(checkSchema({ name: null, price: null, active: null, meta: null, tags: null }, config), undefined);
  });

  it('should never ask the schema about id, the path id', () => {
    assert.equal(checkSchema({ id: '1' }, { schema: { name: 'string' } }), undefined);
  });

  it('should refuse an undeclared field, pointing at it', () => {
    const p = checkSchema({ name: 'a', colour: 'red' }, config);
    assert.equal(p?.type, 'invalid-body');
    assert.equal(p?.status, 400);
    assert.deepEqual(p?.errors, [{ pointer: '/colour', detail: 'not a field of this collection' }]);
  });

  it('should not take a field named after an Object.prototype member as declared', () => {
    for (const field of ['toString', 'constructor', 'hasOwnProperty', '__proto__']) {
      const doc = JSON.parse(`{"${field}":"x"}`) as JsonObject;
      const p = checkSchema(doc, config);
      assert.deepEqual(p?.errors, [{ pointer: `/${field}`, detail: 'not a field of this collection' }], field);
    }
  });

  it('should refuse a value of the wrong type, naming the declared type', () => {
    const cases: readonly [JsonObject, string, string][] = [
      [{ name: 1 }, '/name', 'must be string'],
      [{ price: '1' }, '/price', 'must be number'],
      [{ active: 'true' }, '/active', 'must be boolean'],
      [{ meta: [] }, '/meta', 'must be object'],
      [{ tags: {} }, '/tags', 'must be array'],
      [{ tags: 'a,b' }, '/tags', 'must be array'],
    ];
    for (const [doc, pointer, detail] of cases) {
      assert.deepEqual(checkSchema(doc, config)?.errors, [{ pointer, detail }], JSON.stringify(doc));
    }
  });

  it('should list every offending field, not only the first', () => {
    const p = checkSchema({ name: 2, extra: true, price: 'x' }, config);
    assert.equal(p?.errors?.length, 3);
    assert.deepEqual(
      p?.errors?.map((e) => e.pointer).sort(),
      ['/extra', '/name', '/price'],
    );
  });

  it('should escape "/" and "~" in the pointer (RFC 6901 §3)', () => {
    assert.deepEqual(checkSchema({ 'a/b~c': 1 }, config)?.errors, [{ pointer: '/a~1b~0c', detail: 'not a field of this collection' }]);
  });
});
