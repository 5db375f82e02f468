// Injected write failures (CONVENTIONS.md#durability: a failing disk): a failed write or fsync answers `unavailable` (the HTTP
// layer turns it into 503 + Retry-After), reads keep working, health() says not writable, nothing of
// the failed group is ever visible or recovered, and writes resume when the disk does.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import type { FileStore, FileStoreOptions } from '../../lib/store/file.js';
import { openFileStore } from '../../lib/store/file.js';
import { FaultyIO } from '../support/faulty-io.js';
import type { CommitResult } from '../../lib/store/types.js';
import { clockAt } from '../support/clock.js';
import { withTempDir } from '../support/temp-dir.js';

interface Setup {
  readonly dir: string;
  readonly io: FaultyIO;
  readonly errors: string[];
  advance(ms: number): void;
  open(extra?: Partial<FileStoreOptions>): Promise<FileStore>;
}

function withSetup(run: (setup: Setup) => Promise<void>): Promise<void> {
  return withTempDir('failure', async (dir) => {
    const io = new FaultyIO();
    const errors: string[] = [];
    let time = 1_700_000_000_000;
    await run({
      dir,
      io,
      errors,
      advance: (ms) => void (time += ms),
      async open(extra = {}) {
        const opened = await openFileStore({ dir, io, clock: clockAt(() => time), log: (level, message) => void (level === 'error' && errors.push(message)), progress: () => {}, ...extra });
        assert.ok(opened.ok, opened.ok ? '' : opened.message);
        return opened.store;
      },
    });
  });
}

function put(store: FileStore, id: string): Promise<CommitResult> {
  return store.commit({ mutations: [{ kind: 'put', collection: 'items', id, doc: { id } }, { kind: 'put', collection: '$outbox', id, doc: { id } }] });
}

describe('FileStore write failures', () => {
  for (const [operation, code] of [['write', 'ENOSPC'], ['datasync', 'EIO']] as const) {
    it(`should answer a whole group unavailable when ${operation} fails with ${code}, then resume`, () =>
      withSetup(async ({ io, errors, open }) => {
        const store = await open();
        assert.ok((await put(store, 'before')).ok);
        io.fail(operation, code);
        const failed = await Promise.all(['f1', 'f2', 'f3'].map((id) => put(store, id)));
        for (const result of failed) {
          assert.equal(result.ok, false);
          assert.equal(!result.ok && result.reason, 'unavailable');
          assert.match(!result.ok && result.reason === 'unavailable' ? result.detail : '', new RegExp(code));
        }
        assert.ok(errors.some((message) => /store write failed/.test(message)), 'the failure must be logged');
        // Reads keep working and show nothing of the failed group.
        assert.deepEqual(store.scan('items').map((record) => record.id), ['before']);
        assert.equal(store.get('$outbox', 'f1'), undefined);
        const health = await store.health();
        assert.equal(health.writable, false);
        assert.match(health.detail ?? '', new RegExp(code));
        io.heal();
        const after = await put(store, 'after');
        assert.ok(after.ok);
        assert.equal(after.commit.seq, 2, 'the failed group must not use up versions');
        assert.deepEqual(await store.health(), { writable: true });
        await store.close();
        // The half-written (or unsynced) group was truncated away: replay sees exactly what was acknowledged.
        const reopened = await open();
        assert.deepEqual(reopened.scan('items').map((record) => record.id), ['after', 'before']);
        assert.equal(reopened.count('$outbox'), 2);
        await reopened.close();
      }));
  }

  it('should not bring back a batch answered unavailable when the process restarts', () =>
    withSetup(async ({ io, open }) => {
      const warnings: string[] = [];
      const store = await open();
      assert.ok((await put(store, 'kept')).ok);
      io.fail('write', 'ENOSPC');
      assert.equal((await put(store, 'refused')).ok, false);
      await store.close();
      io.heal();
      const reopened = await open({ log: (level, message) => void (level === 'warn' && warnings.push(message)) });
      assert.deepEqual(reopened.scan('items').map((record) => record.id), ['kept']);
      assert.deepEqual(warnings, [], 'the half-written frame must already be gone, not found as a torn tail');
      await reopened.close();
    }));

  it('should stay unavailable while the journal cannot even be truncated back', () =>
    withSetup(async ({ io, open }) => {
      const store = await open();
      io.fail('write', 'EROFS');
      io.fail('truncate', 'EROFS');
      assert.equal((await put(store, 'a')).ok, false);
      io.failing.delete('write');
      const second = await put(store, 'b');
      assert.equal(!second.ok && second.reason, 'unavailable');
      assert.equal((await store.health()).writable, false);
      io.heal();
      assert.ok((await put(store, 'c')).ok);
      await store.close();
      const reopened = await open();
      assert.deepEqual(reopened.scan('items').map((record) => record.id), ['c']);
      await reopened.close();
    }));

  it('should notice from health() alone, on the first look, that the disk is back', () =>
    withSetup(async ({ io, open }) => {
      const store = await open();
      io.fail('write', 'ENOSPC');
      assert.equal((await put(store, 'a')).ok, false);
      const sick = await store.health(); // probes the disk, which still refuses
      assert.equal(sick.writable, false);
      assert.match(sick.detail ?? '', /ENOSPC/);
      io.heal();
      assert.deepEqual(await store.health(), { writable: true });
      assert.ok((await put(store, 'b')).ok);
      await store.close();
    }));

  it('should share one disk probe among the health looks that arrive while it runs', () =>
    withSetup(async ({ dir, io, open }) => {
      const store = await open();
      io.fail('write', 'ENOSPC');
      assert.equal((await put(store, 'a')).ok, false);
      io.heal();
      const probes: string[] = [];
      const open0 = io.open.bind(io);
      io.open = async (path, mode) => {
        if (path.includes('.probe.tmp-')) probes.push(path);
        return open0(path, mode);
      };
      const looks = await Promise.all(Array.from({ length: 20 }, () => store.health()));
      assert.ok(looks.every((health) => health.writable), JSON.stringify(looks));
      assert.equal(probes.length, 1, probes.join(', '));
      // Writable again: no more probes, however many looks.
      await Promise.all(Array.from({ length: 20 }, () => store.health()));
      assert.equal(probes.length, 1);
      assert.deepEqual((await readdir(dir)).filter((name) => name.includes('.probe.tmp-')), []);
      await store.close();
    }));

  it('should keep committing when a snapshot cannot be written, and keep the journals', () =>
    withSetup(async ({ dir, io, errors, open }) => {
      const store = await open({ snapshotThresholdBytes: 512 });
      io.fail('write', 'ENOSPC', 'snapshot.dat.tmp-');
      for (let n = 0; n < 20; n++) assert.ok((await put(store, `k${String(n).padStart(2, '0')}`)).ok);
      assert.ok(errors.some((message) => /snapshot failed/.test(message)), errors.join('; '));
      assert.deepEqual(await store.health(), { writable: true });
      await store.close();
      io.heal();
      const files = await readdir(dir);
      assert.equal(files.includes('snapshot.dat'), false);
      assert.deepEqual(files.filter((name) => name.includes('.tmp-')), []);
      const reopened = await open();
      assert.equal(reopened.count('items'), 20);
      await reopened.close();
    }));

  it('should report an unusable data dir as an io failure at open', () =>
    withSetup(async ({ dir, io }) => {
      io.fail('open', 'EACCES', 'journal-');
      const opened = await openFileStore({ dir, io, log: () => {}, progress: () => {} });
      assert.equal(!opened.ok && opened.kind, 'io');
      assert.match(!opened.ok ? opened.message : '', /EACCES/);
      assert.equal((await readdir(dir)).includes('lock'), false, 'a failed open must release the lock');
    }));
});
