// Benchmark (README, Performance): do the sender's deliveries (CONVENTIONS.md#deliveries) keep up with
// the writes that make them? A `resapi serve` on a data dir of ITEMS items with one subscription to a
// receiver that reads each delivery, counts it and answers 200 at once gets durable PUTs with
// If-Match (every one a change, so every one an event) for BENCH_SECONDS over BENCH_CONNECTIONS
// connections. Every SAMPLE_MS of the load the bench reads how many PUTs were answered and how many
// deliveries the receiver counted: their difference is the outbox's backlog, which under a sustained
// load either levels off (deliveries keep up) or grows with the load's length. After the load it waits
// for the last delivery. One server per `outbox.inFlight` of BENCH_IN_FLIGHT (default 16, as the
// server's), and with BENCH_BEFORE an earlier build's too (its own default), take turns round after
// round. BENCH_MEMORY=1
// starts them with `--memory` (the items PUT first): no disk wait, so the writes come faster still.
//
// The table gives the medians of: PUTs per second; deliveries per second during the load; the backlog
// at the load's middle and at its end, and its growth per second over the load's second half; how
// long after the load's end the last delivery came; the server's CPU time per PUT, its deliveries
// included (user and system, from /proc). `lost or twice` compares what the receiver counted with
// what the PUTs owe it (0: every delivery made, none twice). Figures are printed, never asserted.
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { setTimeout as pause } from 'node:timers/promises';
import { withTempDir } from '../support/temp-dir.js';
import { load, rawRequest, sendRaw, type LoadResult } from './load.js';
import type { Report } from './measure.js';
import { benchItem, itemId, seedStore, spawnCountingReceiver, type Child } from './servers.js';
import {
  commitOf, cpuSeconds, itemChanges, median, metricSum, padded, roundOrder, settle, spawnBuild, webhookBenchOptions,
} from './webhook-bench.js';

const SECTION = 'deliveries';
const ITEMS = 10_000;
const SPREAD = 256;
/** PUTs prepared per second of the load: more than any durable write rate here. */
const PER_SECOND = 30_000;
const SAMPLE_MS = 1000;

interface Contestant {
  readonly key: string;
  readonly label: string;
  readonly server: Child;
}

interface Round {
  readonly result: LoadResult;
  readonly puts: number;
  readonly duringPerSecond: number;
  readonly backlogMiddle: number;
  readonly backlogEnd: number;
  /** The backlog's growth per second over the load's second half (negative: it shrank). */
  readonly growthPerSecond: number;
  readonly lastAfterS: number;
  readonly lostOrTwice: number;
  readonly cpuUs: number;
}

interface Sample {
  readonly at: number;
  readonly backlog: number;
}

export async function benchDeliveries(report: Report): Promise<void> {
  const options = webhookBenchOptions();
  const memory = process.env['BENCH_MEMORY'] === '1';
  const inFlights = (process.env['BENCH_IN_FLIGHT'] ?? '16').split(',').filter((value) => value !== '').map(Number);
  process.stdout.write(`[${SECTION}] load average at the start: ${loadavg().map((value) => value.toFixed(2)).join(' ')}\n`);
  await withTempDir('bench-deliveries', async (folder) => {
    const receiver = await spawnCountingReceiver();
    const contestants: Contestant[] = [];
    try {
      const start = async (key: string, label: string, from: string | undefined, outbox: object): Promise<void> => {
        const dir = join(folder, key);
        if (!memory) await seedStore(dir, ITEMS);
        const config = join(folder, `${key}.json`);
        writeFileSync(config, JSON.stringify({ outbox }));
        const server = await spawnBuild(from, [...(memory ? ['--memory'] : ['--data-dir', dir]), '--config', config]);
        // Before the subscription: their creations owe nobody a delivery.
        if (memory) await putItems(server.url);
        const body = JSON.stringify({ url: new URL('/hook', receiver.url).href, events: ['items.*'], secret: 'bench-secret' });
        const made = await sendRaw(server.url, rawRequest('PUT', server.url, '/$subscriptions/s', { 'Content-Type': 'application/json', 'If-None-Match': '*' }, body));
        if (made.status !== 201) throw new Error(`${label}: the subscription was answered ${made.status}`);
        contestants.push({ key, label, server });
      };
      if (options.before !== undefined) await start('before', `before (${commitOf(options.before)})`, options.before, {});
      for (const inFlight of inFlights) await start(`k${inFlight}`, `outbox.inFlight ${inFlight}`, undefined, { inFlight });
      const rounds = new Map<string, Round[]>(contestants.map((contestant) => [contestant.key, []]));
      for (let round = 0; round < options.rounds; round++) {
        for (const contestant of roundOrder(contestants, round)) {
          const measured = await measureRound(contestant, receiver, round, folder, options);
          (rounds.get(contestant.key) as Round[]).push(measured);
          const figures = [
            `${measured.result.perSecond.toFixed(0)} PUTs/s`,
            `${measured.duringPerSecond.toFixed(0)} deliveries/s during the load`,
            `backlog ${measured.backlogMiddle} at the middle, ${measured.backlogEnd} at the end (${measured.growthPerSecond.toFixed(0)}/s)`,
            `last delivery ${measured.lastAfterS.toFixed(1)} s after the load`,
            `${measured.cpuUs.toFixed(0)} µs CPU per PUT`,
            `load average ${loadavg()[0]?.toFixed(2)}`,
          ].join(', ');
          process.stdout.write(`[${SECTION}] round ${round + 1}, ${contestant.label}: ${figures}\n`);
        }
      }
      for (const contestant of contestants) {
        const mine = rounds.get(contestant.key) as Round[];
        const middle = (pick: (round: Round) => number): number => median(mine.map(pick));
        report.row(SECTION, `${options.seconds} s of ${memory ? '--memory' : 'durable'} PUTs, one subscription, ${contestant.label}`, {
          'PUTs /s': middle((round) => round.result.perSecond).toFixed(0),
          'deliveries /s in the load': middle((round) => round.duringPerSecond).toFixed(0),
          'backlog middle / end': `${middle((round) => round.backlogMiddle)} / ${middle((round) => round.backlogEnd)}`,
          'backlog growth /s': middle((round) => round.growthPerSecond).toFixed(0),
          'last delivery s after': middle((round) => round.lastAfterS).toFixed(1),
          'CPU µs / PUT': middle((round) => round.cpuUs).toFixed(0),
          'lost or twice': mine.reduce((sum, round) => sum + round.lostOrTwice, 0),
        });
      }
    } finally {
      await Promise.all(contestants.map((contestant) => contestant.server.stop()));
      await receiver.stop();
    }
  });
  process.stdout.write(`[${SECTION}] load average at the end: ${loadavg().map((value) => value.toFixed(2)).join(' ')}\n`);
}

async function measureRound(
  contestant: Contestant,
  receiver: Child,
  round: number,
  scratch: string,
  options: ReturnType<typeof webhookBenchOptions>,
): Promise<Round> {
  const { url } = contestant.server;
  const written = (): Promise<number> => metricSum(url, 'resapi_http_requests_total', { method: 'PUT', status: '200' });
  const received = async (): Promise<number> => Number((await sendRaw(receiver.url, rawRequest('GET', receiver.url, '/count'))).body);
  const requests = itemChanges(url, `m${padded(round, 3)}`, Math.ceil(options.seconds * PER_SECOND), ITEMS, SPREAD);
  const [writtenBefore, receivedBefore] = [await written(), await received()];
  const cpuBefore = cpuSeconds(contestant.server);
  const samples: Sample[] = [];
  let loading = true;
  const started = performance.now();
  const sampling = (async (): Promise<void> => {
    for (;;) {
      await pause(SAMPLE_MS);
      if (!loading) return;
      const [puts, got] = [(await written()) - writtenBefore, (await received()) - receivedBefore];
      samples.push({ at: (performance.now() - started) / 1000, backlog: puts - got });
    }
  })();
  const result = await load({ url, requests, connections: options.connections, seconds: options.seconds, scratch });
  loading = false;
  const ended = performance.now();
  const gotAtEnd = (await received()) - receivedBefore;
  await sampling;
  // The PUTs in flight when the window closed are answered after it: counted once they are.
  let puts = (await written()) - writtenBefore;
  for (let again = (await written()) - writtenBefore; again !== puts; again = (await written()) - writtenBefore) puts = again;
  await settle('deliveries owed', async () => puts - ((await received()) - receivedBefore), (left) => left <= 0);
  const lastAfterS = (performance.now() - ended) / 1000;
  const cpu = cpuSeconds(contestant.server) - cpuBefore;
  const got = (await received()) - receivedBefore;
  const half = samples.filter((sample) => sample.at >= options.seconds / 2);
  const first = half[0];
  const last = half[half.length - 1];
  const growthPerSecond = first === undefined || last === undefined || last.at === first.at ? 0 : (last.backlog - first.backlog) / (last.at - first.at);
  return {
    result,
    puts,
    duringPerSecond: gotAtEnd / options.seconds,
    backlogMiddle: first?.backlog ?? 0,
    backlogEnd: puts - gotAtEnd,
    growthPerSecond,
    lastAfterS,
    lostOrTwice: got - puts,
    cpuUs: (cpu * 1e6) / puts,
  };
}

/** The SPREAD items the load changes, created (a server with `--memory` starts empty). */
async function putItems(url: URL): Promise<void> {
  const headers = { 'Content-Type': 'application/json', 'If-None-Match': '*' };
  for (let index = 0; index < SPREAD; index++) {
    const n = Math.floor((index * ITEMS) / SPREAD);
    const made = await sendRaw(url, rawRequest('PUT', url, `/items/${itemId(n)}`, headers, JSON.stringify(benchItem(n))));
    if (made.status !== 201) throw new Error(`PUT /items/${itemId(n)} answered ${made.status}`);
  }
}

