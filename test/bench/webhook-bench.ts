// What the webhook benchmarks share (README, Performance, "Webhooks"): their settings, a server
// started from an earlier build of resapi for a "before" figure, the /$metrics samples they read, and
// alternating rounds reported by their medians.
//
// The "before" server: BENCH_BEFORE names a checkout of an earlier commit, built (`git worktree add
// /tmp/before <commit>`, a node_modules symlink, `npm run build` there); its bin/resapi.js is started
// with the same arguments as today's. Without BENCH_BEFORE the "before" rows are left out.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { setTimeout as pause } from 'node:timers/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { rawRequest, sendRaw } from './load.js';
import { benchItem, itemId, spawnResapi, spawnScript, type Child } from './servers.js';

export interface WebhookBenchOptions {
  readonly connections: number;
  readonly seconds: number;
  readonly warmupSeconds: number;
  readonly rounds: number;
  /** A built checkout of an earlier commit, or undefined. */
  readonly before: string | undefined;
}

const SETTLE_POLL_MS = 250;
const SETTLE_DEADLINE_MS = 180_000;

/** BENCH_CONNECTIONS, BENCH_SECONDS, BENCH_WARMUP, BENCH_ROUNDS (as the performance section) and BENCH_BEFORE. */
export function webhookBenchOptions(): WebhookBenchOptions {
  const number = (name: string, fallback: number): number => {
    const value = process.env[name];
    return value === undefined || value === '' ? fallback : Number(value.split(',')[0]);
  };
  const before = process.env['BENCH_BEFORE'];
  return {
    connections: number('BENCH_CONNECTIONS', 32),
    seconds: number('BENCH_SECONDS', 3),
    warmupSeconds: number('BENCH_WARMUP', 1),
    rounds: number('BENCH_ROUNDS', 3),
    before: before === undefined || before === '' ? undefined : before,
  };
}

/** `resapi serve` of today's build, or of the checkout `from` (the "before" build). */
export function spawnBuild(
  from: string | undefined,
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
): Promise<Child> {
  if (from === undefined) return spawnResapi(args, env);
  const bin = join(from, 'bin', 'resapi.js');
  const argv = [bin, 'serve', '--port', '0', ...args];
  const script = `process.argv = [process.execPath, ...${JSON.stringify(argv)}]; import(${JSON.stringify(pathToFileURL(bin).href)});`;
  return spawnScript(script, { RESAPI_WEBHOOK_SECRETS: '', ...env });
}

let ticksPerSecond: number | undefined;

/**
 * The CPU seconds (user and system) a server process has used so far, from /proc (Linux), or NaN.
 * Unlike requests per second, CPU per request hardly moves when the disk's fsync or the other
 * sessions on the machine slow a window down, so it shows what the code itself costs.
 */
export function cpuSeconds(child: Child): number {
  try {
    ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    const stat = readFileSync(`/proc/${child.process.pid}/stat`, 'utf8');
    // The fields after the command's closing parenthesis, from the state (field 3): utime is 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond;
  } catch {
    return Number.NaN;
  }
}

/** The samples of /$metrics: the sum of the lines of `name` whose labels include every `labels` pair. */
export async function metricSum(url: URL, name: string, labels: Readonly<Record<string, string>> = {}): Promise<number> {
  const answer = await sendRaw(url, rawRequest('GET', url, '/$metrics'));
  if (answer.status !== 200) throw new Error(`GET /$metrics answered ${answer.status}`);
  let sum = 0;
  for (const line of answer.body.toString('utf8').split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const wanted = Object.entries(labels).every(([key, value]) => line.includes(`${key}="${value}"`));
    if (wanted) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

/** The short commit id of a checkout, for a row's label. */
export function commitOf(checkout: string): string {
  return execFileSync('git', ['-C', checkout, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
}

/** Polls `sample` until `done(value)`: the background work of one turn must not land on the next one's. */
export async function settle(what: string, sample: () => Promise<number>, done: (value: number) => boolean): Promise<void> {
  const deadline = Date.now() + SETTLE_DEADLINE_MS;
  for (;;) {
    const value = await sample();
    if (done(value)) return;
    if (Date.now() > deadline) throw new Error(`still ${value} ${what} after ${SETTLE_DEADLINE_MS} ms`);
    await pause(SETTLE_POLL_MS);
  }
}

/** The rounds' order: each round starts one later, so no contestant always follows the same one. */
export function roundOrder<T>(contestants: readonly T[], round: number): T[] {
  const shift = round % contestants.length;
  return [...contestants.slice(shift), ...contestants.slice(0, shift)];
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

/** A number of `width` digits, so every request of a list has the same size. */
export function padded(n: number, width = 7): string {
  return String(n).padStart(width, '0');
}

/**
 * `count` PUTs over `spread` of `items` items (evenly apart), each bringing a new `rev`, so each one
 * changes its item and makes one event.
 */
export function itemChanges(url: URL, prefix: string, count: number, items: number, spread: number): Buffer[] {
  const headers = { Accept: 'application/json', 'Content-Type': 'application/json', 'If-Match': '*' };
  return Array.from({ length: count }, (_, index) => {
    const n = Math.floor(((index % spread) * items) / spread);
    const doc = { ...benchItem(n), rev: `${prefix}-${padded(index)}` };
    return rawRequest('PUT', url, `/items/${itemId(n)}`, headers, JSON.stringify(doc));
  });
}
