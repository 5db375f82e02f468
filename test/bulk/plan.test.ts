import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { planBulk, readBulkHeader, reportOf } from '../../lib/bulk/plan.js';
import type { BulkColumns, BulkPlan, BulkProblem } from '../../lib/bulk/plan.js';
import { parseCsv } from '../../lib/csv/parse.js';
import { flattenRows } from '../../lib/csv/write.js';
import { MAX_JSON_DEPTH, shapeProblem } from '../../lib/writes/document.js';
import type { JsonObject, JsonValue } from '../../lib/json.js';

function columnsOf(header: readonly string[]): BulkColumns {
  const result = readBulkHeader(header);
  if (!result.ok) assert.fail(`expected a header, got ${result.problem.message}`);
  return result.columns;
}

function headerProblem(header: readonly string[]): BulkProblem {
  const result = readBulkHeader(header);
  if (result.ok) assert.fail(`expected a problem for ${JSON.stringify(header)}`);
  return result.problem;
}

/** Deep-frozen docs, so any attempt to mutate them throws in the planner. */
function storeOf(docs: readonly JsonObject[]): Map<string, JsonObject> {
  const freeze = (value: JsonValue): void => {
    if (typeof value === 'object' && value !== null) {
      for (const inner of Object.values(value)) freeze(inner);
      Object.freeze(value);
    }
  };
  for (const doc of docs) freeze(doc);
  return new Map(docs.map((doc) => [String(doc['id']), doc]));
}

/** Parses a whole CSV body and plans it, as the `$bulk` route will. */
function plan(csv: string, store: ReadonlyMap<string, JsonObject>): { ok: true; plan: BulkPlan } | { ok: false; problem: BulkProblem } {
  const parsed = parseCsv(csv);
  if (!parsed.ok) assert.fail(parsed.error.message);
  const [header = [], ...rows] = parsed.rows;
  return planBulk(columnsOf(header), rows, (id) => store.get(id));
}

function planOf(csv: string, store: ReadonlyMap<string, JsonObject>): BulkPlan {
  const result = plan(csv, store);
  if (!result.ok) assert.fail(`expected a plan, got ${result.problem.message}`);
  return result.plan;
}

function problemOf(csv: string, store: ReadonlyMap<string, JsonObject>): BulkProblem {
  const result = plan(csv, store);
  if (result.ok) assert.fail(`expected a problem, got ${JSON.stringify(result.plan.outcomes)}`);
  return result.problem;
}

function outcomes(csv: string, store: ReadonlyMap<string, JsonObject>): string[] {
  return planOf(csv, store).outcomes.map((o) => o.outcome);
}

describe('readBulkHeader', () => {
  it('should find the id column and the current/new pair of a productId,currentPrice,newPrice file', () => {
    assert.deepEqual(columnsOf(['productId', 'currentPrice', 'newPrice']), {
      idColumn: 'productId',
      idIndex: 0,
      fields: [{ field: 'price', current: 1, next: 2 }],
    });
  });

  it('should accept `id`, pairs in any column order and several pairs', () => {
    assert.deepEqual(columnsOf(['newStock', 'currentPrice', 'id', 'currentStock', 'newPrice']), {
      idColumn: 'id',
      idIndex: 2,
      fields: [
        { field: 'stock', current: 3, next: 0 },
        { field: 'price', current: 1, next: 4 },
      ],
    });
  });

  it('should lowercase only the first letter after the prefix', () => {
    assert.deepEqual(columnsOf(['id', 'currentListPrice', 'newListPrice']).fields, [{ field: 'listPrice', current: 1, next: 2 }]);
  });

  it('should read current<Name>Id as a pair, not as a second id column', () => {
    assert.deepEqual(columnsOf(['orderId', 'currentAccountId', 'newAccountId']).fields, [{ field: 'accountId', current: 1, next: 2 }]);
  });

  it('should refuse increment and percent columns, naming row 1', () => {
    for (const column of ['increment', 'percent']) {
      const problem = headerProblem(['productId', column]);
      assert.equal(problem.kind, 'bulk');
      assert.equal(problem.row, 1);
      assert.match(problem.message, new RegExp(`^row 1: unknown column "${column}"`));
    }
  });

  it('should refuse names that only look like pairs or ids', () => {
    assert.match(headerProblem(['id', 'currentprice', 'newprice']).message, /unknown column "currentprice"/);
    assert.match(headerProblem(['ID', 'currentPrice', 'newPrice']).message, /unknown column "ID"/);
    assert.match(headerProblem(['id', 'current', 'newPrice']).message, /unknown column "current"/);
  });

  it('should refuse a missing id column and two id columns', () => {
    assert.match(headerProblem(['currentPrice', 'newPrice']).message, /no id column/);
    assert.match(headerProblem(['id', 'productId', 'currentPrice', 'newPrice']).message, /two id columns: "id" and "productId"/);
  });

  it('should refuse a current without its new and a new without its current', () => {
    assert.match(headerProblem(['id', 'currentPrice']).message, /"currentPrice" has no "newPrice"/);
    assert.match(headerProblem(['id', 'newPrice', 'currentStock', 'newStock']).message, /"newPrice" has no "currentPrice"/);
  });

  it('should refuse duplicated columns', () => {
    assert.match(headerProblem(['id', 'currentPrice', 'newPrice', 'newPrice']).message, /column "newPrice" appears twice/);
  });

  it('should refuse a header with no pair and a pair on the id, nested or not', () => {
    assert.match(headerProblem(['id']).message, /no current<Field>\/new<Field> pair/);
    assert.match(headerProblem(['productId', 'currentId', 'newId']).message, /the id cannot be changed/);
    assert.match(headerProblem(['productId', 'currentId/x', 'newId/x']).message, /the id cannot be changed/);
  });

  it('should read a nested column as the path of the member it updates, as the text/csv representation names it', () => {
    assert.deepEqual(columnsOf(['id', 'currentDimensions/width', 'newDimensions/width', 'currentDimensions/Height', 'newDimensions/Height']).fields, [
      { field: 'dimensions/width', current: 1, next: 2 },
      { field: 'dimensions/Height', current: 3, next: 4 },
    ]);
    assert.deepEqual(columnsOf(['id', 'currentA~1b/c~0d', 'newA~1b/c~0d']).fields, [{ field: 'a~1b/c~0d', current: 1, next: 2 }]);
  });

  it('should refuse a "~" that is not an RFC 6901 escape', () => {
    for (const column of ['A~2', 'A~', 'A/~b']) {
      assert.match(headerProblem(['id', `current${column}`, `new${column}`]).message, /^row 1: column "current.*": "~" must be followed by 0 or 1/, column);
    }
  });

  it('should refuse a nested column deeper than a stored document may nest, and accept one at the limit', () => {
    const path = (segments: number): string => Array.from({ length: segments }, () => 'A').join('/');
    assert.match(headerProblem(['id', `current${path(MAX_JSON_DEPTH + 1)}`, `new${path(MAX_JSON_DEPTH + 1)}`]).message, new RegExp(`^row 1: column .*: nested deeper than ${MAX_JSON_DEPTH} levels$`));
    const columns = columnsOf(['id', `current${path(MAX_JSON_DEPTH)}`, `new${path(MAX_JSON_DEPTH)}`]);
    const result = planBulk(columns, [['a', '', '1']], () => ({ id: 'a' }));
    if (!result.ok) assert.fail(result.problem.message);
    // The write path accepts what the header let through (lib/writes/document.ts).
    assert.equal(shapeProblem(result.plan.updates.get('a')), undefined);
  });

  it('should refuse a pair that updates a member of another pair', () => {
    const problem = headerProblem(['id', 'currentDimensions/width', 'newDimensions/width', 'currentDimensions', 'newDimensions']);
    assert.match(problem.message, /^row 1: columns for "dimensions" and "dimensions\/width" overlap/);
    const reversed = headerProblem(['id', 'currentDimensions', 'newDimensions', 'currentDimensions/size/width', 'newDimensions/size/width']);
    assert.match(reversed.message, /^row 1: columns for "dimensions" and "dimensions\/size\/width" overlap/);
    assert.equal(columnsOf(['id', 'currentDim', 'newDim', 'currentDimensions/width', 'newDimensions/width']).fields.length, 2, 'a shared beginning of a name is no overlap');
  });
});

describe('planBulk', () => {
  const csvHeader = 'productId,currentPrice,newPrice\n';

  it('should apply, skip, conflict and not find rows as CONVENTIONS.md#bulk-updates says', () => {
    const store = storeOf([
      { id: 'p1', price: 10, name: 'one' },
      { id: 'p2', price: 12 },
      { id: 'p3', price: 99 },
    ]);
    const result = planOf(`${csvHeader}p1,10,12\np2,10,12\np3,10,12\np4,10,12\n`, store);
    assert.deepEqual(result.outcomes, [
      { row: 2, id: 'p1', outcome: 'applied' },
      { row: 3, id: 'p2', outcome: 'skipped' },
      { row: 4, id: 'p3', outcome: 'conflict', actual: { price: 99 } },
      { row: 5, id: 'p4', outcome: 'notFound' },
    ]);
    assert.deepEqual([...result.updates], [['p1', { id: 'p1', price: 12, name: 'one' }]]);
  });

  it('should build new documents and leave the stored ones untouched', () => {
    const stored: JsonObject = { id: 'p1', price: 10, tags: ['a'] };
    const store = storeOf([stored]);
    const updated = planOf(`${csvHeader}p1,10,11\n`, store).updates.get('p1');
    assert.notEqual(updated, stored);
    assert.deepEqual(stored, { id: 'p1', price: 10, tags: ['a'] });
    assert.deepEqual(updated, { id: 'p1', price: 11, tags: ['a'] });
  });

  it('should skip every row when the same file is sent a second time', () => {
    const store = storeOf([{ id: 'p1', price: 10 }, { id: 'p2', price: 20 }]);
    const csv = `${csvHeader}p1,10,11\np2,20,19.5\n`;
    const first = planOf(csv, store);
    const after = new Map(store);
    for (const [id, doc] of first.updates) after.set(id, doc);
    const second = planOf(csv, after);
    assert.deepEqual(second.outcomes.map((o) => o.outcome), ['skipped', 'skipped']);
    assert.equal(second.updates.size, 0);
  });

  it('should apply a row with several pairs only when every current matches', () => {
    const store = storeOf([
      { id: 'a', price: 1, stock: 5 },
      { id: 'b', price: 2, stock: 6 },
      { id: 'c', price: 1, stock: 9 },
      { id: 'd', price: 2, stock: 5 },
    ]);
    const csv = 'id,currentPrice,newPrice,currentStock,newStock\na,1,2,5,6\nb,1,2,5,6\nc,1,2,5,6\nd,1,2,5,6\n';
    const result = planOf(csv, store);
    assert.deepEqual(result.outcomes, [
      { row: 2, id: 'a', outcome: 'applied' },
      { row: 3, id: 'b', outcome: 'skipped' },
      { row: 4, id: 'c', outcome: 'conflict', actual: { price: 1, stock: 9 } },
      // Half applied already: neither every current nor every new holds.
      { row: 5, id: 'd', outcome: 'conflict', actual: { price: 2, stock: 5 } },
    ]);
    assert.deepEqual(result.updates.get('a'), { id: 'a', price: 2, stock: 6 });
  });

  it('should skip a row whose current and new are equal instead of rewriting it', () => {
    assert.deepEqual(outcomes(`${csvHeader}p1,10,10\n`, storeOf([{ id: 'p1', price: 10 }])), ['skipped']);
  });

  it('should compare numbers by value after strict decimal conversion', () => {
    const store = storeOf([
      { id: 'a', price: 10.5 },
      { id: 'b', price: 100 },
      { id: 'c', price: -3 },
      { id: 'd', price: 16 },
      { id: 'e', price: 0 },
    ]);
    const csv = `${csvHeader}a,10.50,11\nb,1e2,101\nc,-3,-4\nd,0x10,17\ne,,1\n`;
    assert.deepEqual(outcomes(csv, store), ['applied', 'applied', 'applied', 'conflict', 'conflict']);
  });

  it('should treat a current that cannot be a number as a conflict', () => {
    const store = storeOf([{ id: 'a', price: 5 }]);
    for (const text of ['Infinity', 'NaN', '+5', '05', '.5', '5.', ' 5', '1e400']) {
      assert.deepEqual(outcomes(`${csvHeader}a,${text},6\n`, store), ['conflict'], text);
    }
  });

  it('should refuse a new value that can never be stored in a number field, naming the row', () => {
    const store = storeOf([{ id: 'a', price: 5 }, { id: 'b', price: 5 }]);
    for (const text of ['0x10', '', 'Infinity', 'NaN', 'abc']) {
      const problem = problemOf(`${csvHeader}a,5,6\nb,5,${text}\n`, store);
      assert.equal(problem.kind, 'bulk');
      assert.equal(problem.row, 3);
      assert.match(problem.message, /^row 3: new value .* for price is not a number/, text);
    }
  });

  it('should refuse a new decimal that no double holds exactly, naming the row, instead of storing another number', () => {
    const store = storeOf([{ id: 'a', price: 5 }, { id: 'b', price: 5 }]);
    for (const text of ['9007199254740993', '1e-400', '1e400', '-1e999', '123456789012345678901234567890', '0.10000000000000000555']) {
      const problem = problemOf(`${csvHeader}a,5,6\nb,5,${text}\n`, store);
      assert.equal(problem.row, 3, text);
      assert.equal(problem.message, `row 3: new value "${text}" for price cannot be stored exactly as a number`, text);
    }
  });

  it('should store exact spellings as the number they write, and skip them on a second send', () => {
    const store = storeOf([{ id: 'a', price: 5 }, { id: 'b', price: 5 }, { id: 'c', price: 9007199254740992 }]);
    const csv = `${csvHeader}a,5,1.0\nb,5e0,1e2\nc,9007199254740992,9007199254740991\n`;
    const first = planOf(csv, store);
    assert.deepEqual(first.outcomes.map((o) => o.outcome), ['applied', 'applied', 'applied']);
    assert.deepEqual([...first.updates.values()], [{ id: 'a', price: 1 }, { id: 'b', price: 100 }, { id: 'c', price: 9007199254740991 }]);
    assert.deepEqual(outcomes(csv, new Map([...store, ...first.updates])), ['skipped', 'skipped', 'skipped']);
  });

  it('should treat a current decimal that no double holds as a conflict, not as the number it rounds to', () => {
    // 9007199254740993 parses to 9007199254740992: equal as doubles, but not what the file says is stored.
    const result = planOf(`${csvHeader}a,9007199254740993,7\n`, storeOf([{ id: 'a', price: 9007199254740992 }]));
    assert.deepEqual(result.outcomes, [{ row: 2, id: 'a', outcome: 'conflict', actual: { price: 9007199254740992 } }]);
  });

  it('should refuse an inexact decimal for a null member rather than store it as a string', () => {
    // A stored null has no type to follow: text that reads as a decimal is a number there, so one that
    // no double holds is refused like anywhere else, not kept as the string "9007199254740993".
    const store = storeOf([{ id: 'a', price: null }, { id: 'b' }]);
    assert.equal(problemOf(`${csvHeader}a,,9007199254740993\n`, store).message, 'row 2: new value "9007199254740993" for price cannot be stored exactly as a number');
    assert.equal(problemOf(`${csvHeader}b,,1e-400\n`, store).row, 2);
    assert.deepEqual(planOf(`${csvHeader}a,,9007199254740992\n`, store).updates.get('a'), { id: 'a', price: 9007199254740992 });
  });

  it('should read array and object cells with the same number rule as a JSON body', () => {
    const store = storeOf([{ id: 'a', tags: [1], dims: { w: 1 } }]);
    assert.match(problemOf('id,currentTags,newTags\na,[1],[9007199254740993]\n', store).message, /^row 2: new value .* for tags cannot be stored exactly as a number$/);
    assert.match(problemOf('id,currentDims,newDims\na,"{""w"":1}","{""w"":1e-400}"\n', store).message, /^row 2: new value .* for dims cannot be stored exactly as a number$/);
    assert.deepEqual(planOf('id,currentTags,newTags\na,[1.0],"[1e2,0.5]"\n', store).updates.get('a'), { id: 'a', tags: [100, 0.5], dims: { w: 1 } });
    assert.deepEqual(outcomes('id,currentTags,newTags\na,[1.0000000000000000001],[2]\n', store), ['conflict']);
  });

  it('should leave a JSON cell number that overflows to the write path, which refuses it with its pointer', () => {
    // lib/writes/document.ts refuses Infinity as "number out of range" at /tags/0 (test/e2e/write-path.test.ts).
    const updated = planOf('id,currentTags,newTags\na,[1],[1e400]\n', storeOf([{ id: 'a', tags: [1] }])).updates.get('a');
    assert.deepEqual(updated, { id: 'a', tags: [Number.POSITIVE_INFINITY] });
  });

  it('should refuse an unconvertible new value even on a row that would be a conflict', () => {
    assert.equal(problemOf(`${csvHeader}a,1,x\n`, storeOf([{ id: 'a', price: 5 }])).row, 2);
  });

  it('should not judge the new value of a row whose id is unknown', () => {
    assert.deepEqual(outcomes(`${csvHeader}zz,1,x\n`, storeOf([])), ['notFound']);
  });

  it('should convert booleans from true and false only', () => {
    const store = storeOf([{ id: 'a', active: true }, { id: 'b', active: true }]);
    const csv = 'id,currentActive,newActive\na,true,false\nb,TRUE,false\n';
    const result = planOf(csv, store);
    assert.deepEqual(result.outcomes.map((o) => o.outcome), ['applied', 'conflict']);
    assert.deepEqual(result.updates.get('a'), { id: 'a', active: false });
    assert.match(problemOf('id,currentActive,newActive\na,true,1\n', store).message, /is not a boolean/);
  });

  it('should compare strings exactly as written, spaces included', () => {
    const store = storeOf([{ id: 'a', name: 'Tea' }, { id: 'b', name: 'Tea' }]);
    const result = planOf('id,currentName,newName\na,Tea,"Green, tea"\nb, Tea,x\n', store);
    assert.deepEqual(result.outcomes.map((o) => o.outcome), ['applied', 'conflict']);
    assert.deepEqual(result.updates.get('a'), { id: 'a', name: 'Green, tea' });
  });

  it('should read a stored null or a missing member as null, matched by an empty field', () => {
    const store = storeOf([{ id: 'a', price: null }, { id: 'b' }, { id: 'c', price: null }]);
    const result = planOf(`${csvHeader}a,,10\nb,,abc\nc,5,6\n`, store);
    assert.deepEqual(result.outcomes, [
      { row: 2, id: 'a', outcome: 'applied' },
      { row: 3, id: 'b', outcome: 'applied' },
      { row: 4, id: 'c', outcome: 'conflict', actual: { price: null } },
    ]);
    // With no stored type to follow, the new text is read as it looks.
    assert.deepEqual(result.updates.get('a'), { id: 'a', price: 10 });
    assert.deepEqual(result.updates.get('b'), { id: 'b', price: 'abc' });
  });

  it('should skip setting null on a member that is already null', () => {
    assert.deepEqual(outcomes(`${csvHeader}a,5,\n`, storeOf([{ id: 'a', price: null }])), ['skipped']);
  });

  it('should not find members on the object prototype', () => {
    const result = planOf('id,currentConstructor,newConstructor\na,,x\n', storeOf([{ id: 'a' }]));
    assert.deepEqual(result.outcomes, [{ row: 2, id: 'a', outcome: 'applied' }]);
    assert.deepEqual(result.updates.get('a'), { id: 'a', constructor: 'x' });
  });

  it('should compare arrays and objects as JSON text, ignoring member order', () => {
    const store = storeOf([{ id: 'a', tags: ['x', 'y'], dims: { w: 1, h: 2 } }]);
    const csv = 'id,currentTags,newTags,currentDims,newDims\na,"[""x"",""y""]","[""z""]","{""h"":2,""w"":1}","{""w"":3}"\n';
    const result = planOf(csv, store);
    assert.deepEqual(result.updates.get('a'), { id: 'a', tags: ['z'], dims: { w: 3 } });
    assert.match(problemOf('id,currentTags,newTags\na,[],{}\n', store).message, /is not an array/);
    assert.deepEqual(outcomes('id,currentTags,newTags\na,"[""y"",""x""]","[]"\n', store), ['conflict']);
  });

  it('should update a nested member from its a/b column, keeping its siblings and member order', () => {
    const stored: JsonObject = { id: 'a', dimensions: { width: 3, height: 2 }, name: 'x' };
    const store = storeOf([stored, { id: 'b', dimensions: { width: 9 } }]);
    const csv = 'id,currentDimensions/width,newDimensions/width\na,3,4\nb,3,4\n';
    const result = planOf(csv, store);
    assert.deepEqual(result.outcomes, [
      { row: 2, id: 'a', outcome: 'applied' },
      // The conflict report names the member by its column's path text.
      { row: 3, id: 'b', outcome: 'conflict', actual: { 'dimensions/width': 9 } },
    ]);
    const updated = result.updates.get('a');
    assert.deepEqual(updated, { id: 'a', dimensions: { width: 4, height: 2 }, name: 'x' });
    assert.deepEqual(Object.keys(updated?.['dimensions'] ?? {}), ['width', 'height']);
    assert.deepEqual(stored, { id: 'a', dimensions: { width: 3, height: 2 }, name: 'x' }, 'the stored document is untouched');
    assert.deepEqual(outcomes(csv, new Map([...store, ...result.updates])), ['skipped', 'conflict']);
  });

  it('should apply several nested pairs of one object in one row', () => {
    const csv = 'id,currentDimensions/width,newDimensions/width,currentDimensions/height,newDimensions/height\na,3,4,2,1\n';
    const updated = planOf(csv, storeOf([{ id: 'a', dimensions: { width: 3, height: 2, depth: 1 } }])).updates.get('a');
    assert.deepEqual(updated, { id: 'a', dimensions: { width: 4, height: 1, depth: 1 } });
  });

  it('should read a missing or null member on the way as null, and create the objects on the way when applying', () => {
    const store = storeOf([{ id: 'a' }, { id: 'b', dimensions: null }, { id: 'c', dimensions: {} }, { id: 'd' }]);
    const result = planOf('id,currentDimensions/size/width,newDimensions/size/width\na,,5\nb,,5\nc,,5\nd,1,5\n', store);
    assert.deepEqual(result.outcomes.map((o) => o.outcome), ['applied', 'applied', 'applied', 'conflict']);
    for (const id of ['a', 'b', 'c']) assert.deepEqual(result.updates.get(id), { id, dimensions: { size: { width: 5 } } }, id);
    assert.deepEqual(result.outcomes[3]?.actual, { 'dimensions/size/width': null });
  });

  it('should refuse a row whose path runs through a member that is not an object, even when it would be a conflict', () => {
    const store = storeOf([{ id: 'a', dimensions: 'big' }, { id: 'b', dimensions: { size: [1] } }, { id: 'c', dimensions: { size: 3 } }]);
    assert.deepEqual(problemOf('id,currentDimensions/width,newDimensions/width\na,1,2\n', store), {
      kind: 'bulk',
      row: 2,
      message: 'row 2: "dimensions/width" cannot be set: "dimensions" holds a string, not an object',
    });
    const csv = 'id,currentDimensions/size/width,newDimensions/size/width\nc,9,2\nb,1,2\n';
    assert.equal(problemOf(csv, store).message, 'row 2: "dimensions/size/width" cannot be set: "dimensions/size" holds a number, not an object');
    assert.equal(problemOf('id,currentDimensions/size/width,newDimensions/size/width\nb,1,2\n', store).message, 'row 2: "dimensions/size/width" cannot be set: "dimensions/size" holds an array, not an object');
  });

  it('should address the member the text/csv column of that name holds, escapes included', () => {
    const doc: JsonObject = { id: 'a', 'a/b': { 'c~d': 1 } };
    assert.deepEqual(flattenRows([doc]).columns, ['id', 'a~1b/c~0d']);
    const updated = planOf('id,currentA~1b/c~0d,newA~1b/c~0d\na,1,2\n', storeOf([doc])).updates.get('a');
    assert.deepEqual(updated, { id: 'a', 'a/b': { 'c~d': 2 } });
  });

  it('should keep __proto__ and constructor along a nested path as plain data', () => {
    const store = storeOf([{ id: 'a', meta: {} }]);
    const updated = planOf('id,currentMeta/__proto__/polluted,newMeta/__proto__/polluted,currentMeta/constructor,newMeta/constructor\na,,true,,x\n', store).updates.get('a');
    const meta = updated?.['meta'] as JsonObject;
    assert.equal(Object.getPrototypeOf(meta), Object.prototype);
    assert.deepEqual(Object.getOwnPropertyDescriptor(meta, '__proto__')?.value, { polluted: true });
    assert.equal(meta['constructor'], 'x');
    assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
    assert.equal(JSON.stringify(updated), '{"id":"a","meta":{"__proto__":{"polluted":true},"constructor":"x"}}');
  });

  it('should refuse the same id on two rows, naming the second row', () => {
    const store = storeOf([{ id: 'p1', price: 10 }]);
    const problem = problemOf(`${csvHeader}p1,10,11\np2,1,2\np1,11,12\n`, store);
    assert.equal(problem.row, 4);
    assert.match(problem.message, /^row 4: id "p1" already appears on row 2$/);
  });

  it('should refuse an empty id', () => {
    assert.match(problemOf(`${csvHeader}p1,10,11\n,1,2\n`, storeOf([])).message, /^row 3: the productId field is empty$/);
  });

  it('should refuse a row shorter than the header instead of reading past it', () => {
    const columns = columnsOf(['id', 'currentPrice', 'newPrice']);
    const result = planBulk(columns, [['a', '1']], () => ({ id: 'a', price: 1 }));
    assert.deepEqual(result, { ok: false, problem: { kind: 'bulk', row: 2, message: 'row 2: has fewer fields than the header' } });
  });

  it('should shorten long text echoed in a problem', () => {
    const long = '9'.repeat(5000);
    const message = problemOf(`${csvHeader}a,5,${long}x\n`, storeOf([{ id: 'a', price: 5 }])).message;
    assert.ok(message.length < 200, message);
  });

  it('should return an empty plan for a file with only a header', () => {
    const result = planOf(csvHeader, storeOf([]));
    assert.deepEqual(result.outcomes, []);
    assert.equal(result.updates.size, 0);
  });
});

describe('reportOf', () => {
  it('should count applied and skipped rows and list conflicts and unknown ids', () => {
    const store = storeOf([{ id: 'p1', price: 10 }, { id: 'p2', price: 12 }, { id: 'p3', price: 7 }]);
    const report = reportOf(planOf('productId,currentPrice,newPrice\np1,10,12\np2,10,12\np3,10,12\np9,1,2\n', store));
    assert.deepEqual(report, {
      applied: 1,
      skipped: 1,
      conflicts: [{ row: 4, id: 'p3', actual: { price: 7 } }],
      notFound: [{ row: 5, id: 'p9' }],
    });
  });

  it('should serialize to the JSON body CONVENTIONS.md#bulk-updates names', () => {
    const report = reportOf({ outcomes: [], updates: new Map() });
    assert.equal(JSON.stringify(report), '{"applied":0,"skipped":0,"conflicts":[],"notFound":[]}');
  });
});
