// Permissions of what the file store creates (CONVENTIONS.md#data-directory): the data dir 0700 and
// every file 0600, temp files included (snapshot, lock and probe temps are looked at the moment they
// are created, since they are gone a moment later), with a umask that would allow anything.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdir, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { FileHandleIO, OpenMode } from '../../lib/store/fs-io.js';
import { openFileStore } from '../../lib/store/file.js';
import type { Logger } from '../../lib/log.js';
import { FaultyIO } from '../support/faulty-io.js';
import { withTempDir } from '../support/temp-dir.js';

/** The file I/O (with switchable failures), noting the permission bits of each file the moment it is created. */
class WatchedFaultyIO extends FaultyIO {
  readonly created = new Map<string, number>();

  override async open(path: string, mode: OpenMode): Promise<FileHandleIO> {
    const handle = await super.open(path, mode);
    if (mode === 'createExclusive') this.created.set(path, (await stat(path)).mode & 0o777);
    return handle;
  }
}

async function withUmask<T>(umask: number, run: () => Promise<T>): Promise<T> {
  const previous = process.umask(umask);
  try {
    return await run();
  } finally {
    process.umask(previous);
  }
}

const octal = (mode: number): string => mode.toString(8).padStart(4, '0');

describe('FileStore permissions', () => {
  it('should create the data dir 0700 and journals, snapshots, side logs, the lock and temp files 0600', () =>
    withTempDir('modes', (root) =>
      withUmask(0o000, async () => {
        const dir = join(root, 'a', 'store');
        const io = new WatchedFaultyIO();
        const opened = await openFileStore({ dir, io, snapshotThresholdBytes: 512, progress: () => {}, log: () => {} });
        assert.ok(opened.ok, opened.ok ? '' : opened.message);
        const store = opened.store;
        for (let n = 0; n < 20; n++) {
          const put = await store.commit({ mutations: [{ kind: 'put', collection: 'items', id: `k${n}`, doc: { n } }] });
          assert.ok(put.ok);
        }
        assert.ok((await store.appendSideLog('dead-letter', { id: 'e1' })).ok);
        await store.close();
        const names = [...io.created.keys()].map((path) => path.slice(dir.length + 1));
        for (const pattern of [/^journal-\d+\.log$/, /^snapshot\.dat\.tmp-/, /^lock\.tmp-/, /^dead-letter\.jsonl$/]) {
          assert.ok(names.some((name) => pattern.test(name)), `${pattern} among ${names.join(', ')}`);
        }
        for (const [path, mode] of io.created) assert.equal(octal(mode), '0600', path);
        for (const name of await readdir(dir)) assert.equal(octal((await stat(join(dir, name))).mode & 0o777), '0600', name);
        assert.equal(octal((await stat(dir)).mode & 0o777), '0700');
        assert.equal(octal((await stat(join(root, 'a'))).mode & 0o777), '0700', 'a parent it made');
      })));

  it('should create the disk probe 0600', () =>
    withTempDir('modes', (root) =>
      withUmask(0o000, async () => {
        const io = new WatchedFaultyIO();
        const opened = await openFileStore({ dir: root, io, progress: () => {}, log: () => {} });
        assert.ok(opened.ok, opened.ok ? '' : opened.message);
        io.fail('write', 'ENOSPC');
        const refused = await opened.store.commit({ mutations: [{ kind: 'put', collection: 'items', id: 'x', doc: {} }] });
        assert.equal(refused.ok, false);
        io.heal();
        assert.equal((await opened.store.health()).writable, true);
        await opened.store.close();
        const probes = [...io.created].filter(([path]) => path.includes('.probe.tmp-'));
        assert.ok(probes.length > 0, [...io.created.keys()].join(', '));
        for (const [path, mode] of probes) assert.equal(octal(mode), '0600', path);
      })));

  it('should narrow an existing data dir others may enter, log it once, and leave an owner-only one alone', () =>
    withTempDir('modes', async (root) => {
      const warnings: string[] = [];
      const log: Logger = (level, message, fields) => void (level === 'warn' && warnings.push(`${message} ${JSON.stringify(fields)}`));
      const open = async (dir: string): Promise<void> => {
        const opened = await openFileStore({ dir, log, progress: () => {} });
        assert.ok(opened.ok, opened.ok ? '' : opened.message);
        await opened.store.close();
      };
      const shared = join(root, 'shared');
      await mkdir(shared);
      await chmod(shared, 0o775);
      await open(shared);
      assert.equal(octal((await stat(shared)).mode & 0o777), '0700');
      assert.equal(warnings.length, 1, warnings.join('; '));
      assert.match(warnings[0] as string, /narrow.*0775.*0700/);
      await open(shared);
      assert.equal(warnings.length, 1, 'once narrowed, nothing more to say');
      const own = join(root, 'own');
      await mkdir(own);
      await chmod(own, 0o700);
      await open(own);
      assert.equal(warnings.length, 1, warnings.join('; '));
    }));
});
