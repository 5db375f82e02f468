// Benchmark (README, Performance): memory under slow readers (CONVENTIONS.md#connections). A resapi
// process holds 1,000 items of about 4.3 KB; SOCKETS raw loopback sockets each ask for a distinct
// page of all of them (`Prefer: maxpagesize=1000`, a filter of its own, so no page comes from the
// cache: about 4 MiB each) and never read. Meanwhile one keep-alive client asks /$health every
// PROBE_GAP_MS and the server's resident memory is read from /proc every SAMPLE_MS. Printed: how
// many pages were answered and how many refused (503), peak resident memory against the cap plus
// 200 MB, /$health latency (p50, p99, max) while the sockets hang, and what is resident and queued
// once the stalled responses were abandoned after `limits.responseStallMs` (STALL_MS here, to keep
// the run short). Figures are printed, never asserted; every wait has a deadline.
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { eventually } from '../support/eventually.js';
import { parseExposition, type MetricFamily } from '../support/prometheus.js';
import { withTempDir } from '../support/temp-dir.js';
import type { Report } from './measure.js';
import { spawnResapi, type Child } from './servers.js';

const MIB = 1024 * 1024;
const ITEMS = 1000;
const ITEM_TEXT = 'x'.repeat(4300);
/** The default of limits.maxQueuedResponseBytes. */
const CAP_BYTES = 256 * MIB;
const STALL_MS = 10_000;
const PROBE_GAP_MS = 20;
const SAMPLE_MS = 100;
/** How long the sockets hang before the figures are taken (the stall then frees them). */
const HOLD_MS = 5_000;
const DEADLINE_MS = 120_000;
/** Pages read in full once the sockets were abandoned, before the last resident figure. */
const AFTER_READS = 20;

export async function benchSlowReaders(report: Report, sockets: number): Promise<void> {
  await withTempDir('bench-slow-readers', async (folder) => {
    const seed = join(folder, 'seed');
    mkdirSync(seed);
    const items = Array.from({ length: ITEMS }, (_, n) => ({ id: `i${String(n).padStart(4, '0')}`, n, text: ITEM_TEXT }));
    writeFileSync(join(seed, 'items.json'), JSON.stringify(items));
    const config = join(folder, 'config.json');
    writeFileSync(config, JSON.stringify({ limits: { maxQueuedResponseBytes: CAP_BYTES, responseStallMs: STALL_MS } }));
    const server = await spawnResapi(['--memory', '--seed', seed, '--config', config]);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const open: Socket[] = [];
    try {
      const pid = server.process.pid as number;
      const baseline = residentBytes(pid);
      const pageBytes = (await get(agent, server, '/items', { Prefer: 'maxpagesize=1000' })).length;
      const latencies: number[] = [];
      let peak = baseline;
      let measuring = true;
      const probing = (async () => {
        while (measuring) {
          const started = process.hrtime.bigint();
          await get(agent, server, '/$health');
          latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
          await pause(PROBE_GAP_MS);
        }
      })();
      const sampling = setInterval(() => {
        peak = Math.max(peak, residentBytes(pid));
      }, SAMPLE_MS);
      try {
        for (let n = 0; n < sockets; n++) open.push(await nonReadingGet(server, n));
        await eventually(`all ${sockets} page requests answered`, async () => {
          const answered = pageAnswers(await scrape(agent, server));
          return answered.ok + answered.refused >= sockets;
        }, { deadlineMs: DEADLINE_MS });
        await pause(HOLD_MS);
      } finally {
        clearInterval(sampling);
        measuring = false;
        await probing;
      }
      const held = pageAnswers(await scrape(agent, server));
      await eventually('the stalled responses to be abandoned', async () => {
        return gauge(await scrape(agent, server), 'resapi_http_queued_response_bytes') === 0;
      }, { deadlineMs: STALL_MS * 3 + DEADLINE_MS });
      // Freed buffers leave the resident set when the collector next runs, which an idle server may
      // put off: a few ordinary pages read in full give it the allocations that prompt it.
      for (let n = 0; n < AFTER_READS; n++) await get(agent, server, `/items?$filter=${encodeURIComponent(`n ne -${n + 1}`)}`, { Prefer: 'maxpagesize=1000' });
      const after = await scrape(agent, server);
      latencies.sort((a, b) => a - b);
      const mb = (bytes: number): string => (bytes / MIB).toFixed(0);
      report.row('slow readers', `${sockets} non-reading sockets, ${mb(pageBytes)} MiB pages, cap ${mb(CAP_BYTES)} MiB`, {
        'pages sent': held.ok,
        'refused 503': held.refused,
        'baseline MiB': mb(baseline),
        'peak MiB': mb(peak),
        'cap + 200 MB, MiB': mb(baseline + CAP_BYTES + 200 * 1e6),
        '/$health p50 ms': percentile(latencies, 0.5).toFixed(1),
        '/$health p99 ms': percentile(latencies, 0.99).toFixed(1),
        '/$health max ms': (latencies[latencies.length - 1] ?? 0).toFixed(1),
        abandoned: gauge(after, 'resapi_http_responses_abandoned_total'),
        'resident after MiB': mb(residentBytes(pid)),
      });
    } finally {
      for (const socket of open) socket.destroy();
      agent.destroy();
      await server.stop();
    }
  });
}

/** A GET of a distinct ~4 MiB page on a raw socket that never reads the answer. */
async function nonReadingGet(server: Child, n: number): Promise<Socket> {
  const socket = connect({ host: server.url.hostname, port: Number(server.url.port) });
  socket.on('error', () => {});
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  const filter = encodeURIComponent(`n ne ${n}`);
  socket.write(
    `GET /items?$filter=${filter} HTTP/1.1\r\nHost: ${server.url.host}\r\nAccept: application/json\r\n` +
      'Prefer: maxpagesize=1000\r\n\r\n',
  );
  return socket;
}

function get(agent: Agent, server: Child, path: string, headers: Record<string, string> = {}): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, server.url), { agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve(Buffer.concat(chunks)));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

async function scrape(agent: Agent, server: Child): Promise<Map<string, MetricFamily>> {
  return parseExposition((await get(agent, server, '/$metrics')).toString('utf8'));
}

/** GETs of the collection answered so far: with a page (200) and refused (503). */
function pageAnswers(families: Map<string, MetricFamily>): { ok: number; refused: number } {
  const samples = families.get('resapi_http_requests_total')?.samples ?? [];
  const count = (status: string): number =>
    samples
      .filter((sample) => sample.labels['route'] === 'collection' && sample.labels['status'] === status)
      .reduce((total, sample) => total + sample.value, 0);
  // The first, reading GET of /items is one of the 200s.
  return { ok: count('200') - 1, refused: count('503') };
}

function gauge(families: Map<string, MetricFamily>, name: string): number {
  return families.get(name)?.samples[0]?.value ?? Number.NaN;
}

/** Current resident set size of a process, from Linux /proc (VmRSS). */
function residentBytes(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(match?.[1] ?? 0) * 1024;
}

function percentile(sorted: readonly number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? 0;
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
