// planQuery and conditionPredicate (lib/query/plan.ts): unknown properties → 400
// (CONVENTIONS.md#filter-errors-and-budget), simple-condition semantics
// (CONVENTIONS.md#simple-query-strings), `$select` summaries with their `@id` select link
// (CONVENTIONS.md#select-and-orderby).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { JsonObject } from '../../lib/json.js';
import type { CollectionQuery, SimpleCondition } from '../../lib/query/options.js';
import { conditionPredicate, planQuery, type PlanContext, type QueryPlan } from '../../lib/query/plan.js';
import type { StoredRecord } from '../../lib/store/types.js';

const KNOWN = new Set(['name', 'price', 'tags', 'active', 'origin', 'origin/country', 'lines', 'lines/qty', 'b', 'b/c', '__proto__']);

const CONTEXT: PlanContext = {
  known: (path) => KNOWN.has(path.join('/')),
  itemLink: (id) => `/products/${id}`,
};

function query(extra: Partial<CollectionQuery> = {}): CollectionQuery {
  return { conditions: [], orderby: [], count: false, ...extra };
}

function planned(q: CollectionQuery, context: PlanContext = CONTEXT): QueryPlan {
  const result = planQuery(q, context);
  assert.ok(result.ok, result.ok ? '' : result.problem.detail);
  return result.plan;
}

function refusedParameter(q: CollectionQuery, context: PlanContext = CONTEXT): string | undefined {
  const result = planQuery(q, context);
  assert.ok(!result.ok, 'expected the query to be refused');
  assert.equal(result.problem.status, 400);
  assert.equal(result.problem.type, 'bad-request');
  return result.problem.errors?.[0]?.parameter;
}

function record(id: string, doc: JsonObject): StoredRecord {
  return { collection: 'products', id, version: 1, modifiedAt: 0, doc };
}

function matches(condition: SimpleCondition, doc: JsonObject): boolean {
  return conditionPredicate(condition)(doc);
}

describe('planQuery', () => {
  describe('unknown properties', () => {
    it('should refuse an unknown $orderby property', () => {
      assert.equal(refusedParameter(query({ orderby: [{ path: ['nope'], descending: false }] })), '$orderby');
    });

    it('should refuse an unknown nested $orderby path under a known parent', () => {
      assert.equal(refusedParameter(query({ orderby: [{ path: ['origin', 'city'], descending: true }] })), '$orderby');
    });

    it('should refuse an unknown $select property, naming it', () => {
      const result = planQuery(query({ select: [['name'], ['colour']] }), CONTEXT);
      assert.ok(!result.ok);
      assert.equal(result.problem.errors?.[0]?.parameter, '$select');
      assert.match(result.problem.detail, /colour/);
    });

    it('should refuse an unknown simple-condition property, naming its path', () => {
      assert.equal(refusedParameter(query({ conditions: [{ path: ['origin', 'city'], value: 'x' }] })), 'origin/city');
    });

    it('should refuse an unknown property in $filter', () => {
      assert.equal(refusedParameter(query({ filter: 'colour eq 1' })), '$filter');
    });

    it('should refuse an unknown property inside a $filter lambda', () => {
      assert.equal(refusedParameter(query({ filter: 'lines/any(l: l/price gt 1)' })), '$filter');
    });

    it('should refuse a $filter syntax error as a 400 naming $filter', () => {
      assert.equal(refusedParameter(query({ filter: 'price gt' })), '$filter');
    });

    it('should know id even when the context knows nothing', () => {
      const none: PlanContext = { known: () => false, itemLink: (id) => `/c/${id}` };
      const plan = planned(
        query({ select: [['id']], orderby: [{ path: ['id'], descending: true }], conditions: [{ path: ['id'], value: 'p' }], filter: "id ne 'x'" }),
        none,
      );
      assert.equal(plan.matches({ id: 'p1' }), true);
      assert.equal(refusedParameter(query({ select: [['id', 'x']] }), none), '$select');
    });

    it('should ask the context with the full path', () => {
      const asked: string[] = [];
      const spy: PlanContext = {
        known: (path) => {
          asked.push(path.join('/'));
          return true;
        },
        itemLink: (id) => id,
      };
      planned(query({ select: [['a', 'b']], orderby: [{ path: ['c'], descending: false }], conditions: [{ path: ['d', 'e'], value: '1' }], filter: 'f/g eq 1' }), spy);
      assert.deepEqual(new Set(asked), new Set(['a/b', 'c', 'd/e', 'f/g']));
    });
  });

  describe('matches', () => {
    it('should match everything without conditions or filter', () => {
      assert.equal(planned(query()).matches({}), true);
    });

    it('should AND the simple conditions and the filter', () => {
      const plan = planned(query({ conditions: [{ path: ['name'], value: 'tea' }, { path: ['active'], value: 'true' }], filter: 'price lt 10' }));
      assert.equal(plan.matches({ name: 'Green Tea', active: true, price: 5 }), true);
      assert.equal(plan.matches({ name: 'Green Tea', active: true, price: 50 }), false);
      assert.equal(plan.matches({ name: 'Green Tea', active: false, price: 5 }), false);
      assert.equal(plan.matches({ name: 'Coffee', active: true, price: 5 }), false);
    });
  });

  describe('project', () => {
    it('should return the whole document without $select', () => {
      const doc: JsonObject = { id: 'p1', name: 'x', price: 2 };
      assert.deepEqual(planned(query()).project(record('p1', doc)), doc);
    });

    it('should return exactly the selected fields plus @id', () => {
      const plan = planned(query({ select: [['name'], ['price']] }));
      const summary = plan.project(record('p1', { id: 'p1', name: 'Tea', price: 3, tags: ['a'], origin: { country: 'DE' } }));
      assert.deepEqual(summary, { '@id': '/products/p1', name: 'Tea', price: 3 });
      assert.deepEqual(Object.keys(summary).sort(), ['@id', 'name', 'price']);
    });

    it('should nest a selected path b/c as { b: { c } } without the siblings', () => {
      const plan = planned(query({ select: [['b', 'c'], ['name']] }));
      assert.deepEqual(plan.project(record('p1', { b: { c: 1, d: 2 }, name: 'n' })), { '@id': '/products/p1', b: { c: 1 }, name: 'n' });
    });

    it('should merge two selected paths under the same parent', () => {
      const plan = planned(query({ select: [['origin', 'country'], ['b', 'c'], ['origin', 'city']] }), { known: () => true, itemLink: (id) => `/products/${id}` });
      assert.deepEqual(plan.project(record('p1', { origin: { country: 'DE', city: 'Bonn', zip: '1' }, b: { c: 0 } })), {
        '@id': '/products/p1',
        origin: { country: 'DE', city: 'Bonn' },
        b: { c: 0 },
      });
    });

    it('should give null for a missing field, a missing parent or a non-object parent', () => {
      const plan = planned(query({ select: [['name'], ['b', 'c'], ['origin', 'country']] }));
      assert.deepEqual(plan.project(record('p1', { origin: 'DE' })), { '@id': '/products/p1', name: null, b: { c: null }, origin: { country: null } });
    });

    it('should keep falsy values as they are', () => {
      const plan = planned(query({ select: [['price'], ['active'], ['name']] }));
      assert.deepEqual(plan.project(record('p1', { price: 0, active: false, name: '' })), { '@id': '/products/p1', price: 0, active: false, name: '' });
    });

    it('should build @id from the record id through the context', () => {
      const plan = planned(query({ select: [['id']] }), { known: () => false, itemLink: (id) => `https://api.example/products/${id}` });
      assert.deepEqual(plan.project(record('a.b~c', { id: 'a.b~c' })), { '@id': 'https://api.example/products/a.b~c', id: 'a.b~c' });
    });

    it('should keep a selected __proto__ field as own data, not as the prototype', () => {
      const plan = planned(query({ select: [['__proto__'], ['name']] }));
      const doc = JSON.parse('{"__proto__": {"polluted": true}, "name": "n"}') as JsonObject;
      const summary = plan.project(record('p1', doc));
      assert.equal(Object.getPrototypeOf(summary), Object.prototype);
      assert.ok(Object.hasOwn(summary, '__proto__'));
      assert.equal(JSON.stringify(summary), '{"@id":"/products/p1","__proto__":{"polluted":true},"name":"n"}');
      assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
    });

    it('should keep a nested __proto__ segment as own data', () => {
      const plan = planned(query({ select: [['__proto__', 'x']] }), { known: () => true, itemLink: (id) => id });
      const summary = plan.project(record('p1', JSON.parse('{"__proto__": {"x": 1, "y": 2}}') as JsonObject));
      assert.equal(Object.getPrototypeOf(summary), Object.prototype);
      assert.equal(JSON.stringify(summary), '{"@id":"p1","__proto__":{"x":1}}');
    });

    it('should give null for a selected __proto__ the document lacks', () => {
      const plan = planned(query({ select: [['__proto__']] }));
      const summary = plan.project(record('p1', { name: 'n' }));
      assert.equal(JSON.stringify(summary), '{"@id":"/products/p1","__proto__":null}');
    });

    it('should leave the stored document untouched', () => {
      const doc: JsonObject = { b: { c: 1, d: 2 }, name: 'n' };
      const before = structuredClone(doc);
      planned(query({ select: [['b', 'c'], ['name']] })).project(record('p1', doc));
      assert.deepEqual(doc, before);
    });

    // Records are "immutable once returned" (lib/store/types.ts). Selecting a parent and a missing
    // child below it (`$select=b,b/x`) must not write the child into the stored document.
    it('should leave the stored document untouched when a parent and a child below it are both selected', () => {
      const doc: JsonObject = { b: { c: 1 } };
      const before = structuredClone(doc);
      const summary = planned(query({ select: [['b'], ['b', 'x']] }), { known: () => true, itemLink: (id) => id }).project(record('p1', doc));
      assert.deepEqual(doc, before);
      assert.deepEqual((summary['b'] as JsonObject)['c'], 1);
    });
  });
});

describe('conditionPredicate', () => {
  describe('strings: case-insensitive contains', () => {
    const doc: JsonObject = { name: 'Green Tea Blend' };

    it('should match a substring in any case', () => {
      assert.equal(matches({ path: ['name'], value: 'tea' }, doc), true);
      assert.equal(matches({ path: ['name'], value: 'GREEN TEA' }, doc), true);
      assert.equal(matches({ path: ['name'], value: 'Green Tea Blend' }, doc), true);
    });

    it('should not match what is not contained', () => {
      assert.equal(matches({ path: ['name'], value: 'coffee' }, doc), false);
      assert.equal(matches({ path: ['name'], value: 'Green Tea Blends' }, doc), false);
    });

    it('should compare the written value as text, not as a number', () => {
      assert.equal(matches({ path: ['code'], value: '10' }, { code: 'A-100' }), true);
      assert.equal(matches({ path: ['code'], value: '10.0' }, { code: 'A-100' }), false);
    });

    it('should follow a nested path', () => {
      assert.equal(matches({ path: ['origin', 'country'], value: 'de' }, { origin: { country: 'DE' } }), true);
      assert.equal(matches({ path: ['origin', 'country'], value: 'de' }, { origin: 'DE' }), false);
    });
  });

  describe('arrays: membership', () => {
    it('should match when an element equals the written value', () => {
      assert.equal(matches({ path: ['tags'], value: 'sale' }, { tags: ['new', 'sale'] }), true);
      assert.equal(matches({ path: ['sizes'], value: '10' }, { sizes: [8, 10, 12] }), true);
      assert.equal(matches({ path: ['flags'], value: 'true' }, { flags: [false, true] }), true);
    });

    it('should not match a mere substring of an element', () => {
      assert.equal(matches({ path: ['tags'], value: 'sal' }, { tags: ['new', 'sale'] }), false);
    });

    it('should not match an empty array or null elements', () => {
      assert.equal(matches({ path: ['tags'], value: 'sale' }, { tags: [] }), false);
      assert.equal(matches({ path: ['tags'], value: 'null' }, { tags: [null] }), false);
    });
  });

  describe('numbers: equality of the written value', () => {
    it('should match the same number however it is written', () => {
      assert.equal(matches({ path: ['price'], value: '10' }, { price: 10 }), true);
      assert.equal(matches({ path: ['price'], value: '10.0' }, { price: 10 }), true);
      assert.equal(matches({ path: ['price'], value: '1e1' }, { price: 10 }), true);
      assert.equal(matches({ path: ['price'], value: '-2.5' }, { price: -2.5 }), true);
    });

    it('should not match a different number or a contained digit', () => {
      assert.equal(matches({ path: ['price'], value: '1' }, { price: 10 }), false);
      assert.equal(matches({ path: ['price'], value: '100' }, { price: 10 }), false);
    });

    it('should not match text that only converts to the number', () => {
      for (const written of ['', ' 10', '10 ', '0x0a', 'ten', '+10', '10abc']) {
        assert.equal(matches({ path: ['price'], value: written }, { price: 10 }), false, JSON.stringify(written));
      }
      assert.equal(matches({ path: ['price'], value: '' }, { price: 0 }), false);
    });
  });

  describe('booleans: equality of the written value', () => {
    it('should match true and false as written', () => {
      assert.equal(matches({ path: ['active'], value: 'true' }, { active: true }), true);
      assert.equal(matches({ path: ['active'], value: 'false' }, { active: false }), true);
    });

    it('should not match other spellings or the opposite value', () => {
      assert.equal(matches({ path: ['active'], value: 'false' }, { active: true }), false);
      assert.equal(matches({ path: ['active'], value: '1' }, { active: true }), false);
      assert.equal(matches({ path: ['active'], value: 'tru' }, { active: true }), false);
    });
  });

  describe('null, missing and objects', () => {
    it('should never match null or a missing field', () => {
      for (const written of ['null', '', 'x']) {
        assert.equal(matches({ path: ['price'], value: written }, { price: null }), false, JSON.stringify(written));
        assert.equal(matches({ path: ['price'], value: written }, {}), false, JSON.stringify(written));
      }
    });

    it('should never match an object value', () => {
      assert.equal(matches({ path: ['origin'], value: 'DE' }, { origin: { country: 'DE' } }), false);
      assert.equal(matches({ path: ['origin'], value: '[object Object]' }, { origin: {} }), false);
    });

    it('should not read inherited properties', () => {
      assert.equal(matches({ path: ['constructor'], value: 'Object' }, {}), false);
      assert.equal(matches({ path: ['__proto__'], value: '' }, {}), false);
    });
  });
});
