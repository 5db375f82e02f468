// Benchmark (README, Performance, "Webhooks"): durable accepts per second of each receiving scheme
// (CONVENTIONS.md#receiving-sources, CONVENTIONS.md#standard-webhooks-scheme,
// CONVENTIONS.md#github-scheme, CONVENTIONS.md#stripe-scheme) on the same load. One `resapi serve` per
// scheme, each on its own data dir: the resapi scheme at the default POST /webhooks (no
// `webhooks.sources`, today's configuration), each other scheme as the one source /webhooks/<scheme>.
// Every server gets the same requests: the same connections, the same body bytes (one JSON object
// every scheme reads: `id`, `type`, `event`), each request a fresh event id, signed as a provider of
// its scheme signs (lib/protocol/scheme-headers.ts `signedHeaders`). No handler is registered, so each
// event is accepted and parked: the window holds the accept path alone (what comes after
// verification is shared by every scheme). With BENCH_BEFORE, an earlier build's server at POST
// /webhooks gets the resapi scheme's very requests. The servers take turns, round after round, each
// round one later. The table gives the medians of accepts per second, of the ratio to the resapi
// scheme in the same round, of the ratio to the earlier build, of the server's CPU time per accept
// (user and system, from /proc: a figure the disk's fsync moves far less than the rate), of the
// journal bytes written per accept, and of the mean fdatasync of a group commit and the writes it
// carried (what bounds a durable accept's rate, as in the performance section). `repeats` counts
// 200s that stored nothing (a duplicate): 0 when every request was a fresh event. Figures are
// printed, never asserted.
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import type { WebhookScheme } from '../../lib/config.js';
import { signedHeaders } from '../../lib/protocol/scheme-headers.js';
import { withTempDir } from '../support/temp-dir.js';
import { load, rawRequest, type LoadResult } from './load.js';
import type { Report } from './measure.js';
import type { Child } from './servers.js';
import {
  commitOf, cpuSeconds, median, metricSum, padded, roundOrder, spawnBuild, webhookBenchOptions, type WebhookBenchOptions,
} from './webhook-bench.js';

const SECTION = 'webhook-schemes';
const KIND = 'order.created';
/** Requests prepared per second of a window: more than any durable accept rate here, so none repeats. */
const PER_SECOND = 30_000;
const SECRETS_ENV = 'BENCH_WEBHOOK_SECRETS';
/** What each scheme's provider would hand out (a Standard Webhooks key is `whsec_` and base64). */
const SECRETS: Readonly<Record<WebhookScheme, string>> = {
  resapi: 'bench-resapi-secret-0123456789',
  standard: `whsec_${Buffer.from('bench-standard-key-0123456789ab').toString('base64')}`,
  github: 'bench-github-secret-0123456789',
  stripe: 'whsec_benchStripeSigningSecret0123456789',
};
const SCHEMES: readonly WebhookScheme[] = ['resapi', 'standard', 'github', 'stripe'];

interface Contestant {
  readonly key: string;
  readonly label: string;
  readonly scheme: WebhookScheme;
  readonly path: string;
  readonly server: Child;
}

interface Round {
  readonly result: LoadResult;
  readonly repeats: number;
  /** The server's CPU microseconds per request answered in the turn (warm-up included). */
  readonly cpuUs: number;
  /** Journal bytes written per request answered. */
  readonly journalBytes: number;
  /** The mean fdatasync of a group commit in the turn, and the writes each one carried (from /$metrics). */
  readonly syncMs: number;
  readonly perGroup: number;
}

export async function benchWebhookSchemes(report: Report, options: WebhookBenchOptions = webhookBenchOptions()): Promise<void> {
  process.stdout.write(`[${SECTION}] load average at the start: ${loadavg().map((value) => value.toFixed(2)).join(' ')}\n`);
  await withTempDir('bench-webhook-schemes', async (folder) => {
    const contestants: Contestant[] = [];
    try {
      if (options.before !== undefined) {
        const args = ['--data-dir', join(folder, 'before')];
        const server = await spawnBuild(options.before, args, { RESAPI_WEBHOOK_SECRETS: SECRETS.resapi });
        const label = `before (${commitOf(options.before)}), resapi, POST /webhooks`;
        contestants.push({ key: 'before', label, scheme: 'resapi', path: '/webhooks', server });
      }
      for (const scheme of SCHEMES) {
        const args = ['--data-dir', join(folder, scheme)];
        if (scheme === 'resapi') {
          const server = await spawnBuild(undefined, args, { RESAPI_WEBHOOK_SECRETS: SECRETS.resapi });
          contestants.push({ key: scheme, label: 'resapi, POST /webhooks', scheme, path: '/webhooks', server });
          continue;
        }
        const path = `/webhooks/${scheme}`;
        const config = join(folder, `${scheme}.json`);
        writeFileSync(config, JSON.stringify({ webhooks: { sources: [{ path, scheme, secretsEnv: SECRETS_ENV }] } }));
        const server = await spawnBuild(undefined, [...args, '--config', config], { [SECRETS_ENV]: SECRETS[scheme] });
        contestants.push({ key: scheme, label: `${scheme}, POST ${path}`, scheme, path, server });
      }
      const rounds = new Map<string, Round[]>(contestants.map((contestant) => [contestant.key, []]));
      for (let round = 0; round < options.rounds; round++) {
        for (const contestant of roundOrder(contestants, round)) {
          const measured = await measureRound(contestant, round, folder, options);
          (rounds.get(contestant.key) as Round[]).push(measured);
          const figures = `${measured.result.perSecond.toFixed(0)} accepts/s, ${measured.cpuUs.toFixed(0)} µs CPU each, ${measured.repeats} repeats`;
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
        // The earlier build's row gives its own figures: the ratios are the other rows'.
        const before = contestant.key === 'before';
        const toResapi = before ? [] : ratios(contestant.key, 'resapi');
        const toBefore = before ? [] : ratios(contestant.key, 'before');
        report.row(SECTION, contestant.label, {
          'accepts /s': median(mine.map((round) => round.result.perSecond)).toFixed(0),
          'p50 / p99 ms': `${median(mine.map((round) => round.result.p50Ms)).toFixed(2)} / ${median(mine.map((round) => round.result.p99Ms)).toFixed(2)}`,
          'vs resapi': toResapi.length === 0 ? '' : median(toResapi).toFixed(2),
          'vs before': toBefore.length === 0 ? '' : median(toBefore).toFixed(2),
          'CPU µs / accept': median(mine.map((round) => round.cpuUs)).toFixed(0),
          'journal B / accept': median(mine.map((round) => round.journalBytes)).toFixed(0),
          'fsync ms × writes': `${median(mine.map((round) => round.syncMs)).toFixed(2)} × ${median(mine.map((round) => round.perGroup)).toFixed(1)}`,
          failed: mine.reduce((sum, round) => sum + round.result.failures, 0),
          repeats: mine.reduce((sum, round) => sum + round.repeats, 0),
        });
      }
    } finally {
      await Promise.all(contestants.map((contestant) => contestant.server.stop()));
    }
  });
  process.stdout.write(`[${SECTION}] load average at the end: ${loadavg().map((value) => value.toFixed(2)).join(' ')}\n`);
}

async function measureRound(contestant: Contestant, round: number, scratch: string, options: WebhookBenchOptions): Promise<Round> {
  const { server } = contestant;
  const url = server.url;
  const requests = signedRequests(contestant, `m${padded(round, 3)}`, Math.ceil(options.seconds * PER_SECOND));
  const warmupRequests = signedRequests(contestant, `w${padded(round, 3)}`, Math.ceil(options.warmupSeconds * PER_SECOND));
  const posted = (): Promise<number> => metricSum(url, 'resapi_http_requests_total', { method: 'POST', status: '200' });
  const stored = (): Promise<number> => metricSum(url, 'resapi_inbox_events');
  const journal = (): Promise<number> => metricSum(url, 'resapi_store_written_bytes_total');
  // The warm-up is a call of its own whose figures are left out (load.ts).
  await load({ url, requests: warmupRequests, connections: options.connections, seconds: options.warmupSeconds, scratch });
  const syncs = async (): Promise<readonly number[]> => [
    await metricSum(url, 'resapi_store_sync_duration_seconds_sum'),
    await metricSum(url, 'resapi_store_sync_duration_seconds_count'),
    await metricSum(url, 'resapi_store_group_batches_sum'),
  ];
  const [postedBefore, storedBefore, journalBefore, syncsBefore] = [await posted(), await stored(), await journal(), await syncs()];
  const cpuBefore = cpuSeconds(server);
  const result = await load({ url, requests, connections: options.connections, seconds: options.seconds, scratch });
  const cpu = cpuSeconds(server) - cpuBefore;
  // The requests in flight when the window closed are answered after it: read once they are.
  let answered = (await posted()) - postedBefore;
  let storedNow = await stored();
  for (let again = (await posted()) - postedBefore; again !== answered; again = (await posted()) - postedBefore) {
    answered = again;
    storedNow = await stored();
  }
  const repeats = answered - (storedNow - storedBefore);
  const journalBytes = ((await journal()) - journalBefore) / answered;
  const [seconds, groups, batches] = (await syncs()).map((value, index) => value - (syncsBefore[index] as number)) as [number, number, number];
  return { result, repeats, cpuUs: (cpu * 1e6) / answered, journalBytes, syncMs: (1000 * seconds) / groups, perGroup: batches / groups };
}

/** `count` requests, each a new event `evt-<prefix>-<n>`, with the same body bytes for every scheme. */
function signedRequests(contestant: Contestant, prefix: string, count: number): Buffer[] {
  const { scheme, path, server } = contestant;
  const timestampS = Math.floor(Date.now() / 1000);
  const secret = SECRETS[scheme];
  return Array.from({ length: count }, (_, index) => {
    const id = `evt-${prefix}-${padded(index)}`;
    const body = JSON.stringify({ id, type: KIND, event: KIND, data: { order: index, total: 42.5, lines: ['a', 'b'] } });
    const headers = { 'Content-Type': 'application/json', ...signedHeaders(scheme, secret, { id, kind: KIND, body, timestampS }) };
    return rawRequest('POST', server.url, path, headers, body);
  });
}
