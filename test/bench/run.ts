// `npm run bench [-- section ... | all] [--items N] [--memory] [--bare] [--unavoidable] [--profile DIR]`:
// the benchmarks, never part of `npm test` (README, Performance). With no section named, performance
// and recovery run (a few minutes on two cores); `all` runs every section. Sections: performance (the
// HTTP scenarios against the two real limits: the same-bytes server for reads, the ideal durable server
// for writes; suite.ts), recovery (1M records: time and memory), filter (the compiled $filter against
// an interpreter), deliveries (the webhook sender's rate), subscriptions (the bytes and time of a write
// as its subscriptions grow), slow-readers (memory and /$health under 1,000 non-reading sockets),
// head-of-line (how soon a third kind of work is served while two others hang), page-budget (a page of
// wide items as JSON, CSV and HTML), field-names (a PUT adding a property name to a collection that
// knows 60,000, against one adding none). Options of the performance section:
//   --items 1000000   also at 1,000,000 items (10,000 always runs first: each 1M ratio is read against it)
//   --memory          each write scenario also against `resapi serve --memory`
//   --bare            each scenario also against the bare server of earlier runs (status and body size only)
//   --unavoidable     the webhook and the write with a subscription also against a server that does only
//                     their unavoidable work (ceilings/unavoidable.ts): about the highest ratio reachable
//                     (at 10,000 items; at 1,000,000 its compactions are simpler than resapi's snapshots)
//   --profile DIR     a CPU profile of resapi's measured loads, one per scenario and round, into DIR (keep
//                     it out of the repository, /tmp say; a new one each run, or an earlier run's rounds
//                     are summed in), and each scenario's top 10 functions by self time over its rounds printed
// Figures are printed as they come, then as Markdown tables for the README, and saved to
// data/bench/results.json (ignored by git).
//   BENCH_SIZES=10000,1000000  BENCH_SECONDS=3  BENCH_ROUNDS=3  BENCH_WARMUP=1  BENCH_CONNECTIONS=32
//   BENCH_ONLY=get-item,put (or all: the extra scenarios too)  BENCH_SLOW_READERS=1000  BENCH_WIDE_ITEMS=1000
//   BENCH_NODE_ARGS='--trace-gc' (options for node when it runs resapi in the performance section)
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { benchDeliveries } from './deliveries.js';
import { benchFieldNames } from './field-names.js';
import { benchFilter } from './filter.js';
import { benchHeadOfLine } from './head-of-line.js';
import { benchPageBudget } from './page-budget.js';
import { hasWrk } from './load.js';
import { Report } from './measure.js';
import { reportProfiles } from './profile.js';
import { benchRecovery } from './recovery.js';
import { benchSlowReaders } from './slow-readers.js';
import { benchSuite, type ScenarioResult } from './suite.js';
import { benchSubscriptions } from './subscriptions.js';
import { benchWebhookSchemes } from './webhook-schemes.js';
import { benchWebhookSender } from './webhook-sender.js';

const RESULTS = fileURLToPath(new URL('../../../data/bench/', import.meta.url));
const BASE_SIZE = 10_000;
const DEFAULT_SECTIONS = new Set(['performance', 'recovery']);
const { values: flags, positionals } = parseArgs({
  allowPositionals: true,
  options: { items: { type: 'string' }, memory: { type: 'boolean' }, bare: { type: 'boolean' }, unavoidable: { type: 'boolean' }, profile: { type: 'string' } },
});
const sections = new Set(positionals.length === 0 ? DEFAULT_SECTIONS : positionals);
const wanted = (name: string): boolean => sections.has('all') || sections.has(name);
const numbers = (value: string | undefined, fallback: readonly number[]): number[] => (value === undefined || value === '' ? [...fallback] : value.split(',').map(Number));
const items = numbers(flags.items, []);
const sizes = numbers(process.env['BENCH_SIZES'], items.length === 0 ? [BASE_SIZE] : [...new Set([BASE_SIZE, ...items])]);
const load = (): string => loadavg().map((value) => value.toFixed(2)).join(' ');

const report = new Report();
const machine = { cpus: cpus().length, cpu: cpus()[0]?.model ?? 'unknown', memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version, generator: (await hasWrk()) ? 'wrk' : 'own', loadAverageAtStart: load() };
process.stdout.write(`${machine.cpus} × ${machine.cpu}, ${machine.memoryGiB} GiB, Node ${machine.node}, load from ${machine.generator}, load average ${machine.loadAverageAtStart}\n`);
let performance: ScenarioResult[] = [];
if (wanted('performance')) {
  const profileDir = flags.profile === undefined ? undefined : resolve(flags.profile);
  if (profileDir !== undefined) mkdirSync(profileDir, { recursive: true });
  performance = await benchSuite(report, {
    sizes,
    connections: numbers(process.env['BENCH_CONNECTIONS'], [32])[0] as number,
    seconds: numbers(process.env['BENCH_SECONDS'], [3])[0] as number,
    rounds: numbers(process.env['BENCH_ROUNDS'], [3])[0] as number,
    warmupSeconds: numbers(process.env['BENCH_WARMUP'], [1])[0] as number,
    only: (process.env['BENCH_ONLY'] ?? '').split(',').filter((key) => key !== ''),
    nodeArgs: (process.env['BENCH_NODE_ARGS'] ?? '').split(' ').filter((arg) => arg !== ''),
    bare: flags.bare === true,
    unavoidable: flags.unavoidable === true,
    memory: flags.memory === true,
    ...(profileDir === undefined ? {} : { profileDir }),
  });
  if (profileDir !== undefined) reportProfiles(report, profileDir);
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
const loadAverageAtEnd = load();
writeFileSync(`${RESULTS}results.json`, `${JSON.stringify({ at: new Date().toISOString(), machine: { ...machine, loadAverageAtEnd }, performance, tables: report.markdown() }, null, 2)}\n`);
process.stdout.write(`\nload average ${loadAverageAtEnd}\n${report.markdown()}\n`);
