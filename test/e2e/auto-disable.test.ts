// End to end: a subscription whose receiver keeps failing is disabled (CONVENTIONS.md#auto-disable).
// On an injected clock and retry schedule, so days of retries take milliseconds: every delivery of
// the subscription failed for `outbox.disableAfterS` (5 days by default) with at least 10 attempts →
// `disabled`, with `disabledReason` and `disabledAt`, one log line, a count in /$metrics, and a
// signed `subscription.disabled` event for the subscriptions that name it (`*` does not match it).
// Fewer than 10 attempts in the span, or one success, and it stays active. Its pending deliveries
// wait, and go out in their order once a PUT makes it active again. The streak is in the store: it
// survives kill -9 of a child server.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Random } from '../../lib/clock.js';
import type { ResapiServer } from '../../lib/index.js';
import type { JsonObject } from '../../lib/json.js';
import { verifySignature } from '../../lib/protocol/signature.js';
import { OUTBOX_SPACE } from '../../lib/webhooks/events.js';
import { killIfRunning } from '../support/binary.js';
import { ManualClock } from '../support/clock.js';
import { eventually } from '../support/eventually.js';
import { create, JSON_HEADERS, request } from '../support/http.js';
import { capturingLogger, type LogLine } from '../support/log-lines.js';
import { parseExposition, sampleValue } from '../support/prometheus.js';
import { bodyOf, Receiver, type ReceivedRequest } from '../support/receiver.js';
import { serverForSuite } from '../support/server.js';
import { recordWhere } from '../support/store.js';
import { tempDirsForSuite } from '../support/temp-dir.js';

const SECRET = 'auto-disable-test-secret';
const HOUR = 3_600_000;
/** Jitter pinned at one half (equal jitter: every wait is 3/4 of the schedule's delay); ids stay random. */
const halfway: Random = { bytes: (size) => randomBytes(size), fraction: () => 0.5 };
/** A flat schedule of 12 h delays: every wait is 9 h, and 5 days (120 h) pass between attempts 14 and 15. */
const NINE_HOURS = { baseMs: 12 * HOUR, factor: 1, capMs: 12 * HOUR, attempts: 1000 };
const WAIT = 9 * HOUR;

/** The log lines that say `subscription` was disabled. */
function disabledLines(lines: readonly LogLine[], subscription: string): LogLine[] {
  return lines.filter((line) => line.message === 'webhook deliveries: a subscription is disabled' && line.fields['subscription'] === subscription);
}

function subscribe(base: string, id: string, url: string, events: string[]): ReturnType<typeof request> {
  const body = JSON.stringify({ url, events, secret: SECRET });
  return request(base, `/$subscriptions/${id}`, { method: 'PUT', headers: { ...JSON_HEADERS, 'If-None-Match': '*' }, body });
}

async function subscription(base: string, id: string): Promise<JsonObject> {
  const res = await request(base, `/$subscriptions/${id}`);
  assert.equal(res.status, 200, res.text);
  return res.json() as JsonObject;
}

/** The one delivery `path`'s creation wrote for `subscriptionId`. */
async function deliveryOf(server: ResapiServer, path: string, subscriptionId: string, doc: JsonObject = {}): Promise<string> {
  const before = new Set(server.store.scan(OUTBOX_SPACE).map((record) => record.id));
  assert.equal((await create(server.url, path, doc)).status, 201);
  const fresh = server.store.scan(OUTBOX_SPACE).filter((record) => !before.has(record.id) && record.doc['subscription'] === subscriptionId);
  assert.equal(fresh.length, 1);
  return (fresh[0] as { id: string }).id;
}

/** Waits for the delivery's `attempts`th outcome to be written. */
async function failedAttempt(server: ResapiServer, id: string, attempts: number): Promise<void> {
  await recordWhere(server.store, OUTBOX_SPACE, id, (record) => record.doc['attempts'] === attempts);
}

async function disabledCount(base: string, cause: string): Promise<number | undefined> {
  const res = await request(base, '/$metrics');
  return sampleValue(parseExposition(res.text), 'resapi_subscriptions_disabled_total', 'resapi_subscriptions_disabled_total', { cause });
}

describe('auto-disable on the injected clock (attempts 9 h apart)', () => {
  const clock = new ManualClock(Date.UTC(2026, 3, 14, 9, 0, 0));
  const lines: LogLine[] = [];
  const failing = new Receiver();
  const watcher = new Receiver();
  const everything = new Receiver();
  const flaky = new Receiver();
  const paused = new Receiver();
  const receivers = [failing, watcher, everything, flaky, paused];
  before(async () => {
    for (const receiver of receivers) await receiver.start();
    failing.otherwise = () => 503;
  });
  after(async () => {
    for (const receiver of receivers) await receiver.stop();
  });
  // One delivery of a subscription at a time: the 410 test holds the first while the next two wait.
  const outbox = { workers: 4, inFlight: 1, retry: NINE_HOURS };
  const server = serverForSuite({ memory: true, clock, random: halfway, log: capturingLogger(lines), outbox });

  it('should accept subscription.disabled as an event pattern, and nothing else of the kind', async () => {
    assert.equal((await subscribe(server.url, 'watcher', watcher.url, ['subscription.disabled'])).status, 201);
    assert.equal((await subscribe(server.url, 'everything', everything.url, ['*'])).status, 201);
    assert.equal((await subscribe(server.url, 'bad', watcher.url, ['subscription.enabled'])).status, 400);
  });

  it('should disable a subscription whose every delivery failed for 5 days in at least 10 attempts, say why, and tell who asked', async () => {
    assert.equal((await subscribe(server.url, 'failing', failing.url, ['things.*'])).status, 201);
    const id = await deliveryOf(server, '/things/t1', 'failing');
    // Attempt n comes (n-1) × 9 h after the first: 14 attempts span 117 h, the 15th 126 h > 120 h.
    for (let attempt = 1; attempt < 15; attempt++) {
      await failedAttempt(server, id, attempt);
      assert.equal((await subscription(server.url, 'failing'))['status'], 'active', `after attempt ${attempt}`);
      clock.advance(WAIT);
    }
    const disabledAt = new Date(clock.now()).toISOString();
    await recordWhere(server.store, '$subscriptions', 'failing', (record) => record.doc['status'] === 'disabled');
    const reason = 'every delivery failed for 5 days (15 attempts); last error: the receiver answered 503';
    assert.deepEqual(await subscription(server.url, 'failing'), {
      id: 'failing', url: failing.url, events: ['things.*'], status: 'disabled', secretOverlapS: 86400,
      disabledReason: reason, disabledAt,
    });
    // The notice, signed with the watcher's secret, and to nobody else: `*` does not match it.
    await eventually('the notice at the watcher', () => watcher.received.length === 1);
    const [arrival] = watcher.received as [ReceivedRequest];
    assert.equal(verifySignature(arrival.body, [arrival.headers['x-signature'] as string], [SECRET]), true);
    const notice = bodyOf(arrival);
    assert.deepEqual(Object.keys(notice), ['id', 'event', 'type', 'occurredAt', 'data']);
    assert.equal(notice['event'], 'subscription.disabled');
    assert.equal(notice['type'], 'subscription.disabled');
    assert.equal(notice['occurredAt'], disabledAt);
    assert.deepEqual(notice['data'], { subscription: 'failing', reason, disabledAt });
    const notices = server.store.scan(OUTBOX_SPACE).filter((record) => record.doc['event'] === 'subscription.disabled');
    assert.deepEqual(notices.map((record) => record.doc['subscription']), ['watcher']);
    assert.deepEqual(everything.bodies().map((body) => body['event']), ['things.created']);
    // One log line, with the ids and why; the metric counts it.
    const said = disabledLines(lines, 'failing');
    assert.equal(said.length, 1, JSON.stringify(said));
    assert.deepEqual(said[0]?.fields, { subscription: 'failing', cause: 'failing', reason, disabledAt });
    assert.equal(await disabledCount(server.url, 'failing'), 1);
    assert.equal(await disabledCount(server.url, 'gone'), 0);
    // Its delivery is not sent any more, and not lost: it waits, without a next attempt.
    clock.advance(WAIT);
    const parked = await recordWhere(server.store, OUTBOX_SPACE, id, (record) => record.dueAt === undefined);
    assert.equal(parked.doc['status'], 'failed');
    assert.equal(parked.doc['attempts'], 15);
    assert.equal(parked.doc['nextAttemptAt'], undefined);
    assert.equal(failing.received.length, 15);
  });

  it('should start counting again after a success', async () => {
    let answered = 0;
    flaky.otherwise = () => (++answered === 10 ? 200 : 503);
    assert.equal((await subscribe(server.url, 'flaky', flaky.url, ['flaky.*'])).status, 201);
    const first = await deliveryOf(server, '/flaky/f1', 'flaky');
    for (let attempt = 1; attempt < 10; attempt++) {
      await failedAttempt(server, first, attempt);
      clock.advance(WAIT);
    }
    await recordWhere(server.store, OUTBOX_SPACE, first, (record) => record.doc['status'] === 'delivered');
    // Without the reset, the streak begun 81 h ago would pass 5 days and 10 attempts at the 6th failure.
    const second = await deliveryOf(server, '/flaky/f2', 'flaky');
    for (let attempt = 1; attempt < 15; attempt++) {
      await failedAttempt(server, second, attempt);
      assert.equal((await subscription(server.url, 'flaky'))['status'], 'active', `after attempt ${attempt} of the second`);
      clock.advance(WAIT);
    }
    const disabled = await recordWhere(server.store, '$subscriptions', 'flaky', (record) => record.doc['status'] === 'disabled');
    assert.match(String(disabled.doc['disabledReason']), /^every delivery failed for 5 days \(15 attempts\)/);
  });

  it('should keep the deliveries pending at a 410 and send them in order once a PUT makes it active again', async () => {
    let release: (status: number) => void = () => {};
    const held = new Promise<number>((resolve) => (release = resolve));
    paused.otherwise = () => (paused.received.length === 1 ? held : 200);
    assert.equal((await subscribe(server.url, 'paused', paused.url, ['paused.*'])).status, 201);
    const first = await deliveryOf(server, '/paused/p1', 'paused');
    await eventually('the first delivery at the receiver', () => paused.received.length === 1);
    // Two more while the first is held: they wait behind it (outbox.inFlight 1).
    clock.advance(1);
    const second = await deliveryOf(server, '/paused/p2', 'paused');
    clock.advance(1);
    const third = await deliveryOf(server, '/paused/p3', 'paused');
    release(410);
    await recordWhere(server.store, OUTBOX_SPACE, first, (record) => record.doc['status'] === 'dead');
    const disabled = await recordWhere(server.store, '$subscriptions', 'paused', (record) => record.doc['status'] === 'disabled');
    assert.equal(disabled.doc['disabledReason'], 'the receiver answered 410 Gone');
    for (const id of [second, third]) {
      const waiting = await recordWhere(server.store, OUTBOX_SPACE, id, (record) => record.dueAt === undefined);
      assert.equal(waiting.doc['status'], 'pending');
    }
    assert.equal(paused.received.length, 1, 'nothing more was sent');
    assert.equal(await disabledCount(server.url, 'gone'), 1);
    assert.equal(disabledLines(lines, 'paused').length, 1);

    // Read-only members in the body are ignored; the reason and time go with the status.
    const current = await request(server.url, '/$subscriptions/paused');
    const body = JSON.stringify({ url: paused.url, events: ['paused.*'], status: 'active', disabledReason: 'x', disabledAt: 'y' });
    const put = await request(server.url, '/$subscriptions/paused', { method: 'PUT', headers: { ...JSON_HEADERS, 'If-Match': current.headers.etag as string }, body });
    assert.equal(put.status, 200, put.text);
    assert.deepEqual(put.json(), { id: 'paused', url: paused.url, events: ['paused.*'], status: 'active', secretOverlapS: 86400 });
    for (const id of [second, third]) await recordWhere(server.store, OUTBOX_SPACE, id, (record) => record.doc['status'] === 'delivered');
    assert.deepEqual(paused.bodies().slice(1).map((body) => (body['data'] as JsonObject)['id']), ['p2', 'p3']);
  });
});

describe('auto-disable with deliveries in flight together', () => {
  const clock = new ManualClock(Date.UTC(2026, 3, 14, 9, 0, 0));
  const failing = new Receiver();
  const answers: ((status: number) => void)[] = [];
  before(async () => {
    failing.otherwise = () => new Promise<number>((resolve) => answers.push(resolve));
    await failing.start();
  });
  after(async () => {
    for (const answer of answers.splice(0)) answer(503);
    await failing.stop();
  });
  const server = serverForSuite({ memory: true, clock, random: halfway, outbox: { inFlight: 4, retry: NINE_HOURS } });

  it('should count each of the attempts that failed together once, and disable at the tenth past the span', async () => {
    assert.equal((await subscribe(server.url, 'together', failing.url, ['together.*'])).status, 201);
    const ids: string[] = [];
    for (let n = 0; n < 4; n++) ids.push(await deliveryOf(server, `/together/t${n}`, 'together'));
    await failing.got(4);
    // All four answered in one go: each outcome is decided while the others' are still being written.
    for (const answer of answers.splice(0)) answer(503);
    for (const id of ids) await failedAttempt(server, id, 1);
    const streak = (): JsonObject | undefined => server.store.get('$subscription-streaks', 'together')?.doc;
    assert.equal(streak()?.['attempts'], 4, JSON.stringify(streak()));
    // Two more rounds of four, the last past the 5 days: the 10th failed attempt disables it.
    failing.otherwise = () => 503;
    clock.advance(WAIT);
    for (const id of ids) await failedAttempt(server, id, 2);
    assert.equal(streak()?.['attempts'], 8);
    clock.advance(5 * 24 * HOUR);
    const disabled = await recordWhere(server.store, '$subscriptions', 'together', (record) => record.doc['status'] === 'disabled');
    assert.match(String(disabled.doc['disabledReason']), /^every delivery failed for 5 days \(10 attempts\)/);
    // The two still in flight when it was decided are written as failed, and wait like the rest.
    for (const id of ids) await failedAttempt(server, id, 3);
    assert.equal(failing.received.length, 12);
  });
});

describe('auto-disable with attempts 36 h apart', () => {
  const clock = new ManualClock(Date.UTC(2026, 3, 14, 9, 0, 0));
  const failing = new Receiver();
  before(async () => {
    await failing.start();
    failing.otherwise = () => 500;
  });
  after(async () => {
    await failing.stop();
  });
  const server = serverForSuite({ memory: true, clock, random: halfway, outbox: { retry: { ...NINE_HOURS, baseMs: 48 * HOUR, capMs: 48 * HOUR } } });

  it('should not disable before 10 failed attempts, however long they span', async () => {
    assert.equal((await subscribe(server.url, 'sparse', failing.url, ['things.*'])).status, 201);
    const id = await deliveryOf(server, '/things/s1', 'sparse');
    // Five days pass at the 5th attempt (144 h); the 10th (324 h) is the first with enough of them.
    for (let attempt = 1; attempt < 10; attempt++) {
      await failedAttempt(server, id, attempt);
      assert.equal((await subscription(server.url, 'sparse'))['status'], 'active', `after attempt ${attempt}`);
      clock.advance(36 * HOUR);
    }
    const disabled = await recordWhere(server.store, '$subscriptions', 'sparse', (record) => record.doc['status'] === 'disabled');
    assert.equal(disabled.doc['disabledReason'], 'every delivery failed for 5 days (10 attempts); last error: the receiver answered 500');
  });
});

const CHILD = fileURLToPath(new URL('./auto-disable-child.js', import.meta.url));

interface Child {
  readonly url: string;
  readonly process: ChildProcess;
}

/** The child server (auto-disable-child.ts) on `dir`, its clock `offsetMs` ahead of the system's. */
async function startChild(dir: string, offsetMs: number, children: ChildProcess[]): Promise<Child> {
  const child = spawn(process.execPath, [CHILD, dir, String(offsetMs)], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let err = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      const match = /^listening on (\S+)\n/.exec(out);
      if (match !== null) resolve(match[1] as string);
    });
    child.once('exit', (code) => reject(new Error(`the child exited with ${code}: ${err}`)));
  });
  return { url, process: child };
}

describe('auto-disable across kill -9', () => {
  const children: ChildProcess[] = [];
  const failing = new Receiver();
  before(async () => {
    await failing.start();
    failing.otherwise = () => 503;
  });
  after(async () => {
    for (const child of children) killIfRunning(child);
    await failing.stop();
  });
  const tempDir = tempDirsForSuite('auto-disable');

  it('should keep the streak in the store: a restart past the span disables at its next failure', { timeout: 60_000 }, async () => {
    const dir = join(tempDir(), 'data');
    const first = await startChild(dir, 0, children);
    assert.equal((await subscribe(first.url, 'failing', failing.url, ['things.*'])).status, 201);
    assert.equal((await create(first.url, '/things/k1', {})).status, 201);
    // Ten failed attempts written (the streak is written with each): then the kill.
    const attempts = await eventually('ten failed attempts', async () => {
      const listed = (await request(first.url, '/$outbox')).json() as { value: JsonObject[] };
      const count = Number(listed.value[0]?.['attempts'] ?? 0);
      return count >= 10 ? count : undefined;
    });
    const exited = once(first.process, 'exit');
    first.process.kill('SIGKILL');
    await exited;
    // The child's span is 60 s; its clock now runs 61 s ahead: only a streak begun before the kill is that old.
    const second = await startChild(dir, 61_000, children);
    const disabled = await eventually('the subscription disabled', async () => {
      const doc = await subscription(second.url, 'failing');
      return doc['status'] === 'disabled' ? doc : undefined;
    });
    const reason = String(disabled['disabledReason']);
    const counted = /^every delivery failed for 1 minute \((\d+) attempts\)/.exec(reason);
    assert.ok(counted !== null && Number(counted[1]) > attempts, `${reason}: more than the ${attempts} attempts before the kill`);
    second.process.kill('SIGKILL');
  });
});
