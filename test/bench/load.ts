// The benchmark's load generators (README, Performance): `wrk` when it is installed (`apt-get install
// wrk`), otherwise one of our own. Both send the same raw requests, in turn, over `connections`
// keep-alive connections for `seconds`, and report requests per second, the 50th and 99th percentile
// latency and how many answers came. A warm-up is one more call whose figures the caller leaves out.
// Our own generator writes each request as prepared bytes and reads each answer by its
// Content-Length, so it costs little more than the sockets; it runs in the benchmark's process, which
// does nothing else meanwhile, on the same two cores as the server it loads (wrk -t1 does too, in C):
// `generatorCpu` says how much of one core it took, and near 1 the figure is the generator's limit.
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface LoadOptions {
  readonly url: URL;
  /** Raw HTTP/1.1 requests, sent in turn (the list starts again when it runs out). */
  readonly requests: readonly Buffer[];
  readonly connections: number;
  readonly seconds: number;
  /** A folder for wrk's script and request file. */
  readonly scratch: string;
}

export interface LoadResult {
  readonly perSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** Answers that were not 2xx or 3xx. */
  readonly failures: number;
  /** Answers received in the window (for writes: the writes acknowledged). */
  readonly answered: number;
  /** The generator's CPU time over the window's wall time (wrk's: the process's, once it has exited). */
  readonly generatorCpu: number;
  readonly generator: 'wrk' | 'own';
}

/** A raw request: the request line, Host, the fields given, Content-Length when there is a body. */
export function rawRequest(method: string, url: URL, path: string, headers: Readonly<Record<string, string>> = {}, body?: string | Buffer): Buffer {
  const content = body === undefined ? undefined : Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8');
  const lines = [`${method} ${path} HTTP/1.1`, `Host: ${url.host}`, ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`)];
  if (content !== undefined) lines.push(`Content-Length: ${content.length}`);
  const head = Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
  return content === undefined ? head : Buffer.concat([head, content]);
}

let wrkInstalled: boolean | undefined;

export async function hasWrk(): Promise<boolean> {
  if (wrkInstalled === undefined) {
    wrkInstalled = await run('wrk', ['--version']).then(
      () => true,
      (error: { code?: unknown; stdout?: string }) => typeof error.stdout === 'string' && error.stdout.includes('wrk'),
    );
  }
  return wrkInstalled;
}

export async function load(options: LoadOptions): Promise<LoadResult> {
  return (await hasWrk()) ? wrk(options) : ownLoad(options);
}

// wrk reads the requests from a file, each one after its length in bytes and a newline, and sends them in turn.
const WRK_SCRIPT = `
local requests = {}
local index = 0
init = function(args)
  local file = io.open(args[1], "rb")
  local data = file:read("*a")
  file:close()
  local at = 1
  while at <= #data do
    local newline = string.find(data, "\\n", at, true)
    local length = tonumber(string.sub(data, at, newline - 1))
    table.insert(requests, string.sub(data, newline + 1, newline + length))
    at = newline + 1 + length
  end
end
request = function()
  index = index % #requests + 1
  return requests[index]
end
`;

async function wrk(options: LoadOptions): Promise<LoadResult> {
  const script = join(options.scratch, 'requests.lua');
  const file = join(options.scratch, 'requests.bin');
  writeFileSync(script, WRK_SCRIPT);
  writeFileSync(file, Buffer.concat(options.requests.flatMap((request) => [Buffer.from(`${request.length}\n`), request])));
  // One wrk thread: the server under test gets the other core.
  const args = ['-t1', `-c${options.connections}`, `-d${options.seconds}s`, '--latency', '-s', script, options.url.origin, '--', file];
  const before = reapedChildrenCpu();
  const { stdout } = await run('wrk', args, { maxBuffer: 1024 * 1024 });
  // wrk's own CPU: what the children this process reaped took, over the load's length (wrk runs that long).
  const generatorCpu = (reapedChildrenCpu() - before) / options.seconds;
  const perSecond = Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1]);
  const answered = Number(/(\d+) requests in/.exec(stdout)?.[1]);
  const failures = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(stdout)?.[1] ?? 0);
  return { perSecond, p50Ms: wrkLatency(stdout, '50%'), p99Ms: wrkLatency(stdout, '99%'), failures, answered, generatorCpu, generator: 'wrk' };
}

/** Linux's USER_HZ: the unit of CPU times in /proc/PID/stat. */
const CLOCK_TICKS = 100;

/** CPU seconds, user and kernel, of the children this process has waited for (Linux /proc/self/stat: cutime, cstime). */
function reapedChildrenCpu(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[13]) + Number(fields[14])) / CLOCK_TICKS;
}

function wrkLatency(output: string, percentile: string): number {
  const match = new RegExp(`^\\s*${percentile}\\s+([\\d.]+)(us|ms|s)\\s*$`, 'm').exec(output);
  if (match === null) return Number.NaN;
  const value = Number(match[1]);
  return match[2] === 'us' ? value / 1000 : match[2] === 's' ? value * 1000 : value;
}

/** Our own generator: each connection sends a request, reads its answer, sends the next. */
async function ownLoad(options: LoadOptions): Promise<LoadResult> {
  const latencies: number[] = [];
  let next = 0;
  let failures = 0;
  let count = 0;
  const cpu = process.cpuUsage();
  const started = process.hrtime.bigint();
  const deadline = started + BigInt(Math.round(options.seconds * 1e9));
  await Promise.all(
    Array.from({ length: options.connections }, () =>
      connection(options.url, () => {
        if (process.hrtime.bigint() >= deadline) return undefined;
        const request = options.requests[next % options.requests.length] as Buffer;
        next++;
        return request;
      }, (status, ms) => {
        count++;
        if (status >= 400) failures++;
        latencies.push(ms);
      }),
    ),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const used = process.cpuUsage(cpu);
  latencies.sort((a, b) => a - b);
  const at = (fraction: number): number => latencies[Math.min(latencies.length - 1, Math.floor(fraction * latencies.length))] ?? Number.NaN;
  const generatorCpu = (used.user + used.system) / 1e6 / seconds;
  return { perSecond: count / seconds, p50Ms: at(0.5), p99Ms: at(0.99), failures, answered: count, generatorCpu, generator: 'own' };
}

/** One keep-alive connection sending `nextRequest()` until it says undefined. */
function connection(url: URL, nextRequest: () => Buffer | undefined, answered: (status: number, ms: number) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket: Socket = connect({ host: url.hostname, port: Number(url.port) });
    socket.setNoDelay(true);
    let buffer: Buffer = Buffer.alloc(0);
    let sentAt = 0n;
    const send = (): void => {
      const request = nextRequest();
      if (request === undefined) {
        socket.end();
        resolve();
        return;
      }
      sentAt = process.hrtime.bigint();
      socket.write(request);
    };
    socket.on('connect', send);
    socket.on('error', reject);
    socket.on('data', (chunk: Buffer) => {
      buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
      for (;;) {
        const end = buffer.indexOf('\r\n\r\n');
        if (end === -1) return;
        const head = buffer.subarray(0, end).toString('latin1');
        const status = Number(head.slice(9, 12));
        const length = status === 204 || status === 304 ? 0 : Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? Number.NaN);
        if (Number.isNaN(length)) {
          reject(new Error(`an answer without Content-Length: ${head.slice(0, 200)}`));
          socket.destroy();
          return;
        }
        if (buffer.length < end + 4 + length) return;
        buffer = buffer.subarray(end + 4 + length);
        answered(status, Number(process.hrtime.bigint() - sentAt) / 1e6);
        send();
      }
    });
  });
}

export interface RawAnswer {
  readonly status: number;
  /** The reason phrase of the status line. */
  readonly reason: string;
  /** Field values by lowercase name (the last line of a repeated field). */
  readonly headers: ReadonlyMap<string, string>;
  /** Every field line as sent: name as spelled, value, in order. */
  readonly fields: readonly (readonly [string, string])[];
  readonly body: Buffer;
}

/** Sends one raw request on a connection of its own and reads its answer. */
export function sendRaw(url: URL, request: Buffer): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: url.hostname, port: Number(url.port) });
    let buffer: Buffer = Buffer.alloc(0);
    socket.on('error', reject);
    socket.on('connect', () => socket.write(request));
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      const end = buffer.indexOf('\r\n\r\n');
      if (end === -1) return;
      const lines = buffer.subarray(0, end).toString('latin1').split('\r\n');
      const status = Number((lines[0] ?? '').slice(9, 12));
      const reason = (lines[0] ?? '').slice(13);
      const headers = new Map<string, string>();
      const fields: [string, string][] = [];
      for (const line of lines.slice(1)) {
        const colon = line.indexOf(':');
        const name = line.slice(0, colon).trim();
        const value = line.slice(colon + 1).trim();
        headers.set(name.toLowerCase(), value);
        fields.push([name, value]);
      }
      const length = status === 204 || status === 304 ? 0 : Number(headers.get('content-length') ?? 0);
      if (buffer.length < end + 4 + length) return;
      socket.destroy();
      resolve({ status, reason, headers, fields, body: buffer.subarray(end + 4, end + 4 + length) });
    });
  });
}
