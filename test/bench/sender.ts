// Benchmark (README, Benchmarks): the webhook sender (CONTRACT §8; seed, "Sending side"). Two
// figures, each against `resapi serve` on a data dir in its own process, delivering to a bare
// node:http receiver in another process that reads each body and answers 200 at once:
//
// - deliveries per second: ITEMS PUT-creates from CLIENTS keep-alive clients on a server with one
//   subscription, timed from the first write until /$outbox lists no delivery left to deliver (its
//   dispatcher at the default 4 workers, so at most 2 at once to one subscription, and again at 16);
// - the cost of the outbox on the write path: durable PUT-create throughput at CLIENTS clients with
//   no subscription and with one (each change then also writes its event and delivery in the same
//   commit, while the dispatcher sends and records them), in alternating rounds, medians reported.
//   Target for the ratio: at least 0.8. A third variant subscribes to a receiver that accepts the
//   connection and never answers, so the dispatcher sits on its first deliveries (A's timeout, 5 s,
//   is longer than the run): what is left is the cost of writing events and deliveries alone, and
//   the difference is what sending and recording the deliveries takes from the writes. The server's
//   CPU time per second (from /proc, where there is one) shows what it had to spare.
//
// Figures are printed, never asserted; every server gets a fresh data dir.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as pause } from 'node:timers/promises';
import type { Report } from './measure.js';

const BIN = fileURLToPath(new URL('../../../bin/resapi.js', import.meta.url));
const CLIENTS = 32;
/** Items created for the delivery rate. */
const ITEMS = 5_000;
/** Dispatcher sizes the delivery rate is measured at: the default, and a larger pool. */
const DELIVERY_WORKERS = [4, 16] as const;
/** The write comparison: rounds of each kind, alternating, each this long after a warm-up. */
const ROUNDS = 3;
const DURATION_MS = 3_000;
const WARM_UP = 500;
const POLL_MS = 25;
/** A run whose deliveries are not all done by then is reported as a failure, not waited on forever. */
const DELIVERY_LIMIT_MS = 180_000;
const SECRET = 'benchmark-secret';
const BODY = JSON.stringify({ name: 'benchmark item', price: 12.5, currency: 'EUR', tags: ['a', 'b'], note: 'x'.repeat(120) });
const UNDELIVERED = `/$outbox?$filter=${encodeURIComponent("status ne 'delivered'")}&$top=1`;
/** Linux's USER_HZ: the unit of utime and stime in /proc/PID/stat. */
const CLOCK_TICKS = 100;

// The fast receiver: reads each body and answers 200 with nothing more to say; GET /count says how
// many deliveries it got, so a run can show that none was lost and how many came twice.
const RECEIVER = `
const http = require('node:http');
let received = 0;
const server = http.createServer((req, res) => {
  req.on('data', () => {});
  req.on('end', () => {
    if (req.method === 'POST') received++;
    const body = req.method === 'GET' ? String(received) : '';
    res.writeHead(200, { 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
  });
});
server.listen(0, '127.0.0.1', () => console.log('listening on http://127.0.0.1:' + server.address().port));
process.on('SIGTERM', () => { server.closeAllConnections(); server.close(() => process.exit(0)); });
`;

interface Server {
  readonly child: ChildProcess;
  readonly url: URL;
  readonly agent: Agent;
}

export async function benchSender(report: Report): Promise<void> {
  const folder = mkdtempSync(join(tmpdir(), 'resapi-bench-sender-'));
  const receiver = await spawnServer(process.execPath, ['-e', RECEIVER]);
  try {
    for (const workers of DELIVERY_WORKERS) {
      const before = Number(await get(receiver, '/count'));
      const run = await deliveryRate(folder, receiver.url, workers);
      const received = Number(await get(receiver, '/count')) - before;
      report.row('sender: deliveries', `${ITEMS.toLocaleString('en')} creates, ${CLIENTS} clients, outbox.workers ${workers}`, {
        'writes done s': run.writesSeconds.toFixed(2),
        'all delivered s': run.deliveredSeconds.toFixed(2),
        'deliveries /s': (ITEMS / run.deliveredSeconds).toFixed(0),
        'received twice': received - ITEMS,
      });
    }

    const stalled = await blackHole();
    try {
      const variants = [
        { label: 'no subscription', target: undefined },
        { label: 'one subscription, fast receiver', target: receiver.url },
        { label: 'one subscription, deliveries stalled', target: stalled.url },
      ];
      const runs: WriteRun[][] = variants.map(() => []);
      for (let round = 0; round < ROUNDS; round++) {
        for (const [index, variant] of variants.entries()) runs[index]?.push(await writeRate(folder, variant.target));
      }
      const without = median((runs[0] as WriteRun[]).map((run) => run.perSecond));
      for (const [index, variant] of variants.entries()) {
        const these = runs[index] as WriteRun[];
        const perSecond = median(these.map((run) => run.perSecond));
        const cpu = these.map((run) => run.cpuCores).filter((value): value is number => value !== undefined);
        report.row('sender: write path', `${variant.label} (${CLIENTS} clients, median of ${ROUNDS})`, {
          'durable PUT-creates /s': perSecond.toFixed(0),
          'vs no subscription': (perSecond / without).toFixed(2),
          'server CPU, cores': cpu.length === 0 ? '-' : median(cpu).toFixed(2),
          'undelivered at the end': median(these.map((run) => run.undelivered)).toFixed(0),
        });
      }
    } finally {
      await stalled.close();
    }
  } finally {
    await stopServer(receiver);
    rmSync(folder, { recursive: true, force: true });
  }
}

interface WriteRun {
  readonly perSecond: number;
  /** CPU seconds the server used per second of the run; undefined without /proc. */
  readonly cpuCores: number | undefined;
  readonly undelivered: number;
}

/** ITEMS creates on a fresh server subscribed to `target`; seconds until the writes, then the deliveries, were done. */
async function deliveryRate(folder: string, target: URL, workers: number): Promise<{ writesSeconds: number; deliveredSeconds: number }> {
  const server = await spawnResapi(folder, { outbox: { workers } });
  try {
    await subscribe(server, target);
    const started = process.hrtime.bigint();
    let next = 0;
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (next < ITEMS) await create(server, `/bench/d${next++}`);
      }),
    );
    const writesSeconds = seconds(started);
    // Polled rather than counted at the receiver: delivered means recorded as delivered by A.
    const deadline = Date.now() + DELIVERY_LIMIT_MS;
    while (JSON.parse(await get(server, UNDELIVERED)).value.length > 0) {
      if (Date.now() > deadline) throw new Error(`deliveries not done after ${DELIVERY_LIMIT_MS} ms`);
      await pause(POLL_MS);
    }
    return { writesSeconds, deliveredSeconds: seconds(started) };
  } finally {
    await stopServer(server);
  }
}

/** PUT-creates for DURATION_MS from CLIENTS clients on a fresh server, subscribed to `target` when given. */
async function writeRate(folder: string, target: URL | undefined): Promise<WriteRun> {
  const server = await spawnResapi(folder, undefined);
  try {
    if (target !== undefined) await subscribe(server, target);
    let warm = 0;
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (warm < WARM_UP) await create(server, `/bench/w${warm++}`);
      }),
    );
    const cpuBefore = cpuSeconds(server.child);
    const started = process.hrtime.bigint();
    const deadline = Date.now() + DURATION_MS;
    let done = 0;
    await Promise.all(
      Array.from({ length: CLIENTS }, async (_, client) => {
        for (let n = 0; Date.now() < deadline; n++) {
          await create(server, `/bench/c${client}-${n}`);
          done++;
        }
      }),
    );
    const elapsed = seconds(started);
    const cpuAfter = cpuSeconds(server.child);
    const cpuCores = cpuBefore === undefined || cpuAfter === undefined ? undefined : (cpuAfter - cpuBefore) / elapsed;
    const counted = JSON.parse(await get(server, `/$outbox?$filter=${encodeURIComponent("status ne 'delivered'")}&$count=true&$top=1`)) as { '@count'?: number };
    return { perSecond: done / elapsed, cpuCores, undelivered: counted['@count'] ?? 0 };
  } finally {
    await stopServer(server);
  }
}

async function spawnResapi(folder: string, config: object | undefined): Promise<Server> {
  const dir = mkdtempSync(join(folder, 'data-'));
  const args = [BIN, 'serve', '--port', '0', '--data-dir', dir];
  if (config !== undefined) {
    const file = `${dir}.json`;
    writeFileSync(file, JSON.stringify(config));
    args.push('--config', file);
  }
  return spawnServer(process.execPath, args);
}

async function spawnServer(command: string, args: readonly string[]): Promise<Server> {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'ignore'], env: { ...process.env, RESAPI_WEBHOOK_SECRETS: '' } });
  const url = await listening(child);
  return { child, url, agent: new Agent({ keepAlive: true, maxSockets: CLIENTS }) };
}

async function stopServer(server: Server): Promise<void> {
  server.agent.destroy();
  if (server.child.exitCode !== null) return;
  server.child.kill('SIGTERM');
  await once(server.child, 'exit');
}

async function subscribe(server: Server, target: URL): Promise<void> {
  const body = JSON.stringify({ url: new URL('/hook', target).href, events: ['bench.*'], secret: SECRET });
  const answer = await send(server, 'PUT', '/$subscriptions/bench', { 'Content-Type': 'application/json', 'If-None-Match': '*' }, body);
  if (answer.status !== 201) throw new Error(`the subscription was answered ${answer.status} ${answer.text}`);
}

async function create(server: Server, path: string): Promise<void> {
  const answer = await send(server, 'PUT', path, { 'Content-Type': 'application/json', 'If-None-Match': '*' }, BODY);
  if (answer.status !== 201) throw new Error(`PUT ${path} was answered ${answer.status} ${answer.text}`);
}

async function get(server: Server, path: string): Promise<string> {
  const answer = await send(server, 'GET', path, {}, undefined);
  if (answer.status !== 200) throw new Error(`GET ${path} was answered ${answer.status} ${answer.text}`);
  return answer.text;
}

function send(server: Server, method: string, path: string, headers: Record<string, string>, body: string | undefined): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const length = body === undefined ? {} : { 'Content-Length': String(Buffer.byteLength(body)) };
    const req = request({ host: server.url.hostname, port: server.url.port, path, method, agent: server.agent, headers: { ...headers, ...length } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A receiver that takes connections and never answers, until closed. */
async function blackHole(): Promise<{ url: URL; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined).on('close', () => sockets.delete(socket));
    socket.resume();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** User and system CPU seconds a child has used, from /proc/PID/stat (fields 14 and 15); undefined elsewhere. */
function cpuSeconds(child: ChildProcess): number | undefined {
  try {
    const stat = readFileSync(`/proc/${child.pid}/stat`, 'utf8');
    // The command name, in parentheses, may hold spaces: count fields from after it (field 3 on).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}

function seconds(since: bigint): number {
  return Number(process.hrtime.bigint() - since) / 1e9;
}

function median(values: readonly number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
}

async function listening(child: ChildProcess): Promise<URL> {
  let out = '';
  for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
    out += chunk.toString();
    const match = /listening on (http:\/\/\S+)/.exec(out);
    if (match !== null) return new URL(match[1] as string);
  }
  throw new Error(`server did not start: ${out}`);
}
