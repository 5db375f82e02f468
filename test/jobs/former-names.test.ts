// A data dir written before the inbox and the outbox shared one name scheme still opens: the inbox
// kept its bodies in `$inbox-payloads`, now `$inbox-bodies` (like `$outbox-bodies`). The store is
// written as the former inbox wrote it, with the file store itself, then served: the waiting event is
// processed with its body, the dead one keeps its body (and its expiry) under the new name and runs
// on `$retry`, and nothing is left under the former name.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { JsonObject } from '../../lib/json.js';
import { silentLogger } from '../../lib/log.js';
import { openFileStore } from '../../lib/store/file.js';
import type { Mutation } from '../../lib/store/types.js';
import { request } from '../support/http.js';
import { recordWhere } from '../support/store.js';
import { withServer } from '../support/server.js';
import { withTempDir } from '../support/temp-dir.js';

const DAY_MS = 86_400_000;

/** An event as the former inbox recorded it: its item and its body under `$inbox-payloads`. */
function formerEvent(id: string, item: JsonObject, now: number, due: boolean): Mutation[] {
  const expiresAt = now + 30 * DAY_MS;
  const body = JSON.stringify({ id, event: 'order.created' });
  const doc = { id, event: 'order.created', receivedAt: new Date(now).toISOString(), ...item };
  return [
    { kind: 'put', collection: '$inbox', id, doc, expiresAt, ...(due ? { dueAt: now } : {}) },
    { kind: 'put', collection: '$inbox-payloads', id, doc: { body }, expiresAt },
  ];
}

describe('a data dir written under the former inbox names', () => {
  it('should open, process its waiting events with their bodies, and keep the bodies of dead ones', async () => {
    await withTempDir('former-names', async (dir) => {
      const now = Date.now();
      const opened = await openFileStore({ dir, log: silentLogger, progress: () => {} });
      assert.ok(opened.ok);
      const waiting = formerEvent('waiting-1', { status: 'accepted', attempts: 0 }, now, true);
      const dead = formerEvent('dead-1', { status: 'dead', attempts: 8, lastError: 'Error: boom' }, now, false);
      const written = await opened.store.commit({ mutations: [...waiting, ...dead] });
      assert.ok(written.ok);
      await opened.store.close();

      const seen: string[] = [];
      const options = {
        dataDir: dir,
        webhookSecrets: ['secret'],
        webhookHandlers: { '*': (event: JsonObject) => void seen.push(event['id'] as string) },
      };
      await withServer(options, async (server) => {
        const ran = await recordWhere(server.store, '$inbox', 'waiting-1', (record) => record.doc['attempts'] === 1);
        assert.deepEqual([ran.doc['status'], ran.doc['lastError']], ['processed', undefined]);
        assert.deepEqual(seen, ['waiting-1']);
        assert.equal(server.store.count('$inbox-payloads'), 0, 'nothing is left under the former name');
        const kept = server.store.get('$inbox-bodies', 'dead-1');
        assert.deepEqual(kept?.doc, { body: JSON.stringify({ id: 'dead-1', event: 'order.created' }) });
        assert.equal(kept?.expiresAt, now + 30 * DAY_MS);
        assert.equal((await request(server.url, '/$inbox/dead-1/$retry', { method: 'PUT' })).status, 202);
        await recordWhere(server.store, '$inbox', 'dead-1', (record) => record.doc['status'] === 'processed');
        assert.deepEqual(seen, ['waiting-1', 'dead-1']);
      });
    });
  });
});
