// Benchmark (README, Performance): how soon the job queue serves a third kind of work while two others
// hang (CONVENTIONS.md#webhook-handlers, CONVENTIONS.md#deliveries). A server on a data dir, at the
// default four workers: two event kinds whose handlers never return, with HUNG_EACH events each
// waiting, then one event of a third kind, timed from its POST until its handler runs; and two
// subscriptions whose receivers hold every request, HUNG_EACH deliveries each waiting, then a change
// also delivered to a healthy receiver, timed from its PUT until that receiver has it. Each is
// measured with nothing hung first, for comparison. Figures are printed, never asserted; every wait
// is bounded by LIMIT_MS.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { start, type ResapiServer } from '../../lib/index.js';
import type { JsonObject } from '../../lib/json.js';
import { silentLogger } from '../../lib/log.js';
import { webhookSignature } from '../../lib/protocol/signature.js';
import { request } from '../support/http.js';
import { withTempDir } from '../support/temp-dir.js';
import type { Report } from './measure.js';

const SECRET = 'bench-head-of-line-secret';
const HUNG_EACH = 8;
const ROUNDS = 5;
const LIMIT_MS = 30_000;
/** Long enough that nothing hung times out while the section runs. */
const NEVER_MS = 600_000;

/** Resolves `arrived(id)` waiters as ids arrive; remembers when each did. */
class Arrivals {
  private readonly waiters = new Map<string, (at: number) => void>();

  arrived(id: string): void {
    const at = performance.now();
    this.waiters.get(id)?.(at);
    this.waiters.delete(id);
  }

  /** The time `id` arrives, once it has (or a failure after LIMIT_MS). */
  when(id: string): Promise<number> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${id} was not served within ${LIMIT_MS} ms`)), LIMIT_MS);
      this.waiters.set(id, (at) => {
        clearTimeout(timer);
        resolve(at);
      });
    });
  }
}

export async function benchHeadOfLine(report: Report): Promise<void> {
  await benchHandlers(report);
  await benchDeliveries(report);
}

async function benchHandlers(report: Report): Promise<void> {
  await withTempDir('bench-head-of-line', async (dir) => {
    const served = new Arrivals();
    let openGates: () => void = () => {};
    const hung = new Promise<void>((resolve) => (openGates = resolve));
    const server = await start({
      port: 0,
      dataDir: dir,
      log: silentLogger,
      webhookSecrets: [SECRET],
      webhooks: { handlerTimeoutMs: NEVER_MS },
      webhookHandlers: {
        'hung.a': () => hung,
        'hung.b': () => hung,
        'quick.c': (event: JsonObject) => served.arrived(String(event['id'])),
      },
    });
    try {
      const firstRun = async (id: string): Promise<number> => {
        const arrival = served.when(id);
        const sent = performance.now();
        await deliver(server, id, 'quick.c');
        return (await arrival) - sent;
      };
      const idle = await rounds((round) => firstRun(`idle-${round}`));
      for (const kind of ['hung.a', 'hung.b']) {
        for (let n = 0; n < HUNG_EACH; n++) await deliver(server, `${kind}-${n}`, kind);
      }
      const blocked = await rounds((round) => firstRun(`third-${round}`));
      report.row('head-of-line', 'handlers, a third kind: nothing else running', summary(idle));
      report.row('head-of-line', `handlers, a third kind: two kinds hung, ${HUNG_EACH} events each`, summary(blocked));
    } finally {
      openGates();
      await server.close();
    }
  });
}

async function benchDeliveries(report: Report): Promise<void> {
  const received = new Arrivals();
  const healthy = await listen((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      res.end();
      const event = JSON.parse(Buffer.concat(chunks).toString()) as { data: { id: string } };
      received.arrived(event.data.id);
    });
  });
  const held: ServerResponse[] = [];
  const stuck = [await listen((_req, res) => held.push(res)), await listen((_req, res) => held.push(res))];
  try {
    await withTempDir('bench-head-of-line', async (dir) => {
      const server = await start({ port: 0, dataDir: dir, log: silentLogger, outbox: { timeoutMs: NEVER_MS } });
      try {
        await subscribe(server, 'healthy', healthy, 'third.*');
        const delivered = async (collection: string, id: string): Promise<number> => {
          const arrival = received.when(id);
          const sent = performance.now();
          await put(server, `/${collection}/${id}`);
          return (await arrival) - sent;
        };
        const idle = await rounds((round) => delivered('third', `idle-${round}`));
        // From here on, every change of `third` goes to the two stuck receivers as well.
        for (const [n, receiver] of stuck.entries()) await subscribe(server, `stuck-${n}`, receiver, 'third.*');
        for (let n = 0; n < HUNG_EACH; n++) await put(server, `/third/backlog-${n}`);
        const blocked = await rounds((round) => delivered('third', `third-${round}`));
        report.row('head-of-line', 'deliveries, a third receiver: nothing else running', summary(idle));
        report.row('head-of-line', `deliveries, a third receiver: two receivers hung, ${HUNG_EACH} deliveries each`, summary(blocked));
      } finally {
        for (const res of held.splice(0)) res.destroy();
        await server.close();
      }
    });
  } finally {
    for (const receiver of [healthy, ...stuck]) {
      receiver.closeAllConnections();
      await new Promise((resolve) => receiver.close(resolve));
    }
  }
}

async function rounds(measure: (round: number) => Promise<number>): Promise<number[]> {
  const times: number[] = [];
  for (let round = 0; round < ROUNDS; round++) times.push(await measure(round));
  return times;
}

function summary(times: readonly number[]): Record<string, string> {
  const sorted = [...times].sort((a, b) => a - b);
  return {
    'served after ms (median)': (sorted[Math.floor(sorted.length / 2)] as number).toFixed(1),
    'max ms': (sorted.at(-1) as number).toFixed(1),
  };
}

async function deliver(server: ResapiServer, id: string, event: string): Promise<void> {
  const body = JSON.stringify({ id, event });
  const headers = { 'Content-Type': 'application/json', 'X-Signature': webhookSignature(body, SECRET) };
  const res = await request(server.url, '/webhooks', { method: 'POST', headers, body });
  if (res.status !== 200) throw new Error(`POST /webhooks answered ${res.status}: ${res.text}`);
}

async function put(server: ResapiServer, path: string): Promise<void> {
  const res = await request(server.url, path, { method: 'PUT', headers: { 'Content-Type': 'application/json', 'If-None-Match': '*' }, body: '{"bench":true}' });
  if (res.status !== 201) throw new Error(`PUT ${path} answered ${res.status}: ${res.text}`);
}

async function subscribe(server: ResapiServer, id: string, receiver: Server, events: string): Promise<void> {
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  const body = JSON.stringify({ url, events: [events], secret: SECRET });
  const res = await request(server.url, `/$subscriptions/${id}`, { method: 'PUT', headers: { 'Content-Type': 'application/json', 'If-None-Match': '*' }, body });
  if (res.status !== 201) throw new Error(`PUT /$subscriptions/${id} answered ${res.status}: ${res.text}`);
}

async function listen(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<Server> {
  const server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}
