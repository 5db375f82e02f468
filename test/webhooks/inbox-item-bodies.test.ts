// Tests for lib/webhooks/inbox.ts, where an accepted event's body lives (CONVENTIONS.md#inbox,
// CONVENTIONS.md#durable-acceptance): in its item, one record, in members no reader of /$inbox sees.
// - Through HTTP, an item waiting for its handler shows neither the body nor the provider's header
//   fields, in JSON or HTML (it has no CSV form), for the default source and a named one; `$filter`, `$select` and
//   `$orderby` naming them are refused like any other name that is not an item's field.
// - The handler gets the body and `ctx.headers`; once processed, the item no longer holds them, as
//   the data dir gives it back to a store opened on it afterwards.
// - After a `kill -9` of the real binary with the event waiting, the restarted server runs it with
//   its body and header fields.
// - A data dir written when the body was a record of `$inbox-bodies` (written here as that inbox
//   wrote it, through the file store) still runs its waiting event with that body and those fields,
//   and the record goes with its `processed`.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { WebhookSourceConfig } from '../../lib/config.js';
import type { JsonObject } from '../../lib/json.js';
import { silentLogger } from '../../lib/log.js';
import { strongEtag } from '../../lib/protocol/etag.js';
import { signedHeaders } from '../../lib/protocol/scheme-headers.js';
import { openFileStore } from '../../lib/store/file.js';
import type { HandlerContext } from '../../lib/webhooks/inbox.js';
import { killIfRunning, startBinary, type RunningServer } from '../support/binary.js';
import { eventually } from '../support/eventually.js';
import { request, type TestResponse } from '../support/http.js';
import { withServer } from '../support/server.js';
import { recordWhere } from '../support/store.js';
import { tempDirsForSuite, withTempDir } from '../support/temp-dir.js';

const SECRET = 'inbox-item-bodies-secret-0123456789';
const SOURCES: readonly WebhookSourceConfig[] = [
  { path: '/webhooks', scheme: 'resapi', secretsEnv: 'RESAPI_WEBHOOK_SECRETS' },
  { path: '/webhooks/acme', scheme: 'resapi', secretsEnv: 'ACME_WEBHOOK_SECRETS' },
];
/** Text that is only in the events' bodies and their header fields: a read that shows it shows them. */
const BODY_MARK = 'body-mark-5e1f';
const FIELD_MARK = 'field-mark-90ac';
const ITEM_FIELDS = ['id', 'source', 'eventId', 'event', 'status', 'attempts', 'receivedAt'];

function eventBody(id: string, kind = 'order.created'): string {
  return JSON.stringify({ id, event: kind, data: { note: BODY_MARK } });
}

/** POSTs a signed event to `path`, with a header field of the provider's own. */
function send(base: string, path: string, body: string): Promise<TestResponse> {
  const { id, event: kind } = JSON.parse(body) as { id: string; event: string };
  const signed = signedHeaders('resapi', SECRET, { id, kind, body, timestampS: Math.floor(Date.now() / 1000) });
  const headers = { 'Content-Type': 'application/json', 'X-Provider-Note': FIELD_MARK, ...signed };
  return request(base, path, { method: 'POST', headers, body });
}

function refusedQuery(res: TestResponse, query: string): void {
  assert.equal(res.status, 400, `${query}: ${res.text}`);
  assert.ok(!res.text.includes(BODY_MARK), query);
}

describe("an event's body kept in its item", () => {
  it('should never show the body or the header fields in /$inbox, give them to the handler, and drop them once processed', async () => {
    await withTempDir('inbox-item-bodies', async (dir) => {
      const handled: { event: JsonObject; headers: Readonly<Record<string, string>> }[] = [];
      const options = { dataDir: dir, webhooks: { sources: SOURCES }, webhookSecrets: { webhooks: [SECRET], acme: [SECRET] } };
      await withServer(options, async (server) => {
        // No handler yet: both events wait, each item holding its body.
        assert.equal((await send(server.url, '/webhooks', eventBody('evt_1'))).status, 200);
        assert.equal((await send(server.url, '/webhooks/acme', eventBody('evt_2'))).status, 200);
        for (const id of ['evt_1', 'acme:evt_2']) {
          const stored = server.store.get('$inbox', id);
          assert.equal(typeof stored?.doc['body'], 'string', `${id} is stored with its body`);
          assert.equal(server.store.get('$inbox-bodies', id), undefined, `${id} is one record`);
        }

        const page = await request(server.url, '/$inbox');
        assert.equal(page.status, 200);
        const items = (page.json() as { value: JsonObject[] }).value;
        assert.deepEqual(items.map((item) => Object.keys(item)), [ITEM_FIELDS, ITEM_FIELDS]);
        for (const [path, accept] of [
          ['/$inbox', 'application/json'], ['/$inbox', 'text/html'],
          ['/$inbox/evt_1', 'application/json'], ['/$inbox/evt_1', 'text/html'],
          ['/$inbox/acme%3Aevt_2', 'application/json'], ['/$inbox/acme%3Aevt_2', 'text/html'],
        ] as const) {
          const res = await request(server.url, path, { headers: { Accept: accept } });
          assert.equal(res.status, 200, `${path} as ${accept}: ${res.text}`);
          assert.ok(!res.text.includes(BODY_MARK) && !res.text.includes(FIELD_MARK), `${path} as ${accept} shows no body or field`);
          assert.ok(!res.text.includes('x-provider-note'), `${path} as ${accept} names no header field`);
        }
        // /$inbox has no CSV form: asked for, it is refused, and shows nothing either.
        const csv = await request(server.url, '/$inbox', { headers: { Accept: 'text/csv' } });
        assert.equal(csv.status, 406);
        assert.ok(!csv.text.includes(BODY_MARK) && !csv.text.includes(FIELD_MARK));
        const item = await request(server.url, '/$inbox/acme%3Aevt_2');
        assert.deepEqual(Object.keys(item.json() as JsonObject), ITEM_FIELDS);
        // The ETag is of the bytes read (CONVENTIONS.md#etags), which hold neither.
        const etag = String(item.headers.etag);
        assert.equal(etag, strongEtag(item.body));
        assert.equal((await request(server.url, '/$inbox/acme%3Aevt_2', { headers: { 'If-None-Match': etag } })).status, 304);

        for (const query of [
          `$filter=body eq '${BODY_MARK}'`, `$filter=contains(body,'${BODY_MARK}')`, "$filter=headers eq 'x'",
          '$select=id,body', '$select=headers', '$orderby=body',
        ]) {
          refusedQuery(await request(server.url, `/$inbox?${query}`), query);
        }

        server.webhooks.on('*', (event: JsonObject, context: HandlerContext) => {
          handled.push({ event, headers: context.headers });
        });
        for (const id of ['evt_1', 'acme:evt_2']) {
          const done = await recordWhere(server.store, '$inbox', id, (record) => record.doc['status'] === 'processed');
          assert.deepEqual([done.doc['body'], done.doc['headers']], [undefined, undefined], `${id} drops its body once processed`);
        }
        assert.deepEqual(handled.map(({ event }) => event).sort((a, b) => String(a['id']).localeCompare(String(b['id']))), [
          JSON.parse(eventBody('evt_1')), JSON.parse(eventBody('evt_2')),
        ]);
        for (const { headers } of handled) assert.equal(headers['x-provider-note'], FIELD_MARK);
        const processed = await request(server.url, '/$inbox/acme%3Aevt_2');
        assert.deepEqual(Object.keys(processed.json() as JsonObject), [...ITEM_FIELDS, 'processedAt']);
      });

      // As the data dir gives the items back.
      const opened = await openFileStore({ dir, log: silentLogger, progress: () => {} });
      assert.ok(opened.ok);
      try {
        for (const id of ['evt_1', 'acme:evt_2']) {
          const doc: JsonObject | undefined = opened.store.get('$inbox', id)?.doc;
          assert.equal(doc?.['status'], 'processed');
          assert.deepEqual([doc?.['body'], doc?.['headers']], [undefined, undefined], id);
        }
      } finally {
        await opened.store.close();
      }
    });
  });

  it('should run an event stored with its body in a record of $inbox-bodies, with its fields, and drop that record', async () => {
    await withTempDir('inbox-two-records', async (dir) => {
      const now = Date.now();
      const expiresAt = now + 30 * 86_400_000;
      const opened = await openFileStore({ dir, log: silentLogger, progress: () => {} });
      assert.ok(opened.ok);
      // As the inbox wrote an event when its body was a record of its own.
      const item = { id: 'evt_old', event: 'order.created', status: 'accepted', attempts: 0, receivedAt: new Date(now).toISOString() };
      const written = await opened.store.commit({
        mutations: [
          { kind: 'put', collection: '$inbox', id: 'evt_old', doc: item, expiresAt, dueAt: now },
          { kind: 'put', collection: '$inbox-bodies', id: 'evt_old', doc: { body: eventBody('evt_old'), headers: { 'x-provider-note': FIELD_MARK } }, expiresAt },
        ],
      });
      assert.ok(written.ok);
      await opened.store.close();

      const handled: { event: JsonObject; headers: Readonly<Record<string, string>> }[] = [];
      const options = {
        dataDir: dir,
        webhookSecrets: [SECRET],
        webhookHandlers: { '*': (event: JsonObject, context: HandlerContext) => void handled.push({ event, headers: context.headers }) },
      };
      await withServer(options, async (server) => {
        await recordWhere(server.store, '$inbox', 'evt_old', (record) => record.doc['status'] === 'processed');
        assert.deepEqual(handled.map(({ event }) => event), [JSON.parse(eventBody('evt_old'))]);
        assert.deepEqual({ ...handled[0]?.headers }, { 'x-provider-note': FIELD_MARK });
        await eventually('the body record to be dropped', () => server.store.get('$inbox-bodies', 'evt_old') === undefined);
        const res = await request(server.url, '/$inbox/evt_old');
        assert.deepEqual(Object.keys(res.json() as JsonObject), [...ITEM_FIELDS, 'processedAt']);
      });
    });
  });
});

describe("an event's body kept in its item, across kill -9", () => {
  const servers: RunningServer[] = [];
  after(() => {
    for (const server of servers) killIfRunning(server.child);
  });
  const tempFolder = tempDirsForSuite('inbox-item-bodies-kill');

  it('should run an event that waited at the kill with its body and header fields after the restart', { timeout: 60_000 }, async () => {
    const folder = tempFolder();
    const data = join(folder, 'data');
    const log = join(folder, 'handled.jsonl');
    const handlers = join(folder, 'handlers.mjs');
    writeFileSync(handlers, `import { appendFileSync } from 'node:fs';
export default {
  '*': (event, ctx) => appendFileSync(${JSON.stringify(log)}, JSON.stringify({ event, headers: ctx.headers }) + '\\n'),
};
`);
    const env = { RESAPI_WEBHOOK_SECRETS: SECRET };
    // No handlers: the event waits, durably accepted, when the process dies.
    const first = await startBinary(['--data-dir', data], env);
    servers.push(first);
    assert.equal((await send(first.url, '/webhooks', eventBody('evt_kill'))).status, 200);
    const exited = once(first.child, 'exit');
    first.child.kill('SIGKILL');
    await exited;

    const second = await startBinary(['--data-dir', data, '--handlers', handlers], env);
    servers.push(second);
    await eventually('the handler to run', () => existsSync(log) && readFileSync(log, 'utf8').endsWith('\n'));
    const [line, ...more] = readFileSync(log, 'utf8').trim().split('\n').map((text) => JSON.parse(text) as JsonObject);
    assert.deepEqual(more, []);
    assert.deepEqual(line?.['event'], JSON.parse(eventBody('evt_kill')));
    assert.equal((line?.['headers'] as JsonObject)['x-provider-note'], FIELD_MARK);
    await eventually('the event to be processed', async () => {
      const item = (await request(second.url, '/$inbox/evt_kill')).json() as JsonObject;
      return item['status'] === 'processed';
    });
    assert.equal(await second.stop(), 0, second.stderr());
  });
});
