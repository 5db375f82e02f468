// End to end: the webhook receiver of the real binary over a real data dir. It takes the steps of
// CONVENTIONS.md#receiving-order (cap → signature → timestamp → dedup → durably record → 2xx →
// process afterward); a 2xx means durably accepted (CONVENTIONS.md#durable-acceptance), and an event
// id is processed at most once (CONVENTIONS.md#deduplication).
//
// - `kill -9` while acknowledgements are coming back, then a restart of the same data dir: every
//   acknowledged event is in the inbox and processed, its handler completed at least once, and only
//   the events whose handler was running at the kill (at most `webhooks.workers`) ran twice.
// - A 50 MiB chunked body is cut at the cap (413, Connection: close) without the server's memory
//   growing with it, and nothing is recorded (CONVENTIONS.md#body-cap).
// - No secret configured: 503 with Retry-After, the reason logged once at start, not per request.
// - `--handlers` that cannot be used refuses the start (exit 1) before any data dir is made.
// - `resapi sign --secret-env NAME` signs the exact bytes of stdin as the receiver checks them.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { webhookSignature } from '../../lib/protocol/signature.js';
import { BIN, killIfRunning, REPO, runBinary, startBinary, type RunningServer } from '../support/binary.js';
import { eventually } from '../support/eventually.js';
import { request } from '../support/http.js';
import { mulberry32, replayNote, testSeed } from '../support/random.js';
import { peakRss, streamBody, type StreamResult } from '../support/streams.js';
import { tempDirsForSuite } from '../support/temp-dir.js';
import { deliver, inboxItems, signedDelivery, type Answer, type Delivery, type InboxItem } from '../support/webhooks.js';

const MIB = 1024 * 1024;
const SECRET = 'durability-test-secret';
const ENV = { RESAPI_WEBHOOK_SECRETS: SECRET };
const ACCEPTED = '{"status":"accepted"}';
const DUPLICATE = '{"status":"duplicate"}';
/** `webhooks.workers` by default (CONVENTIONS.md#configuration-file): how many handlers can be running when the process dies. */
const WORKERS = 4;
const EVENTS = 1500;
const ROUNDS = 2;
const SENDERS = 16;

const servers: RunningServer[] = [];
/** A server that after() kills if a failed or timed-out test left it running. */
async function startServer(args: readonly string[], env: Readonly<Record<string, string>> = ENV): Promise<RunningServer> {
  const server = await startBinary(args, env);
  servers.push(server);
  return server;
}
after(() => {
  for (const server of servers) killIfRunning(server.child);
});
// Registered after the hook above, so the folders go once no server uses them any more.
const tempFolder = tempDirsForSuite('webhook-durable');

function delivery(id: string): Delivery {
  return signedDelivery(id, 'order.created', { total: 12.5, currency: 'EUR' }, SECRET);
}

/**
 * A --handlers module whose one handler appends the event id (as a JSON string, one per line) to
 * `log` and fsyncs it before returning, so every completed run is on disk when the process dies.
 */
function handlersModule(log: string): string {
  return `import { closeSync, fsyncSync, openSync, writeSync } from 'node:fs';
export default {
  '*': async (event) => {
    const fd = openSync(${JSON.stringify(log)}, 'a');
    try {
      writeSync(fd, JSON.stringify(event.id) + '\\n');
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  },
};
`;
}

describe('POST /webhooks under kill -9', () => {
  it('should process every acknowledged event after a restart, and run at most `workers` handlers twice', { timeout: 90_000 }, async () => {
    const seed = testSeed();
    const random = mulberry32(seed);
    const folder = tempFolder();
    const log = join(folder, 'handled.log');
    const handlers = join(folder, 'handlers.mjs');
    writeFileSync(handlers, handlersModule(log));
    const args = ['--data-dir', join(folder, 'data'), '--handlers', handlers];
    // Two kills of the same data dir, each followed by a restart and every check.
    for (let round = 0; round < ROUNDS; round++) {
      const prefix = `evt-${seed}-r${round}-`;
      // Some ids need percent-encoding in /$inbox/{id}: a slash, a space, '?', '%' and non-ASCII.
      const events = Array.from({ length: EVENTS }, (_, n) => delivery(n % 100 === 7 ? `${prefix}${n}/ ?%é` : `${prefix}${n}`));
      // The kill comes right after a random acknowledgement among the first half.
      const killAfter = 1 + Math.floor(random() * (EVENTS / 2));
      const context = `(${replayNote(seed)}, round ${round}, killed after acknowledgement ${killAfter})`;
      const acknowledged = await sendUntilKilled(await startServer(args), events, killAfter, context);

      const restarted = await startServer(args);
      await waitUntilAllProcessed(restarted.url, context);
      const items = (await inboxItems(restarted.url, context)).filter((item) => item.id.startsWith(prefix));
      const byId = new Map(items.map((item) => [item.id, item]));
      const sent = new Set(events.map((event) => event.id));
      assert.deepEqual(
        acknowledged.filter((event) => byId.get(event.id)?.status !== 'processed').map((event) => `${event.id}: ${JSON.stringify(byId.get(event.id))}`),
        [],
        `acknowledged events not processed after the restart ${context}`,
      );
      assert.deepEqual(items.filter((item) => !sent.has(item.id)), [], `inbox items nobody sent ${context}`);

      const runs = new Map([...handlerRuns(log)].filter(([id]) => id.startsWith(prefix)));
      assert.deepEqual(acknowledged.filter((event) => !runs.has(event.id)).map((event) => event.id), [], `acknowledged events whose handler never completed ${context}`);
      // `processed` is written only after the handler returned, and the handler fsyncs its line first.
      assert.deepEqual(items.filter((item) => !runs.has(item.id)).map((item) => item.id), [], `events processed without their handler completing ${context}`);
      assert.deepEqual([...runs.keys()].filter((id) => !byId.has(id)), [], `handled events missing from the inbox ${context}`);
      const twice = [...runs].filter(([, count]) => count > 1);
      assert.ok(twice.length <= WORKERS, `${twice.length} events ran more than once, more than the ${WORKERS} workers that could be running at the kill: ${JSON.stringify(twice.slice(0, 10))} ${context}`);
      assert.deepEqual(twice.filter(([, count]) => count > 2), [], `events run more than twice across one kill ${context}`);

      // The dedup ids survived the kill: every acknowledged event sent again is a duplicate.
      const again = new Agent({ keepAlive: true, maxSockets: SENDERS });
      try {
        const answers = await Promise.all(acknowledged.map(async (event) => ({ id: event.id, answer: await deliver(again, restarted.url, event) })));
        assert.deepEqual(answers.filter(({ answer }) => answer.status !== 200 || answer.text !== DUPLICATE).slice(0, 5), [], `acknowledged events sent again after the restart ${context}`);
      } finally {
        again.destroy();
      }
      // Ids that need percent-encoding are addressable one by one.
      for (const event of acknowledged.filter((event) => event.id.endsWith('/ ?%é'))) {
        const res = await request(restarted.url, `/$inbox/${encodeURIComponent(event.id)}`);
        assert.equal(res.status, 200, `GET /$inbox/${encodeURIComponent(event.id)}: ${res.text} ${context}`);
        assert.equal((res.json() as InboxItem).id, event.id, context);
      }
      assert.equal(await restarted.stop(), 0, `the restarted server's exit code ${context}: ${restarted.stderr()}`);
    }
  });
});

/**
 * Sends `events` from SENDERS keep-alive connections, SIGKILLs the server right after the
 * `killAfter`th acknowledgement, and returns every event acknowledged `200 {"status":"accepted"}`.
 */
async function sendUntilKilled(server: RunningServer, events: readonly Delivery[], killAfter: number, context: string): Promise<Delivery[]> {
  const acknowledged: Delivery[] = [];
  const unexpected: string[] = [];
  let exited: Promise<unknown> | undefined;
  const kill = (): void => {
    if (exited !== undefined) return;
    exited = once(server.child, 'exit');
    server.child.kill('SIGKILL');
  };
  const agent = new Agent({ keepAlive: true, maxSockets: SENDERS });
  let next = 0;
  await Promise.all(
    Array.from({ length: SENDERS }, async () => {
      while (exited === undefined && next < events.length) {
        const event = events[next++] as Delivery;
        let answer: Answer;
        try {
          answer = await deliver(agent, server.url, event);
        } catch (error) {
          // After the kill the server is gone; before it, a failed delivery is a finding.
          if (exited === undefined) unexpected.push(`${event.id}: ${error instanceof Error ? error.message : String(error)}`);
          return;
        }
        // An answer read in full is an acknowledgement, even one that arrives after the kill.
        if (answer.status === 200 && answer.text === ACCEPTED) acknowledged.push(event);
        else unexpected.push(`${event.id}: ${answer.status} ${answer.text}`);
        if (acknowledged.length >= killAfter) kill();
      }
    }),
  );
  agent.destroy();
  kill();
  await exited;
  assert.deepEqual(unexpected, [], `answers other than accepted, or failed deliveries before the kill ${context}`);
  assert.ok(acknowledged.length >= killAfter, `only ${acknowledged.length} acknowledgements ${context}`);
  return acknowledged;
}

describe('POST /webhooks body cap', () => {
  it('should cut a 50 MiB chunked body with 413 and Connection: close, without growing its memory or recording it', async () => {
    const folder = tempFolder();
    const server = await startServer(['--data-dir', join(folder, 'data')]);
    try {
      const pid = server.child.pid as number;
      await floodWebhooks(server, 'flood-warm-up', 2 * MIB);
      const before = peakRss(pid);
      const res = await floodWebhooks(server, 'flood-50', 50 * MIB);
      const growth = peakRss(pid) - before;
      assert.equal(res.status, 413);
      assert.equal(res.connection, 'close');
      assert.equal(res.problemStatus, 413);
      // Buffering the body would grow it by at least the 50 MiB sent; half of that leaves room for the
      // heap's own growth on a loaded machine (17 MiB was seen under a full parallel suite).
      assert.ok(growth < 25 * MIB, `peak RSS grew by ${(growth / MIB).toFixed(1)} MiB while 50 MiB were sent`);
      assert.ok(res.sent >= 2 * MIB, 'the client kept sending after the cut (the server drained instead of resetting)');
      assert.equal((await request(server.url, '/$inbox/flood-50')).status, 404);
      assert.deepEqual((await request(server.url, '/$inbox')).json(), { value: [] });
    } finally {
      await server.stop();
    }
  });
});

describe('POST /webhooks with no secret configured', () => {
  it('should answer 503 with Retry-After, record nothing, and log the reason once', async () => {
    // An empty variable, so a secret in the environment of the test run cannot leak into the child.
    const server = await startServer(['--memory'], { RESAPI_WEBHOOK_SECRETS: '' });
    const closed = once(server.child, 'close');
    const event = delivery('no-secret-1');
    for (let attempt = 0; attempt < 5; attempt++) {
      const res = await request(server.url, '/webhooks', { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Signature': event.signature }, body: event.body });
      assert.equal(res.status, 503, `attempt ${attempt}: ${res.text}`);
      assert.match(String(res.headers['retry-after']), /^\d+$/, `attempt ${attempt}`);
      assert.equal(res.headers['content-type'], 'application/problem+json');
    }
    assert.deepEqual((await request(server.url, '/$inbox')).json(), { value: [] });
    assert.equal(await server.stop(), 0);
    await closed; // every byte of stderr has been read
    const lines = server.stderr().split('\n').filter((line) => /webhook/i.test(line));
    assert.equal(lines.length, 1, `lines about webhooks on stderr:\n${lines.join('\n')}`);
    assert.match(lines[0] as string, /RESAPI_WEBHOOK_SECRETS/);
  });
});

describe('resapi serve --handlers', () => {
  const cases: { name: string; source?: string; expected: RegExp }[] = [
    { name: 'missing.mjs', expected: /missing\.mjs.*no such file/ },
    { name: 'number.mjs', source: 'export default 42;\n', expected: /number\.mjs.*default export must be an object/ },
    { name: 'array.mjs', source: 'export default [async () => {}];\n', expected: /array\.mjs.*default export must be an object/ },
    { name: 'named.mjs', source: "export const handlers = { '*': async () => {} };\n", expected: /named\.mjs.*default export must be an object/ },
    { name: 'member.mjs', source: "export default { 'order.created': async () => {}, 'order.paid': 'pay()' };\n", expected: /member\.mjs.*"order\.paid" is not a function/ },
    { name: 'empty.mjs', source: 'export default {};\n', expected: /empty\.mjs.*names no event kind/ },
    { name: 'broken.mjs', source: 'export default { ;\n', expected: /broken\.mjs.*cannot load it/ },
  ];
  for (const { name, source, expected } of cases) {
    it(`should refuse to start with exit 1 and no data dir for ${name}`, async () => {
      const folder = tempFolder();
      const file = join(folder, name);
      if (source !== undefined) writeFileSync(file, source);
      const dir = join(folder, 'data');
      const run = await runBinary(['serve', '--port', '0', '--data-dir', dir, '--handlers', file], ENV);
      assert.equal(run.code, 1, run.stderr);
      assert.match(run.stderr, /cannot start/);
      assert.match(run.stderr, expected);
      assert.doesNotMatch(run.stdout, /listening/);
      assert.equal(existsSync(dir), false, 'the refused start created the data dir');
    });
  }
});

describe('resapi sign --secret-env NAME', () => {
  it('should print the X-Signature of the exact bytes on stdin', async () => {
    const secret = 'sign-test-secret';
    // Not UTF-8, a NUL, CR LF at the end, and more than one pipe buffer: any decoding, trimming or
    // partial read would change the digest.
    const bytes = Buffer.concat([Buffer.from('{"id":"e1","event":"x","pad":"'), Buffer.alloc(300_000, 0x61), Buffer.from([0x22, 0x7d, 0xff, 0x00, 0x0d, 0x0a])]);
    const run = await signWith(bytes, { WEBHOOK_SIGN_TEST: secret });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, `${webhookSignature(bytes, secret)}\n`);
  });

  it('should exit 2 naming the variable when it is not set', async () => {
    const run = await signWith(Buffer.from('{"id":"e1","event":"x"}'), {});
    assert.equal(run.code, 2);
    assert.equal(run.stdout, '');
    assert.match(run.stderr, /WEBHOOK_SIGN_TEST/);
  });
});

/** Runs `resapi sign --secret-env WEBHOOK_SIGN_TEST` with `bytes` on stdin and `env` as its whole environment's additions. */
async function signWith(bytes: Buffer, env: Readonly<Record<string, string>>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const base = { ...process.env };
  delete base['WEBHOOK_SIGN_TEST'];
  const child = spawn(process.execPath, [BIN, 'sign', '--secret-env', 'WEBHOOK_SIGN_TEST'], { cwd: REPO, env: { ...base, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  // A child that exits without reading stdin closes the pipe: that is not this test's failure.
  child.stdin.on('error', () => {});
  child.stdin.end(bytes);
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stdout, stderr };
}

/** Waits until no event in the inbox is left to process. */
async function waitUntilAllProcessed(base: string, context: string): Promise<void> {
  let left: unknown[] = [];
  await eventually(
    'every event in the inbox to be processed',
    async () => {
      const res = await request(base, "/$inbox?$filter=status ne 'processed'", { headers: { Prefer: 'maxpagesize=1000' } });
      assert.equal(res.status, 200, `${res.text} ${context}`);
      const page = res.json() as { value: unknown[]; '@nextLink'?: string };
      left = page.value;
      return page.value.length === 0 && page['@nextLink'] === undefined;
    },
    { detail: () => `${left.length} events are still not processed, e.g. ${JSON.stringify(left.slice(0, 3))}`, context },
  );
}

/** How many times the handler completed, by event id, from its fsynced log. */
function handlerRuns(log: string): Map<string, number> {
  const runs = new Map<string, number>();
  const text = existsSync(log) ? readFileSync(log, 'utf8') : '';
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const id = JSON.parse(line) as string;
    runs.set(id, (runs.get(id) ?? 0) + 1);
  }
  return runs;
}



/**
 * Sends a well-formed, correctly signed event of `total` bytes, chunked (no Content-Length, so only
 * the running count can stop it), and resolves with the answer. Were the cap not enforced, this
 * event would be accepted: "nothing recorded" is then a real check.
 */
function floodWebhooks(server: RunningServer, id: string, total: number): Promise<StreamResult> {
  const head = Buffer.from(`{"id":${JSON.stringify(id)},"event":"flood.test","pad":"`);
  const tail = Buffer.from('"}');
  const chunk = Buffer.alloc(64 * 1024, 0x78);
  const chunks = Math.ceil((total - head.length - tail.length) / chunk.length);
  const hmac = createHmac('sha256', SECRET).update(head);
  for (let n = 0; n < chunks; n++) hmac.update(chunk);
  const signature = hmac.update(tail).digest('hex');
  const url = new URL(server.url);
  const headers = { 'Content-Type': 'application/json', 'X-Signature': signature };
  const req = httpRequest({ host: url.hostname, port: url.port, path: '/webhooks', method: 'POST', headers, agent: false });
  return streamBody(req, { head, chunk, chunks, tail });
}
