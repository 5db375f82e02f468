// Benchmark (README, Performance): what a new property name costs (CONVENTIONS.md#filter-errors-and-budget,
// CONVENTIONS.md#limits). A server on a data dir, with limits.maxPropertyNames raised, is given a
// collection that knows KNOWN distinct property paths; then, one request at a time, PUTs that each
// create an item bringing one new name alternate with PUTs that create an item of names already known.
// The target: the first within 2x of the second. Figures are printed, never asserted.
import { writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { withTempDir } from '../support/temp-dir.js';
import type { Report } from './measure.js';
import { spawnResapi, type Child } from './servers.js';

/** Names per filling PUT: about 170 KB of JSON, well under the 1 MiB body cap. */
const NAMES_PER_FILL = 10_000;

export async function benchFieldNames(report: Report, known: number, rounds: number): Promise<void> {
  await withTempDir('bench-field-names', async (folder) => {
    const config = join(folder, 'config.json');
    const limits = { maxPropertyNames: { collection: known + rounds + 10, document: NAMES_PER_FILL + 10 } };
    writeFileSync(config, JSON.stringify({ limits }));
    const server = await spawnResapi(['--data-dir', join(folder, 'data'), '--config', config]);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      for (let start = 0; start < known; start += NAMES_PER_FILL) {
        const doc: Record<string, number> = {};
        for (let n = start; n < Math.min(known, start + NAMES_PER_FILL); n++) doc[`known${n}`] = n;
        await put(agent, server, `/wide/fill${start}`, JSON.stringify(doc));
      }
      const adding: number[] = [];
      const knownOnly: number[] = [];
      for (let round = 0; round < rounds; round++) {
        adding.push(await put(agent, server, `/wide/new${round}`, JSON.stringify({ [`added${round}`]: round })));
        knownOnly.push(await put(agent, server, `/wide/old${round}`, JSON.stringify({ [`known${round % known}`]: round })));
      }
      const addingMedian = quantile(adding, 0.5);
      const knownMedian = quantile(knownOnly, 0.5);
      report.row('field-names', `PUT creating an item, ${known.toLocaleString('en')} names known, ${rounds} rounds`, {
        'one new name p50 ms': addingMedian.toFixed(2),
        'one new name p99 ms': quantile(adding, 0.99).toFixed(2),
        'known names p50 ms': knownMedian.toFixed(2),
        'known names p99 ms': quantile(knownOnly, 0.99).toFixed(2),
        'new / known (p50)': `${(addingMedian / knownMedian).toFixed(2)}x`,
      });
    } finally {
      agent.destroy();
      await server.stop();
    }
  });
}

/** A creating PUT over the keep-alive agent; resolves with its milliseconds once the answer is read. */
function put(agent: Agent, to: Child, path: string, body: string): Promise<number> {
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const headers = { 'Content-Type': 'application/json', 'If-None-Match': '*', 'Content-Length': String(Buffer.byteLength(body)) };
    const outgoing = request({ host: to.url.hostname, port: to.url.port, path, method: 'PUT', agent, headers }, (answer) => {
      let text = '';
      answer.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      answer.on('end', () => {
        if (answer.statusCode === 201) resolve(Number(process.hrtime.bigint() - started) / 1e6);
        else reject(new Error(`PUT ${path} answered ${String(answer.statusCode)}: ${text.slice(0, 300)}`));
      });
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
}
