// The data-dir lock (lib/store/lock.ts): one process per data dir, a clear refusal naming the holder,
// exit 1 for a second process, and a safe takeover of a lock whose process is gone.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import type { ChildProcess } from 'node:child_process';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { OpenResult } from '../../lib/store/file.js';
import { openFileStore } from '../../lib/store/file.js';
import { eventually } from '../support/eventually.js';
import { withTempDir } from '../support/temp-dir.js';

const CHILD = fileURLToPath(new URL('./crash-child.js', import.meta.url));

function open(dir: string, warnings: string[] = []): Promise<OpenResult> {
  return openFileStore({ dir, log: (level, message) => void (level === 'info' || warnings.push(message)), progress: () => {} });
}

/** Starts a child holding the store; resolves once it is ready (or with its exit when it cannot). */
function hold(dir: string): Promise<{ child: ChildProcess; ready: boolean; code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CHILD, 'hold', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => void (stderr += chunk));
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      if (chunk.startsWith('ready')) resolve({ child, ready: true, code: null, stderr });
    });
    child.on('error', reject);
    child.on('exit', (code) => resolve({ child, ready: false, code, stderr }));
  });
}

function killed(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.on('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

/** The pid of a process that has exited: a lock holding it is stale. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await new Promise((resolve) => child.on('exit', resolve));
  return child.pid as number;
}

/** `/proc/<pid>/stat`'s state letter (Z for a zombie), or undefined once the process is gone. */
async function processState(pid: number): Promise<string | undefined> {
  const text = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  return text?.charAt(text.lastIndexOf(')') + 2);
}

/**
 * A process killed with SIGKILL and not reaped: a shell starts `sleep` in the background, prints its
 * pid, and becomes a `sleep` itself, which never waits for children. `reap()` ends the parent.
 */
async function zombie(): Promise<{ pid: number; reap: () => Promise<void> }> {
  const parent = spawn('/bin/sh', ['-c', 'sleep 600 & echo $!; exec sleep 600'], { stdio: ['ignore', 'pipe', 'ignore'] });
  const reap = async (): Promise<void> => {
    parent.kill('SIGKILL');
    if (parent.exitCode === null && parent.signalCode === null) await once(parent, 'exit');
  };
  try {
    const [line] = (await once(parent.stdout!.setEncoding('utf8'), 'data')) as [string];
    const pid = Number(line.trim());
    // Killed only once the shell is `sleep`: the shell itself would reap its background job.
    await eventually('the shell to become sleep', async () => (await readFile(`/proc/${parent.pid}/comm`, 'utf8')).trim() === 'sleep');
    process.kill(pid, 'SIGKILL');
    await eventually('the killed child to be a zombie', async () => (await processState(pid)) === 'Z', { detail: async () => `state ${await processState(pid)}` });
    return { pid, reap };
  } catch (error) {
    await reap();
    throw error;
  }
}

describe('FileStore data-dir lock', () => {
  it('should refuse a second open in the same process, naming the holder pid, until close', () =>
    withTempDir('lock', async (dir) => {
      const first = await open(dir);
      assert.ok(first.ok);
      const second = await open(dir);
      assert.equal(!second.ok && second.kind, 'locked');
      assert.match(!second.ok ? second.message : '', new RegExp(`in use by process ${process.pid}\\b`));
      await first.store.close();
      assert.equal((await readdir(dir)).includes('lock'), false);
      const third = await open(dir);
      assert.ok(third.ok);
      await third.store.close();
    }));

  it('should make a second process exit 1 with a clear message, and take over once the holder is killed', () =>
    withTempDir('lock', async (dir) => {
      const holder = await hold(dir);
      assert.ok(holder.ready, holder.stderr);
      try {
        const second = await hold(dir);
        assert.equal(second.code, 1);
        assert.match(second.stderr, new RegExp(`data dir .* is in use by process ${holder.child.pid}\\b`));
        const here = await open(dir);
        assert.match(!here.ok && here.kind === 'locked' ? here.message : '', new RegExp(`process ${holder.child.pid}\\b`));
      } finally {
        await killed(holder.child);
      }
      const warnings: string[] = [];
      const after = await open(dir, warnings);
      assert.ok(after.ok, after.ok ? '' : after.message);
      assert.ok(warnings.some((message) => /took over a lock left by a process that is gone/.test(message)), warnings.join('; '));
      const lock = JSON.parse(await readFile(join(dir, 'lock'), 'utf8')) as { pid: number };
      assert.equal(lock.pid, process.pid);
      await after.store.close();
    }));

  it('should take over a stale lock exactly once when several opens race for it', () =>
    withTempDir('lock', async (dir) => {
      await writeFile(join(dir, 'lock'), JSON.stringify({ pid: await deadPid(), startedAt: 1, host: hostname(), token: 'stale' }));
      const results = await Promise.all(Array.from({ length: 6 }, () => open(dir)));
      const winners = results.filter((result) => result.ok);
      assert.equal(winners.length, 1);
      assert.ok(results.every((result) => result.ok || result.kind === 'locked'));
      for (const result of winners) await result.store.close();
    }));

  it('should get past a takeover abandoned by a starter that died', () =>
    withTempDir('lock', async (dir) => {
      const dead = await deadPid();
      await writeFile(join(dir, 'lock'), JSON.stringify({ pid: dead, startedAt: 1, host: hostname(), token: 'stale' }));
      await writeFile(join(dir, 'lock.takeover-stale'), JSON.stringify({ pid: dead, startedAt: 2, host: hostname(), token: 'starter' }));
      const opened = await open(dir);
      assert.ok(opened.ok, opened.ok ? '' : opened.message);
      assert.deepEqual((await readdir(dir)).filter((name) => name.startsWith('lock.')), []);
      await opened.store.close();
    }));

  it('should treat its own pid from an earlier process life as stale', () =>
    withTempDir('lock', async (dir) => {
      await writeFile(join(dir, 'lock'), JSON.stringify({ pid: process.pid, startedAt: performance.timeOrigin - 60_000, host: hostname(), token: 'old' }));
      const opened = await open(dir);
      assert.ok(opened.ok, opened.ok ? '' : opened.message);
      await opened.store.close();
    }));

  it('should take over a lock whose holder is a zombie (killed, not yet reaped), naming it', { skip: process.platform !== 'linux' && 'zombies are seen through /proc' }, () =>
    withTempDir('lock', async (dir) => {
      const dead = await zombie();
      try {
        await writeFile(join(dir, 'lock'), JSON.stringify({ pid: dead.pid, startedAt: 1, host: hostname(), token: 'zombie' }));
        const warnings: string[] = [];
        const opened = await openFileStore({ dir, log: (level, message, fields) => void (level === 'warn' && warnings.push(`${message} ${JSON.stringify(fields)}`)), progress: () => {} });
        assert.ok(opened.ok, opened.ok ? '' : opened.message);
        assert.equal(await processState(dead.pid), 'Z', 'still a zombie while the lock was taken');
        assert.equal(warnings.length, 1, warnings.join('; '));
        assert.match(warnings[0] as string, new RegExp(`took over a lock .*"pid":${dead.pid}\\b.*zombie`));
        await opened.store.close();
      } finally {
        await dead.reap();
      }
    }));

  it('should say how to proceed when it refuses: stop the holder, or delete the lock if it is not resapi', () =>
    withTempDir('lock', async (dir) => {
      const first = await open(dir);
      assert.ok(first.ok);
      try {
        const second = await open(dir);
        const message = !second.ok ? second.message : '';
        assert.match(message, new RegExp(`in use by process ${process.pid}\\b`));
        assert.match(message, /stop that process/);
        assert.match(message, /--data-dir/);
      } finally {
        await first.store.close();
      }
      await writeFile(join(dir, 'lock'), JSON.stringify({ pid: process.pid, startedAt: 1, host: `${hostname()}-elsewhere`, token: 'x' }));
      const remote = await open(dir);
      const message = !remote.ok ? remote.message : '';
      assert.match(message, /cannot be checked from here/);
      assert.match(message, new RegExp(`delete ${join(dir, 'lock').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    }));

  it('should refuse, not guess, when the lock is unreadable or held on another host', () =>
    withTempDir('lock', async (dir) => {
      await writeFile(join(dir, 'lock'), 'garbage');
      const garbage = await open(dir);
      assert.match(!garbage.ok && garbage.kind === 'locked' ? garbage.message : '', /unreadable/);
      await writeFile(join(dir, 'lock'), JSON.stringify({ pid: await deadPid(), startedAt: 1, host: `${hostname()}-elsewhere`, token: 'x' }));
      const remote = await open(dir);
      assert.match(!remote.ok && remote.kind === 'locked' ? remote.message : '', /-elsewhere/);
    }));
});
