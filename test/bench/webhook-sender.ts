// Benchmark (README, Performance, "Webhooks"): what a second subscription costs the sender
// (CONVENTIONS.md#subscriptions, CONVENTIONS.md#transactional-outbox, CONVENTIONS.md#deliveries).
// Two `resapi serve` on data dirs of ITEMS items: one with one active subscription to `items.*`, one
// with two, each subscription to its own receiver that reads each delivery, counts it and answers 200
// at once. Both get the same load, durable PUTs with If-Match over SPREAD items, every PUT a change
// (so every one is an event); the servers take turns, round after round, and after its turn a server
// is left to deliver everything it owes (the receivers' counts say when) before the next one starts.
// With BENCH_BEFORE, an earlier build's two servers take their turns too. The table gives the medians
// of PUTs per second in the window, of their ratio to one subscription (of the same build) in the
// same round, of their ratio to the earlier build with as many subscriptions, of deliveries per second
// from the start of the turn until the last one was answered, of the server's CPU time per PUT, its
// deliveries included (user and system, from /proc), and of the journal bytes written per PUT, its
// deliveries' outcomes included. `lost or twice` compares what the receivers counted with what the
// PUTs owe them (0: every delivery made, none twice); `undelivered` is what /$outbox still holds as
// pending or failed at the end. Figures are printed, never asserted.
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { setTimeout as pause } from 'node:timers/promises';
import { withTempDir } from '../support/temp-dir.js';
import { load, rawRequest, sendRaw, type LoadResult } from './load.js';
import type { Report } from './measure.js';
import { seedStore, spawnCountingReceiver, type Child } from './servers.js';
import {
  commitOf, cpuSeconds, itemChanges, median, metricSum, padded, roundOrder, settle, spawnBuild, webhookBenchOptions,
  type WebhookBenchOptions,
} from './webhook-bench.js';

const SECTION = 'webhook-sender';
const ITEMS = 1000;
const SPREAD = 256;
/** PUTs prepared per second of a window: more than any durable write rate here. */
const PER_SECOND = 30_000;
const UNDELIVERED = ['pending', 'failed'] as const;
/** The journal counts as written once it has not grown for this long. */
const JOURNAL_QUIET_MS = 200;

interface Contestant {
  readonly key: string;
  readonly label: string;
  readonly server: Child;
  readonly receivers: readonly Child[];
}

interface Round {
  readonly result: LoadResult;
  readonly deliveriesPerSecond: number;
  readonly lostOrTwice: number;
  readonly undelivered: number;
  /** The server's CPU microseconds per PUT answered in the turn (warm-up included), its deliveries included. */
  readonly cpuUs: number;
  /** Journal bytes written per PUT, its deliveries' outcomes included. */
  readonly journalBytes: number;
}

export async function benchWebhookSender(report: Report, options: WebhookBenchOptions = webhookBenchOptions()): Promise<void> {
  process.stdout.write(`[${SECTION}] load average at the start: ${loadavg().map((value) => value.toFixed(2)).join(' ')}\n`);
  await withTempDir('bench-webhook-sender', async (folder) => {
    const receivers = [await spawnCountingReceiver(), await spawnCountingReceiver()];
    const contestants: Contestant[] = [];
    try {
      const start = async (key: string, label: string, from: string | undefined, subscribed: readonly Child[]): Promise<void> => {
        const dir = join(folder, key);
        await seedStore(dir, ITEMS);
        const server = await spawnBuild(from, ['--data-dir', dir]);
        for (const [index, receiver] of subscribed.entries()) {
          const body = JSON.stringify({ url: new URL('/hook', receiver.url).href, events: ['items.*'], secret: `bench-subscription-secret-${index}` });
          const made = await sendRaw(server.url, rawRequest('PUT', server.url, `/$subscriptions/s${index}`, { 'Content-Type': 'application/json', 'If-None-Match': '*' }, body));
          if (made.status !== 201) throw new Error(`${label}: the subscription was answered ${made.status}`);
        }
        contestants.push({ key, label, server, receivers: subscribed });
      };
      if (options.before !== undefined) {
        const commit = commitOf(options.before);
        await start('before-one', `before (${commit}), 1 subscription`, options.before, receivers.slice(0, 1));
        await start('before-two', `before (${commit}), 2 subscriptions`, options.before, receivers);
      }
      await start('one', '1 subscription', undefined, receivers.slice(0, 1));
      await start('two', '2 subscriptions', undefined, receivers);
      const rounds = new Map<string, Round[]>(contestants.map((contestant) => [contestant.key, []]));
      for (let round = 0; round < options.rounds; round++) {
        for (const contestant of roundOrder(contestants, round)) {
          const measured = await measureRound(contestant, round, folder, options);
          (rounds.get(contestant.key) as Round[]).push(measured);
          const figures = `${measured.result.perSecond.toFixed(0)} PUTs/s, ${measured.deliveriesPerSecond.toFixed(0)} deliveries/s, ${measured.cpuUs.toFixed(0)} µs CPU per PUT, ${measured.lostOrTwice} lost or twice`;
          process.stdout.write(`[${SECTION}] round ${round + 1}, ${contestant.label}: ${figures}\n`);
        }
      }
      const ratios = (key: string, to: string): number[] => {
        const mine = rounds.get(key) as Round[];
        const theirs = rounds.get(to);
        return theirs === undefined ? [] : mine.map((round, index) => round.result.perSecond / (theirs[index] as Round).result.perSecond);
      };
      for (const contestant of contestants) {
        const mine = rounds.get(contestant.key) as Round[];
        const before = contestant.key.startsWith('before-');
        const toOne = ratios(contestant.key, before ? 'before-one' : 'one');
        const toBefore = before ? [] : ratios(contestant.key, `before-${contestant.key}`);
        report.row(SECTION, `durable PUT, If-Match, ${contestant.label}`, {
          'PUTs /s': median(mine.map((round) => round.result.perSecond)).toFixed(0),
          'p50 / p99 ms': `${median(mine.map((round) => round.result.p50Ms)).toFixed(2)} / ${median(mine.map((round) => round.result.p99Ms)).toFixed(2)}`,
          'vs 1 subscription': toOne.length === 0 ? '' : median(toOne).toFixed(2),
          'vs before': toBefore.length === 0 ? '' : median(toBefore).toFixed(2),
          'deliveries /s': median(mine.map((round) => round.deliveriesPerSecond)).toFixed(0),
          'CPU µs / PUT': median(mine.map((round) => round.cpuUs)).toFixed(0),
          'journal B / PUT': median(mine.map((round) => round.journalBytes)).toFixed(0),
          failed: mine.reduce((sum, round) => sum + round.result.failures, 0),
          'lost or twice': mine.reduce((sum, round) => sum + round.lostOrTwice, 0),
          undelivered: mine.reduce((sum, round) => sum + round.undelivered, 0),
        });
      }
    } finally {
      await Promise.all(contestants.map((contestant) => contestant.server.stop()));
      await Promise.all(receivers.map((receiver) => receiver.stop()));
    }
  });
  process.stdout.write(`[${SECTION}] load average at the end: ${loadavg().map((value) => value.toFixed(2)).join(' ')}\n`);
}

async function measureRound(contestant: Contestant, round: number, scratch: string, options: WebhookBenchOptions): Promise<Round> {
  const { server, receivers } = contestant;
  const url = server.url;
  const requests = itemChanges(url, `m${padded(round, 3)}`, Math.ceil(options.seconds * PER_SECOND), ITEMS, SPREAD);
  const warmupRequests = itemChanges(url, `w${padded(round, 3)}`, Math.ceil(options.warmupSeconds * PER_SECOND), ITEMS, SPREAD);
  const written = (): Promise<number> => metricSum(url, 'resapi_http_requests_total', { method: 'PUT', status: '200' });
  const received = async (): Promise<number> => {
    const counts = await Promise.all(receivers.map(async (receiver) => Number((await sendRaw(receiver.url, rawRequest('GET', receiver.url, '/count'))).body)));
    return counts.reduce((sum, count) => sum + count, 0);
  };
  const journal = (): Promise<number> => metricSum(url, 'resapi_store_written_bytes_total');
  // The warm-up is a call of its own whose figures are left out (load.ts).
  await load({ url, requests: warmupRequests, connections: options.connections, seconds: options.warmupSeconds, scratch });
  const [writtenBefore, receivedBefore, journalBefore] = [await written(), await received(), await journal()];
  const cpuBefore = cpuSeconds(server);
  const started = process.hrtime.bigint();
  const result = await load({ url, requests, connections: options.connections, seconds: options.seconds, scratch });
  // The PUTs in flight when the window closed are answered after it: counted once they are.
  let puts = (await written()) - writtenBefore;
  for (let again = (await written()) - writtenBefore; again !== puts; again = (await written()) - writtenBefore) puts = again;
  const owed = puts * receivers.length;
  // Waiting on the receivers' counts, not on /$metrics: a scrape reads every outbox row, which is CPU of the server's.
  await settle('deliveries owed', async () => owed - ((await received()) - receivedBefore), (left) => left <= 0);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const cpu = cpuSeconds(server) - cpuBefore;
  const got = (await received()) - receivedBefore;
  const pending = await Promise.all(UNDELIVERED.map((status) => metricSum(url, 'resapi_outbox_deliveries', { status })));
  // The last outcomes are answered before they are written (lib/jobs/outcomes.ts): their bytes come a moment later.
  let journalBytes = await journal();
  for (let again = -1; again !== journalBytes; journalBytes = await journal()) {
    again = journalBytes;
    await pause(JOURNAL_QUIET_MS);
  }
  return {
    result,
    deliveriesPerSecond: got / seconds,
    lostOrTwice: got - owed,
    undelivered: pending.reduce((sum, count) => sum + count, 0),
    cpuUs: (cpu * 1e6) / puts,
    journalBytes: (journalBytes - journalBefore) / puts,
  };
}

