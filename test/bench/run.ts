// `npm run bench [-- section ...]`: the benchmarks, never part of `npm test` (README, Performance).
// Sections: performance (the HTTP scenarios at 10k and 1M items against a bare node:http server),
// recovery (1M records: time and memory), filter (the compiled $filter against an interpreter),
// deliveries (the webhook sender's rate), slow-readers (memory and /$health under 1,000 non-reading
// sockets), head-of-line (how soon a third kind of work is served while two others hang), page-budget
// (a page of wide items as JSON, CSV and HTML), field-names (a PUT adding a property name to a
// collection that knows 60,000, against one adding none). Figures are printed as they come, then as
// Markdown tables for the README, and saved to data/bench/results.json (ignored by git).
//   BENCH_SIZES=10000,1000000  BENCH_SECONDS=3  BENCH_ROUNDS=3  BENCH_WARMUP=1  BENCH_CONNECTIONS=32  BENCH_ONLY=get-item,put
//   BENCH_SLOW_READERS=1000  BENCH_WIDE_ITEMS=1000 (page-budget)
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import { benchDeliveries } from './deliveries.js';
import { benchFieldNames } from './field-names.js';
import { benchFilter } from './filter.js';
import { benchHeadOfLine } from './head-of-line.js';
import { benchPageBudget } from './page-budget.js';
import { hasWrk } from './load.js';
import { Report } from './measure.js';
import { benchRecovery } from './recovery.js';
import { benchSlowReaders } from './slow-readers.js';
import { benchSuite, type ScenarioResult } from './suite.js';
import { benchSubscriptions } from './subscriptions.js';
import { benchWebhookSchemes } from './webhook-schemes.js';
import { benchWebhookSender } from './webhook-sender.js';

const RESULTS = fileURLToPath(new URL('../../../data/bench/', import.meta.url));
const sections = new Set(process.argv.slice(2));
const wanted = (name: string): boolean => sections.size === 0 || sections.has(name);
const numbers = (value: string | undefined, fallback: readonly number[]): number[] => (value === undefined || value === '' ? [...fallback] : value.split(',').map(Number));

const report = new Report();
const machine = { cpus: cpus().length, cpu: cpus()[0]?.model ?? 'unknown', memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version, generator: (await hasWrk()) ? 'wrk' : 'own' };
process.stdout.write(`${machine.cpus} × ${machine.cpu}, ${machine.memoryGiB} GiB, Node ${machine.node}, load from ${machine.generator}\n`);
let performance: ScenarioResult[] = [];
if (wanted('performance')) {
  performance = await benchSuite(report, {
    sizes: numbers(process.env['BENCH_SIZES'], [10_000, 1_000_000]),
    connections: numbers(process.env['BENCH_CONNECTIONS'], [32])[0] as number,
    seconds: numbers(process.env['BENCH_SECONDS'], [3])[0] as number,
    rounds: numbers(process.env['BENCH_ROUNDS'], [3])[0] as number,
    warmupSeconds: numbers(process.env['BENCH_WARMUP'], [1])[0] as number,
    only: (process.env['BENCH_ONLY'] ?? '').split(',').filter((key) => key !== ''),
  });
}
if (wanted('recovery')) await benchRecovery(report, [100_000, 1_000_000]);
if (wanted('filter')) await benchFilter(report, [100_000, 1_000_000]);
// subscriptions: the bytes on disk and the time of a 50 KB write with 0, 1, 10 and 100 subscriptions.
if (wanted('subscriptions')) await benchSubscriptions(report);
if (wanted('deliveries')) await benchDeliveries(report);
if (wanted('slow-readers')) await benchSlowReaders(report, numbers(process.env['BENCH_SLOW_READERS'], [1000])[0] as number);
if (wanted('head-of-line')) await benchHeadOfLine(report);
if (wanted('page-budget')) await benchPageBudget(report, numbers(process.env['BENCH_WIDE_ITEMS'], [1000])[0] as number);
if (wanted('field-names')) await benchFieldNames(report, 60_000, 200);
// webhook-schemes: accepts/s of each receiving scheme; webhook-sender: PUTs with 2 subscriptions vs 1 (BENCH_BEFORE: an earlier build beside).
if (wanted('webhook-schemes')) await benchWebhookSchemes(report);
if (wanted('webhook-sender')) await benchWebhookSender(report);
mkdirSync(RESULTS, { recursive: true });
writeFileSync(`${RESULTS}results.json`, `${JSON.stringify({ at: new Date().toISOString(), machine, performance, tables: report.markdown() }, null, 2)}\n`);
process.stdout.write(`\n${report.markdown()}\n`);
