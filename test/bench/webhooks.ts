// Benchmark (README, Benchmarks): webhooks accepted per second, and the p50/p99 latency of one
// delivery, at 32 concurrent senders over keep-alive, against `resapi serve` on a data dir (every
// acceptance fsynced before its 200, by group commit: CONTRACT §7, seed "Receiving rules": "Durably
// record or enqueue the event", then "Answer 2xx"), the same with --memory, and a bare node:http
// server that reads the body and answers 200 {"status":"accepted"} (the floor any receiver pays).
// Both resapi servers run a no-op `*` handler, as a deployment would, so the cost of processing
// each event (one more commit) is part of what they do while accepting. Every delivery is a distinct
// event, signed before the clock starts. Figures are printed, never asserted; the ratios are what
// to compare.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { webhookSignature } from '../../lib/protocol/signature.js';
import type { Report } from './measure.js';

const BIN = fileURLToPath(new URL('../../../bin/resapi.js', import.meta.url));
const SECRET = 'benchmark-secret';
const SENDERS = 32;
/** Deliveries before the clock starts (JIT, connections), then the timed ones. */
const WARM_UP = 2_000;
const TIMED = 20_000;
const ACCEPTED = '{"status":"accepted"}';

const BARE_SERVER = `
const http = require('node:http');
const reply = Buffer.from('${ACCEPTED}');
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    Buffer.concat(chunks);
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': reply.length });
    res.end(reply);
  });
});
server.listen(0, '127.0.0.1', () => console.log('listening on http://127.0.0.1:' + server.address().port));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
`;

const NO_OP_HANDLERS = `export default { '*': async () => {} };\n`;

interface Delivery {
  readonly body: Buffer;
  readonly signature: string;
}

interface Measured {
  readonly perSecond: number;
  readonly p50: number;
  readonly p99: number;
}

export async function benchWebhooks(report: Report): Promise<void> {
  const folder = mkdtempSync(join(tmpdir(), 'resapi-bench-webhooks-'));
  try {
    const handlers = join(folder, 'handlers.mjs');
    writeFileSync(handlers, NO_OP_HANDLERS);
    const warmUp = deliveries('warm', WARM_UP);
    const timed = deliveries('timed', TIMED);
    const env = { ...process.env, RESAPI_WEBHOOK_SECRETS: SECRET };
    const bare = await measure(spawn(process.execPath, ['-e', BARE_SERVER], { stdio: ['ignore', 'pipe', 'inherit'] }), warmUp, timed);
    const memory = await measure(spawn(process.execPath, [BIN, 'serve', '--port', '0', '--memory', '--handlers', handlers], { env, stdio: ['ignore', 'pipe', 'ignore'] }), warmUp, timed);
    const durable = await measure(spawn(process.execPath, [BIN, 'serve', '--port', '0', '--data-dir', join(folder, 'data'), '--handlers', handlers], { env, stdio: ['ignore', 'pipe', 'ignore'] }), warmUp, timed);
    report.row('webhooks', `${SENDERS} concurrent senders, ${TIMED.toLocaleString('en')} distinct events`, {
      'bare node:http /s': bare.perSecond.toFixed(0),
      'bare p50/p99 ms': latencies(bare),
      'resapi --memory /s': memory.perSecond.toFixed(0),
      'memory p50/p99 ms': latencies(memory),
      'resapi durable /s': durable.perSecond.toFixed(0),
      'durable p50/p99 ms': latencies(durable),
      'durable / bare': (durable.perSecond / bare.perSecond).toFixed(2),
      'memory / bare': (memory.perSecond / bare.perSecond).toFixed(2),
    });
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

/** `count` distinct events of about 150 bytes, signed now so that signing costs nothing timed. */
function deliveries(prefix: string, count: number): Delivery[] {
  return Array.from({ length: count }, (_, n) => {
    const body = Buffer.from(JSON.stringify({ id: `${prefix}-${n}`, event: 'order.created', data: { order: `o-${n}`, total: 129.9, currency: 'EUR', lines: 3 } }));
    return { body, signature: webhookSignature(body, SECRET) };
  });
}

/** Sends the warm-up events, then the timed ones, from SENDERS keep-alive connections; stops the server. */
async function measure(child: ChildProcess, warmUp: readonly Delivery[], timed: readonly Delivery[]): Promise<Measured> {
  const url = await listening(child);
  const agent = new Agent({ keepAlive: true, maxSockets: SENDERS });
  try {
    await sendAll(agent, url, warmUp);
    const started = process.hrtime.bigint();
    const times = await sendAll(agent, url, timed);
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    times.sort((a, b) => a - b);
    return { perSecond: timed.length / seconds, p50: percentile(times, 0.5), p99: percentile(times, 0.99) };
  } finally {
    agent.destroy();
    child.kill('SIGTERM');
    await once(child, 'exit');
  }
}

/** Every delivery once, SENDERS at a time; the latency of each in ms. Anything but "accepted" aborts the run. */
async function sendAll(agent: Agent, base: URL, events: readonly Delivery[]): Promise<number[]> {
  const times: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: SENDERS }, async () => {
      while (next < events.length) {
        const event = events[next++] as Delivery;
        const sent = process.hrtime.bigint();
        const answer = await post(agent, base, event);
        times.push(Number(process.hrtime.bigint() - sent) / 1e6);
        if (answer.status !== 200 || answer.text !== ACCEPTED) throw new Error(`a delivery was answered ${answer.status} ${answer.text}`);
      }
    }),
  );
  return times;
}

function post(agent: Agent, base: URL, event: Delivery): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const headers = { 'Content-Type': 'application/json', 'Content-Length': event.body.length, 'X-Signature': event.signature };
    const req = request({ host: base.hostname, port: base.port, path: '/webhooks', method: 'POST', agent, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(event.body);
  });
}

function percentile(sorted: readonly number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))] as number;
}

function latencies(measured: Measured): string {
  return `${measured.p50.toFixed(2)} / ${measured.p99.toFixed(2)}`;
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
