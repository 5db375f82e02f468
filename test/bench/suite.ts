// The HTTP benchmark suite (README, Performance): every scenario of scenarios.ts against `resapi serve`
// on a data dir of 10k items and again of 1M, each beside a bare node:http server answering the same
// status and body size, measured in the same run with the same connections and the same generator.
// The two take turns, round after round (the machines this runs on are shared and their speed drifts
// from one minute to the next), and the round whose ratio is the median is reported. The table says
// requests per second, p50 and p99 latency, the ratio to the bare server, its target, and at 1M the
// rate relative to the 10k rate, each first divided by the rate of the bare server measured beside it
// so that the machine's drift between the two sizes cancels out. Figures are printed and saved,
// never asserted.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { withTempDir } from '../support/temp-dir.js';
import { load, rawRequest, sendRaw, type LoadResult } from './load.js';
import type { Report } from './measure.js';
import { SCENARIOS, WEBHOOK_SECRET, type Scenario } from './scenarios.js';
import { seedStore, spawnBare, spawnReceiver, spawnResapi, type Child } from './servers.js';

export interface SuiteOptions {
  readonly sizes: readonly number[];
  readonly connections: number;
  readonly seconds: number;
  readonly warmupSeconds: number;
  /** Rounds of (bare, resapi) per scenario; the median round is reported. */
  readonly rounds: number;
  /** Only these scenario keys (all when empty). */
  readonly only: readonly string[];
}

export interface ScenarioResult {
  readonly scenario: string;
  readonly label: string;
  readonly items: number;
  readonly resapi: LoadResult;
  readonly bare: LoadResult;
  readonly ratio: number;
  readonly target?: number;
  readonly vs10k?: number;
  /** For writes: the mean fdatasync of a group commit in the reported round, and the writes each one carried (from /$metrics). */
  readonly fsync?: { readonly ms: number; readonly perGroup: number };
}

/** The group-commit totals /$metrics reports (README, Performance). */
interface SyncTotals {
  readonly seconds: number;
  readonly groups: number;
  readonly batches: number;
}

const SETTLE_SECONDS = 10;
const NO_OP_HANDLERS = `export default { '*': async () => {} };\n`;

export async function benchSuite(report: Report, options: SuiteOptions): Promise<ScenarioResult[]> {
  const results: ScenarioResult[] = [];
  const scenarios = SCENARIOS.filter((scenario) => options.only.length === 0 || options.only.includes(scenario.key));
  for (const size of options.sizes) {
    await withTempDir('bench', async (folder) => {
      const handlers = join(folder, 'handlers.mjs');
      writeFileSync(handlers, NO_OP_HANDLERS);
      const dir = join(folder, 'data');
      process.stdout.write(`seeding ${size.toLocaleString('en')} items...\n`);
      await seedStore(dir, size);
      const receiver = await spawnReceiver();
      const resapi = await spawnResapi(['--data-dir', dir, '--handlers', handlers], { RESAPI_WEBHOOK_SECRETS: WEBHOOK_SECRET });
      try {
        await settle(resapi, receiver.url, size, folder, options);
        for (const scenario of scenarios) {
          const result = await measure(scenario, resapi, receiver.url, size, folder, options);
          const base = results.find((earlier) => earlier.scenario === scenario.key && earlier.items === options.sizes[0]);
          const withBase = base === undefined || size === options.sizes[0] ? result : { ...result, vs10k: result.ratio / base.ratio };
          results.push(withBase);
          report.row('performance', `${scenario.label}, ${size.toLocaleString('en')} items`, {
            'resapi /s': withBase.resapi.perSecond.toFixed(0),
            'p50 / p99 ms': `${withBase.resapi.p50Ms.toFixed(2)} / ${withBase.resapi.p99Ms.toFixed(2)}`,
            'bare /s': withBase.bare.perSecond.toFixed(0),
            'vs bare': withBase.ratio.toFixed(2),
            target: withBase.target === undefined ? '' : `≥ ${withBase.target}`,
            'vs 10k': withBase.vs10k === undefined ? '' : withBase.vs10k.toFixed(2),
            'fsync ms × writes': withBase.fsync === undefined ? '' : `${withBase.fsync.ms.toFixed(2)} × ${withBase.fsync.perGroup.toFixed(1)}`,
            failed: withBase.resapi.failures,
          });
        }
      } finally {
        await resapi.stop();
        await receiver.stop();
      }
    });
  }
  return results;
}

/**
 * Load that is not measured, right after the start: a recovery of 1M records leaves V8 collecting
 * hundreds of MiB of garbage for a while, which would otherwise land on whichever scenario comes first.
 */
async function settle(resapi: Child, receiver: URL, size: number, scratch: string, options: SuiteOptions): Promise<void> {
  const scenario = SCENARIOS[0] as Scenario;
  const requests = await scenario.requests({ url: resapi.url, size, receiver, round: 0 });
  await load({ url: resapi.url, requests, connections: options.connections, seconds: SETTLE_SECONDS, warmupSeconds: 1, scratch });
}

async function measure(scenario: Scenario, resapi: Child, receiver: URL, size: number, scratch: string, options: SuiteOptions): Promise<ScenarioResult> {
  const first = await scenario.requests({ url: resapi.url, size, receiver, round: 0 });
  // The bare server answers what resapi answers to the scenario's first request: its status, its
  // body's size and type. (A sampled write is one write more; the runs repeat writes anyway.)
  const sample = await sendRaw(resapi.url, first[0] as Buffer);
  const bareServer = await spawnBare(sample.status, sample.body, sample.headers.get('content-type') ?? 'application/json');
  const loadOptions = { connections: options.connections, seconds: options.seconds, warmupSeconds: options.warmupSeconds, scratch };
  const rounds: { bare: LoadResult; resapi: LoadResult; ratio: number; fsync?: { ms: number; perGroup: number } }[] = [];
  try {
    for (let round = 0; round < options.rounds; round++) {
      const requests = round === 0 ? first : await scenario.requests({ url: resapi.url, size, receiver, round });
      const bare = await load({ ...loadOptions, url: bareServer.url, requests: requests.map((request) => retarget(request, resapi.url, bareServer.url)) });
      const before = await syncTotals(resapi.url);
      const measured = await load({ ...loadOptions, url: resapi.url, requests });
      const after = await syncTotals(resapi.url);
      const groups = after.groups - before.groups;
      // A write's throughput is bound by the disk's fdatasync, which drifts apart from the CPU: the column shows it.
      const fsync = groups === 0 ? {} : { fsync: { ms: (1000 * (after.seconds - before.seconds)) / groups, perGroup: (after.batches - before.batches) / groups } };
      rounds.push({ bare, resapi: measured, ratio: measured.perSecond / bare.perSecond, ...fsync });
    }
  } finally {
    await bareServer.stop();
  }
  const median = [...rounds].sort((a, b) => a.ratio - b.ratio)[Math.floor(rounds.length / 2)] as (typeof rounds)[number];
  return { scenario: scenario.key, label: scenario.label, items: size, ...median, ...(scenario.target === undefined ? {} : { target: scenario.target }) };
}

/** Reads the store's group-commit totals from /$metrics. */
async function syncTotals(url: URL): Promise<SyncTotals> {
  const answer = await sendRaw(url, rawRequest('GET', url, '/$metrics'));
  const text = answer.body.toString('utf8');
  const sample = (name: string): number => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
  return { seconds: sample('resapi_store_sync_duration_seconds_sum'), groups: sample('resapi_store_sync_duration_seconds_count'), batches: sample('resapi_store_group_batches_sum') };
}

/** The same request with the other server's Host. */
function retarget(request: Buffer, from: URL, to: URL): Buffer {
  const text = request.toString('latin1');
  const host = `\r\nHost: ${from.host}\r\n`;
  const at = text.indexOf(host);
  if (at === -1) return request;
  return Buffer.concat([Buffer.from(text.slice(0, at), 'latin1'), Buffer.from(`\r\nHost: ${to.host}\r\n`, 'latin1'), request.subarray(at + host.length)]);
}

