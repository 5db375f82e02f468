// The data-dir lock (CONVENTIONS.md#data-directory: a second process on the same data dir refuses to
// start with a clear message and exit code 1; CONVENTIONS.md#durability: a lock left by a dead process is
// taken over safely).
//
// The lock file `lock` holds { pid, startedAt, host, token }. It is only ever created whole: the
// content is written and fsynced under a unique temp name, then hard-linked to `lock`; link() fails
// with EEXIST when `lock` exists, so two starters can never both create it.
//
// Taking over a stale lock (its pid is gone) needs care: "check it is stale, then delete it" lets a
// slow starter delete the fresh lock another starter just created. So only the starter that creates
// the marker `lock.takeover-<stale token>` (again by link(), so exactly one) may delete the stale
// lock, and it deletes it only after re-reading it under the marker: nobody else can change `lock`
// while it is the stale one and the marker is held. Then the normal link() race picks the new holder.
// A marker left by a starter that died is itself taken over the same way, one level up.
//
// A holder is dead when its pid is gone or is a zombie (process-state.ts): a restart right after
// kill -9 must not wait for a supervisor to reap the old process. Deliberate limits: a pid on another
// host cannot be checked, so such a lock counts as held; and a live pid reused by an unrelated
// process counts as held too (refusing is the safe mistake). Our own pid with another start time is
// a previous life of this container, so that lock is stale. Every refusal says how to proceed.
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { FileIO } from './fs-io.js';
import { describeError, hasCode, readFully, writeFully } from './fs-io.js';
import { processState } from './process-state.js';
import type { Logger } from '../log.js';
import { sleep, type Clock, type Random } from '../clock.js';

export const LOCK_FILE = 'lock';
const MAX_ATTEMPTS = 8;
const TEMP_PID = /^lock\.tmp-(\d+)-/;

export interface LockOwner {
  readonly pid: number;
  /** Process start, ms since the epoch (performance.timeOrigin), telling a reused pid apart. */
  readonly startedAt: number;
  readonly host: string;
  /** Random per acquisition: tells two locks of the same process apart. */
  readonly token: string;
}

/** What became of a lock's holder: `remote` (another host) cannot be checked, so it counts as held. */
type Holder = 'running' | 'remote' | 'zombie' | 'gone';

export type LockResult =
  | { readonly ok: true; readonly lock: DirLock }
  | { readonly ok: false; readonly kind: 'locked' | 'io'; readonly message: string };

/** A held lock. `release` removes the file only while it is still ours. */
export class DirLock {
  constructor(
    private readonly io: FileIO,
    private readonly dir: string,
    readonly owner: LockOwner,
    private readonly log: Logger,
  ) {}

  async release(): Promise<void> {
    const path = join(this.dir, LOCK_FILE);
    const current = await readOwner(this.io, path);
    if (typeof current === 'string' || current.token !== this.owner.token) {
      this.log('warn', 'store lock was replaced by another process; leaving it in place', { path });
      return;
    }
    await this.io.unlink(path);
    await this.io.syncDir(this.dir);
  }
}

/** Takes the lock of `dir`, taking over a lock whose process is gone. */
export async function acquireLock(
  io: FileIO,
  dir: string,
  log: Logger,
  time: { readonly clock: Clock; readonly random: Random },
): Promise<LockResult> {
  const owner: LockOwner = {
    pid: process.pid,
    startedAt: performance.timeOrigin,
    host: hostname(),
    token: time.random.bytes(8).toString('hex'),
  };
  const path = join(dir, LOCK_FILE);
  const temp = join(dir, `${LOCK_FILE}.tmp-${owner.pid}-${owner.token}`);
  try {
    await writeOwner(io, temp, owner);
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      try {
        await io.link(temp, path);
      } catch (error) {
        if (!hasCode(error, 'EEXIST')) throw error;
      }
      const holder = await readOwner(io, path);
      if (typeof holder !== 'string' && holder.token === owner.token) {
        const lock = new DirLock(io, dir, owner, log);
        // Not durable yet: give the lock back rather than hold one a power loss could forget.
        await io.syncDir(dir).catch(async (error: unknown) => {
          await lock.release();
          throw error;
        });
        await removeLeftovers(io, dir, log).catch((error: unknown) => {
          log('warn', 'cannot remove leftover lock files', { error: describeError(error) });
        });
        return { ok: true, lock };
      }
      if (holder === 'unreadable') {
        const message = `lock file ${path} is unreadable; if no other resapi process uses ${dir}, delete it`;
        return { ok: false, kind: 'locked', message };
      }
      if (holder === 'missing') continue;
      const state = await holderState(holder);
      if (isHeld(state)) return { ok: false, kind: 'locked', message: heldMessage(dir, path, holder, state) };
      if (!(await removeStale(io, dir, temp, path, holder, state, log))) {
        // Another starter is taking it over: give it a moment (with jitter) to finish.
        await sleep(time.clock, 5 + time.random.fraction() * 20);
      }
    }
    const message = `could not take the lock ${path}: other processes keep racing for it`;
    return { ok: false, kind: 'locked', message };
  } catch (error) {
    return { ok: false, kind: 'io', message: `cannot take the lock ${path}: ${describeError(error)}` };
  } finally {
    await io.unlink(temp).catch((error: unknown) => {
      if (hasCode(error, 'ENOENT')) return;
      log('warn', 'cannot remove lock temp file', { path: temp, error: describeError(error) });
    });
  }
}

/**
 * Deletes `path` if it still holds `stale`, under the takeover marker named after the stale token.
 * Returns false when another live starter holds that marker.
 */
async function removeStale(
  io: FileIO,
  dir: string,
  temp: string,
  path: string,
  stale: LockOwner,
  state: Holder,
  log: Logger,
  depth = 0,
): Promise<boolean> {
  if (depth >= MAX_ATTEMPTS) throw new Error(`too many abandoned takeover markers in ${dir}`);
  const marker = join(dir, `${LOCK_FILE}.takeover-${stale.token}`);
  try {
    await io.link(temp, marker);
  } catch (error) {
    if (!hasCode(error, 'EEXIST')) throw error;
    const holder = await readOwner(io, marker);
    if (typeof holder === 'string') return holder === 'missing';
    const markerState = await holderState(holder);
    return isHeld(markerState) ? false : removeStale(io, dir, temp, marker, holder, markerState, log, depth + 1);
  }
  try {
    const current = await readOwner(io, path);
    if (typeof current !== 'string' && current.token === stale.token) {
      await io.unlink(path);
      // `holder`: gone, or a zombie (killed, kill -9 included, and not yet reaped by its parent).
      const fields = { path, pid: stale.pid, host: stale.host, holder: state };
      log('warn', 'took over a lock left by a process that is gone', fields);
    }
  } finally {
    // ENOENT: the new holder already cleared it as a leftover.
    await io.unlink(marker).catch((error: unknown) => {
      if (!hasCode(error, 'ENOENT')) throw error;
    });
  }
  return true;
}

/**
 * Removes lock temp files and takeover markers left by processes that are gone. Those of live
 * processes are theirs: another starter may be in the middle of acquireLock.
 */
async function removeLeftovers(io: FileIO, dir: string, log: Logger): Promise<void> {
  for (const name of await io.readdir(dir)) {
    if (!name.startsWith(`${LOCK_FILE}.`)) continue;
    const owner = await readOwner(io, join(dir, name));
    if (owner === 'missing') continue;
    // A temp file still being written is unreadable: then its name tells whose it is.
    const pid = Number(TEMP_PID.exec(name)?.[1] ?? Number.NaN);
    const live =
      owner === 'unreadable'
        ? Number.isSafeInteger(pid) && pid > 0 && (pid === process.pid || (await processState(pid)) === 'running')
        : isHeld(await holderState(owner));
    if (live) continue;
    await io.unlink(join(dir, name)).catch((error: unknown) => {
      if (!hasCode(error, 'ENOENT')) throw error;
    });
    log('info', 'removed a leftover temp file', { path: join(dir, name) });
  }
}

/** What became of the lock's owner. */
async function holderState(holder: LockOwner): Promise<Holder> {
  if (holder.host !== hostname()) return 'remote';
  if (holder.pid === process.pid) return holder.startedAt === performance.timeOrigin ? 'running' : 'gone';
  return processState(holder.pid);
}

/** True when the lock's owner may still be running. */
function isHeld(state: Holder): boolean {
  return state === 'running' || state === 'remote';
}

/** Why the lock is held, and what to do about it. */
function heldMessage(dir: string, path: string, holder: LockOwner, state: Holder): string {
  const who = `process ${holder.pid} on ${holder.host}`;
  if (state === 'remote') {
    return `data dir ${dir} is locked by ${who}, which cannot be checked from here (lock file ${path}): ` +
      `if no resapi runs there on this data dir, delete ${path}; otherwise use another --data-dir`;
  }
  return `data dir ${dir} is in use by ${who} (lock file ${path}); stop that process or use another ` +
    `--data-dir (if process ${holder.pid} is not resapi, it reused a dead holder's pid: delete ${path})`;
}

async function writeOwner(io: FileIO, path: string, owner: LockOwner): Promise<void> {
  const handle = await io.open(path, 'createExclusive');
  try {
    await writeFully(handle, Buffer.from(`${JSON.stringify(owner)}\n`), 0);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function readOwner(io: FileIO, path: string): Promise<LockOwner | 'missing' | 'unreadable'> {
  let handle;
  try {
    handle = await io.open(path, 'read');
  } catch (error) {
    if (hasCode(error, 'ENOENT')) return 'missing';
    throw error;
  }
  try {
    const buffer = Buffer.alloc(4096);
    const length = await readFully(handle, buffer, buffer.length, 0);
    return parseOwner(buffer.toString('utf8', 0, length));
  } finally {
    await handle.close();
  }
}

function parseOwner(text: string): LockOwner | 'unreadable' {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return 'unreadable';
  }
  if (typeof value !== 'object' || value === null) return 'unreadable';
  const { pid, startedAt, host, token } = value as Record<string, unknown>;
  const wellFormed = typeof startedAt === 'number' && typeof host === 'string' && typeof token === 'string';
  if (!Number.isSafeInteger(pid) || (pid as number) < 1 || !wellFormed) {
    return 'unreadable';
  }
  return { pid: pid as number, startedAt, host, token };
}
