// End to end, in-process: the webhook receiver (CONVENTIONS.md#receiving-webhooks) and the inbox
// (CONVENTIONS.md#inbox). Every failure status and that it records nothing; raw-byte signatures
// and rotation; the timestamp window; dedup; a store failure answered 503; /$inbox as a collection;
// and, on a manual clock, whole retry schedules, dead letters, $retry, timeouts, parked events and
// the dedup window, all in milliseconds.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Random } from '../../lib/clock.js';
import type { JsonObject } from '../../lib/json.js';
import { webhookSignature } from '../../lib/protocol/signature.js';
import { MemoryStore } from '../../lib/store/memory.js';
import { INBOX_SPACE, type HandlerContext } from '../../lib/webhooks/inbox.js';
import { ManualClock } from '../support/clock.js';
import { eventually } from '../support/eventually.js';
import { problemOf, request, type TestResponse } from '../support/http.js';
import { serverForSuite, withServer } from '../support/server.js';
import { recordWhere } from '../support/store.js';
import { tempDirsForSuite } from '../support/temp-dir.js';

const SECRET = 'current-secret';
const PREVIOUS = 'previous-secret';

function deliver(base: string, body: string | Buffer, headers: Record<string, string | string[]> = {}, secret = SECRET): Promise<TestResponse> {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  return request(base, '/webhooks', { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Signature': webhookSignature(bytes, secret), ...headers }, body: bytes });
}

function eventBody(id: string, event = 'order.created', extra: JsonObject = {}): string {
  return JSON.stringify({ id, event, ...extra });
}

function statusOf(res: TestResponse): string {
  return (res.json() as { status: string }).status;
}

describe('the webhook receiver', () => {
  const handled: { event: JsonObject; context: HandlerContext }[] = [];
  let handledNext: (() => void) | undefined;
  const server = serverForSuite({ memory: true, webhookSecrets: [SECRET, PREVIOUS] }, async (server) => {
    server.webhooks.on('*', (event, context) => {
      handled.push({ event, context });
      handledNext?.();
    });
  });

  it('should accept a signed event with 200 {"status":"accepted"}, list it, and hand it to its handler afterwards', async () => {
    const processed = new Promise<void>((resolve) => (handledNext = resolve));
    const res = await deliver(server.url, eventBody('evt-1', 'order.created', { total: 12.5 }));
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-type'], 'application/json');
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.equal(statusOf(res), 'accepted');
    await processed;
    const last = handled.at(-1);
    assert.deepEqual(last?.event, { id: 'evt-1', event: 'order.created', total: 12.5 });
    assert.equal(last?.context.attempt, 1);
    assert.match(last?.context.receivedAt ?? '', /^\d{4}-\d\d-\d\dT/);
    const item = await recordWhere(server.store, INBOX_SPACE, 'evt-1', (record) => record.doc['status'] === 'processed');
    assert.deepEqual(Object.keys(item.doc).sort(), ['attempts', 'event', 'id', 'processedAt', 'receivedAt', 'status']);
  });

  it('should answer a second delivery of a known id 200 {"status":"duplicate"} and run nothing more', async () => {
    const before = handled.length;
    const again = await deliver(server.url, eventBody('evt-1', 'order.created', { total: 12.5 }));
    assert.equal(again.status, 200);
    assert.equal(statusOf(again), 'duplicate');
    assert.equal(handled.length, before);
  });

  it('should verify the raw bytes: key order, whitespace and \\u escapes a re-serialization would change still verify', async () => {
    for (const [n, text] of ['{"event":"x","id":"raw-1"}', '{ "id" : "raw-2" ,\n "event":"x" }', '{"id":"\\u0072aw-3","event":"\\u0078"}'].entries()) {
      const res = await deliver(server.url, text);
      assert.equal(res.status, 200, `body ${n}: ${res.text}`);
    }
    assert.equal(server.store.get(INBOX_SPACE, 'raw-3')?.doc['event'], 'x');
  });

  it('should accept a body signed with the previous secret during a rotation', async () => {
    assert.equal((await deliver(server.url, eventBody('rot-1'), {}, PREVIOUS)).status, 200);
  });

  it('should answer a missing, malformed, repeated or wrong X-Signature 401 with a challenge, and record nothing', async () => {
    const body = eventBody('unsigned-1');
    const good = webhookSignature(body, SECRET);
    const cases: readonly (string | string[] | undefined)[] = [undefined, '', 'abc', good.toUpperCase(), [good, good], webhookSignature(body, 'wrong'), webhookSignature(`${body} `, SECRET)];
    for (const signature of cases) {
      const headers: Record<string, string | string[]> = { 'Content-Type': 'application/json' };
      if (signature !== undefined) headers['X-Signature'] = signature;
      const res = await request(server.url, '/webhooks', { method: 'POST', headers, body });
      assert.equal(res.status, 401, JSON.stringify(signature));
      assert.equal(res.headers['www-authenticate'], 'HMAC-SHA256 realm="webhooks"');
      assert.equal(res.headers['content-type'], 'application/problem+json');
    }
    assert.equal(server.store.get(INBOX_SPACE, 'unsigned-1'), undefined);
  });

  it('should check the signature before anything parses the body', async () => {
    const res = await request(server.url, '/webhooks', { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Signature': '0'.repeat(64) }, body: 'not json' });
    assert.equal(res.status, 401, 'a malformed body with a bad signature is a 401, not a 400');
  });

  it('should refuse a stale, future, malformed or repeated X-Timestamp with 400, and record nothing', async () => {
    const now = Math.floor(Date.now() / 1000);
    for (const timestamp of [String(now - 400), String(now + 400), '12.5', 'soon', [String(now), String(now)]] as const) {
      const id = `ts-${JSON.stringify(timestamp)}`;
      const res = await deliver(server.url, eventBody(id), { 'X-Timestamp': timestamp as string | string[] });
      assert.equal(res.status, 400, JSON.stringify(timestamp));
      assert.equal(server.store.get(INBOX_SPACE, id), undefined);
    }
    assert.equal((await deliver(server.url, eventBody('ts-ok'), { 'X-Timestamp': String(now) })).status, 200);
  });

  it('should refuse a verified body that is not an event with 400 in its own words', async () => {
    const cases: readonly [string, RegExp][] = [
      ['{"id": }', /not valid JSON: unexpected character at offset 7/],
      ['[1,2]', /not a webhook event/],
      ['{"event":"x"}', /not a webhook event/],
      [eventBody('x'.repeat(256)), /not a webhook event/],
      ['{"id":"no-kind"}', /not a webhook event/],
      ['{"id":7,"event":"x"}', /not a webhook event/],
    ];
    for (const [body, detail] of cases) {
      const res = await deliver(server.url, body);
      assert.equal(res.status, 400, body.slice(0, 40));
      assert.match(problemOf(res).detail, detail);
    }
  });

  it('should answer 413 to a body over the cap, and 415 to a body that is not JSON, before the signature', async () => {
    const big = Buffer.alloc(1024 * 1024 + 1, 0x20);
    assert.equal((await deliver(server.url, big)).status, 413);
    assert.equal((await deliver(server.url, eventBody('csv'), { 'Content-Type': 'text/csv' })).status, 415);
  });

  it('should list received events as a collection: paging, $filter, item by percent-encoded id, 304, unknown property 400', async () => {
    for (const id of ['list/a b', 'list-2', 'list-3']) assert.equal((await deliver(server.url, eventBody(id, 'list.kind'))).status, 200);
    const page = await request(server.url, "/$inbox?$filter=event eq 'list.kind'&$orderby=id", { headers: { Prefer: 'maxpagesize=2' } });
    assert.equal(page.status, 200);
    const envelope = page.json() as { value: { id: string }[]; '@nextLink'?: string };
    assert.deepEqual(envelope.value.map((item) => item.id), ['list-2', 'list-3']);
    const rest = (await request(server.url, envelope['@nextLink'] as string)).json() as { value: { id: string }[] };
    assert.deepEqual(rest.value.map((item) => item.id), ['list/a b']);
    const item = await request(server.url, `/$inbox/${encodeURIComponent('list/a b')}`);
    assert.equal(item.status, 200);
    assert.equal((item.json() as { event: string }).event, 'list.kind');
    assert.equal((await request(server.url, `/$inbox/${encodeURIComponent('list/a b')}`, { headers: { 'If-None-Match': item.headers.etag as string } })).status, 304);
    assert.equal((await request(server.url, '/$inbox/never-received')).status, 404);
    assert.equal((await request(server.url, "/$inbox?$filter=body eq 'x'")).status, 400, 'the body is not a property of an inbox item');
  });
});

describe('the webhook receiver without a secret, or with a failing store', () => {
  it('should answer 503 with Retry-After and log the reason once, at start', async () => {
    const logged: string[] = [];
    await withServer({ memory: true, log: (_level, message) => void logged.push(message) }, async (server) => {
      for (let n = 0; n < 3; n++) {
        const res = await deliver(server.url, eventBody(`no-secret-${n}`));
        assert.equal(res.status, 503);
        assert.ok(res.headers['retry-after'] !== undefined);
      }
      assert.equal(logged.filter((message) => message.includes('no secret is configured')).length, 1);
    });
  });

  it('should answer 503 with Retry-After when the record cannot be made durable, and accept the retry later', async () => {
    const store = new MemoryStore();
    const commit = store.commit.bind(store);
    let failing = true;
    store.commit = (batch) => (failing && batch.mutations.some((mutation) => mutation.collection === INBOX_SPACE) ? Promise.resolve({ ok: false, reason: 'unavailable', detail: 'disk full' }) : commit(batch));
    await withServer({ store, webhookSecrets: [SECRET] }, async (server) => {
      const refused = await deliver(server.url, eventBody('full-1'));
      assert.equal(refused.status, 503);
      assert.equal(refused.headers['retry-after'], '1');
      assert.equal(store.get(INBOX_SPACE, 'full-1'), undefined);
      failing = false;
      assert.equal(statusOf(await deliver(server.url, eventBody('full-1'))), 'accepted');
    });
  });
});

describe('processing on the injected clock', () => {
  const alwaysLongest: Random = { bytes: (size) => Buffer.alloc(size, 7), fraction: () => 0.999_999 };
  let dir = '';
  const clock = new ManualClock(Date.now());
  let failing = true;
  const attempts: number[] = [];
  /** Attempts of the handler that hangs, as they start. */
  const slowRuns: number[] = [];
  const server = serverForSuite(() => {
    dir = tempDir();
    return {
      dataDir: dir,
      clock,
      random: alwaysLongest,
      webhookSecrets: [SECRET],
      webhooks: { handlerTimeoutMs: 5000 },
      webhookHandlers: {
        'flaky.kind': (_event, context) => {
          attempts.push(context.attempt);
          if (failing) throw new Error(`failure ${context.attempt}`);
        },
        'slow.kind': (_event, context) => {
          slowRuns.push(context.attempt);
          return new Promise((resolve) => context.signal.addEventListener('abort', () => resolve(undefined)));
        },
      },
    };
  });
  // Made in the server's before(); registered after it, so removed once the server has closed.
  const tempDir = tempDirsForSuite('webhooks');

  it('should retry a throwing handler on the backoff schedule (1 s × 2^n, full jitter, 5 min cap), then make it dead with a dead letter', async () => {
    assert.equal((await deliver(server.url, eventBody('flaky-1', 'flaky.kind'))).status, 200);
    let record = await recordWhere(server.store, INBOX_SPACE, 'flaky-1', (r) => r.doc['attempts'] === 1);
    for (let attempt = 1; attempt < 8; attempt++) {
      assert.equal(record.doc['status'], 'failed');
      assert.equal(record.doc['lastError'], `Error: failure ${attempt}`);
      // Full jitter with the random source pinned near 1 waits the whole ceiling, min(5 min, 1 s × 2^n).
      const wait = Math.min(300_000, 1000 * 2 ** attempt);
      assert.equal(record.dueAt, record.modifiedAt + wait, `attempt ${attempt}`);
      assert.equal(record.doc['nextAttemptAt'], new Date(record.modifiedAt + wait).toISOString());
      clock.advance(wait - 1);
      assert.equal(server.store.get(INBOX_SPACE, 'flaky-1')?.doc['attempts'], attempt, 'not before its time');
      clock.advance(1);
      record = await recordWhere(server.store, INBOX_SPACE, 'flaky-1', (r) => r.doc['attempts'] === attempt + 1);
    }
    assert.equal(record.doc['status'], 'dead');
    assert.equal(record.dueAt, undefined);
    assert.deepEqual(attempts, [1, 2, 3, 4, 5, 6, 7, 8]);
    const lines = (await readFile(join(dir, 'dead-letter.jsonl'), 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as JsonObject);
    assert.equal(lines.length, 1);
    assert.equal(lines[0]?.['id'], 'flaky-1');
    assert.equal(lines[0]?.['attempts'], 8);
    assert.equal(lines[0]?.['body'], eventBody('flaky-1', 'flaky.kind'));
  });

  it('should queue a dead event again with PUT /$inbox/{id}/$retry (202), run it to processed, and refuse a second retry with 409', async () => {
    failing = false;
    const retried = await request(server.url, '/$inbox/flaky-1/$retry', { method: 'PUT' });
    assert.equal(retried.status, 202);
    assert.equal((retried.json() as { status: string; attempts: number }).status, 'accepted');
    const done = await recordWhere(server.store, INBOX_SPACE, 'flaky-1', (r) => r.doc['status'] === 'processed');
    assert.equal(done.doc['attempts'], 1);
    assert.equal((await request(server.url, '/$inbox/flaky-1/$retry', { method: 'PUT' })).status, 409);
    assert.equal((await request(server.url, '/$inbox/none/$retry', { method: 'PUT' })).status, 404);
  });

  it('should time out a handler that hangs, abort its signal, and retry it', async () => {
    assert.equal((await deliver(server.url, eventBody('slow-1', 'slow.kind'))).status, 200);
    // Its timeout is set when it starts: time moves only once it runs.
    await eventually('the handler that hangs to start', () => slowRuns.length === 1);
    clock.advance(5000);
    const failed = await recordWhere(server.store, INBOX_SPACE, 'slow-1', (r) => r.doc['status'] === 'failed');
    assert.equal(failed.doc['lastError'], 'the handler did not finish within 5000 ms');
    assert.equal(failed.doc['attempts'], 1);
  });

  it('should park an event no handler takes, and run it once a handler for its kind is registered', async () => {
    assert.equal((await deliver(server.url, eventBody('later-1', 'later.kind'))).status, 200);
    // Parked by its acceptance itself, the write the 200 waited for: no run and no second write follow.
    const parked = server.store.get(INBOX_SPACE, 'later-1');
    assert.ok(parked !== undefined);
    assert.equal(parked.dueAt, undefined);
    assert.equal(parked.doc['status'], 'accepted');
    const seen: string[] = [];
    server.webhooks.on('later.kind', (event) => void seen.push(event['id'] as string));
    await recordWhere(server.store, INBOX_SPACE, 'later-1', (r) => r.doc['status'] === 'processed');
    assert.deepEqual(seen, ['later-1']);
  });

  it('should forget an event id after webhooks.dedupDays, so the id is accepted again', async () => {
    assert.equal(statusOf(await deliver(server.url, eventBody('old-1', 'later.kind'))), 'accepted');
    assert.equal(statusOf(await deliver(server.url, eventBody('old-1', 'later.kind'))), 'duplicate');
    clock.advance(30 * 86_400_000);
    assert.equal(server.store.get(INBOX_SPACE, 'old-1'), undefined);
    assert.equal(statusOf(await deliver(server.url, eventBody('old-1', 'later.kind'))), 'accepted');
  });
});
