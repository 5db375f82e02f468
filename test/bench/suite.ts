// The HTTP benchmark suite (README, Performance): every scenario of scenarios.ts against `resapi serve`
// on a data dir of 10k items (and of 1M with `--items 1000000`), each beside the real limit of its kind
// on this machine (ceilings/): a read beside the same-bytes server, which answers resapi's own captured
// answer to each request; a durable write beside the ideal durable server, an ideal group commit that
// keeps nothing but the request's body. Optionally also beside the old bare server (the same status and
// body size, nothing kept: `--bare`), a webhook and a write with a subscription beside a server that
// does only their unavoidable work (`--unavoidable`: how near the ceiling any program can come), and a
// write also against `resapi serve --memory` (`--memory`). All are measured in the same run with the
// same connections and the same generator, and they take turns, round after round (the machines this
// runs on are shared and their speed drifts from one minute to the next); the round whose ratio to the
// ceiling is the median is reported. Each load is preceded by a warm-up its figures leave out. The p99
// latency of each server is the median of its own rounds' p99s, not the median round's: the p99 of
// three seconds is made by a few dozen worst stalls in them (with 32 connections a stall of the disk,
// or of the CPU the machine's other work takes, holds 32 requests at most), so it swings between rounds
// far more than a rate: over seven alternating rounds with the load average at 5, the ideal server's
// own ran from 6.8 to 57.9 ms, and a round's pair put resapi's anywhere from 0.1 to 5.8 times the
// ideal's. A write's median latency is printed beside it (the same median of rounds): with a fixed
// number of connections the mean latency is the connections over the rate (Little's law), so a server
// at a third of the ideal's rate waits three times as long per request before any tail, and a p99 ratio
// is read against that.
//
// For writes the suite also reports, for resapi and for the ideal server, the bytes written per
// acknowledged write and the writes per fdatasync (resapi's from /$metrics: the journal's bytes and its
// group commits, each one write and one fdatasync, over the warm-up and the measured load and counted
// once the work a write leaves behind, a webhook's outcome or a delivery's, is written too), and at
// the end of each round the /$health latency and resapi's resident memory; for a write with a
// subscription, how long after the load's end the last delivery was made. Every round prints each server's
// rate and CPU time per request (steadier than a rate on a shared machine), and the cores the rest of the
// machine took meanwhile (/proc/stat less the server, wrk and the suite): far from 0, read the round's
// ratio as the machine's. With `--profile DIR` each scenario gets a resapi process of its own whose
// CPU profiler runs during its measured loads only (profiled-resapi.ts), one profile a round. Figures
// are printed and saved, never asserted.
import { readFileSync, writeFileSync, openSync, writeSync, closeSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { withTempDir } from '../support/temp-dir.js';
import { captureAnswer, captureAnswers } from './ceilings/answers.js';
import { idealTotals, spawnIdealDurable, type IdealTotals } from './ceilings/ideal-durable.js';
import { spawnUnavoidable, unavoidableTotals } from './ceilings/unavoidable.js';
import { spawnSameBytes } from './ceilings/same-bytes.js';
import { load, rawRequest, sendRaw, type LoadResult } from './load.js';
import type { Report } from './measure.js';
import { SCENARIOS, WEBHOOK_SECRET, type Scenario } from './scenarios.js';
import { benchItem, seedStore, spawnBare, spawnReceiver, spawnResapi, type Child } from './servers.js';

export interface SuiteOptions {
  readonly sizes: readonly number[];
  readonly connections: number;
  readonly seconds: number;
  readonly warmupSeconds: number;
  /** Rounds of (ceiling, resapi, ...) per scenario; the median round is reported. */
  readonly rounds: number;
  /** Only these scenario keys (when empty: every scenario not marked `extra`; `all`: every one). */
  readonly only: readonly string[];
  /** Also measure the bare server of earlier runs (the same status and body size, nothing kept). */
  readonly bare: boolean;
  /** Also measure the server doing only the scenario's unavoidable work, where it has one (ceilings/unavoidable.ts). */
  readonly unavoidable: boolean;
  /** Also measure each write scenario against `resapi serve --memory`. */
  readonly memory: boolean;
  /** Options for node itself when it runs resapi (BENCH_NODE_ARGS, `--trace-gc` say). */
  readonly nodeArgs: readonly string[];
  /** A folder for CPU profiles of resapi's measured loads, one per scenario and round (profiled-resapi.ts). */
  readonly profileDir?: string;
}

/** One load's figures beside the CPU its server took (fractions of one core): all of it, and the kernel's part. */
export interface Measured {
  readonly load: LoadResult;
  readonly serverCpu: number;
  readonly serverSystemCpu: number;
  /**
   * Cores the rest of the machine took meanwhile: all its busy time but the server's, the load
   * generator's and this process's. Near 0 the two servers of a round had the machine to themselves.
   */
  readonly otherCpu: number;
}

/** What a durable write costs the disk. */
export interface DiskFigures {
  readonly bytesPerWrite: number;
  readonly writesPerSync: number;
  /** The mean write + fdatasync of one group, in ms. */
  readonly syncMs: number;
}

export interface ScenarioResult {
  readonly scenario: string;
  readonly label: string;
  readonly kind: 'read' | 'write';
  readonly items: number;
  readonly ceilingName: 'same bytes' | 'ideal durable';
  readonly resapi: Measured;
  readonly ceiling: Measured;
  /** resapi's rate over the ceiling's, in the median round. */
  readonly ratio: number;
  /** The median over the rounds of each server's own p99 latency, in ms (the header above). */
  readonly p99Ms: { readonly resapi: number; readonly ceiling: number };
  /** The same of the median latency: what a p99 ratio is to be read against (the header above). */
  readonly p50Ms: { readonly resapi: number; readonly ceiling: number };
  readonly target?: number;
  /** This size's ratio over the first size's. */
  readonly vs10k?: number;
  /** The median ratio to the bare server (`--bare`). */
  readonly bare?: { readonly load: LoadResult; readonly ratio: number };
  /** The median ratio of `resapi serve --memory` to the ceiling, and that over the file store's (`--memory`). */
  readonly memory?: { readonly load: LoadResult; readonly ratio: number; readonly vsFile: number };
  /**
   * `--unavoidable`: the median ratio of the server doing only the unavoidable work to the ceiling (the
   * highest ratio reachable), resapi's to it, its p99 (the median of its rounds') and the longest its
   * deliveries took after its load.
   */
  readonly unavoidable?: {
    readonly load: LoadResult;
    readonly ratio: number;
    readonly resapiRatio: number;
    readonly p99Ms: number;
    readonly deliveredS: number;
  };
  readonly disk?: { readonly resapi: DiskFigures; readonly ideal: DiskFigures };
  /** The worst, over the rounds, of /$health's latency and resapi's resident memory right after the load. */
  readonly health?: { readonly ms: number; readonly rssMiB: number; readonly peakRssMiB: number };
  /** The longest, over the rounds, from the load's end until no delivery was left to make. */
  readonly deliveredS?: number;
}

/** The store's totals /$metrics reports (README, Metrics). */
interface StoreTotals {
  readonly bytes: number;
  readonly syncs: number;
  readonly syncSeconds: number;
  readonly inboxAccepted: number;
  readonly undelivered: number;
}

const SETTLE_SECONDS = 10;
/** How long the work a load leaves behind (outcomes, deliveries) may take before the suite gives up waiting. */
const QUIET_LIMIT_MS = 60_000;
/** Between two scrapes of /$metrics while waiting (a scrape counts the inbox and outbox, work the server does too). */
const POLL_MS = 250;
/** Rounds of a scenario's requests that are not measured: must-not-repeat ids differ from the measured ones. */
const CAPTURE_ROUND = -1;
const SETTLE_ROUND = -2;
const WARMUP_ROUND = 1000;
const NO_OP_HANDLERS = `export default { '*': async () => {} };\n`;
const MIB = 1024 * 1024;
/** Linux's USER_HZ: the unit of a process's CPU times in /proc/PID/stat. */
const CLOCK_TICKS = 100;

export async function benchSuite(report: Report, options: SuiteOptions): Promise<ScenarioResult[]> {
  const results: ScenarioResult[] = [];
  const all = options.only.includes('all');
  const scenarios = SCENARIOS.filter((scenario) => (options.only.length === 0 ? scenario.extra !== true : all || options.only.includes(scenario.key)));
  for (const size of options.sizes) {
    await withTempDir('bench', async (folder) => {
      const handlers = join(folder, 'handlers.mjs');
      writeFileSync(handlers, NO_OP_HANDLERS);
      const dir = join(folder, 'data');
      process.stdout.write(`seeding ${size.toLocaleString('en')} items...\n`);
      await seedStore(dir, size);
      const env = { RESAPI_WEBHOOK_SECRETS: WEBHOOK_SECRET };
      const start = async (first: Scenario, profilePrefix?: string): Promise<Child> => {
        const child = await spawnResapi(['--data-dir', dir, '--handlers', handlers], env, options.nodeArgs, profilePrefix);
        await settle(first, child, receiver.url, size, folder, options);
        return child;
      };
      const receiver = await spawnReceiver();
      let memory: Child | undefined;
      let resapi: Child | undefined;
      try {
        if (options.memory && scenarios.some((scenario) => scenario.kind === 'write')) {
          memory = await spawnResapi(['--memory', '--seed', seedFolder(folder, size), '--handlers', handlers], env);
        }
        if (options.profileDir === undefined) resapi = await start(scenarios[0] as Scenario);
        for (const scenario of scenarios) {
          if (options.profileDir !== undefined) {
            resapi = await start(scenario, join(options.profileDir, `${size}-${scenario.key}`));
          }
          const servers = { resapi: resapi as Child, memory, receiver: receiver.url };
          const began = performance.now();
          const result = await measure(scenario, servers, size, folder, options);
          process.stdout.write(`  (${scenario.key} took ${((performance.now() - began) / 1000).toFixed(0)} s)\n`);
          if (options.profileDir !== undefined) await resapi?.stop();
          const base = results.find((earlier) => earlier.scenario === scenario.key && earlier.items === options.sizes[0]);
          const withBase = base === undefined || size === options.sizes[0] ? result : { ...result, vs10k: result.ratio / base.ratio };
          results.push(withBase);
          reportResult(report, withBase);
        }
      } finally {
        await resapi?.stop();
        await memory?.stop();
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
async function settle(scenario: Scenario, resapi: Child, receiver: URL, size: number, scratch: string, options: SuiteOptions): Promise<void> {
  const requests = await scenario.requests({ url: resapi.url, size, receiver, round: SETTLE_ROUND });
  await load({ url: resapi.url, requests, connections: options.connections, seconds: SETTLE_SECONDS, scratch });
  if (scenario.kind === 'write') await quiet(resapi.url);
}

interface Servers {
  readonly resapi: Child;
  readonly memory: Child | undefined;
  readonly receiver: URL;
}

interface Round {
  readonly ceiling: Measured;
  readonly resapi: Measured;
  readonly ratio: number;
  readonly disk?: { resapi: DiskFigures; ideal: DiskFigures };
  readonly health?: { ms: number; rssMiB: number; peakRssMiB: number };
  readonly deliveredS?: number;
  readonly memory?: LoadResult;
  readonly bare?: LoadResult;
  readonly unavoidable?: { readonly load: LoadResult; readonly deliveredS: number };
}

async function measure(scenario: Scenario, servers: Servers, size: number, scratch: string, options: SuiteOptions): Promise<ScenarioResult> {
  const { resapi, memory } = servers;
  const context = (url: URL, round: number): { url: URL; size: number; receiver: URL; round: number } => ({ url, size, receiver: servers.receiver, round });
  const reading = scenario.kind === 'read';
  const first = await scenario.requests(context(resapi.url, reading ? 0 : CAPTURE_ROUND));
  // The ceiling answers what resapi answers: a read each request's own answer, a write the first one's.
  const sample = await captureAnswer(resapi.url, first[0] as Buffer);
  const ceiling = reading
    ? await spawnSameBytes(await captureAnswers(resapi.url, first), join(scratch, `${scenario.key}-answers.json`))
    : await spawnIdealDurable(sample, join(scratch, `${scenario.key}-answer.json`), join(scratch, `${scenario.key}-ideal.log`));
  const contentType = sample.fields[sample.fields.findIndex((field, at) => at % 2 === 0 && field.toLowerCase() === 'content-type') + 1] ?? 'application/json';
  const bare = options.bare ? await spawnBare(sample.status, sample.body, contentType) : undefined;
  const unavoidableServer =
    options.unavoidable && scenario.unavoidable !== undefined
      ? await spawnUnavoidable(
          scenario.unavoidable,
          sample,
          join(scratch, `${scenario.key}-unavoidable.json`),
          join(scratch, `${scenario.key}-unavoidable.log`),
          WEBHOOK_SECRET,
          new URL('/hook', servers.receiver),
          size,
        )
      : undefined;
  const timed = (url: URL, requests: readonly Buffer[], seconds: number): Promise<LoadResult> => load({ url, requests, connections: options.connections, seconds, scratch });
  // A warm-up, then the measured load, its server's CPU counted around it.
  // With `--profile`, resapi's profiler runs during its measured loads only (profiled-resapi.ts).
  const profiled = (child: Child): boolean => options.profileDir !== undefined && child === resapi;
  const run = async (child: Child, warmup: readonly Buffer[], requests: readonly Buffer[]): Promise<Measured & { warmup: LoadResult }> => {
    const warm = await timed(child.url, warmup, options.warmupSeconds);
    if (profiled(child)) child.process.kill('SIGUSR2');
    const cpu = cpuSeconds(child);
    const machine = machineBusySeconds();
    const own = process.cpuUsage();
    const started = process.hrtime.bigint();
    const measured = await timed(child.url, requests, options.seconds);
    if (profiled(child)) child.process.kill('SIGUSR2');
    const used = cpuSeconds(child);
    const busy = machineBusySeconds() - machine;
    const ownUsed = process.cpuUsage(own);
    const ownSeconds = (ownUsed.user + ownUsed.system) / 1e6;
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const serverCpu = (used.user + used.system - cpu.user - cpu.system) / seconds;
    const generatorCpu = Number.isNaN(measured.generatorCpu) ? 0 : measured.generatorCpu;
    const otherCpu = Math.max(0, busy / seconds - serverCpu - generatorCpu - ownSeconds / seconds);
    return { load: measured, serverCpu, serverSystemCpu: (used.system - cpu.system) / seconds, otherCpu, warmup: warm };
  };
  const rounds: Round[] = [];
  try {
    for (let round = 0; round < options.rounds; round++) {
      const requests = round === 0 && reading ? first : await scenario.requests(context(resapi.url, round));
      const warmup = reading ? requests : await scenario.requests(context(resapi.url, WARMUP_ROUND + round));
      const elsewhere = (to: Child, list: readonly Buffer[]): Buffer[] => list.map((request) => retarget(request, resapi.url, to.url));

      // A write's disk figures cover the warm-up and the measured load (one load of the server's own
      // writes from a quiet store to a quiet store): what is left behind after the warm-up (outcomes,
      // deliveries) is then done during the measured load, as under sustained load.
      const idealBefore = reading ? undefined : await idealTotals(ceiling);
      const ceilingRun = await run(ceiling, elsewhere(ceiling, warmup), elsewhere(ceiling, requests));
      const storeBefore = reading ? undefined : await storeTotals(resapi.url);
      const resapiRun = await run(resapi, warmup, requests);
      const ended = performance.now();
      // The groups are counted to the load's end: the outcomes written after it (the inbox's drain) go
      // one to a few per group and would say nothing about how the load's own writes were grouped.
      const loadEnd = reading ? undefined : await storeTotals(resapi.url);
      let written: Pick<Round, 'disk' | 'health' | 'deliveredS'> = {};
      if (idealBefore !== undefined && storeBefore !== undefined && loadEnd !== undefined) {
        const health = await probeHealth(resapi);
        const settled = await quiet(resapi.url, ended, loadEnd);
        const idealAfter = await idealTotals(ceiling);
        written = {
          health,
          ...(settled.deliveredMs === undefined ? {} : { deliveredS: settled.deliveredMs / 1000 }),
          disk: diskFigures([resapiRun.warmup, resapiRun.load], storeBefore, loadEnd, settled.totals, idealBefore, idealAfter),
        };
      }
      let memoryRun: LoadResult | undefined;
      if (memory !== undefined && !reading) {
        const memoryWarmup = await scenario.requests(context(memory.url, WARMUP_ROUND + round));
        const memoryRequests = await scenario.requests(context(memory.url, round));
        memoryRun = (await run(memory, memoryWarmup, memoryRequests)).load;
        await quiet(memory.url);
      }
      const bareRun = bare === undefined ? undefined : (await run(bare, elsewhere(bare, warmup), elsewhere(bare, requests))).load;
      let unavoidableRun: (Measured & { deliveredS: number }) | undefined;
      if (unavoidableServer !== undefined) {
        const done = measured(await run(unavoidableServer, elsewhere(unavoidableServer, warmup), elsewhere(unavoidableServer, requests)));
        unavoidableRun = { ...done, deliveredS: await drained(unavoidableServer.url) };
      }
      const told = (name: string, { load: done, serverCpu, otherCpu }: Measured): string =>
        `${name} ${done.perSecond.toFixed(0)}/s, p99 ${done.p99Ms.toFixed(2)} ms, ${perRequest(serverCpu, done.perSecond)} µs CPU per request (others ${otherCpu.toFixed(2)} cores)`;
      const unavoidableTold = unavoidableRun === undefined ? '' : `; ${told('unavoidable', unavoidableRun)}`;
      process.stdout.write(`  round ${round + 1}: ${told('resapi', resapiRun)}; ${told('ceiling', ceilingRun)}${unavoidableTold}\n`);
      rounds.push({
        ceiling: measured(ceilingRun),
        resapi: measured(resapiRun),
        ratio: resapiRun.load.perSecond / ceilingRun.load.perSecond,
        ...written,
        ...(memoryRun === undefined ? {} : { memory: memoryRun }),
        ...(bareRun === undefined ? {} : { bare: bareRun }),
        ...(unavoidableRun === undefined ? {} : { unavoidable: { load: unavoidableRun.load, deliveredS: unavoidableRun.deliveredS } }),
      });
    }
  } finally {
    await ceiling.stop();
    await bare?.stop();
    await unavoidableServer?.stop();
  }
  return summarize(scenario, size, rounds);
}

/** The item whose `key` is the median (the upper middle of an even count), or undefined when there is none. */
function middleBy<T>(items: readonly T[], key: (item: T) => number): T | undefined {
  return [...items].sort((a, b) => key(a) - key(b))[Math.floor(items.length / 2)];
}

/** The median round's figures; the other ratios' own medians; the worst health and delivery time. */
function summarize(scenario: Scenario, size: number, rounds: readonly Round[]): ScenarioResult {
  const median = middleBy(rounds, (round) => round.ratio) as Round;
  const medianOf = (values: number[]): number => middleBy(values, (value) => value) as number;
  const result: ScenarioResult = {
    scenario: scenario.key,
    label: scenario.label,
    kind: scenario.kind,
    items: size,
    ceilingName: scenario.kind === 'read' ? 'same bytes' : 'ideal durable',
    resapi: median.resapi,
    ceiling: median.ceiling,
    ratio: median.ratio,
    p99Ms: { resapi: medianOf(rounds.map((round) => round.resapi.load.p99Ms)), ceiling: medianOf(rounds.map((round) => round.ceiling.load.p99Ms)) },
    p50Ms: { resapi: medianOf(rounds.map((round) => round.resapi.load.p50Ms)), ceiling: medianOf(rounds.map((round) => round.ceiling.load.p50Ms)) },
    ...(scenario.target === undefined ? {} : { target: scenario.target }),
    ...(median.disk === undefined ? {} : { disk: median.disk }),
  };
  const withBare = median.bare === undefined ? result : { ...result, bare: { load: median.bare, ratio: medianOf(rounds.map((round) => round.resapi.load.perSecond / (round.bare as LoadResult).perSecond)) } };
  const withMemory =
    median.memory === undefined
      ? withBare
      : {
          ...withBare,
          memory: {
            load: median.memory,
            ratio: medianOf(rounds.map((round) => (round.memory as LoadResult).perSecond / round.ceiling.load.perSecond)),
            vsFile: medianOf(rounds.map((round) => (round.memory as LoadResult).perSecond / round.resapi.load.perSecond)),
          },
        };
  // The unavoidable-work server's rounds, each with its ratio to the ceiling: the median one is its median round.
  const unavoidable = rounds.flatMap((round) => {
    if (round.unavoidable === undefined) return [];
    const ratio = round.unavoidable.load.perSecond / round.ceiling.load.perSecond;
    return [{ ...round.unavoidable, round, ratio }];
  });
  const middle = middleBy(unavoidable, (one) => one.ratio);
  const withUnavoidable =
    middle === undefined
      ? withMemory
      : {
          ...withMemory,
          unavoidable: {
            load: middle.load,
            ratio: middle.ratio,
            resapiRatio: medianOf(unavoidable.map((one) => one.round.resapi.load.perSecond / one.load.perSecond)),
            p99Ms: medianOf(unavoidable.map((one) => one.load.p99Ms)),
            deliveredS: Math.max(...unavoidable.map((one) => one.deliveredS)),
          },
        };
  if (scenario.kind === 'read') return withUnavoidable;
  const worst = (pick: (round: Round) => number): number => Math.max(...rounds.map(pick));
  return {
    ...withUnavoidable,
    health: { ms: worst((round) => round.health?.ms ?? 0), rssMiB: worst((round) => round.health?.rssMiB ?? 0), peakRssMiB: worst((round) => round.health?.peakRssMiB ?? 0) },
    ...(rounds.some((round) => round.deliveredS !== undefined) ? { deliveredS: worst((round) => round.deliveredS ?? 0) } : {}),
  };
}

function measured(run: Measured & { warmup: LoadResult }): Measured {
  return { load: run.load, serverCpu: run.serverCpu, serverSystemCpu: run.serverSystemCpu, otherCpu: run.otherCpu };
}

/** Bytes per write count everything the load wrote, to a quiet store; writes per group only the load's own groups. */
function diskFigures(loads: readonly LoadResult[], before: StoreTotals, loadEnd: StoreTotals, after: StoreTotals, idealBefore: IdealTotals, idealAfter: IdealTotals): { resapi: DiskFigures; ideal: DiskFigures } {
  const acknowledged = loads.reduce((sum, load) => sum + load.answered - load.failures, 0);
  const syncs = loadEnd.syncs - before.syncs;
  const idealWrites = idealAfter.writes - idealBefore.writes;
  const idealSyncs = idealAfter.syncs - idealBefore.syncs;
  return {
    resapi: { bytesPerWrite: (after.bytes - before.bytes) / acknowledged, writesPerSync: acknowledged / syncs, syncMs: (1000 * (loadEnd.syncSeconds - before.syncSeconds)) / syncs },
    // The ideal server's group is one positional write and one fdatasync, which it does not time.
    ideal: { bytesPerWrite: (idealAfter.bytes - idealBefore.bytes) / idealWrites, writesPerSync: idealWrites / idealSyncs, syncMs: Number.NaN },
  };
}

/**
 * Waits until the work the last load left behind is written: no received event still waiting for its
 * handler, no delivery left to make, and the journal no longer growing. When the first scrape (`first`,
 * one taken at the load's end, or one now) found deliveries left to make, says how long after `started`
 * (by default the call) one found none.
 */
async function quiet(url: URL, started = performance.now(), first?: StoreTotals): Promise<{ totals: StoreTotals; deliveredMs?: number }> {
  let previous = first ?? (await storeTotals(url));
  const waiting = previous.undelivered > 0;
  let deliveredMs: number | undefined;
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    const totals = await storeTotals(url);
    const now = performance.now();
    if (waiting && deliveredMs === undefined && totals.undelivered === 0) deliveredMs = now - started;
    const done = totals.undelivered === 0 && totals.inboxAccepted === 0 && totals.bytes === previous.bytes;
    if (!done && now - started > QUIET_LIMIT_MS) {
      process.stdout.write(`  still busy after ${QUIET_LIMIT_MS / 1000} s: ${totals.undelivered} deliveries, ${totals.inboxAccepted} events waiting\n`);
    }
    if (done || now - started > QUIET_LIMIT_MS) return { totals, ...(waiting ? { deliveredMs: deliveredMs ?? now - started } : {}) };
    previous = totals;
  }
}

/** Waits until the unavoidable-work server at `url` has no delivery left to make: how long that took, in seconds. */
async function drained(url: URL): Promise<number> {
  const started = performance.now();
  while ((await unavoidableTotals(url)).pending > 0 && performance.now() - started < QUIET_LIMIT_MS) {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  return (performance.now() - started) / 1000;
}

/** Reads the store's totals from /$metrics. */
async function storeTotals(url: URL): Promise<StoreTotals> {
  const answer = await sendRaw(url, rawRequest('GET', url, '/$metrics'));
  const text = answer.body.toString('utf8');
  const sample = (series: string): number => Number(new RegExp(`^${series.replace(/[{}"]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
  return {
    bytes: sample('resapi_store_written_bytes_total'),
    syncs: sample('resapi_store_sync_duration_seconds_count'),
    syncSeconds: sample('resapi_store_sync_duration_seconds_sum'),
    inboxAccepted: sample('resapi_inbox_events{status="accepted"}'),
    undelivered: sample('resapi_outbox_deliveries{status="pending"}') + sample('resapi_outbox_deliveries{status="failed"}'),
  };
}

/** /$health's latency on a fresh connection, and resapi's resident memory now and at its peak (Linux /proc). */
async function probeHealth(resapi: Child): Promise<{ ms: number; rssMiB: number; peakRssMiB: number }> {
  const started = performance.now();
  const answer = await sendRaw(resapi.url, rawRequest('GET', resapi.url, '/$health'));
  const ms = performance.now() - started;
  if (answer.status !== 200) process.stdout.write(`  /$health answered ${answer.status}\n`);
  const status = readFileSync(`/proc/${resapi.process.pid}/status`, 'utf8');
  const kib = (field: string): number => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? Number.NaN);
  return { ms, rssMiB: (kib('VmRSS') * 1024) / MIB, peakRssMiB: (kib('VmHWM') * 1024) / MIB };
}

/** CPU seconds a child process has used so far in user space and in the kernel (Linux /proc/PID/stat). */
function cpuSeconds(child: Child): { user: number; system: number } {
  const stat = readFileSync(`/proc/${child.process.pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { user: Number(fields[11]) / CLOCK_TICKS, system: Number(fields[12]) / CLOCK_TICKS };
}

/** Seconds every core of the machine has been busy so far, whoever's work it was (Linux /proc/stat, its first line). */
function machineBusySeconds(): number {
  const times = (readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '').trim().split(/\s+/).slice(1, 9).map(Number);
  // user nice system idle iowait irq softirq steal: all but idle and iowait.
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = times;
  return (user + nice + system + irq + softirq + steal) / CLOCK_TICKS;
}

/** A folder holding items.json with the same `size` items as the data dir, for `--memory --seed`. */
function seedFolder(scratch: string, size: number): string {
  const folder = join(scratch, 'seed');
  mkdirSync(folder, { recursive: true });
  const fd = openSync(join(folder, 'items.json'), 'w');
  try {
    for (let start = 0; start < size; start += 10_000) {
      const items = Array.from({ length: Math.min(size, start + 10_000) - start }, (_, index) => JSON.stringify(benchItem(start + index)));
      writeSync(fd, `${start === 0 ? '[' : ','}${items.join(',')}`);
    }
    writeSync(fd, ']');
  } finally {
    closeSync(fd);
  }
  return folder;
}

/** The same request with the other server's Host. */
function retarget(request: Buffer, from: URL, to: URL): Buffer {
  const text = request.toString('latin1');
  const host = `\r\nHost: ${from.host}\r\n`;
  const at = text.indexOf(host);
  if (at === -1) return request;
  return Buffer.concat([Buffer.from(text.slice(0, at), 'latin1'), Buffer.from(`\r\nHost: ${to.host}\r\n`, 'latin1'), request.subarray(at + host.length)]);
}

function reportResult(report: Report, result: ScenarioResult): void {
  const label = `${result.label}, ${result.items.toLocaleString('en')} items`;
  const { resapi, ceiling } = result;
  report.row('performance', label, {
    'resapi /s': resapi.load.perSecond.toFixed(0),
    ceiling: result.ceilingName,
    'ceiling /s': ceiling.load.perSecond.toFixed(0),
    ratio: result.ratio.toFixed(2),
    target: result.target === undefined ? '' : `≥ ${result.target}`,
    'p99 ms resapi / ceiling': `${result.p99Ms.resapi.toFixed(2)} / ${result.p99Ms.ceiling.toFixed(2)}`,
    'p99 ×': (result.p99Ms.resapi / result.p99Ms.ceiling).toFixed(1),
    'vs 10k': result.vs10k === undefined ? '' : result.vs10k.toFixed(2),
    // A core's share each took: resapi and the ceiling (in brackets, the kernel's part), the load generator beside resapi.
    'CPU % resapi / ceiling / load': `${percent(resapi.serverCpu)} (${percent(resapi.serverSystemCpu)}) / ${percent(ceiling.serverCpu)} (${percent(ceiling.serverSystemCpu)}) / ${percent(resapi.load.generatorCpu)}`,
    'CPU µs / request resapi / ceiling': `${perRequest(resapi.serverCpu, resapi.load.perSecond)} / ${perRequest(ceiling.serverCpu, ceiling.load.perSecond)}`,
    // The rest of the machine, during resapi's load and the ceiling's: far from 0, the ratio is the machine's, not the servers'.
    'others, cores': `${resapi.otherCpu.toFixed(2)} / ${ceiling.otherCpu.toFixed(2)}`,
    ...(result.bare === undefined ? {} : { 'bare /s': result.bare.load.perSecond.toFixed(0), 'vs bare': result.bare.ratio.toFixed(2) }),
    failed: resapi.load.failures + ceiling.load.failures,
  });
  if (result.disk !== undefined && result.health !== undefined) {
    const { resapi: own, ideal } = result.disk;
    report.row('durable writes', label, {
      'bytes / write resapi / ideal': `${own.bytesPerWrite.toFixed(0)} / ${ideal.bytesPerWrite.toFixed(0)}`,
      'writes / fdatasync in the load resapi / ideal': `${own.writesPerSync.toFixed(1)} / ${ideal.writesPerSync.toFixed(1)}`,
      'p50 ms resapi / ideal': `${result.p50Ms.resapi.toFixed(2)} / ${result.p50Ms.ceiling.toFixed(2)}`,
      'group ms': own.syncMs.toFixed(2),
      '/$health ms': result.health.ms.toFixed(1),
      'RSS MiB (peak)': `${result.health.rssMiB.toFixed(0)} (${result.health.peakRssMiB.toFixed(0)})`,
      'delivered s': result.deliveredS === undefined ? '' : result.deliveredS.toFixed(1),
    });
  }
  if (result.unavoidable !== undefined) {
    const unavoidable = result.unavoidable;
    report.row('unavoidable work', label, {
      'unavoidable /s': unavoidable.load.perSecond.toFixed(0),
      'ratio unavoidable / ceiling': unavoidable.ratio.toFixed(2),
      'ratio resapi / ceiling': result.ratio.toFixed(2),
      target: result.target === undefined ? '' : `≥ ${result.target}`,
      'resapi / unavoidable': unavoidable.resapiRatio.toFixed(2),
      'p99 ms unavoidable / ceiling': `${unavoidable.p99Ms.toFixed(2)} / ${result.p99Ms.ceiling.toFixed(2)}`,
      'p99 × unavoidable': (unavoidable.p99Ms / result.p99Ms.ceiling).toFixed(1),
      'delivered s': unavoidable.deliveredS.toFixed(1),
    });
  }
  if (result.memory !== undefined) {
    report.row('memory store', label, {
      '--memory /s': result.memory.load.perSecond.toFixed(0),
      'file /s': resapi.load.perSecond.toFixed(0),
      'ratio --memory / file': `${result.memory.ratio.toFixed(2)} / ${result.ratio.toFixed(2)}`,
      '--memory vs file': result.memory.vsFile.toFixed(2),
    });
  }
}

/** A server's CPU time per request answered, in µs. */
function perRequest(cpu: number, perSecond: number): string {
  return ((1e6 * cpu) / perSecond).toFixed(1);
}

function percent(fraction: number): string {
  return Number.isNaN(fraction) ? '–' : (100 * fraction).toFixed(0);
}
