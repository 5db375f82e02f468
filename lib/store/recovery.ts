// Recovery on start (CONVENTIONS.md#durability): load the snapshot, replay the journals, drop a torn last
// record (and say so in the log); corruption in the middle of a journal or of the snapshot refuses
// the start, naming the file and offset (no silent data loss). Leftover temp files are cleaned.
// Recovery of a large store shows progress on stderr.
//
// Torn tail versus corruption. A crash can only tear the last group write, because a group is
// written only after the previous one was fsynced; the pages of that one write may reach the disk in
// any order, so damage may be followed by valid frames of the same group. Each record carries `group`
// (the seq of its group's first record): damage followed by a valid frame of a LATER group is
// corruption in the middle, and recovery refuses to start rather than lose data silently. Damage with
// nothing of a later group after it is a torn last write: it is dropped and logged. (A bit flip in
// the last group of the newest journal looks the same as a torn write; no framing can tell them apart.)
//
// Speed (1M records in under 5 s): files are read in 8 MiB chunks and frames parsed from the buffer
// (codec.ts); the state is loaded in bulk mode, so ordered keys are rebuilt by one sort at the end.
import { join } from 'node:path';
import { Crc32c, decodeRecord, frameAt, nextMarker, scanFrames } from './codec.js';
import type { FileHandleIO, FileIO, MadeDir } from './fs-io.js';
import { DIR_MODE, describeError, readFully } from './fs-io.js';
import { JournalWriter, journalName, journalStart } from './journal.js';
import type { DirLock } from './lock.js';
import { LOCK_FILE, acquireLock } from './lock.js';
import { SNAPSHOT_FILE, type SnapshotFrames } from './snapshot.js';
import { loadSnapshot } from './snapshot-load.js';
import { StoreState } from './state.js';
import type { Logger } from '../log.js';
import type { Clock, Random } from '../clock.js';

/** Files smaller than this recover in well under a second: no progress lines for them. */
const PROGRESS_MIN_BYTES = 8 << 20;
/** The tail after the last frame is read this much at a time to see whether it is all zeros. */
const ZERO_CHECK_BYTES = 1 << 20;

/** What recovery hands to the store: everything but the options it was given. */
export interface RecoveredParts {
  readonly crc: Crc32c;
  readonly state: StoreState;
  readonly journal: JournalWriter;
  /** Bytes in journals before the current one (kept because no snapshot covers them yet). */
  readonly olderJournalBytes: number;
  /** The size of the snapshot loaded (0 without one): the next snapshot's trigger grows with it. */
  readonly snapshotBytes: number;
  /** Where its frames are, for the next snapshot to copy those whose records are unchanged. */
  readonly snapshotFrames: SnapshotFrames | undefined;
  readonly lock: DirLock;
}

export type Recovered =
  | { readonly ok: true; readonly parts: RecoveredParts }
  | { readonly ok: false; readonly kind: 'locked' | 'corrupt' | 'io'; readonly message: string };

export interface RecoveryOptions {
  readonly clock: Clock;
  readonly random: Random;
  readonly log: Logger;
  readonly progress: (message: string) => void;
}

type Rebuilt =
  | { readonly ok: true; readonly parts: Omit<RecoveredParts, 'lock'> }
  | { readonly ok: false; readonly kind: 'corrupt'; readonly message: string };

/** Creates `dir` when missing, takes its lock and rebuilds the state; releases the lock on failure. */
export async function recover(
  io: FileIO,
  dir: string,
  options: RecoveryOptions,
): Promise<Recovered> {
  const { log } = options;
  let made: MadeDir;
  try {
    made = await io.mkdir(dir);
  } catch (error) {
    return { ok: false, kind: 'io', message: `cannot create the data dir ${dir}: ${describeError(error)}` };
  }
  const locked = await acquireLock(io, dir, log, options);
  if (!locked.ok) return locked;
  if (!made.created) await narrowDir(io, dir, made.mode, log);
  type Failed = { readonly ok: false; readonly kind: 'io'; readonly message: string };
  const rebuilt: Rebuilt | Failed = await rebuild(io, dir, options).catch((error: unknown) => ({
    ok: false,
    kind: 'io',
    message: `cannot open the store in ${dir}: ${describeError(error)}`,
  }));
  if (rebuilt.ok) return { ok: true, parts: { ...rebuilt.parts, lock: locked.lock } };
  await locked.lock.release().catch((error: unknown) => {
    log('error', 'releasing the store lock failed', { error: describeError(error) });
  });
  return rebuilt;
}

/**
 * An existing data dir that the group or others may enter is narrowed to its owner
 * (CONVENTIONS.md#data-directory): files an earlier version made 0644 are then out of their reach
 * too. One warning line says so. A dir that cannot be narrowed (not ours) is used as it is, and the
 * line says that instead: refusing to start would not make it private.
 */
async function narrowDir(io: FileIO, dir: string, mode: number, log: Logger): Promise<void> {
  if ((mode & ~DIR_MODE) === 0) return;
  const fields = { path: dir, before: octal(mode), after: octal(mode & DIR_MODE) };
  try {
    await io.chmod(dir, mode & DIR_MODE);
  } catch (error) {
    log('warn', 'the data dir may be entered by others and cannot be narrowed to its owner', {
      ...fields,
      error: describeError(error),
    });
    return;
  }
  log('warn', 'narrowed the data dir to its owner: others could enter it', fields);
}

const octal = (mode: number): string => mode.toString(8).padStart(4, '0');

/** Rebuilds the state from the files in `dir` (the caller holds the lock) and opens the journal to append to. */
async function rebuild(
  io: FileIO,
  dir: string,
  options: RecoveryOptions,
): Promise<Rebuilt> {
  const { clock, log } = options;
  const progress = reporter(options.progress);
  const started = performance.now();
  const names = await io.readdir(dir);
  // Lock temp files are lock.ts's to clean: another starter may be using one right now.
  for (const name of names.filter((entry) => entry.includes('.tmp-') && !entry.startsWith(`${LOCK_FILE}.`))) {
    await io.unlink(join(dir, name));
    log('info', 'removed a leftover temp file', { path: join(dir, name) });
  }
  const crc = new Crc32c();
  const state = new StoreState(() => clock.now());
  state.beginBulk();
  let snapshotSeq = 0;
  let snapshotBytes = 0;
  let snapshotFrames: SnapshotFrames | undefined;
  if (names.includes(SNAPSHOT_FILE)) {
    const loaded = await loadSnapshot(io, crc, join(dir, SNAPSHOT_FILE), state, progress(SNAPSHOT_FILE));
    if (!loaded.ok) return { ok: false, kind: 'corrupt', message: loaded.message };
    snapshotSeq = loaded.seq;
    snapshotBytes = loaded.bytes;
    snapshotFrames = loaded.frames;
  }
  const starts = names.map(journalStart).filter((start): start is number => start !== undefined).sort((a, b) => a - b);
  // A journal is obsolete when the next one starts at or before the snapshot's next seq.
  const obsolete = starts.filter((_, index) => (starts[index + 1] ?? Number.POSITIVE_INFINITY) <= snapshotSeq + 1);
  const live = starts.slice(obsolete.length);
  if (live[0] !== undefined && live[0] > snapshotSeq + 1) {
    const message =
      `refusing to start: records ${snapshotSeq + 1} to ${live[0] - 1} are missing (no journal holds them) in ${dir}`;
    return { ok: false, kind: 'corrupt', message };
  }
  let goodBytes = 0;
  let olderJournalBytes = 0;
  for (const [index, start] of live.entries()) {
    olderJournalBytes += goodBytes;
    const path = join(dir, journalName(start));
    const last = index === live.length - 1;
    const replayOptions = { last, skipThrough: snapshotSeq, progress: progress(journalName(start)) };
    const replayed = await replayJournal(io, crc, state, path, replayOptions);
    if (!replayed.ok) return { ok: false, kind: 'corrupt', message: replayed.message };
    goodBytes = replayed.goodBytes;
    if (replayed.torn !== undefined) {
      const message = 'dropped a torn record at the end of the journal (an unacknowledged write cut short by a crash)';
      log('warn', message, { path, ...replayed.torn });
    }
  }
  state.endBulk();
  for (const start of obsolete) await io.unlink(join(dir, journalName(start)));
  const lastStart = live[live.length - 1];
  const journal = lastStart === undefined
    ? await JournalWriter.create(io, dir, state.seq + 1, log)
    : await JournalWriter.open(io, dir, lastStart, goodBytes, log);
  const ms = Math.round(performance.now() - started);
  log('info', 'store recovered', { dir, seq: state.seq, snapshotSeq, journals: live.length, ms });
  return { ok: true, parts: { crc, state, journal, olderJournalBytes, snapshotBytes, snapshotFrames } };
}

/** Progress lines for big files only, one per tenth read. */
function reporter(write: (message: string) => void): (label: string) => (done: number, total: number) => void {
  return (label) => {
    let shown = -1;
    return (done, total) => {
      if (total < PROGRESS_MIN_BYTES) return;
      const tenth = Math.floor((done * 10) / total);
      if (tenth <= shown) return;
      shown = tenth;
      write(`recovering store: ${label} ${tenth * 10}% of ${Math.round(total / (1 << 20))} MiB`);
    };
  };
}

type ReplayResult =
  | {
      readonly ok: true;
      readonly goodBytes: number;
      readonly torn?: { readonly offset: number; readonly bytes: number; readonly reason: string };
    }
  | { readonly ok: false; readonly message: string };

/**
 * Applies every record of one journal file with seq above `skipThrough` (already in the snapshot),
 * in order, through StoreState.apply, so versions and times come out exactly as first committed.
 */
async function replayJournal(
  io: FileIO,
  crc: Crc32c,
  state: StoreState,
  path: string,
  options: {
    readonly last: boolean;
    readonly skipThrough: number;
    readonly progress: (done: number, total: number) => void;
  },
): Promise<ReplayResult> {
  const handle = await io.open(path, 'read');
  try {
    const size = await handle.size();
    const end = await scanFrames(crc, handle, size, (payload) => {
      const decoded = decodeRecord(payload);
      if (!decoded.ok) return decoded.reason;
      const { seq, at, batch } = decoded.value;
      if (seq <= options.skipThrough) return undefined;
      if (seq !== state.seq + 1) return `expected seq ${state.seq + 1}, found ${seq}`;
      state.apply(batch, seq, at);
      return undefined;
    }, (done) => options.progress(done, size));
    if (end.kind === 'end') return { ok: true, goodBytes: end.offset };
    // Zeros prepared ahead of the writer (journal.ts) and never reached end the journal cleanly.
    const zeros = end.kind === 'damaged' && (await zerosFrom(handle, end.offset, size));
    if (zeros) return { ok: true, goodBytes: end.offset };
    // Only the last journal may end in a torn record, and only when no later group follows the damage.
    if (end.kind === 'damaged' && options.last) {
      if (!(await laterGroupFollows(crc, handle, end.offset, size, state.seq + 1))) {
        const torn = { offset: end.offset, bytes: size - end.offset, reason: end.reason };
        return { ok: true, goodBytes: end.offset, torn };
      }
    }
    return {
      ok: false,
      message:
        `refusing to start: ${path} is corrupt at offset ${end.offset} (${end.reason}); records after it ` +
        'would be lost. Nothing was changed; restore the data dir from a backup',
    };
  } finally {
    await handle.close();
  }
}

/** True when every byte from `from` to the end of the file is zero. */
async function zerosFrom(handle: FileHandleIO, from: number, size: number): Promise<boolean> {
  const chunk = Buffer.allocUnsafe(Math.min(size - from, ZERO_CHECK_BYTES));
  const zeros = Buffer.alloc(chunk.length);
  for (let at = from; at < size; at += chunk.length) {
    const length = await readFully(handle, chunk, Math.min(chunk.length, size - at), at);
    if (!chunk.subarray(0, length).equals(zeros.subarray(0, length))) return false;
    if (length === 0) break;
  }
  return true;
}

/** True when a valid frame after `from` belongs to a group that started after seq `damagedSeq`. */
async function laterGroupFollows(
  crc: Crc32c,
  handle: FileHandleIO,
  from: number,
  size: number,
  damagedSeq: number,
): Promise<boolean> {
  const rest = Buffer.allocUnsafe(size - from);
  const length = await readFully(handle, rest, rest.length, from);
  for (let at = nextMarker(rest, 1, length); at !== -1; at = nextMarker(rest, at + 1, length)) {
    const found = frameAt(crc, rest, at, length);
    if (found.kind !== 'frame') continue;
    const decoded = decodeRecord(rest.subarray(found.start, found.end));
    if (decoded.ok && decoded.value.group > damagedSeq) return true;
  }
  return false;
}
