// End to end, in process: GET /$health says what the disk does now (CONVENTIONS.md#health). After a
// failed write it answers 503 while the disk still refuses, and 200 on the first look once the disk
// takes writes again, with no write in between to find out: a load balancer that took the instance
// out on a 503 sends no writes, so only /$health can bring it back.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '../../lib/log.js';
import { openFileStore } from '../../lib/store/file.js';
import { FaultyIO } from '../support/faulty-io.js';
import { create, problemOf, request } from '../support/http.js';
import { withServer } from '../support/server.js';
import { tempDirsForSuite } from '../support/temp-dir.js';

const dataDir = tempDirsForSuite('health');

describe('GET /$health on a failing disk', () => {
  for (const [operation, code] of [['write', 'ENOSPC'], ['datasync', 'EIO']] as const) {
    it(`should answer 503 while ${operation} fails with ${code} and 200 at once when the disk is back`, async () => {
      const io = new FaultyIO();
      const opened = await openFileStore({ dir: dataDir(), io, log: silentLogger, progress: () => {} });
      assert.ok(opened.ok, opened.ok ? '' : opened.message);
      await withServer({ store: opened.store }, async (server) => {
        assert.equal((await request(server.url, '/$health')).status, 200);
        io.fail(operation, code);
        assert.equal((await create(server.url, '/disk/refused', { n: 1 })).status, 503);
        for (let look = 0; look < 3; look++) {
          const sick = await request(server.url, '/$health');
          assert.equal(sick.status, 503, `look ${look} while the disk fails`);
          assert.equal(sick.headers['retry-after'], '5');
          assert.doesNotMatch(problemOf(sick).detail, new RegExp(`${code}|journal|/tmp`), 'no internals');
        }
        io.heal();
        const healed = await request(server.url, '/$health');
        assert.equal(healed.status, 200, `the first look after the disk is back: ${healed.text}`);
        assert.deepEqual(healed.json(), { status: 'ok', durable: true });
        // And it was not a guess: the store writes again.
        assert.equal((await create(server.url, '/disk/after', { n: 2 })).status, 201);
        assert.equal((await request(server.url, '/disk/refused')).status, 404);
      });
    });
  }

  it('should go back to 503 when the disk fails again after it came back', async () => {
    const io = new FaultyIO();
    const opened = await openFileStore({ dir: dataDir(), io, log: silentLogger, progress: () => {} });
    assert.ok(opened.ok, opened.ok ? '' : opened.message);
    await withServer({ store: opened.store }, async (server) => {
      io.fail('write', 'ENOSPC');
      assert.equal((await create(server.url, '/disk/a', { n: 1 })).status, 503);
      io.heal();
      assert.equal((await request(server.url, '/$health')).status, 200);
      io.fail('write', 'EROFS');
      assert.equal((await create(server.url, '/disk/b', { n: 2 })).status, 503);
      assert.equal((await request(server.url, '/$health')).status, 503);
      io.heal();
      assert.equal((await request(server.url, '/$health')).status, 200);
    });
  });
});
