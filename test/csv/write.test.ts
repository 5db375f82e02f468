import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CsvTable, flattenRows, writeCsv } from '../../lib/csv/write.js';
import { parseCsv } from '../../lib/csv/parse.js';
import type { JsonObject, JsonValue } from '../../lib/json.js';
import { mulberry32 } from '../support/random.js';

describe('writeCsv', () => {
  it('should write the header first and end every record with CRLF', () => {
    assert.equal(writeCsv(['id', 'price'], [['p1', '10'], ['p2', '12.5']]), 'id,price\r\np1,10\r\np2,12.5\r\n');
  });

  it('should quote fields holding a comma, quote, CR or LF and double inner quotes', () => {
    const text = writeCsv(['a', 'b', 'c', 'd', 'e'], [['x,y', 'say "hi"', 'one\rtwo', 'l1\nl2', 'plain']]);
    assert.equal(text, 'a,b,c,d,e\r\n"x,y","say ""hi""","one\rtwo","l1\nl2",plain\r\n');
  });

  it('should quote a lone empty field so the record is not a blank line', () => {
    assert.equal(writeCsv(['id'], [[''], ['x']]), 'id\r\n""\r\nx\r\n');
  });

  it('should not quote empty fields when the record has other fields', () => {
    assert.equal(writeCsv(['a', 'b'], [['', '']]), 'a,b\r\n,\r\n');
  });

  it('should quote a field that starts with a byte order mark', () => {
    assert.equal(writeCsv(['\uFEFFa'], []), '"\uFEFFa"\r\n');
  });

  it('should leave formula-like cells unaltered', () => {
    assert.equal(writeCsv(['f'], [['=1+2'], ['-3'], ['@x'], ['+4']]), 'f\r\n=1+2\r\n-3\r\n@x\r\n+4\r\n');
  });

  it('should write nothing for zero columns and zero rows', () => {
    assert.equal(writeCsv([], []), '');
  });

  it('should throw a TypeError for rows without columns or of the wrong width', () => {
    assert.throws(() => writeCsv([], [[]]), { name: 'TypeError', message: /at least one column/ });
    assert.throws(() => writeCsv(['a', 'b'], [['1']]), { name: 'TypeError', message: /rows\[0\] has 1 fields; columns has 2/ });
  });
});

describe('flattenRows', () => {
  it('should turn nested members into slash paths in first-seen order', () => {
    const docs: JsonObject[] = [
      { id: 'a', size: { w: 1, h: 2 }, name: 'A' },
      { id: 'b', color: 'red', size: { w: 3, d: 4 } },
    ];
    assert.deepEqual(flattenRows(docs), {
      columns: ['id', 'size/w', 'size/h', 'name', 'color', 'size/d'],
      rows: [
        ['a', '1', '2', 'A', '', ''],
        ['b', '3', '', '', 'red', '4'],
      ],
    });
  });

  it('should write arrays and empty objects as JSON text, numbers and booleans as JSON', () => {
    const { columns, rows } = flattenRows([{ id: 'x', tags: ['a', 'b,c'], meta: {}, n: -1.5e-7, ok: false }]);
    assert.deepEqual(columns, ['id', 'tags', 'meta', 'n', 'ok']);
    assert.deepEqual(rows, [['x', '["a","b,c"]', '{}', '-1.5e-7', 'false']]);
  });

  it('should write null and missing members as empty fields', () => {
    assert.deepEqual(flattenRows([{ id: 'a', v: null }, { id: 'b' }]).rows, [['a', ''], ['b', '']]);
  });

  it('should escape slash and tilde in keys so distinct members never share a column', () => {
    const { columns, rows } = flattenRows([{ 'a/b': 1, a: { b: 2 }, 'c~1': 3 }]);
    assert.deepEqual(columns, ['a~1b', 'a/b', 'c~01']);
    assert.deepEqual(rows, [['1', '2', '3']]);
  });

  it('should return no columns and no rows for no documents', () => {
    assert.deepEqual(flattenRows([]), { columns: [], rows: [] });
  });

  it('should flatten deeply nested objects without overflowing the call stack', () => {
    let doc: JsonObject = { leaf: 1 };
    for (let depth = 0; depth < 20_000; depth++) doc = { k: doc };
    const { columns, rows } = flattenRows([doc]);
    assert.equal(columns.length, 1);
    assert.equal(columns[0], `${'k/'.repeat(20_000)}leaf`);
    assert.deepEqual(rows, [['1']]);
  });

  it('should not modify the documents it reads', () => {
    const doc: JsonObject = { id: 'a', nested: { x: [1, 2] } };
    const before = structuredClone(doc);
    flattenRows([doc]);
    assert.deepEqual(doc, before);
  });

  it('should produce a table that writeCsv and parseCsv read back unchanged', () => {
    const { columns, rows } = flattenRows([
      { id: 'a', note: 'multi\r\nline, "quoted"', nested: { v: null } },
      { id: 'b', note: '', nested: { v: 'x' }, list: [{ k: 1 }] },
    ]);
    const parsed = parseCsv(writeCsv(columns, rows));
    assert.deepEqual(parsed, { ok: true, rows: [columns, ...rows] });
  });
});

/** Documents with the shapes that change a CSV's size: new columns, quoting, BOMs, empty fields, nesting. */
function randomDoc(random: () => number): JsonObject {
  const names = ['id', 'a', 'b,c', 'q"', '\uFEFFbom', 'é', 'x/y', 'n', '', '😀'];
  const values: (() => JsonValue)[] = [
    () => '',
    () => null,
    () => 'plain',
    () => 'say "hi", then\r\nleave',
    () => '\uFEFFlead',
    () => -1.5,
    () => ['a', 'b'],
    () => ({}),
    () => ({ [names[Math.floor(random() * names.length)] as string]: 'nested' }),
    () => '\ud800 lone',
  ];
  const doc: JsonObject = {};
  const members = Math.floor(random() * 4);
  for (let index = 0; index < members; index++) {
    doc[names[Math.floor(random() * names.length)] as string] = (values[Math.floor(random() * values.length)] as () => JsonValue)();
  }
  return doc;
}

describe('CsvTable', () => {
  it('should know the UTF-8 bytes of its text after every add and pop (property)', () => {
    const random = mulberry32(0xb17e5);
    for (let run = 0; run < 500; run++) {
      const table = new CsvTable();
      const docs = Array.from({ length: 1 + Math.floor(random() * 5) }, () => randomDoc(random));
      // A table of no columns has no CSV form; every page's items have at least `id` or `@id`.
      docs[0] = { ...docs[0], id: 'x' };
      for (const doc of docs) {
        assert.equal(table.add(doc), true);
        assert.equal(table.bytes, Buffer.byteLength(table.text()), `run ${run}: ${JSON.stringify(docs)}`);
      }
      assert.equal(table.text(), writeCsv(flattenRows(docs).columns, flattenRows(docs).rows), `run ${run}`);
      while (table.rows > 1) {
        table.pop();
        assert.equal(table.bytes, Buffer.byteLength(table.text()), `run ${run} after pop: ${JSON.stringify(docs)}`);
        assert.equal(table.text(), writeCsv(flattenRows(docs.slice(0, table.rows)).columns, flattenRows(docs.slice(0, table.rows)).rows));
      }
    }
  });

  it('should count the one-column shapes exactly: a lone empty name or field is written ""', () => {
    for (const docs of [[{ '': 'x' }], [{ v: '' }, { v: 'a' }], [{ '': '' }], [{ v: null }, { w: 1 }]] as JsonObject[][]) {
      const table = new CsvTable();
      for (const doc of docs) table.add(doc);
      assert.equal(table.bytes, Buffer.byteLength(table.text()), JSON.stringify(docs));
    }
  });

  it('should refuse a row that would pass the limit, and leave the table as it was', () => {
    const table = new CsvTable();
    assert.equal(table.add({ id: 'a', v: 1 }, 100), true);
    const before = table.text();
    assert.equal(table.add({ id: 'b', wide: 'x'.repeat(200) }, 100), false);
    assert.equal(table.rows, 1);
    assert.equal(table.text(), before);
    assert.equal(table.bytes, Buffer.byteLength(before));
    assert.equal(table.add({ id: 'c', v: 2 }, 100), true, 'the table goes on after a refused row');
    assert.equal(table.text(), 'id,v\r\na,1\r\nc,2\r\n');
  });

  it('should count the new columns every earlier row gains', () => {
    const table = new CsvTable();
    for (let n = 0; n < 10; n++) assert.equal(table.add({ id: `r${n}` }), true);
    // One more column: `,z` in the header, a comma in each of the ten rows, and the row `r10,1` CRLF.
    const grows = 2 + 10 + 7;
    const before = table.bytes;
    assert.equal(table.add({ id: 'r10', z: '1' }, before + grows - 1), false);
    assert.equal(table.add({ id: 'r10', z: '1' }, before + grows), true);
    assert.equal(table.bytes, Buffer.byteLength(table.text()));
  });

  it('should stop flattening a document whose column paths alone pass the limit, without building them', () => {
    // 20,000 columns under a 100,000-character name: two gigabytes of header text were it written.
    const long = 'k'.repeat(100_000);
    const doc: JsonObject = { [long]: Object.fromEntries(Array.from({ length: 20_000 }, (_, n) => [`c${n}`, n])) };
    const table = new CsvTable();
    assert.equal(table.add(doc, 1024 * 1024), false);
    assert.equal(table.rows, 0);
    assert.deepEqual(table.columns(), []);
  });

  it('should refuse pop on an empty table as a programmer error', () => {
    assert.throws(() => new CsvTable().pop(), { name: 'TypeError', message: /no rows/ });
  });
});
