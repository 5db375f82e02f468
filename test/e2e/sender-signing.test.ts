// End to end: the sender speaks Standard Webhooks (CONVENTIONS.md#deliveries,
// CONVENTIONS.md#signing-secrets-and-rotation, CONVENTIONS.md#subscriptions). A receiver on
// 127.0.0.1 verifies every delivery the way a Standard Webhooks verifier does, written here from the
// specification (HMAC-SHA256 over `id.timestamp.body`, base64, `v1,` entries separated by spaces;
// the key is the base64 remainder of a `whsec_` secret, or with the verifier's `format: "raw"` the
// secret's own bytes), and checks resapi's own `X-Signature` beside it. On an injected clock: the
// event id is the same on every attempt, a generated secret works at the receiver and is shown only
// at `$secret`, a rotation signs with both secrets for its overlap and with the new one after it.
// Every event has `type` and a `data.sequence` that keeps growing across a restart, a snapshot and a
// kill -9 of the process on the same data dir.
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import type { Random } from '../../lib/clock.js';
import { start, type ResapiServer } from '../../lib/index.js';
import type { JsonObject } from '../../lib/json.js';
import { silentLogger } from '../../lib/log.js';
import { openFileStore } from '../../lib/store/file.js';
import { OUTBOX_SPACE } from '../../lib/webhooks/events.js';
import { SECRET_SPACE } from '../../lib/webhooks/subscriptions.js';
import { killIfRunning, startBinary, type RunningServer } from '../support/binary.js';
import { ManualClock } from '../support/clock.js';
import { eventually } from '../support/eventually.js';
import { create, JSON_HEADERS, request, type TestResponse } from '../support/http.js';
import { Receiver, type ReceivedRequest } from '../support/receiver.js';
import { serverForSuite } from '../support/server.js';
import { recordWhere } from '../support/store.js';
import { tempDirsForSuite } from '../support/temp-dir.js';

/** Standard Webhooks' spelling of a secret whose key is base64. */
const WHSEC = 'whsec_';
/** The verifier's tolerance for `webhook-timestamp` (the specification's five minutes). */
const TOLERANCE_S = 300;

// ---- A Standard Webhooks verifier, from the specification (not from resapi's code) ----

/** The key the verifier is constructed with: `new Webhook(secret)`, or `new Webhook(secret, { format: "raw" })`. */
function verifierKey(secret: string, format: 'base64' | 'raw'): Buffer {
  if (format === 'raw') return Buffer.from(secret, 'utf8');
  return Buffer.from(secret.startsWith(WHSEC) ? secret.slice(WHSEC.length) : secret, 'base64');
}

function single(headers: IncomingHttpHeaders, name: string): string {
  const value = headers[name];
  assert.equal(typeof value, 'string', `"Missing required headers": ${name}`);
  return value as string;
}

/**
 * The positions of the `webhook-signature` entries that sign this delivery under `key`, after the
 * checks a verifier makes first: the three headers present, the timestamp within the tolerance of `nowS`.
 */
function matchingEntries(delivery: ReceivedRequest, key: Buffer, nowS: number): number[] {
  const id = single(delivery.headers, 'webhook-id');
  const timestamp = single(delivery.headers, 'webhook-timestamp');
  const signatures = single(delivery.headers, 'webhook-signature');
  assert.match(timestamp, /^[0-9]+$/);
  assert.ok(Math.abs(nowS - Number(timestamp)) <= TOLERANCE_S, `timestamp ${timestamp} is within ${TOLERANCE_S} s of ${nowS}`);
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.`).update(delivery.body).digest();
  const matching: number[] = [];
  for (const [at, entry] of signatures.split(' ').entries()) {
    const [version, signature] = entry.split(',');
    assert.equal(version, 'v1', `entry ${at} of ${signatures}`);
    const presented = Buffer.from(signature ?? '', 'base64');
    if (presented.length === expected.length && timingSafeEqual(presented, expected)) matching.push(at);
  }
  return matching;
}

/** resapi's own X-Signature: lowercase hex HMAC-SHA256 of the body under the secret as written. */
function xSignatureOf(delivery: ReceivedRequest, secret: string): boolean {
  return delivery.headers['x-signature'] === createHmac('sha256', secret).update(delivery.body).digest('hex');
}

interface EventBody {
  readonly id: string;
  readonly type: string;
  readonly event: string;
  readonly data: { readonly collection: string; readonly id: string; readonly sequence: number };
}

function bodyOf(delivery: ReceivedRequest): EventBody {
  return JSON.parse(delivery.body.toString('utf8')) as EventBody;
}

// ---- The server's side ----

function putSubscription(base: string, id: string, body: JsonObject, etag?: string): Promise<TestResponse> {
  const condition: Record<string, string> = etag === undefined ? { 'If-None-Match': '*' } : { 'If-Match': etag };
  return request(base, `/$subscriptions/${id}`, { method: 'PUT', headers: { ...JSON_HEADERS, ...condition }, body: JSON.stringify(body) });
}

async function etagOf(base: string, path: string): Promise<string> {
  const res = await request(base, path);
  assert.equal(res.status, 200, path);
  return res.headers.etag as string;
}

async function secretOf(base: string, id: string): Promise<string> {
  const res = await request(base, `/$subscriptions/${id}/$secret`);
  assert.equal(res.status, 200, res.text);
  return (res.json() as { secret: string }).secret;
}

/** Jitter at one half; every 24-byte draw (a generated secret's) kept, so the test knows where a secret came from. */
function recordingRandom(draws: Buffer[]): Random {
  return {
    bytes: (size) => {
      const bytes = randomBytes(size);
      if (size === 24) draws.push(Buffer.from(bytes));
      return bytes;
    },
    fraction: () => 0.5,
  };
}

describe('deliveries signed as Standard Webhooks', () => {
  const clock = new ManualClock(Date.now());
  const receiver = new Receiver();
  const draws: Buffer[] = [];
  before(async () => {
    await receiver.start();
  });
  after(async () => {
    await receiver.stop();
  });
  const server = serverForSuite({ memory: true, clock, random: recordingRandom(draws), outbox: { workers: 2, timeoutMs: 5000 } });
  beforeEach(() => {
    receiver.answers = [];
  });
  const nowS = (): number => Math.floor(clock.now() / 1000);

  it('should carry webhook-id, webhook-timestamp and webhook-signature beside X-Signature and X-Timestamp', async () => {
    const secret = 'a-raw-secret-of-the-subscriber';
    assert.equal((await putSubscription(server.url, 'raw', { url: receiver.url, events: ['raws.*'], secret })).status, 201);
    const arriving = receiver.next();
    await create(server.url, '/raws/r1', { n: 1 });
    const delivery = await arriving;
    const body = bodyOf(delivery);
    const eventId = server.store.scan(OUTBOX_SPACE).find((record) => record.doc['subscription'] === 'raw')?.doc['eventId'];
    assert.equal(delivery.headers['webhook-id'], body.id, 'webhook-id is the event id');
    assert.equal(delivery.headers['webhook-id'], eventId);
    assert.equal(delivery.headers['webhook-timestamp'], delivery.headers['x-timestamp']);
    assert.equal(delivery.headers['x-timestamp'], String(nowS()));
    assert.deepEqual(matchingEntries(delivery, verifierKey(secret, 'raw'), nowS()), [0], 'verified with format: "raw"');
    assert.deepEqual(matchingEntries(delivery, verifierKey(secret, 'base64'), nowS()), [], 'a raw secret read as base64 is another key');
    assert.match(delivery.headers['webhook-signature'] as string, /^v1,[A-Za-z0-9+/]{43}=$/);
    assert.ok(xSignatureOf(delivery, secret), 'X-Signature as before');
  });

  it('should send the same webhook-id on every attempt, with the attempt\'s own timestamp and signature', async () => {
    const secret = `${WHSEC}${Buffer.from('retried-subscriber-key-24b').toString('base64')}`;
    assert.equal((await putSubscription(server.url, 'retried', { url: receiver.url, events: ['retries.*'], secret })).status, 201);
    receiver.answers = [503];
    const first = receiver.next();
    await create(server.url, '/retries/r1', { n: 1 });
    const failed = await first;
    const delivery = server.store.scan(OUTBOX_SPACE).find((record) => record.doc['subscription'] === 'retried');
    assert.ok(delivery !== undefined);
    await recordWhere(server.store, OUTBOX_SPACE, delivery.id, (record) => record.doc['status'] === 'failed');
    const second = receiver.next();
    // Equal jitter at one half: the first retry waits 3/4 of 3 s.
    clock.advance(2250);
    const retried = await second;
    assert.equal(retried.headers['webhook-id'], failed.headers['webhook-id']);
    assert.equal(retried.body.toString(), failed.body.toString(), 'the same bytes');
    assert.equal(retried.headers['webhook-timestamp'], String(nowS()), 'this attempt\'s time');
    assert.notEqual(retried.headers['webhook-timestamp'], failed.headers['webhook-timestamp']);
    assert.equal(retried.headers['webhook-timestamp'], retried.headers['x-timestamp']);
    assert.notEqual(retried.headers['webhook-signature'], failed.headers['webhook-signature'], 'the timestamp is signed');
    assert.deepEqual(matchingEntries(retried, verifierKey(secret, 'base64'), nowS()), [0]);
    await recordWhere(server.store, OUTBOX_SPACE, delivery.id, (record) => record.doc['status'] === 'delivered');
  });

  it('should generate a whsec_ secret from the injected random source when created without one', async () => {
    const created = await putSubscription(server.url, 'generated', { url: receiver.url, events: ['gens.*'] });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(created.json(), { id: 'generated', url: receiver.url, events: ['gens.*'], status: 'active', secretOverlapS: 86400 });
    const secret = await secretOf(server.url, 'generated');
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{32}$/, '24 bytes in base64');
    assert.equal(secret, `${WHSEC}${(draws.at(-1) as Buffer).toString('base64')}`, 'drawn from start({ random })');
    const arriving = receiver.next();
    await create(server.url, '/gens/g1', { n: 1 });
    const delivery = await arriving;
    assert.deepEqual(matchingEntries(delivery, verifierKey(secret, 'base64'), nowS()), [0], 'the verifier takes the whsec_ secret as is');
    assert.ok(xSignatureOf(delivery, secret));
    // A replace without a secret keeps it.
    const replaced = await putSubscription(server.url, 'generated', { url: receiver.url, events: ['gens.*', 'more.*'] }, await etagOf(server.url, '/$subscriptions/generated'));
    assert.equal(replaced.status, 200);
    assert.equal(await secretOf(server.url, 'generated'), secret);
  });

  it('should show a secret at $secret alone: no-store, no validators, never in the subscription, a listing, HTML or /$openapi', async () => {
    const created = await putSubscription(server.url, 'shown', { url: receiver.url, events: ['shown.*'] });
    assert.equal(created.status, 201);
    const res = await request(server.url, '/$subscriptions/shown/$secret');
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-type'], 'application/json');
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.equal(res.headers.etag, undefined, 'no validator to reuse or to compare');
    assert.equal(res.headers['last-modified'], undefined);
    const { secret } = res.json() as { secret: string };
    assert.deepEqual(Object.keys(res.json() as object), ['secret']);
    const head = await request(server.url, '/$subscriptions/shown/$secret', { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.body.length, 0);
    assert.equal(head.headers['cache-control'], 'no-store');
    const elsewhere = [
      created,
      await request(server.url, '/$subscriptions/shown'),
      await request(server.url, '/$subscriptions/shown', { headers: { Accept: 'text/html' } }),
      await request(server.url, '/$subscriptions'),
      await request(server.url, '/$subscriptions', { headers: { Accept: 'text/html' } }),
      await request(server.url, '/$outbox'),
      await request(server.url, '/$openapi'),
    ];
    for (const other of elsewhere) {
      assert.ok(other.status === 200 || other.status === 201, other.text);
      assert.ok(!other.text.includes(secret), 'the secret appears nowhere else');
      assert.ok(!other.text.includes(secret.slice(WHSEC.length)), 'nor its key');
    }
    const openapi = (await request(server.url, '/$openapi')).json() as { paths: Record<string, JsonObject> };
    assert.ok(openapi.paths['/$subscriptions/{id}/$secret'] !== undefined, 'a route of the table');
    assert.doesNotMatch(JSON.stringify(openapi.paths['/$subscriptions/{id}/$secret']), /whsec_[A-Za-z0-9+/]/, 'no example secret');
    const missing = await request(server.url, '/$subscriptions/nobody/$secret');
    assert.equal(missing.status, 404);
    assert.equal(missing.headers['content-type'], 'application/problem+json');
    assert.match((missing.json() as { detail: string }).detail, /no subscription "?nobody"?/i);
    const put = await request(server.url, '/$subscriptions/shown/$secret', { method: 'PUT', headers: JSON_HEADERS, body: '{"secret":"x"}' });
    assert.equal(put.status, 405);
    assert.equal(put.headers.allow, 'GET, HEAD, OPTIONS');
  });

  it('should sign with both secrets during the overlap, the current first, X-Signature with the current alone', async () => {
    const old = 'the-first-secret-of-rotated';
    const fresh = `${WHSEC}${Buffer.from('the-second-secret-of-rotated').toString('base64')}`;
    assert.equal((await putSubscription(server.url, 'rotated', { url: receiver.url, events: ['rots.*'], secret: old, secretOverlapS: 3600 })).status, 201);
    const etag = await etagOf(server.url, '/$subscriptions/rotated');
    const replaced = await putSubscription(server.url, 'rotated', { url: receiver.url, events: ['rots.*'], secret: fresh, secretOverlapS: 3600 }, etag);
    assert.equal(replaced.status, 200);
    assert.equal(await secretOf(server.url, 'rotated'), fresh, 'the current one, at once');
    for (const res of [replaced, await request(server.url, '/$subscriptions/rotated/$secret')]) assert.ok(!res.text.includes(old), 'the previous is never shown');
    const during = receiver.next();
    await create(server.url, '/rots/r1', { n: 1 });
    const overlapping = await during;
    assert.equal((overlapping.headers['webhook-signature'] as string).split(' ').length, 2);
    assert.deepEqual(matchingEntries(overlapping, verifierKey(fresh, 'base64'), nowS()), [0], 'the current first');
    assert.deepEqual(matchingEntries(overlapping, verifierKey(old, 'raw'), nowS()), [1], 'then the previous');
    assert.ok(xSignatureOf(overlapping, fresh));
    // One second before the window ends, still both.
    clock.advance(3599_000);
    const late = receiver.next();
    await create(server.url, '/rots/r2', { n: 2 });
    assert.deepEqual(matchingEntries(await late, verifierKey(old, 'raw'), nowS()), [1]);
    clock.advance(1000);
    const afterwards = receiver.next();
    await create(server.url, '/rots/r3', { n: 3 });
    const alone = await afterwards;
    assert.equal((alone.headers['webhook-signature'] as string).split(' ').length, 1, 'the window is over');
    assert.deepEqual(matchingEntries(alone, verifierKey(fresh, 'base64'), nowS()), [0]);
    assert.deepEqual(matchingEntries(alone, verifierKey(old, 'raw'), nowS()), []);
    // The next write of the subscription drops the expired secret from its record.
    assert.equal(typeof server.store.get(SECRET_SPACE, 'rotated')?.doc['previous'], 'string');
    const touched = await putSubscription(server.url, 'rotated', { url: receiver.url, events: ['rots.*'], secretOverlapS: 3600 }, await etagOf(server.url, '/$subscriptions/rotated'));
    assert.equal(touched.status, 200);
    assert.deepEqual(Object.keys(server.store.get(SECRET_SPACE, 'rotated')?.doc ?? {}), ['secret']);
  });

  it('should change nothing when the same secret is sent again, and sign with one secret at once when secretOverlapS is 0', async () => {
    const first = 'same-secret-first-one';
    const second = 'same-secret-second-one';
    assert.equal((await putSubscription(server.url, 'same', { url: receiver.url, events: ['sames.*'], secret: first, secretOverlapS: 600 })).status, 201);
    assert.equal((await putSubscription(server.url, 'same', { url: receiver.url, events: ['sames.*'], secret: second, secretOverlapS: 600 }, await etagOf(server.url, '/$subscriptions/same'))).status, 200);
    const record = server.store.get(SECRET_SPACE, 'same');
    clock.advance(300_000);
    assert.equal((await putSubscription(server.url, 'same', { url: receiver.url, events: ['sames.*'], secret: second, secretOverlapS: 600 }, await etagOf(server.url, '/$subscriptions/same'))).status, 200);
    assert.equal(server.store.get(SECRET_SPACE, 'same')?.version, record?.version, 'the secret record is not written again');
    clock.advance(300_000);
    const after = receiver.next();
    await create(server.url, '/sames/s1', { n: 1 });
    const delivery = await after;
    assert.deepEqual(matchingEntries(delivery, verifierKey(second, 'raw'), nowS()), [0], 'the window still ends 600 s after the change of secret');
    assert.deepEqual(matchingEntries(delivery, verifierKey(first, 'raw'), nowS()), []);

    const noOverlap = 'no-overlap-first-one';
    const replacement = 'no-overlap-second-one';
    assert.equal((await putSubscription(server.url, 'cut', { url: receiver.url, events: ['cuts.*'], secret: noOverlap, secretOverlapS: 0 })).status, 201);
    assert.equal((await putSubscription(server.url, 'cut', { url: receiver.url, events: ['cuts.*'], secret: replacement, secretOverlapS: 0 }, await etagOf(server.url, '/$subscriptions/cut'))).status, 200);
    assert.deepEqual(Object.keys(server.store.get(SECRET_SPACE, 'cut')?.doc ?? {}), ['secret'], 'nothing kept');
    const next = receiver.next();
    await create(server.url, '/cuts/c1', { n: 1 });
    const cut = await next;
    assert.equal((cut.headers['webhook-signature'] as string).split(' ').length, 1);
    assert.deepEqual(matchingEntries(cut, verifierKey(replacement, 'raw'), nowS()), [0]);
  });

  it('should give every event a type equal to its kind and a data.sequence that grows with every change', async () => {
    assert.equal((await putSubscription(server.url, 'sequenced', { url: receiver.url, events: ['seqs.*'], secret: 'sequenced-secret' })).status, 201);
    const bodies: EventBody[] = [];
    const changes: (() => Promise<unknown>)[] = [
      () => create(server.url, '/seqs/a', { n: 1 }),
      () => create(server.url, '/seqs/b', { n: 1 }),
      async () => request(server.url, '/seqs/a', { method: 'PUT', headers: { ...JSON_HEADERS, 'If-Match': await etagOf(server.url, '/seqs/a') }, body: '{"n":2}' }),
      () => request(server.url, '/seqs/a', { method: 'DELETE' }),
      () => request(server.url, '/seqs/a/$undoDelete', { method: 'PUT' }),
    ];
    for (const change of changes) {
      const arriving = receiver.next();
      await change();
      bodies.push(bodyOf(await arriving));
    }
    assert.deepEqual(bodies.map((body) => body.type), ['seqs.created', 'seqs.created', 'seqs.replaced', 'seqs.deleted', 'seqs.restored']);
    for (const body of bodies) assert.equal(body.type, body.event);
    const sequences = bodies.map((body) => body.data.sequence);
    for (const sequence of sequences) assert.ok(Number.isSafeInteger(sequence) && sequence > 0, String(sequence));
    for (let n = 1; n < sequences.length; n++) assert.ok((sequences[n] as number) > (sequences[n - 1] as number), `${sequences}`);
    assert.equal(sequences.at(-1), server.store.get('seqs', 'a')?.version, 'the store\'s commit sequence');
  });
});

describe('$secret with API keys', () => {
  const KEY = 'secret-route-test-key';
  const server = serverForSuite({ memory: true, apiKeys: [KEY] });

  it('should ask for a key like every route but the receiver, and say the answer varies with it', async () => {
    const auth = { Authorization: `Bearer ${KEY}` };
    const body = JSON.stringify({ url: 'http://127.0.0.1:9/hook', events: ['*'] });
    assert.equal((await request(server.url, '/$subscriptions/k1', { method: 'PUT', headers: { ...JSON_HEADERS, ...auth, 'If-None-Match': '*' }, body })).status, 201);
    assert.equal((await request(server.url, '/$subscriptions/k1/$secret')).status, 401);
    const res = await request(server.url, '/$subscriptions/k1/$secret', { headers: auth });
    assert.equal(res.status, 200);
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.equal(res.headers.vary, 'Authorization');
  });
});

describe('data.sequence across restarts', () => {
  const receiver = new Receiver();
  const servers: RunningServer[] = [];
  before(async () => {
    await receiver.start();
  });
  after(async () => {
    for (const running of servers) killIfRunning(running.child);
    await receiver.stop();
  });
  // Registered after the hook above, so the folders go once no server uses them any more.
  const tempDir = tempDirsForSuite('sender-sequence');

  /** The sequences of the events the receiver got for `ids` (each event counted once, by its id). */
  function sequencesOf(from: number): Map<string, number> {
    const seen = new Map<string, number>();
    for (const delivery of receiver.received.slice(from)) {
      const body = bodyOf(delivery);
      seen.set(body.id, body.data.sequence);
    }
    return seen;
  }

  it('should keep growing after a restart from a snapshot', async () => {
    const dir = tempDir();
    const from = receiver.received.length;
    const open = async (): Promise<ResapiServer> => {
      // The smallest trigger (a 1-byte floor; then a quarter of the last snapshot, CONVENTIONS.md#durability):
      // snapshots follow the commits closely, so the restart reads the sequence from a snapshot.
      const opened = await openFileStore({ dir, snapshotThresholdBytes: 1, log: silentLogger });
      assert.ok(opened.ok);
      return start({ port: 0, store: opened.store, log: silentLogger });
    };
    const first = await open();
    try {
      assert.equal((await putSubscription(first.url, 'snap', { url: receiver.url, events: ['snaps.*'], secret: 'snapshot-secret' })).status, 201);
      for (const id of ['s1', 's2']) await create(first.url, `/snaps/${id}`, { n: 1 });
      await eventually('two deliveries', () => sequencesOf(from).size === 2);
    } finally {
      await first.close();
    }
    assert.ok(existsSync(join(dir, 'snapshot.dat')), 'a snapshot was written');
    const before = Math.max(...sequencesOf(from).values());
    const second = await open();
    try {
      const etag = await etagOf(second.url, '/snaps/s1');
      await request(second.url, '/snaps/s1', { method: 'PUT', headers: { ...JSON_HEADERS, 'If-Match': etag }, body: '{"n":2}' });
      await eventually('the third delivery', () => sequencesOf(from).size === 3);
      const sequences = [...sequencesOf(from).values()];
      assert.ok((sequences[2] as number) > before, `${sequences}`);
    } finally {
      await second.close();
    }
  });

  it('should keep growing after kill -9 of the process on the same data dir', { timeout: 60_000 }, async () => {
    const dir = tempDir();
    const config = join(dir, 'resapi.json');
    writeFileSync(config, JSON.stringify({ outbox: { retry: { baseMs: 20, factor: 2, capMs: 200, attempts: 50 } } }));
    const args = ['--data-dir', join(dir, 'store'), '--config', config];
    const from = receiver.received.length;
    const first = await startBinary(args);
    servers.push(first);
    assert.equal((await putSubscription(first.url, 'crash', { url: receiver.url, events: ['crashes.*'], secret: 'crash-secret-value' })).status, 201);
    for (const id of ['c1', 'c2', 'c3']) await create(first.url, `/crashes/${id}`, { n: 1 });
    await eventually('three deliveries before the kill', () => sequencesOf(from).size === 3);
    first.child.kill('SIGKILL');
    await eventually('the first process to die', () => first.child.signalCode !== null);
    const before = Math.max(...sequencesOf(from).values());
    const second = await startBinary(args);
    servers.push(second);
    for (const id of ['c1', 'c2']) {
      const etag = await etagOf(second.url, `/crashes/${id}`);
      await request(second.url, `/crashes/${id}`, { method: 'PUT', headers: { ...JSON_HEADERS, 'If-Match': etag }, body: '{"n":2}' });
    }
    await create(second.url, '/crashes/c4', { n: 1 });
    await eventually('three more deliveries after the restart', () => sequencesOf(from).size === 6);
    const after = [...sequencesOf(from).values()].slice(3);
    for (const sequence of after) assert.ok(sequence > before, `${sequence} after ${before}`);
    for (let n = 1; n < after.length; n++) assert.ok((after[n] as number) > (after[n - 1] as number), `${after}`);
    assert.equal(await second.stop(), 0);
  });
});
