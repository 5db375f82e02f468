// The processes a benchmark measures (README, Performance): `resapi serve` on a data dir filled
// beforehand through the store (so 1M items take seconds, not an hour of HTTP), the bare node:http
// server each scenario is compared with (it reads the request and answers a fixed status and body of
// the same size as resapi's answer), and a receiver that answers every webhook 200 at once.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { request, type Agent } from 'node:http';
import { fileURLToPath } from 'node:url';
import { silentLogger, type Logger } from '../../lib/log.js';
import { openFileStore } from '../../lib/store/file.js';
import type { JsonObject } from '../../lib/json.js';
import type { Mutation } from '../../lib/store/types.js';

const BIN = fileURLToPath(new URL('../../../bin/resapi.js', import.meta.url));
const PROFILED = fileURLToPath(new URL('./profiled-resapi.js', import.meta.url));
const BATCH = 2000;

export interface Child {
  readonly url: URL;
  readonly process: ChildProcess;
  stop(): Promise<void>;
}

/** The benchmark's item n: ~200 bytes; `category` picks 10% of the items, `group` 0.1%. */
export function benchItem(n: number): JsonObject {
  const id = itemId(n);
  return { id, name: `Item ${n}`, category: `c${n % 10}`, group: `g${String(n % 1000).padStart(4, '0')}`, price: n % 997, tags: n % 2 === 0 ? ['even', 'sale'] : ['odd'], note: 'x'.repeat(96) };
}

export function itemId(n: number): string {
  return `i${String(n).padStart(7, '0')}`;
}

/**
 * Writes `count` bench items into collection `items` of a new store in `dir`, then snapshots it, so
 * every size starts from a store whose journal is empty: a scenario's window then measures the
 * request path, not whichever snapshot the seeding happened to leave due (README, Performance,
 * measures a snapshot on its own).
 */
export async function seedStore(dir: string, count: number): Promise<void> {
  const opened = await openFileStore({ dir, log: silentLogger, progress: () => {} });
  if (!opened.ok) throw new Error(opened.message);
  for (let start = 0; start < count; start += BATCH) {
    const mutations: Mutation[] = [];
    for (let n = start; n < Math.min(count, start + BATCH); n++) mutations.push({ kind: 'put', collection: 'items', id: itemId(n), doc: benchItem(n) });
    const result = await opened.store.commit({ mutations });
    if (!result.ok) throw new Error(`seeding failed: ${result.reason}`);
  }
  await opened.store.close();
  await snapshotNow(dir);
}

/** Opens the store with a threshold any journal passes, and closes it once that snapshot is written. */
async function snapshotNow(dir: string): Promise<void> {
  let written: () => void = () => {};
  const done = new Promise<void>((resolve) => (written = resolve));
  const log: Logger = (_level, message) => {
    if (message === 'snapshot written') written();
  };
  const opened = await openFileStore({ dir, log, progress: () => {}, snapshotThresholdBytes: 1 });
  if (!opened.ok) throw new Error(opened.message);
  await done;
  await opened.store.close();
}

/**
 * What node is told when it runs a server the benchmark measures, resapi and its ceilings alike: no
 * memory reducer. The servers take turns, so resapi idles for seconds while its ceiling is loaded.
 * Once resapi's heap has grown (kept pages, earlier scenarios), V8's memory reducer runs a full
 * collection in such an idle spell, and from then on every request cost resapi 3-4 µs more CPU, spent
 * in V8's runtime paths that add an object's properties one at a time (under `perf`, about 10% of the
 * process against under 1% before, called from Node's own `process.nextTick` and stream code): a 304
 * of a kept page fell from 0.93-0.96 of its ceiling to 0.75-0.79. A ceiling's heap never grows, so it
 * never met that collection: the ratio measured the turn-taking, not the request. A server under
 * sustained load does not idle; that is the state the suite measures. `BENCH_NODE_ARGS=--memory-reducer`
 * puts the reducer back for resapi (the later flag wins).
 */
const SERVER_NODE_ARGS = ['--no-memory-reducer'];

/**
 * `resapi serve` on a free port; `nodeArgs` go to node itself (`--trace-gc`, say). With `profilePrefix`
 * it runs inside profiled-resapi.ts: each SIGUSR2 starts or stops its CPU profiler, each stop writing
 * `<profilePrefix>-<n>.cpuprofile`.
 */
export function spawnResapi(
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
  nodeArgs: readonly string[] = [],
  profilePrefix?: string,
): Promise<Child> {
  const entry = profilePrefix === undefined ? [BIN] : [PROFILED, profilePrefix, BIN];
  const argv = [...SERVER_NODE_ARGS, ...nodeArgs, ...entry, 'serve', '--port', '0', ...args];
  return spawnChild(process.execPath, argv, { RESAPI_WEBHOOK_SECRETS: '', ...env });
}

/** A compiled module of the benchmark run as a process of its own that prints `listening on URL` first. */
export function spawnModule(path: string, args: readonly string[]): Promise<Child> {
  return spawnChild(process.execPath, [...SERVER_NODE_ARGS, path, ...args], {});
}

/** A bare node:http server: reads each request whole, answers `status` with `body` and `contentType`. */
export function spawnBare(status: number, body: Buffer, contentType: string): Promise<Child> {
  return spawnScript(BARE_SERVER, { BARE_BODY: body.toString('base64'), BARE_TYPE: contentType, BARE_STATUS: String(status) });
}

const BARE_SERVER = `
const http = require('node:http');
const body = Buffer.from(process.env.BARE_BODY, 'base64');
const head = { 'Content-Type': process.env.BARE_TYPE, 'Content-Length': body.length };
const status = Number(process.env.BARE_STATUS);
const server = http.createServer((req, res) => {
  req.on('data', () => {});
  req.on('end', () => {
    if (status === 304) { res.writeHead(304); res.end(); return; }
    res.writeHead(status, head);
    res.end(body);
  });
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => console.log('listening on http://127.0.0.1:' + server.address().port));
process.on('SIGTERM', () => { server.closeAllConnections(); server.close(() => process.exit(0)); });
`;

/** A CommonJS script run by node that prints `listening on URL` first. */
export function spawnScript(script: string, env: Readonly<Record<string, string>> = {}): Promise<Child> {
  return spawnChild(process.execPath, [...SERVER_NODE_ARGS, '-e', script], env);
}

/** A webhook receiver that reads each delivery and answers 200 at once. */
export function spawnReceiver(): Promise<Child> {
  return spawnBare(200, Buffer.alloc(0), 'text/plain');
}

/** Reads each delivery and answers 200 at once; GET answers how many POSTs it has read. */
const COUNTING_RECEIVER = `
const http = require('node:http');
let received = 0;
const server = http.createServer((req, res) => {
  req.on('data', () => {});
  req.on('end', () => {
    if (req.method === 'POST') received++;
    const body = req.method === 'GET' ? String(received) : '';
    res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
  });
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => console.log('listening on http://127.0.0.1:' + server.address().port));
process.on('SIGTERM', () => { server.closeAllConnections(); server.close(() => process.exit(0)); });
`;

/** A webhook receiver that answers 200 at once and counts the POSTs it read (a GET answers the count). */
export function spawnCountingReceiver(): Promise<Child> {
  return spawnScript(COUNTING_RECEIVER);
}

function spawnChild(command: string, args: readonly string[], env: Readonly<Record<string, string>>): Promise<Child> {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'ignore'], env: { ...process.env, ...env } });
  return new Promise((resolve, reject) => {
    let out = '';
    const stop = async (): Promise<void> => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    };
    let listening = false;
    // Read to the end (a full pipe would stall the child), but kept only until the child listens.
    child.stdout?.on('data', (chunk: Buffer) => {
      if (listening) return;
      out += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match === null) return;
      listening = true;
      resolve({ url: new URL(match[1] as string), process: child, stop });
    });
    child.once('exit', (code) => reject(new Error(`${command} ${args.join(' ')} exited with ${String(code)} before listening: ${out}`)));
  });
}

/** A request over a keep-alive agent; its body as text, once the status is the one expected. */
export function send(agent: Agent, to: Child, method: string, path: string, body?: string, expected = 200): Promise<string> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = body === undefined ? {} : { 'Content-Type': 'application/json', 'If-None-Match': '*', 'Content-Length': String(Buffer.byteLength(body)) };
    const outgoing = request({ host: to.url.hostname, port: to.url.port, path, method, agent, headers }, (answer) => {
      let text = '';
      answer.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      answer.on('end', () => (answer.statusCode === expected ? resolve(text) : reject(new Error(`${method} ${path} answered ${String(answer.statusCode)}: ${text}`))));
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}
