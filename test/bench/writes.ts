// Benchmark (README, Benchmarks): durable writes per second over HTTP at 1, 8
// and 64 concurrent clients, against the same server with --memory and against a bare node:http
// server that only reads the body and answers 201 (the floor any framework pays). Every figure comes
// from one run on one machine; the ratios are what to compare.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Report } from './measure.js';

const BIN = fileURLToPath(new URL('../../../bin/resapi.js', import.meta.url));
const DURATION_MS = 3000;
const BODY = JSON.stringify({ name: 'benchmark item', price: 12.5, currency: 'EUR', tags: ['a', 'b'], note: 'x'.repeat(120) });

const BARE_SERVER = `
const http = require('node:http');
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    res.writeHead(201, { 'Content-Type': 'application/json', 'Content-Length': body.length });
    res.end(body);
  });
});
server.listen(0, '127.0.0.1', () => console.log('listening on http://127.0.0.1:' + server.address().port));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
`;

export async function benchWrites(report: Report, concurrencies: readonly number[]): Promise<void> {
  for (const clients of concurrencies) {
    const bare = await measure(spawn(process.execPath, ['-e', BARE_SERVER], { stdio: ['ignore', 'pipe', 'inherit'] }), clients);
    const memory = await measure(spawn(process.execPath, [BIN, 'serve', '--port', '0', '--memory'], { stdio: ['ignore', 'pipe', 'ignore'] }), clients);
    const dir = mkdtempSync(join(tmpdir(), 'resapi-bench-'));
    const durable = await measure(spawn(process.execPath, [BIN, 'serve', '--port', '0', '--data-dir', dir], { stdio: ['ignore', 'pipe', 'ignore'] }), clients);
    rmSync(dir, { recursive: true, force: true });
    report.row('writes', `${clients} concurrent client${clients === 1 ? '' : 's'}`, {
      'bare node:http /s': bare.toFixed(0),
      'resapi --memory /s': memory.toFixed(0),
      'resapi durable /s': durable.toFixed(0),
      'durable / memory': (durable / memory).toFixed(2),
      'memory / bare': (memory / bare).toFixed(2),
    });
  }
}

/** PUT-creates as fast as `clients` keep-alive connections allow for DURATION_MS; returns writes/s. */
async function measure(child: ChildProcess, clients: number): Promise<number> {
  const url = await listening(child);
  const agent = new Agent({ keepAlive: true, maxSockets: clients });
  const deadline = Date.now() + DURATION_MS;
  let done = 0;
  const started = Date.now();
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      for (let n = 0; Date.now() < deadline; n++) {
        const status = await put(agent, url, `/bench/c${client}-${n}`);
        if (status === 201) done++;
      }
    }),
  );
  const elapsed = (Date.now() - started) / 1000;
  agent.destroy();
  child.kill('SIGTERM');
  await once(child, 'exit');
  return done / elapsed;
}

function put(agent: Agent, base: URL, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: base.hostname, port: base.port, path, method: 'PUT', agent, headers: { 'Content-Type': 'application/json', 'If-None-Match': '*', 'Content-Length': Buffer.byteLength(BODY) } });
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(BODY);
  });
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
