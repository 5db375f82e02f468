// End to end, two real processes: the webhook sender of server A delivering to the receiver of server
// B (CONVENTIONS.md#sending-webhooks, CONVENTIONS.md#receiving-webhooks; README, Receiving webhooks). A (a
// data dir, a short retry schedule) has one subscription to B's /webhooks; B (a data dir) runs a
// --handlers module that appends each event it handles to a file, fsynced before it returns.
// Between them a small HTTP proxy written here keeps B's address fixed while B comes and goes, and
// plays the faults: B stopped and restarted, B answering 503 for a stretch, B slower than A's
// timeout (so A sends again what B has already accepted), and A killed with kill -9 in the middle
// of a stream of changes.
//
// Each fault lasts until it is seen to happen (a handler of B caught mid-run by the SIGTERM, forwards
// refused, 503s answered, events sent again after B accepted them, deliveries held at the kill),
// never for a guessed time. Once A's outbox and B's inbox have settled: no delivery is dead, each
// event id ran B's handler exactly once, the events B handled are exactly those A's /$outbox lists,
// and every change A acknowledged (created, replaced by PUT and by a bulk row, deleted, restored)
// has exactly one event, found by its kind, item and the unique `rev` each change writes.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { killIfRunning, startBinary, type RunningServer } from '../support/binary.js';
import { eventually } from '../support/eventually.js';
import { create, JSON_HEADERS, request, type TestResponse } from '../support/http.js';
import { walkPages } from '../support/pages.js';
import { mulberry32, replayNote, testSeed } from '../support/random.js';
import { tempDirsForSuite } from '../support/temp-dir.js';

const SECRET = 'two-servers-test-secret';
const SUBSCRIPTION = 'to-b';
/** A's outbox.timeoutMs: the slow stretch holds B's answers past it. */
const TIMEOUT_MS = 300;
const A_CONFIG = { outbox: { workers: 8, timeoutMs: TIMEOUT_MS, retry: { baseMs: 20, factor: 2, capMs: 200, attempts: 200 } } };
/** How long the slow proxy holds a request or an answer: well past A's timeout. */
const SLOW_MS = 2 * TIMEOUT_MS;
/** Concurrent clients changing items on A. */
const CLIENTS = 3;
/** Changes allowed per phase of a scenario (before, during and after a fault). */
const PHASE = 40;
/** How long B's handler goes on after writing its line, in the scenario that stops B. */
const HANDLER_WORK_MS = 100;
/** Small pages, so that reading a listing (/$outbox, /$inbox) whole follows @nextLink several times. */
const SMALL_PAGES = { Prefer: 'maxpagesize=25' };

// One seed for the file, in every failure message; each test draws its phases from a PRNG of its
// own and the proxy its choices from another, so a test replays alone as well as in the file.
const SEED = testSeed();

const servers: RunningServer[] = [];
const proxies: FaultyProxy[] = [];
after(async () => {
  for (const server of servers) killIfRunning(server.child);
  for (const proxy of proxies) await proxy.close();
});
// Registered after the hook above, so the folders go once no server uses them any more.
const tempDir = tempDirsForSuite('two-servers');

interface HandlerRun {
  readonly id: string;
  readonly event: string;
  readonly item: string;
  readonly rev: string;
}

/**
 * B's --handlers module: each run appends one JSON line (the event id, its kind, the item and the
 * `rev` its resource carries) and fsyncs it, so every run is on disk. Then, when `workMs` is given,
 * it goes on working that long before it returns: a SIGTERM can then find a handler that has done
 * its work but not yet returned, which the shutdown must wait for rather than run again later.
 */
function handlersModule(log: string, workMs: number): string {
  return `import { open } from 'node:fs/promises';
import { setTimeout as work } from 'node:timers/promises';
export default {
  '*': async (event) => {
    const line = JSON.stringify({ id: event.id, event: event.event, item: event.data?.id, rev: event.data?.resource?.rev }) + '\\n';
    const file = await open(${JSON.stringify(log)}, 'a');
    try {
      await file.write(line);
      await file.sync();
    } finally {
      await file.close();
    }
    if (${workMs} > 0) await work(${workMs});
  },
};
`;
}

type ProxyMode = 'forward' | 'unavailable' | 'slow' | 'hold';

/**
 * An HTTP proxy in front of B: the subscription's URL stays the same while B restarts on another
 * port. It decides per request (A keeps its connections alive, so a TCP proxy could not change its
 * behaviour mid-connection): forward; answer 503 itself; hold, forward at once and hold B's answer
 * for SLOW_MS, past A's timeout; or slow, at random either that or hold the request for SLOW_MS and
 * forward it late. When B cannot be reached it drops A's connection, as a stopped B would.
 */
class FaultyProxy {
  mode: ProxyMode = 'forward';
  /** B's base URL. */
  target: string;
  url = '';
  readonly counts = { requests: 0, unreachable: 0, unavailable: 0, slowed: 0, accepted: 0, duplicate: 0, otherAnswers: 0, resent: 0 };
  /** Event ids B has answered 200 for: a request for one of them is A sending again what B has. */
  private readonly answered = new Set<string>();
  /** Forwards under way, and requests or answers held: what can still reach B or A. */
  busy = 0;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly server: Server;

  constructor(target: string, private readonly fraction: () => number) {
    this.target = target;
    this.server = createServer((req, res) => this.handle(req, res));
  }

  async listen(): Promise<void> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    if (!this.server.listening) return;
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    res.on('error', () => undefined);
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      this.counts.requests++;
      const body = Buffer.concat(chunks);
      if (this.answered.has(eventIdOf(body))) this.counts.resent++;
      if (this.mode === 'unavailable') {
        this.counts.unavailable++;
        // As B's own 503 would: Retry-After, which A clamps to its schedule's cap.
        res.writeHead(503, { 'Retry-After': '1', 'Content-Type': 'application/problem+json' });
        res.end('{"type":"about:blank","title":"Service Unavailable","status":503}');
        return;
      }
      if (this.mode === 'slow' || this.mode === 'hold') {
        this.counts.slowed++;
        if (this.mode === 'slow' && this.fraction() < 0.5) {
          this.busy++;
          this.later(SLOW_MS, () => {
            this.busy--;
            this.forward(req.url ?? '/', req.headers, body, res, 0);
          });
        } else this.forward(req.url ?? '/', req.headers, body, res, SLOW_MS);
        return;
      }
      this.forward(req.url ?? '/', req.headers, body, res, 0);
    });
  }

  private forward(path: string, headers: IncomingHttpHeaders, body: Buffer, res: ServerResponse, holdMs: number): void {
    const target = new URL(this.target);
    this.busy++;
    let settled = false;
    const settle = (): void => {
      if (settled) return;
      settled = true;
      this.busy--;
    };
    const copied: Record<string, string> = { 'Content-Length': String(body.length) };
    for (const name of ['content-type', 'x-signature', 'x-timestamp', 'user-agent']) {
      const value = headers[name];
      if (typeof value === 'string') copied[name] = value;
    }
    const out = httpRequest({ host: target.hostname, port: target.port, path, method: 'POST', agent: false, headers: copied });
    out.on('response', (answer) => {
      const parts: Buffer[] = [];
      answer.on('data', (chunk: Buffer) => parts.push(chunk));
      answer.on('error', () => {
        settle();
        res.destroy();
      });
      answer.on('end', () => {
        const text = Buffer.concat(parts).toString('utf8');
        const status = answer.statusCode ?? 0;
        if (status === 200) this.answered.add(eventIdOf(body));
        if (status === 200 && text === '{"status":"accepted"}') this.counts.accepted++;
        else if (status === 200 && text === '{"status":"duplicate"}') this.counts.duplicate++;
        else this.counts.otherAnswers++;
        const reply = (): void => {
          settle();
          if (res.destroyed) return;
          const passed: Record<string, string> = {};
          for (const name of ['content-type', 'retry-after']) {
            const value = answer.headers[name];
            if (typeof value === 'string') passed[name] = value;
          }
          res.writeHead(status, passed);
          res.end(text);
        };
        if (holdMs > 0) this.later(holdMs, reply);
        else reply();
      });
    });
    out.on('error', () => {
      // B is not there (stopped, or restarting): A sees its connection dropped and retries.
      this.counts.unreachable++;
      settle();
      res.destroy();
    });
    out.end(body);
  }

  private later(ms: number, fn: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      fn();
    }, ms);
    this.timers.add(timer);
  }
}

function eventIdOf(body: Buffer): string {
  return String((JSON.parse(body.toString('utf8')) as { id: unknown }).id);
}

/**
 * Clients changing items on A, each its own items, through every kind of change an event announces:
 * create (If-None-Match: *), replace (If-Match), a bulk CSV row, delete, undo the delete; and a
 * write to a collection nobody subscribes to, which must announce nothing. Every change writes a
 * unique `rev`, so its event is found by `<kind> <item> <rev>`. The clients run on a budget that
 * the scenario grants phase by phase, so each phase makes a known number of changes.
 */
class Workload {
  /** Changes answered 2xx, as `<event kind> <item id> <rev>`. */
  readonly acknowledged = new Set<string>();
  /** Changes sent, answered or not (a kill leaves some unanswered that A may have committed). */
  readonly attempted = new Set<string>();
  /** Answers no change should get. */
  readonly unexpected: string[] = [];
  /** Requests that failed on the network (only a killed A explains those). */
  readonly networkErrors: string[] = [];
  /** Requests that have run to an answer or an error. */
  finished = 0;
  private allowed = 0;
  private issued = 0;
  private stopped = false;
  private wakers: (() => void)[] = [];
  private readonly clients: Promise<void>[];

  constructor(private readonly base: string, private readonly prefix: string) {
    this.clients = Array.from({ length: CLIENTS }, (_, client) => this.run(client));
  }

  /** Allows `count` more requests. */
  grant(count: number): void {
    this.allowed += count;
    for (const wake of this.wakers.splice(0)) wake();
  }

  /** How many requests the budget has allowed so far. */
  get granted(): number {
    return this.allowed;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const wake of this.wakers.splice(0)) wake();
    await Promise.all(this.clients);
  }

  private async permit(): Promise<boolean> {
    while (!this.stopped && this.issued >= this.allowed) await new Promise<void>((resolve) => this.wakers.push(resolve));
    if (this.stopped) return false;
    this.issued++;
    return true;
  }

  private async run(client: number): Promise<void> {
    for (let n = 0; ; n++) {
      const id = `${this.prefix}-c${client}-${n}`;
      const rev = (step: number): string => `${id}.${step}`;
      const path = `/items/${id}`;
      const steps: { key?: string; send: () => Promise<TestResponse>; ok: (res: TestResponse) => boolean }[] = [
        { key: `items.created ${id} ${rev(1)}`, send: () => create(this.base, path, { rev: rev(1), client, n }), ok: (res) => res.status === 201 },
        {
          key: `items.replaced ${id} ${rev(2)}`,
          send: async () => request(this.base, path, { method: 'PUT', headers: { ...JSON_HEADERS, 'If-Match': await this.etagOf(path) }, body: JSON.stringify({ rev: rev(2), client, n }) }),
          ok: (res) => res.status === 200,
        },
        {
          key: `items.replaced ${id} ${rev(3)}`,
          send: () => request(this.base, '/items/$bulk', { method: 'PUT', headers: { 'Content-Type': 'text/csv' }, body: `id,currentRev,newRev\r\n${id},${rev(2)},${rev(3)}\r\n` }),
          ok: (res) => res.status === 200 && (res.json() as { applied: number }).applied === 1,
        },
        // A delete's event carries what was deleted, a restore's what came back: both rev 3.
        { key: `items.deleted ${id} ${rev(3)}`, send: () => request(this.base, path, { method: 'DELETE' }), ok: (res) => res.status === 204 },
        { key: `items.restored ${id} ${rev(3)}`, send: () => request(this.base, `${path}/$undoDelete`, { method: 'PUT' }), ok: (res) => res.status === 200 },
        { send: () => create(this.base, `/others/${id}`, { rev: rev(1) }), ok: (res) => res.status === 201 },
      ];
      for (const step of steps) {
        if (!(await this.permit())) return;
        if (step.key !== undefined) this.attempted.add(step.key);
        let res: TestResponse;
        try {
          res = await step.send();
        } catch (error) {
          this.networkErrors.push(`${step.key ?? `others ${id}`}: ${error instanceof Error ? error.message : String(error)}`);
          return;
        } finally {
          this.finished++;
        }
        if (!step.ok(res)) {
          this.unexpected.push(`${step.key ?? `others ${id}`}: ${res.status} ${res.text.slice(0, 200)}`);
          return;
        }
        if (step.key !== undefined) this.acknowledged.add(step.key);
      }
    }
  }

  private async etagOf(path: string): Promise<string> {
    const res = await request(this.base, path);
    if (res.status !== 200 || typeof res.headers.etag !== 'string') throw new Error(`GET ${path}: ${res.status}`);
    return res.headers.etag;
  }
}

interface Pair {
  readonly aArgs: readonly string[];
  readonly bArgs: readonly string[];
  readonly log: string;
  readonly proxy: FaultyProxy;
  a: RunningServer;
  b: RunningServer;
}

async function startServer(args: readonly string[], env: Readonly<Record<string, string>> = {}): Promise<RunningServer> {
  const server = await startBinary(args, env);
  servers.push(server);
  return server;
}

function startB(pair: { readonly bArgs: readonly string[] }): Promise<RunningServer> {
  return startServer(pair.bArgs, { RESAPI_WEBHOOK_SECRETS: SECRET });
}

/** A and B on their own data dirs, the proxy in front of B, and A subscribed to B through it. */
async function startPair(context: string, handlerWorkMs = 0): Promise<Pair> {
  const folder = tempDir();
  const log = join(folder, 'handled.jsonl');
  const handlers = join(folder, 'handlers.mjs');
  writeFileSync(handlers, handlersModule(log, handlerWorkMs));
  writeFileSync(log, '');
  const config = join(folder, 'a-config.json');
  writeFileSync(config, JSON.stringify(A_CONFIG));
  const aArgs = ['--data-dir', join(folder, 'a'), '--config', config];
  const bArgs = ['--data-dir', join(folder, 'b'), '--handlers', handlers];
  const b = await startB({ bArgs });
  const proxy = new FaultyProxy(b.url, mulberry32(SEED + 1));
  proxies.push(proxy);
  await proxy.listen();
  // An empty variable, so a secret in the environment of the test run cannot reach A's receiver.
  const a = await startServer(aArgs, { RESAPI_WEBHOOK_SECRETS: '' });
  const body = JSON.stringify({ url: `${proxy.url}/webhooks`, events: ['items.*'], secret: SECRET });
  const subscribed = await request(a.url, `/$subscriptions/${SUBSCRIPTION}`, { method: 'PUT', headers: { ...JSON_HEADERS, 'If-None-Match': '*' }, body });
  assert.equal(subscribed.status, 201, `${subscribed.text} ${context}`);
  return { aArgs, bArgs, log, proxy, a, b };
}

/** Waits until every change granted so far has been answered (or has failed). */
async function phaseDone(work: Workload, context: string): Promise<void> {
  const answered = (): boolean => work.finished >= work.granted || work.unexpected.length + work.networkErrors.length > 0;
  await eventually('the granted changes to be answered', answered, { detail: () => `${work.finished} of ${work.granted} answered`, context });
}

/** Has one of B's handlers written its line for an event B has not yet recorded as processed? */
async function handlerMidRun(pair: Pair): Promise<boolean> {
  const res = await request(pair.b.url, "/$inbox?$filter=status eq 'accepted'", { headers: { Prefer: 'maxpagesize=1000' } });
  if (res.status !== 200) return false;
  const accepted = new Set((res.json() as { value: { id: string }[] }).value.map((item) => item.id));
  return handlerRuns(pair.log).some((run) => accepted.has(run.id));
}

async function firstOf(base: string, path: string, context: string): Promise<Record<string, unknown> | undefined> {
  const res = await request(base, path);
  assert.equal(res.status, 200, `GET ${path}: ${res.text} ${context}`);
  return (res.json() as { value: Record<string, unknown>[] }).value[0];
}

/**
 * Waits until A has nothing left to try (every delivery delivered or dead), the proxy holds nothing
 * more that could reach B, and B has processed everything it accepted.
 */
async function settle(pair: Pair, context: string): Promise<void> {
  let waiting: Record<string, unknown> | undefined;
  await eventually('A to deliver everything', async () => (waiting = await firstOf(pair.a.url, "/$outbox?$filter=status ne 'delivered' and status ne 'dead'&$top=1", context)) === undefined, {
    detail: () => `still to deliver: ${JSON.stringify(waiting)}; proxy ${JSON.stringify(pair.proxy.counts)}`,
    context,
  });
  await eventually('the proxy to hold nothing', () => pair.proxy.busy === 0, { detail: () => `${pair.proxy.busy} held or under way`, context });
  let unprocessed: Record<string, unknown> | undefined;
  await eventually('B to process everything', async () => (unprocessed = await firstOf(pair.b.url, "/$inbox?$filter=status ne 'processed'&$top=1", context)) === undefined, {
    detail: () => `still to process: ${JSON.stringify(unprocessed)}`,
    context,
  });
}

/**
 * The checks every scenario ends with (stopping B first, so any late handler run is in the file):
 * no dead or undelivered delivery; one delivery per event; B's inbox holds exactly A's events, all
 * processed; each event ran B's handler once; the handled events are exactly A's; and every
 * acknowledged change has exactly one event, while any other event is of a change that was sent.
 */
async function verify(pair: Pair, works: readonly Workload[], context: string): Promise<void> {
  await settle(pair, context);
  const deliveries = await walkPages(pair.a.url, '/$outbox', { headers: SMALL_PAGES, context });
  assert.deepEqual(deliveries.filter((delivery) => delivery['status'] !== 'delivered').slice(0, 5), [], `deliveries not delivered ${context}`);
  assert.deepEqual(deliveries.filter((delivery) => delivery['subscription'] !== SUBSCRIPTION || !String(delivery['event']).startsWith('items.')).slice(0, 5), [], `deliveries of another subscription or collection ${context}`);
  const eventIds = deliveries.map((delivery) => String(delivery['eventId']));
  assert.deepEqual(repeated(eventIds), [], `events with more than one delivery to the one subscription ${context}`);
  const inbox = await walkPages(pair.b.url, '/$inbox', { headers: SMALL_PAGES, context });
  assert.deepEqual(inbox.filter((item) => item['status'] !== 'processed').slice(0, 5), [], `events B has not processed ${context}`);
  assert.deepEqual(sorted(inbox.map((item) => String(item['id']))), sorted(eventIds), `B's inbox against A's outbox ${context}`);

  assert.equal(await pair.b.stop(), 0, `B's exit code ${context}: ${pair.b.stderr()}`);
  const runs = handlerRuns(pair.log);
  assert.deepEqual(repeated(runs.map((run) => run.id)), [], `events B's handler ran more than once ${context}`);
  assert.deepEqual(sorted(runs.map((run) => run.id)), sorted(eventIds), `events handled by B against events A wrote ${context}`);

  const changes = runs.map((run) => `${run.event} ${run.item} ${run.rev}`);
  assert.deepEqual(repeated(changes), [], `changes announced by more than one event ${context}`);
  const announced = new Set(changes);
  const acknowledged = works.flatMap((work) => [...work.acknowledged]);
  const attempted = new Set(works.flatMap((work) => [...work.attempted]));
  assert.deepEqual(acknowledged.filter((change) => !announced.has(change)).slice(0, 10), [], `acknowledged changes B never handled ${context}`);
  assert.deepEqual(changes.filter((change) => !attempted.has(change)).slice(0, 10), [], `events of changes nobody made ${context}`);
  for (const work of works) assert.deepEqual(work.unexpected, [], `unexpected answers from A ${context}`);
}

function handlerRuns(log: string): HandlerRun[] {
  return readFileSync(log, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as HandlerRun);
}

function repeated(values: readonly string[]): string[] {
  const seen = new Set<string>();
  const twice = new Set<string>();
  for (const value of values) (seen.has(value) ? twice : seen).add(value);
  return [...twice];
}

function sorted(values: readonly string[]): string[] {
  return [...values].sort();
}

/** A random count between `low` and `high` inclusive, from a seeded PRNG. */
function between(random: () => number, low: number, high: number): number {
  return low + Math.floor(random() * (high - low + 1));
}

describe('webhook delivery from one resapi process to another', () => {
  it('should process every change exactly once while B is stopped and restarted behind the same URL', { timeout: 60_000 }, async () => {
    const random = mulberry32(SEED);
    const context = `(${replayNote(SEED)}, B stopped)`;
    const pair = await startPair(context, HANDLER_WORK_MS);
    const work = new Workload(pair.a.url, 'stop');
    work.grant(between(random, PHASE / 2, PHASE));
    // The SIGTERM comes while one of B's handlers has done its work but not returned (the worst
    // moment to stop); a few more changes are made whenever the flow has run dry before that.
    await eventually(
      'a handler of B in the middle of its run',
      async () => {
        if (await handlerMidRun(pair)) return true;
        if (work.finished >= work.granted) work.grant(6);
        return false;
      },
      { detail: () => `${work.finished} changes answered`, context },
    );
    assert.equal(await pair.b.stop(), 0, `B's exit code at SIGTERM ${context}: ${pair.b.stderr()}`);
    // A keeps changing items while B is away, and tries to deliver them until B is back.
    work.grant(PHASE);
    await phaseDone(work, context);
    await eventually('A to find B gone', () => pair.proxy.counts.unreachable >= 3, { detail: () => JSON.stringify(pair.proxy.counts), context });
    pair.b = await startB(pair);
    pair.proxy.target = pair.b.url;
    work.grant(PHASE);
    await phaseDone(work, context);
    await work.stop();
    await verify(pair, [work], context);
    assert.deepEqual(work.networkErrors, [], `A refused a change ${context}`);
    assert.equal(await pair.a.stop(), 0, `A's exit code ${context}`);
  });

  it('should process every change exactly once while B answers 503 for a stretch', { timeout: 60_000 }, async () => {
    const random = mulberry32(SEED);
    const context = `(${replayNote(SEED)}, B answering 503)`;
    const pair = await startPair(context);
    const work = new Workload(pair.a.url, 'unavailable');
    work.grant(between(random, PHASE / 2, PHASE));
    await phaseDone(work, context);
    pair.proxy.mode = 'unavailable';
    work.grant(PHASE);
    await phaseDone(work, context);
    await eventually('a stretch of 503s', () => pair.proxy.counts.unavailable >= 10, { detail: () => JSON.stringify(pair.proxy.counts), context });
    pair.proxy.mode = 'forward';
    work.grant(PHASE);
    await phaseDone(work, context);
    await work.stop();
    await verify(pair, [work], context);
    // The 503s were retried, not given up on: deliveries that took more than one attempt were delivered.
    const retried = (await walkPages(pair.a.url, '/$outbox?$filter=attempts gt 1', { headers: SMALL_PAGES, context })).filter((delivery) => delivery['status'] === 'delivered');
    assert.ok(retried.length > 0, `no delivery needed a second attempt, so the 503s never happened ${context}`);
    assert.deepEqual(work.networkErrors, [], `A refused a change ${context}`);
    assert.equal(await pair.a.stop(), 0, `A's exit code ${context}`);
  });

  it("should run B's handler once per event while B answers slower than A's timeout and A sends again", { timeout: 60_000 }, async () => {
    const random = mulberry32(SEED);
    const context = `(${replayNote(SEED)}, B slower than A's timeout)`;
    const pair = await startPair(context);
    const work = new Workload(pair.a.url, 'slow');
    work.grant(between(random, PHASE / 2, PHASE));
    await phaseDone(work, context);
    pair.proxy.mode = 'slow';
    // Few changes here: A tries every new delivery before it retries one, and each now costs a timeout.
    work.grant(PHASE / 4);
    await phaseDone(work, context);
    // A gave up waiting for answers B did give: it sends those events again.
    await eventually('A to send again events B had accepted', () => pair.proxy.counts.resent >= 3, { detail: () => JSON.stringify(pair.proxy.counts), context });
    pair.proxy.mode = 'forward';
    work.grant(PHASE);
    await phaseDone(work, context);
    await work.stop();
    await verify(pair, [work], context);
    assert.ok(pair.proxy.counts.duplicate >= 3, `B did not answer "duplicate" to the events sent again ${context}: ${JSON.stringify(pair.proxy.counts)}`);
    assert.deepEqual(work.networkErrors, [], `A refused a change ${context}`);
    assert.equal(await pair.a.stop(), 0, `A's exit code ${context}`);
  });

  it('should deliver and process once every change A acknowledged before a kill -9, resuming its pending deliveries', { timeout: 60_000 }, async () => {
    const random = mulberry32(SEED);
    const killAfter = between(random, PHASE / 2, 2 * PHASE);
    const context = `(${replayNote(SEED)}, A killed after about ${killAfter} answers)`;
    const pair = await startPair(context);
    const first = new Workload(pair.a.url, 'kill');
    // More than will be sent: the clients are still sending when A dies.
    first.grant(100 * PHASE);
    await eventually('changes on A', () => first.acknowledged.size >= killAfter, { detail: () => `${first.acknowledged.size} acknowledged`, context });
    // From here no delivery can complete (B accepts, but its answer comes after A's timeout), so
    // changes acknowledged from now on are pending at the kill, and events B accepted are unknown to A.
    pair.proxy.mode = 'hold';
    const held = pair.proxy.counts.slowed;
    const before = first.acknowledged.size;
    await eventually('deliveries held and changes made during them', () => pair.proxy.counts.slowed >= held + 2 && first.acknowledged.size >= before + PHASE / 3, {
      detail: () => `${JSON.stringify(pair.proxy.counts)}, ${first.acknowledged.size} acknowledged`,
      context,
    });
    const exited = once(pair.a.child, 'exit');
    pair.a.child.kill('SIGKILL');
    await exited;
    await first.stop();
    assert.ok(first.networkErrors.length > 0, `no change was under way at the kill ${context}`);

    pair.a = await startServer(pair.aArgs, { RESAPI_WEBHOOK_SECRETS: '' });
    // Still holding answers, so nothing the restarted A sends can be delivered yet: what it lists as
    // not delivered came through the kill.
    const pending = await firstOf(pair.a.url, "/$outbox?$filter=status ne 'delivered'&$top=1", context);
    assert.notEqual(pending, undefined, `no delivery was pending after the restart ${context}`);
    pair.proxy.mode = 'forward';
    const second = new Workload(pair.a.url, 'after-kill');
    second.grant(PHASE);
    await phaseDone(second, context);
    await second.stop();
    await verify(pair, [first, second], context);
    assert.ok(pair.proxy.counts.resent > 0 && pair.proxy.counts.duplicate > 0, `A never sent again an event B had accepted, or B did not call it a duplicate ${context}: ${JSON.stringify(pair.proxy.counts)}`);
    assert.deepEqual(second.networkErrors, [], `the restarted A refused a change ${context}`);
    assert.equal(await pair.a.stop(), 0, `A's exit code ${context}`);
  });
});
