// Property tests for the CSV reader and writer with a seeded generator, so every failure replays.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseCsv } from '../../lib/csv/parse.js';
import { writeCsv } from '../../lib/csv/write.js';
import { mulberry32 } from '../support/random.js';

const RUNS = 3000;
// Weighted towards the characters CSV treats specially.
const ALPHABET = ['a', 'b', 'Z', '1', ' ', ',', ',', '"', '"', '\r', '\n', '\r\n', '\uFEFF', 'é', '😀', '='];

function randomInt(random: () => number, below: number): number {
  return Math.floor(random() * below);
}

function randomText(random: () => number, maxLength: number): string {
  let text = '';
  const length = randomInt(random, maxLength + 1);
  for (let i = 0; i < length; i++) text += ALPHABET[randomInt(random, ALPHABET.length)] ?? '';
  return text;
}

function randomTable(random: () => number): { columns: string[]; rows: string[][] } {
  const width = 1 + randomInt(random, 4);
  const field = (): string => (random() < 0.2 ? '' : randomText(random, 6));
  const columns = Array.from({ length: width }, field);
  const rows = Array.from({ length: randomInt(random, 5) }, () => Array.from({ length: width }, field));
  return { columns, rows };
}

describe('parseCsv (property)', () => {
  it('should return a well-formed result and never throw for arbitrary text', () => {
    const random = mulberry32(0x5eed);
    let oks = 0;
    let errors = 0;
    for (let run = 0; run < RUNS; run++) {
      const text = randomText(random, 24);
      const result = parseCsv(text);
      if (result.ok) {
        oks++;
        const width = result.rows[0]?.length ?? 0;
        for (const row of result.rows) assert.equal(row.length, width, `run ${run}: ${JSON.stringify(text)}`);
      } else {
        errors++;
        assert.equal(result.error.kind, 'csv');
        assert.ok(Number.isInteger(result.error.row) && result.error.row >= 1, `run ${run}: ${JSON.stringify(text)}`);
        assert.ok(result.error.offset >= 0 && result.error.offset <= text.length, `run ${run}: ${JSON.stringify(text)}`);
        assert.match(result.error.message, new RegExp(`^row ${result.error.row}\\b`));
      }
    }
    // The generator must exercise both outcomes, or the property says little.
    assert.ok(oks > RUNS / 20 && errors > RUNS / 20, `ok ${oks}, errors ${errors}`);
  });

  it('should read back exactly what writeCsv wrote', () => {
    const random = mulberry32(0xc5f);
    for (let run = 0; run < RUNS; run++) {
      const { columns, rows } = randomTable(random);
      const text = writeCsv(columns, rows);
      assert.deepEqual(parseCsv(text), { ok: true, rows: [columns, ...rows] }, `run ${run}: ${JSON.stringify(text)}`);
    }
  });

  it('should give the same records after writing and re-reading any text it accepted', () => {
    const random = mulberry32(0xbeef);
    let checked = 0;
    for (let run = 0; run < RUNS; run++) {
      const parsed = parseCsv(randomText(random, 24));
      if (!parsed.ok) continue;
      const [header, ...body] = parsed.rows;
      if (header === undefined) continue;
      checked++;
      assert.deepEqual(parseCsv(writeCsv(header, body)), parsed, `run ${run}`);
    }
    assert.ok(checked > RUNS / 20, `only ${checked} accepted inputs`);
  });
});
