// End to end: forwarding every accepted event to the app being built (CONVENTIONS.md#forwarding).
// An app on 127.0.0.1 that checks X-Signature with the shared secret, as its own code would, gets
// the provider's exact bytes and its signature fields, and nothing else of the request; it gets each
// accepted event once (a duplicate is not forwarded again, a refused delivery not at all); while it
// is down the forward is retried on the outbox's schedule (an injected clock runs it) and delivered
// once it is back; the forwards are deliveries of /$outbox (JSON and HTML) under the pseudo
// subscription `$forward`, which /$subscriptions never lists. A forward is written in the same commit
// as the acceptance, so a `kill -9` right after the 200 still forwards it after the restart; the real
// binary takes `--forward URL`, and refuses it beside a config file that sets webhooks.forward.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Random } from '../../lib/clock.js';
import { start } from '../../lib/index.js';
import type { JsonObject } from '../../lib/json.js';
import { silentLogger } from '../../lib/log.js';
import type { StoredRecord } from '../../lib/store/types.js';
import { OUTBOX_BODY_SPACE, OUTBOX_SPACE } from '../../lib/webhooks/events.js';
import { killIfRunning, runBinary, startBinary, type RunningServer } from '../support/binary.js';
import { ManualClock } from '../support/clock.js';
import { eventually } from '../support/eventually.js';
import { JSON_HEADERS, request } from '../support/http.js';
import { bodyOf, Receiver, type ReceivedRequest } from '../support/receiver.js';
import { serverForSuite } from '../support/server.js';
import { recordWhere } from '../support/store.js';
import { tempDirsForSuite } from '../support/temp-dir.js';

const SECRET = 'forwarding-test-secret';
const FORWARD = '$forward';
/** Jitter pinned at one half; ids stay random (they must be unique). */
const halfway: Random = { bytes: (size) => randomBytes(size), fraction: () => 0.5 };

/**
 * The app being built: it checks X-Signature with the shared secret, the way an app's own code does
 * (an HMAC of the raw bytes, compared in constant time), and answers 204, or 401 when it does not
 * verify; a request it holds is answered the same way when let go.
 */
function theApp(): Receiver {
  const app = new Receiver({ path: '' });
  app.otherwise = appAnswer;
  return app;
}

function appAnswer(arrival: ReceivedRequest): number {
  return verifies(arrival) ? 204 : 401;
}

/** The arrivals whose body is the event `id`. */
function arrivalsOf(app: Receiver, id: string): ReceivedRequest[] {
  return app.received.filter((arrival) => bodyOf(arrival)['id'] === id);
}

/** What an app's own verification does with resapi's scheme: HMAC-SHA256 of the raw body, hex. */
function verifies(arrival: ReceivedRequest): boolean {
  const presented = arrival.headers['x-signature'];
  if (typeof presented !== 'string' || !/^[0-9a-f]{64}$/.test(presented)) return false;
  const expected = createHmac('sha256', SECRET).update(arrival.body).digest();
  return timingSafeEqual(expected, Buffer.from(presented, 'hex'));
}

function sign(body: Buffer): string {
  return createHmac('sha256', SECRET).update(body).digest('hex');
}

/** POST /webhooks with these bytes, signed (unless `headers` says otherwise) and stamped now. */
function send(base: string, body: Buffer, headers: Record<string, string>, nowMs: number): ReturnType<typeof request> {
  const signed = { 'X-Signature': sign(body), 'X-Timestamp': String(Math.floor(nowMs / 1000)), ...headers };
  return request(base, '/webhooks', { method: 'POST', headers: { ...JSON_HEADERS, ...signed }, body });
}

function event(id: string, extra = ''): Buffer {
  return Buffer.from(`{"id":${JSON.stringify(id)},"event":"order.created"${extra}}`);
}

/** The forward deliveries of the event `id`. */
function forwardsOf(records: readonly StoredRecord[], id: string): StoredRecord[] {
  return records.filter((record) => record.doc['subscription'] === FORWARD && record.doc['eventId'] === id);
}

describe('forwarding accepted events to the app (webhooks.forward)', () => {
  const clock = new ManualClock(Date.now());
  const app = theApp();
  before(() => app.start());
  // The app first (after() hooks run in the order they are registered): a request it still holds
  // then fails at once, and the server's drain has nothing to wait for.
  after(() => app.stop(appAnswer));
  // refusePrivateAddresses is on: the forward, to loopback, is sent all the same.
  const server = serverForSuite(() => ({
    memory: true,
    clock,
    random: halfway,
    webhookSecrets: [SECRET],
    webhooks: { forward: `${app.url}/webhooks?from=resapi` },
    outbox: { refusePrivateAddresses: true },
  }));

  it('should POST the exact bytes with the provider\'s Content-Type and signature fields, and nothing else of the request', async () => {
    // A byte-order mark, spaces, a newline and a number a double does not keep as written: the app
    // must see these bytes, not JSON made again.
    const body = Buffer.from('\ufeff{ "id": "evt_fw_1", "event": "order.created",\n  "total": 12.50 }', 'utf8');
    const sent = await send(server.url, body, {
      'Content-Type': 'application/json; charset=utf-8',
      Cookie: 'session=not-for-the-app',
      Authorization: 'Bearer not-for-the-app',
      'X-Request-Id': 'r-1',
      'User-Agent': 'provider/1.0',
    }, clock.now());
    assert.equal(sent.status, 200, sent.text);
    assert.equal(sent.text, '{"status":"accepted"}');
    await app.got(1);
    const [arrival] = arrivalsOf(app, 'evt_fw_1');
    assert.ok(arrival !== undefined);
    assert.deepEqual(arrival.body, body, 'the exact bytes');
    assert.equal(arrival.url, '/webhooks?from=resapi');
    const { headers } = arrival;
    assert.equal(headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(headers['x-signature'], sign(body));
    assert.equal(headers['x-timestamp'], String(Math.floor(clock.now() / 1000)));
    assert.equal(headers['user-agent'], 'resapi (webhook sender)');
    assert.equal(headers['host'], `127.0.0.1:${app.port}`);
    for (const name of ['cookie', 'authorization', 'x-request-id', 'webhook-signature']) assert.equal(headers[name], undefined, name);
    // The app's own check passed (204), and a body changed by one byte would not have.
    assert.equal(verifies({ ...arrival, body: Buffer.concat([body, Buffer.from(' ')]) }), false);
    const [forward] = forwardsOf(server.store.scan(OUTBOX_SPACE), 'evt_fw_1');
    assert.ok(forward !== undefined);
    const delivered = await recordWhere(server.store, OUTBOX_SPACE, forward.id, (record) => record.doc['status'] === 'delivered');
    assert.equal(delivered.doc['lastStatus'], 204);
    assert.equal(delivered.doc['event'], 'order.created');
    assert.equal(delivered.doc['source'], 'webhooks');
    // Stored once, for the forward alone, and dropped once delivered.
    await eventually('the delivered body to be dropped', () => server.store.get(OUTBOX_BODY_SPACE, forward.id) === undefined);
  });

  it('should write the forward in the same commit as the acceptance, its bytes and fields beside it', async () => {
    app.answers = ['hold'];
    const body = event('evt_fw_commit');
    // The version the event's item was first written with: its run writes the item again.
    let accepted: number | undefined;
    const unwatch = server.store.watch((commit) => {
      const put = commit.applied.some(({ mutation }) => mutation.kind === 'put' && mutation.id === 'evt_fw_commit');
      if (put) accepted ??= commit.seq;
    });
    assert.equal((await send(server.url, body, {}, clock.now())).status, 200);
    unwatch();
    await app.got(2);
    const [forward] = forwardsOf(server.store.scan(OUTBOX_SPACE), 'evt_fw_commit');
    assert.ok(forward !== undefined);
    const stored = server.store.get(OUTBOX_BODY_SPACE, forward.id);
    assert.equal(stored?.version, accepted, 'one commit');
    assert.deepEqual(stored?.doc, {
      body: body.toString('utf8'),
      headers: { 'Content-Type': 'application/json', 'X-Signature': sign(body), 'X-Timestamp': String(Math.floor(clock.now() / 1000)) },
    });
    app.release(appAnswer);
    await recordWhere(server.store, OUTBOX_SPACE, forward.id, (record) => record.doc['status'] === 'delivered');
  });

  it('should not forward a duplicate again', async () => {
    const again = await send(server.url, Buffer.from('\ufeff{ "id": "evt_fw_1", "event": "order.created",\n  "total": 12.50 }', 'utf8'), {}, clock.now());
    assert.equal(again.text, '{"status":"duplicate"}');
    assert.equal(forwardsOf(server.store.scan(OUTBOX_SPACE), 'evt_fw_1').length, 1);
    assert.equal(arrivalsOf(app, 'evt_fw_1').length, 1);
  });

  it('should not forward a delivery the receiver refused: bad signature, stale timestamp, not an event', async () => {
    const body = event('evt_fw_refused');
    const refused = [
      await send(server.url, body, { 'X-Signature': sign(Buffer.from('other')) }, clock.now()),
      await send(server.url, body, {}, clock.now() - 3600_000),
      await send(server.url, Buffer.from('{"id":"evt_fw_refused"}'), {}, clock.now()),
    ];
    assert.deepEqual(refused.map((res) => res.status), [401, 400, 400]);
    assert.deepEqual(forwardsOf(server.store.scan(OUTBOX_SPACE), 'evt_fw_refused'), []);
  });

  it('should retry while the app is down, on the outbox schedule, and deliver once it is back', async () => {
    await app.stop(appAnswer);
    const body = event('evt_fw_down', ',"total":3');
    assert.equal((await send(server.url, body, {}, clock.now())).status, 200);
    const [forward] = forwardsOf(server.store.scan(OUTBOX_SPACE), 'evt_fw_down');
    assert.ok(forward !== undefined);
    for (const attempts of [1, 2]) {
      const failed = await recordWhere(server.store, OUTBOX_SPACE, forward.id, (record) => record.doc['attempts'] === attempts);
      assert.equal(failed.doc['status'], 'failed');
      // Refused; the first attempt may find a kept connection the app's stop has just reset.
      assert.match(String(failed.doc['lastError']), attempts === 1 ? /^ECONN(REFUSED|RESET)$/ : /^ECONNREFUSED$/);
      // Equal jitter at one half: 3/4 of 1 s × 3^n.
      assert.equal(failed.dueAt, failed.modifiedAt + 0.75 * 1000 * 3 ** attempts);
      if (attempts === 2) await app.start();
      clock.advance((failed.dueAt as number) - clock.now());
    }
    const delivered = await recordWhere(server.store, OUTBOX_SPACE, forward.id, (record) => record.doc['status'] === 'delivered');
    assert.equal(delivered.doc['attempts'], 3);
    const [arrival, ...more] = arrivalsOf(app, 'evt_fw_down');
    assert.deepEqual(arrival?.body, body);
    assert.deepEqual(more, []);
    assert.equal(verifies(arrival as ReceivedRequest), true, 'the original signature, though the attempt came later');
  });

  it('should list the forwards in /$outbox (JSON and HTML) under "$forward", and never in /$subscriptions', async () => {
    const listed = await request(server.url, "/$outbox?$filter=subscription eq '$forward' and eventId eq 'evt_fw_1'");
    assert.equal(listed.status, 200, listed.text);
    const [item, ...others] = (listed.json() as { value: JsonObject[] }).value;
    assert.deepEqual(others, []);
    assert.equal(item?.['status'], 'delivered');
    assert.equal(item?.['source'], 'webhooks');
    assert.equal(item?.['event'], 'order.created');
    const page = await request(server.url, `/$outbox/${String(item?.['id'])}`, { headers: { Accept: 'text/html' } });
    assert.equal(page.status, 200);
    assert.match(page.headers['content-type'] as string, /^text\/html/);
    assert.match(page.text, /\$forward/);
    assert.match(page.text, /evt_fw_1/);
    const subscriptions = await request(server.url, '/$subscriptions');
    assert.deepEqual((subscriptions.json() as { value: unknown[] }).value, []);
    assert.ok([400, 404].includes((await request(server.url, '/$subscriptions/$forward')).status));
  });

  it('should keep refusePrivateAddresses for subscriptions: the forward alone is exempt', async () => {
    const body = JSON.stringify({ url: `${app.url}/hook`, events: ['things.*'], secret: SECRET });
    const put = await request(server.url, '/$subscriptions/local', { method: 'PUT', headers: { ...JSON_HEADERS, 'If-None-Match': '*' }, body });
    assert.equal(put.status, 201, put.text);
    const before = app.received.length;
    assert.equal((await request(server.url, '/things/t1', { method: 'PUT', headers: { ...JSON_HEADERS, 'If-None-Match': '*' }, body: '{}' })).status, 201);
    const [delivery] = server.store.scan(OUTBOX_SPACE).filter((record) => record.doc['subscription'] === 'local');
    assert.ok(delivery !== undefined);
    const dead = await recordWhere(server.store, OUTBOX_SPACE, delivery.id, (record) => record.doc['status'] === 'dead');
    assert.equal(dead.doc['lastError'], 'address not allowed');
    assert.equal(app.received.length, before);
  });
});

describe('forwarding, what start() refuses', () => {
  const tempDir = tempDirsForSuite('forwarding-refused');

  it('should refuse a forward URL that reaches this server itself, before a data dir is made', async () => {
    const dataDir = join(tempDir(), 'store');
    const options = { port: 0, dataDir, log: silentLogger, baseUrl: 'http://api.example.test' };
    await assert.rejects(start({ ...options, webhooks: { forward: 'http://api.example.test/webhooks' } }), /webhooks\.forward.*this server itself/);
    assert.equal(existsSync(dataDir), false);
  });
});

describe('forwarding with the real binary (--forward)', () => {
  const servers: RunningServer[] = [];
  const app = theApp();
  before(() => app.start());
  after(async () => {
    for (const server of servers) killIfRunning(server.child);
    await app.stop(appAnswer);
  });
  const tempDir = tempDirsForSuite('forwarding');
  const env = { RESAPI_WEBHOOK_SECRETS: SECRET };

  async function serve(args: readonly string[]): Promise<RunningServer> {
    const server = await startBinary(args, env);
    servers.push(server);
    return server;
  }

  it('should forward an event accepted right before a kill -9, once the server is back', { timeout: 60_000 }, async () => {
    const args = ['--data-dir', join(tempDir(), 'store'), '--forward', `${app.url}/webhooks`];
    const first = await serve(args);
    // The app holds the first attempt, so the forward's outcome is never written before the kill.
    app.answers = ['hold'];
    const body = event('evt_fw_crash');
    const sent = await send(first.url, body, {}, Date.now());
    assert.equal(sent.text, '{"status":"accepted"}');
    await eventually('the first attempt at the app', () => arrivalsOf(app, 'evt_fw_crash').length === 1);
    first.child.kill('SIGKILL');
    await once(first.child, 'exit');
    app.release(appAnswer);
    const second = await serve(args);
    const delivered = await eventually('the forward delivered after the restart', async () => {
      const res = await request(second.url, "/$outbox?$filter=subscription eq '$forward'");
      const items = (res.json() as { value: JsonObject[] }).value;
      return items.length === 1 && items[0]?.['status'] === 'delivered' ? items[0] : undefined;
    });
    assert.equal(delivered['eventId'], 'evt_fw_crash');
    const arrivals = arrivalsOf(app, 'evt_fw_crash');
    assert.equal(arrivals.length, 2, 'the attempt cut by the kill, then the one after the restart');
    for (const arrival of arrivals) {
      assert.deepEqual(arrival.body, body);
      assert.equal(verifies(arrival), true);
    }
    assert.equal(await second.stop(), 0);
  });

  it('should refuse to start when --forward and the config file both say where to forward', async () => {
    const dir = tempDir();
    const config = join(dir, 'config.json');
    writeFileSync(config, JSON.stringify({ webhooks: { forward: `${app.url}/other` } }));
    const run = await runBinary(['serve', '--memory', '--port', '0', '--config', config, '--forward', `${app.url}/webhooks`], env);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /--forward.*webhooks\.forward/);
    assert.equal(run.stdout, '');
  });

  it('should refuse a --forward that is not an http(s) URL, as a usage error', async () => {
    const run = await runBinary(['serve', '--memory', '--port', '0', '--forward', 'ftp://127.0.0.1/hooks'], env);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /--forward must be an absolute http or https URL/);
  });
});
