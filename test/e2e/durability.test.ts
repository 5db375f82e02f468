// End to end: the real binary over the file store (CONVENTIONS.md#durability, CONVENTIONS.md#data-directory).
// Restarts keep everything, a second process on the same data dir refuses to start, a `kill -9`
// loses no acknowledged write, and a failing disk is a 503 with Retry-After while reads go on.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { silentLogger } from '../../lib/log.js';
import { openFileStore } from '../../lib/store/file.js';
import { runBinary, startBinary } from '../support/binary.js';
import { eventually } from '../support/eventually.js';
import { FaultyIO } from '../support/faulty-io.js';
import { create, JSON_HEADERS, request } from '../support/http.js';
import { mulberry32, replayNote, testSeed } from '../support/random.js';
import { withServer } from '../support/server.js';
import { tempDirsForSuite } from '../support/temp-dir.js';

/** The kill comes after 1 to this many acknowledged writes: up to a few hundred ms of load. */
const MAX_KILL_AFTER = 300;
const dataDir = tempDirsForSuite('durable');

describe('resapi serve --data-dir', () => {
  it('should keep items, ETags, tombstones and idempotency records across a restart', async () => {
    const dir = dataDir();
    const first = await startBinary(['--data-dir', dir]);
    const created = await create(first.url, '/notes/n1', { text: 'kept' });
    await create(first.url, '/notes/n2', { text: 'deleted' });
    await request(first.url, '/notes/n2', { method: 'DELETE' });
    const posted = await request(first.url, '/notes', { method: 'POST', headers: { ...JSON_HEADERS, 'Idempotency-Key': 'k1' }, body: '{"text":"posted"}' });
    const pageLink = (await request(first.url, '/notes', { headers: { Prefer: 'maxpagesize=1' } })).json() as { '@nextLink': string };
    assert.equal(await first.stop(), 0);

    const second = await startBinary(['--data-dir', dir]);
    try {
      const again = await request(second.url, '/notes/n1');
      assert.equal(again.status, 200);
      assert.equal(again.headers.etag, created.headers.etag);
      assert.equal((await request(second.url, '/notes/n2/$undoDelete', { method: 'PUT' })).status, 200);
      const replay = await request(second.url, '/notes', { method: 'POST', headers: { ...JSON_HEADERS, 'Idempotency-Key': 'k1' }, body: '{"text":"posted"}' });
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.equal(replay.headers.location, posted.headers.location);
      // The paging key is kept in the data dir, so links survive a restart.
      assert.equal((await request(second.url, pageLink['@nextLink'])).status, 200);
    } finally {
      await second.stop();
    }
  });

  it('should refuse a second process on the same data dir with exit 1 and a clear message', async () => {
    const dir = dataDir();
    const first = await startBinary(['--data-dir', dir]);
    try {
      const second = await runBinary(['serve', '--port', '0', '--data-dir', dir]);
      assert.equal(second.code, 1);
      assert.match(second.stderr, /lock|in use|another/i);
      assert.match(second.stderr, new RegExp(String(first.child.pid)));
      assert.equal((await request(first.url, '/$health')).status, 200);
    } finally {
      await first.stop();
    }
  });

  it('should lose no acknowledged write when killed with SIGKILL under load', async () => {
    const seed = testSeed();
    const random = mulberry32(seed);
    const dir = dataDir();
    for (let round = 0; round < 3; round++) {
      // The kill comes right after a random acknowledgement: only once writes are being
      // acknowledged, however slow the machine, and at a moment the seed replays.
      const killAfter = 1 + Math.floor(random() * MAX_KILL_AFTER);
      const context = `(${replayNote(seed)}, round ${round}, killed after ${killAfter} acknowledged writes)`;
      const server = await startBinary(['--data-dir', dir]);
      const exited = once(server.child, 'exit');
      const acknowledged: string[] = [];
      let stop = false;
      const writers = Array.from({ length: 8 }, async (_, writer) => {
        for (let n = 0; !stop; n++) {
          const id = `r${round}-w${writer}-${n}`;
          try {
            const res = await create(server.url, `/load/${id}`, { round, writer, n });
            if (res.status === 201) acknowledged.push(id);
          } catch {
            return; // the server is gone
          }
        }
      });
      try {
        await eventually(`${killAfter} acknowledged writes`, () => acknowledged.length >= killAfter, { detail: () => `${acknowledged.length} so far`, context });
      } finally {
        // Killed whether or not the acknowledgements came, so that a failure leaves no server or writer running.
        server.child.kill('SIGKILL');
        await exited;
        stop = true;
        await Promise.all(writers);
      }
      const restarted = await startBinary(['--data-dir', dir]);
      try {
        const missing: string[] = [];
        for (const id of acknowledged) if ((await request(restarted.url, `/load/${id}`)).status !== 200) missing.push(id);
        assert.deepEqual(missing, [], `acknowledged writes lost ${context}`);
      } finally {
        await restarted.stop();
      }
    }
  });
});

describe('a failing disk', () => {
  it('should answer writes 503 with Retry-After, keep reads working, report /$health 503, and recover', async () => {
    const io = new FaultyIO();
    const opened = await openFileStore({ dir: dataDir(), io, log: silentLogger });
    assert.ok(opened.ok);
    await withServer({ store: opened.store }, async (server) => {
      await create(server.url, '/disk/before', { ok: true });
      io.fail('write', 'ENOSPC');
      const refused = await create(server.url, '/disk/during', { ok: false });
      assert.equal(refused.status, 503);
      assert.ok(refused.headers['retry-after']);
      assert.equal(refused.headers['content-type'], 'application/problem+json');
      assert.doesNotMatch(refused.text, /ENOSPC|journal|\/tmp/);
      assert.equal((await request(server.url, '/disk/before')).status, 200);
      assert.equal((await request(server.url, '/disk/during')).status, 404);
      assert.equal((await request(server.url, '/$health')).status, 503);
      io.heal();
      assert.equal((await create(server.url, '/disk/after', { ok: true })).status, 201);
      assert.equal((await request(server.url, '/$health')).status, 200);
    });
  });
});
