// Snapshots (CONVENTIONS.md#durability): the live state is written to a temp file, fsynced, renamed over the
// snapshot, and the directory fsynced; then the old journals are deleted. The temp file is flushed as it
// is written (SYNC_BEHIND_BYTES), so that its fsync does not hold the journal's writes behind it. The
// file is a sequence of the same checksummed frames as the journal (codec.ts):
//
//   {"type":"header","format":2,"seq":S,"at":T,"lastModified":[[collection, ms], ...]}
//   {"type":"records","collection":C,"versions":[...],"modifiedAt":[...],"idLengths":[...],
//    "docLengths":[...],"expiresAt":[...]?,"dueAt":[...]?}\n<id><doc><id><doc>...            (repeated)
//   {"type":"tombstones","collection":C,"rows":[[id, version, deletedAt, retainUntil, doc, restoredVersion?], ...]}
//   {"type":"end","records":N,"tombstones":M}
//
// A records frame is one line of JSON, a newline, then each record's id (raw text) and document (JSON
// text) one after another, as long as the `idLengths` and `docLengths` entries say (in UTF-16 code
// units of the decoded payload: JavaScript string length). Recovery (snapshot-load.ts) parses only the
// line and keeps each document as a slice of the payload until something reads it (state.ts,
// RecordVersion, LoadedFrame):
// building a million document objects at start was most of what opening a 1M-record store cost. The
// line's columns are arrays of numbers rather than one array per record, which parses faster and
// leaves less for the collector; expiresAt and dueAt columns (null where a record has none) appear
// only when some record has one.
// A records frame whose run of records is unchanged since the snapshot in place was written or loaded
// (none replaced, removed or expired since; a read changes nothing) is copied from that file instead of
// encoded again (recordPieces, SnapshotFrames), so a record is encoded by the first snapshot after its
// write and copied by the next ones. Encoding every record each time made a snapshot cost more the more
// the store had taken since it opened: an event and its delivery are kept 30 days, and with one
// subscription each write leaves ~1 kB of them, so each snapshot re-encoded every one written before
// (under the bench's PUTs with a subscription, 2.5 minutes of load: the snapshot's share of the main
// thread's busy time 5.3%, and 3.1% with copies, half as much per write; on the main thread, copying
// cost ~1.5 ms per MB (reading back and checking the CRC-32C; about a third of that by fingerprint, below),
// encoding ~6.5).
// The copy is read in the thread pool and checked before it is written again, so a frame that changed
// on disk is written from memory instead of carried on (a copy is as sound as an encoding: damage cannot
// pass from one snapshot into the next). A frame this process wrote is checked against the fingerprint
// it had then (frameFingerprint, kept in memory beside the frame's place); one loaded at start, whose
// fingerprint is not known yet, by its CRC-32C.
// Format 1, still read, had {"type":"chunk"} frames: a tuple per record with its document inline, and
// the tombstone rows.
// A frame holds one collection's records (or tombstones) up to about 64 KiB, so the collection name is
// parsed once per frame and shared. Frames are small so that the snapshot, written on the main thread
// between commits, holds it for well under a millisecond at a time: with 1 MiB frames (~8 ms of encoding
// each, back to back) a 1M-record snapshot left commits one turn per frame and their rate fell to a
// tenth while it ran; with 64 KiB frames it stays above half, and loading costs the same. Frames go out
// several to a write, paced by the journal (WRITE_BYTES, PACE): with one write per frame, each a trip
// through the thread pool and a turn of the event loop, a snapshot under a stream of large commits fell
// behind them, and a store closed after a burst of writes had none (its next start replayed 200 MB of
// journal: 2.1 s instead of 1.5 at 1M records).
// The end frame makes a short snapshot detectable; a snapshot is only renamed into place whole, so any
// damage in it is corruption (never a torn tail) and recovery refuses to start.
// The capture is a list of references to immutable record objects taken at one seq (each collection's
// in the state's insertion order, the cheapest walk), so it can be written chunk by chunk while new
// commits go on (to the next journal). It is a plain copy of the state's Maps (the one synchronous step:
// about 7 ms at a million records; joined into one array it took twice that, and a snapshot's capture
// was the longest stop of the event loop under writes at 1M items); records and tombstones already
// expired at the capture's time are skipped as the frames are built.
import { join } from 'node:path';
import * as zlib from 'node:zlib';
import { isJsonObject } from '../json.js';
import type { Crc32c } from './codec.js';
import { encodeFrame, frameAt, frameChecksum, parsePayload } from './codec.js';
import type { FileHandleIO, FileIO } from './fs-io.js';
import { describeError, hasCode, readFully, writeFully } from './fs-io.js';
import { removeJournalsBefore } from './journal.js';
import type { StoreState } from './state.js';
import { documentText } from './state.js';
import type { StoredRecord, Tombstone } from './types.js';
import type { Logger } from '../log.js';
import { nextTurn, type Clock, type Random } from '../clock.js';

export const SNAPSHOT_FILE = 'snapshot.dat';
const CHUNK_BYTES = 64 << 10;
/** A frame of the previous snapshot smaller than this is encoded again with its neighbours (unchangedFrame). */
const MIN_COPY_BYTES = CHUNK_BYTES / 4;
/** Frames gathered into one write at the least (the turn is given back between them: SLICE_MS). */
const WRITE_BYTES = 256 << 10;
/**
 * A write also holds four times what the journal grew by since the one before: a snapshot is at most
 * four times its trigger (CONVENTIONS.md#durability), so it ends before the journal behind it reaches
 * the trigger again unless writes outrun MAX_WRITE_BYTES a piece (~8 ms of encoding). Uncapped, a slow
 * write let the journal grow more, which made the next piece larger and its write slower still (PUT
 * p99 at 1M items with a subscription 207 ms).
 */
const PACE = 4;
const MAX_WRITE_BYTES = 1 << 20;
/**
 * The main thread's time the snapshot takes at once, at most about: past it, the next frame waits for
 * the next turn of the event loop, whatever the writes' size. Measured (signed webhook accepts, 32
 * connections, snapshots of 30-56 MiB taking 0.3-0.5 s): without it the pieces between two writes
 * held the thread 5-11.5 ms at a time, and 26-94% of the slowest 1% of accepts fell in a snapshot
 * against 3-6.5% of all; the time they waited was 13 of 17 ms the snapshot's encoding.
 */
const SLICE_MS = 1;
/**
 * The temp file is flushed (fdatasync) each time this much more of it is written, so its last fsync
 * has at most about this much left to write back. The journal's durable writes share the disk, and a
 * snapshot flushed only at its end held them behind the writeback of the whole file: at 1,000,000
 * items under signed webhook accepts (snapshots of ~300 MB), the 200 ms after each of three snapshots
 * took 1,100-3,200 accepts a second with journal writes of 5.5-16 ms on average; flushed as it goes,
 * 3,900-5,900 with 2.3-3.6 ms, and 18,800 against 16,700 accepts a second over the 45 s. At 10,000
 * items (snapshots of up to ~100 MB) the same within the noise.
 */
const SYNC_BEHIND_BYTES = 16 << 20;
/** A piece of a write smaller than this is copied into one buffer with its neighbours (writeBuffers). */
const JOIN_BELOW = 2 * CHUNK_BYTES;
/** Contiguous frames of the previous snapshot read in one go, at most (~1 ms to check their checksums). */
const COPY_READ_BYTES = 1 << 20;
export const FORMAT = 2;

/** The state at one seq, as references to immutable objects (expired ones included: see `at`). */
export interface SnapshotCapture {
  readonly seq: number;
  /** Records and tombstones expired at this time are not written. */
  readonly at: number;
  readonly lastModified: ReadonlyArray<readonly [string, number]>;
  /** One array per collection. */
  readonly records: ReadonlyArray<readonly StoredRecord[]>;
  readonly tombstones: ReadonlyArray<readonly Tombstone[]>;
}

/** Takes the capture synchronously. */
export function captureState(state: StoreState, at: number): SnapshotCapture {
  const { records, tombstones } = state.snapshotEntries();
  return { seq: state.seq, at, lastModified: state.lastModifiedTimes(), records, tombstones };
}

/**
 * Writes the capture to a uniquely named temp file, fsyncs it, renames it over the snapshot and
 * fsyncs the directory. `aborted` is polled between chunks (close() does not wait for a big write).
 */
async function writeSnapshot(
  io: FileIO,
  crc: Crc32c,
  dir: string,
  capture: SnapshotCapture,
  options: SnapshotOptions,
): Promise<Written> {
  const { aborted, log, journalBytes } = options;
  const temp = join(dir, `${SNAPSHOT_FILE}.tmp-${process.pid}-${options.random.bytes(8).toString('hex')}`);
  const handle = await io.open(temp, 'createExclusive');
  let source: FileHandleIO | undefined;
  let offset = 0;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let journalAtLastWrite = journalBytes();
  let syncedTo = 0;
  const counts: Counts = { records: 0, tombstones: 0 };
  const flush = async (): Promise<void> => {
    if (pendingBytes === 0) return;
    const buffers = writeBuffers(pending);
    pending = [];
    pendingBytes = 0;
    journalAtLastWrite = journalBytes();
    for (const bytes of buffers) {
      await writeFully(handle, bytes, offset);
      offset += bytes.length;
    }
    if (offset - syncedTo < SYNC_BEHIND_BYTES) return;
    syncedTo = offset;
    await handle.datasync();
  };
  const { clock } = options;
  let sliceEnds = clock.monotonic() + SLICE_MS;
  /** Gives the turn back once SLICE_MS is spent; a write's return starts a new slice too. */
  const pause = async (): Promise<void> => {
    if (clock.monotonic() < sliceEnds) return;
    await nextTurn();
    sliceEnds = clock.monotonic() + SLICE_MS;
  };
  const emitFrame = async (frame: Buffer): Promise<void> => {
    if (aborted()) throw new Error('snapshot aborted: the store is closing');
    pending.push(frame);
    pendingBytes += frame.length;
    const paced = Math.min(MAX_WRITE_BYTES, PACE * (journalBytes() - journalAtLastWrite));
    if (pendingBytes < Math.max(WRITE_BYTES, paced)) return pause();
    await flush();
    sliceEnds = clock.monotonic() + SLICE_MS;
  };
  const emit = (json: string): Promise<void> => emitFrame(encodeFrame(crc, json));
  const { seq, at, lastModified } = capture;
  const header = encodeFrame(crc, JSON.stringify({ type: 'header', format: FORMAT, seq, at, lastModified }));
  const frames = new SnapshotFrames(seq, at, header.length);
  const emitRecords = async (collection: string, entries: readonly RecordEntry[]): Promise<void> => {
    const frame = encodeFrame(crc, recordsFrame(collection, entries));
    frames.add(placed(crc, collection, entries, offset + pendingBytes, frame));
    await emitFrame(frame);
    counts.records += entries.length;
  };
  // Frames to copy, contiguous in the previous file: read together, then each one's checksum checked.
  let run: CopyPiece[] = [];
  let runBytes = 0;
  const copyRun = async (): Promise<void> => {
    if (run.length === 0) return;
    const pieces = run;
    const buffer = Buffer.allocUnsafe(runBytes);
    run = [];
    runBytes = 0;
    const got = await readFully(source as FileHandleIO, buffer, buffer.length, (pieces[0] as CopyPiece).copy.offset);
    let position = 0;
    for (const { copy, records, from } of pieces) {
      const fingerprint = unchangedCopy(crc, buffer, position, got, copy);
      if (fingerprint !== undefined) {
        frames.add(movedTo(copy, offset + pendingBytes, fingerprint));
        await emitFrame(buffer.subarray(position, position + copy.bytes));
        counts.records += copy.records;
      } else {
        // The memory holds the same records: the new snapshot is right whatever became of the old one.
        const fields = { offset: copy.offset };
        log('warn', 'a frame of the last snapshot read back damaged; its records are written anew', fields);
        for (const piece of encoded(records, from, from + copy.records, capture.at)) {
          await emitRecords(piece.collection, piece.entries);
        }
      }
      position += copy.bytes;
    }
  };
  try {
    source = await openPrevious(io, crc, dir, options.previous, log);
    await emitFrame(header);
    for (const piece of recordPieces(capture.records, at, source === undefined ? undefined : options.previous)) {
      await pause();
      if (piece === SCANNED) continue;
      if ('copy' in piece) {
        const last = run[run.length - 1];
        const follows = last === undefined || last.copy.offset + last.copy.bytes === piece.copy.offset;
        if (!follows || runBytes + piece.copy.bytes > COPY_READ_BYTES) await copyRun();
        run.push(piece);
        runBytes += piece.copy.bytes;
        continue;
      }
      await copyRun();
      await emitRecords(piece.collection, piece.entries);
    }
    await copyRun();
    const live = (tombstone: Tombstone): boolean => tombstone.retainUntil > at;
    const rowBytes = (row: string): number => row.length;
    for (const tombstones of capture.tombstones) {
      for (const { collection, entries } of chunks(tombstones, 0, tombstones.length, live, tombstoneRow, rowBytes)) {
        await emit(tombstonesFrame(collection, entries));
        counts.tombstones += entries.length;
      }
    }
    await emit(JSON.stringify({ type: 'end', ...counts }));
    await flush();
    await handle.sync();
  } catch (error) {
    await handle.close().catch((closeError: unknown) => {
      log('warn', 'closing the snapshot temp file failed', { path: temp, error: describeError(closeError) });
    });
    await io.unlink(temp).catch((unlinkError: unknown) => {
      if (hasCode(unlinkError, 'ENOENT')) return;
      log('warn', 'removing the snapshot temp file failed', { path: temp, error: describeError(unlinkError) });
    });
    throw error;
  } finally {
    await source?.close().catch((closeError: unknown) => {
      log('warn', 'closing the last snapshot failed', { error: describeError(closeError) });
    });
  }
  await handle.close();
  await io.rename(temp, join(dir, SNAPSHOT_FILE));
  await io.syncDir(dir);
  return { ...counts, bytes: offset, frames };
}

/**
 * The snapshot file `previous` describes, open for reading, or undefined when there is none or the
 * file's header is not the one described (then every record is encoded).
 */
async function openPrevious(
  io: FileIO,
  crc: Crc32c,
  dir: string,
  previous: SnapshotFrames | undefined,
  log: Logger,
): Promise<FileHandleIO | undefined> {
  if (previous === undefined) return undefined;
  const path = join(dir, SNAPSHOT_FILE);
  let source: FileHandleIO;
  try {
    source = await io.open(path, 'read');
  } catch (error) {
    log('warn', 'cannot read the last snapshot; every record is written anew', { path, error: describeError(error) });
    return undefined;
  }
  try {
    const header = Buffer.allocUnsafe(previous.headerBytes);
    const got = await readFully(source, header, header.length, 0);
    const found = frameAt(crc, header, 0, got);
    const parsed = found.kind === 'frame' ? parsePayload(header.subarray(found.start, found.end)) : undefined;
    if (isJsonObject(parsed) && parsed.seq === previous.seq && parsed.at === previous.at) return source;
    log('warn', 'the last snapshot is not the one written; every record is written anew', { path });
  } catch (error) {
    log('warn', 'cannot read the last snapshot; every record is written anew', { path, error: describeError(error) });
  }
  await source.close().catch(() => undefined);
  return undefined;
}

/**
 * The frames of a write as the buffers to write, in order. Frames copied from one read of the last
 * snapshot lie side by side in its buffer and go out as one view of it; the smaller pieces between
 * those are joined by copying. Joining everything copied each copied frame a second time: at 1M records
 * a seventh of the snapshot's main-thread time. Under load a write of its own took about 60 µs of the
 * main thread and copying about 0.4 ms a MiB, so pieces under JOIN_BELOW (what a write costs) are joined.
 */
function writeBuffers(frames: readonly Buffer[]): Buffer[] {
  const views: Buffer[] = [];
  for (const frame of frames) {
    const last = views[views.length - 1];
    if (last !== undefined && last.buffer === frame.buffer && last.byteOffset + last.length === frame.byteOffset) {
      views[views.length - 1] = Buffer.from(last.buffer, last.byteOffset, last.length + frame.length);
    } else {
      views.push(frame);
    }
  }
  const buffers: Buffer[] = [];
  let small: Buffer[] = [];
  const join = (): void => {
    if (small.length > 0) buffers.push(small.length === 1 ? (small[0] as Buffer) : Buffer.concat(small));
    small = [];
  };
  for (const view of views) {
    if (view.length < JOIN_BELOW) {
      small.push(view);
      continue;
    }
    join();
    buffers.push(view);
  }
  join();
  return buffers;
}

/** zlib.crc32, or undefined on a Node without it (typed as optional: @types/node says it is always there). */
const NATIVE_CRC32 = (zlib as { readonly crc32?: (data: Uint8Array) => number }).crc32;

/**
 * What a copied frame is checked by in memory: zlib's CRC-32 of its bytes, native, where Node has it
 * (20.15 and later; 4.7 GB/s here against 1.4-1.8 for codec.ts's CRC-32C in JavaScript, whose checks
 * were 300 of the 690 ms a 310 MB snapshot at 1M records took of the main thread), else the CRC-32C.
 * Only ever compared with itself, never written: the file format is the same.
 */
function frameFingerprint(crc: Crc32c, bytes: Buffer): number {
  return NATIVE_CRC32 === undefined ? crc.compute(bytes) : NATIVE_CRC32(bytes);
}

/**
 * The fingerprint of the frame `expected` describes when it is at `at` in `buffer` whole and as it was
 * written (its fingerprint the same, or for a frame loaded at start, its CRC-32C holding), else undefined.
 */
function unchangedCopy(
  crc: Crc32c,
  buffer: Buffer,
  at: number,
  limit: number,
  expected: RecordsFrameAt,
): number | undefined {
  if (limit - at < expected.bytes) return undefined;
  const fingerprint = frameFingerprint(crc, buffer.subarray(at, at + expected.bytes));
  if (expected.fingerprint !== undefined) return fingerprint === expected.fingerprint ? fingerprint : undefined;
  const found = frameAt(crc, buffer, at, limit);
  const whole = found.kind === 'frame' && found.end - at === expected.bytes;
  return whole && frameChecksum(buffer, at) === expected.checksum ? fingerprint : undefined;
}

/** A copied frame at its place in the new file. */
function movedTo(frame: RecordsFrameAt, offset: number, fingerprint: number): RecordsFrameAt {
  const { collection, firstId, lastId, records, bytes, checksum, earliestExpiry } = frame;
  return { collection, firstId, lastId, records, offset, bytes, checksum, fingerprint, earliestExpiry };
}

/** An encoded records frame as the next snapshot finds it. */
function placed(
  crc: Crc32c,
  collection: string,
  entries: readonly RecordEntry[],
  offset: number,
  frame: Buffer,
): RecordsFrameAt {
  let earliestExpiry = Number.POSITIVE_INFINITY;
  for (const { record } of entries) {
    if (record.expiresAt !== undefined) earliestExpiry = Math.min(earliestExpiry, record.expiresAt);
  }
  const firstId = (entries[0] as RecordEntry).record.id;
  const lastId = (entries[entries.length - 1] as RecordEntry).record.id;
  const checksum = frameChecksum(frame, 0);
  const fingerprint = frameFingerprint(crc, frame);
  const records = entries.length;
  return { collection, firstId, lastId, records, offset, bytes: frame.length, checksum, fingerprint, earliestExpiry };
}

export interface SnapshotOptions {
  /** Polled between writes: the store is closing. */
  readonly aborted: () => boolean;
  readonly log: Logger;
  readonly random: Random;
  /** Bytes in the journal the commits go on into meanwhile (it grows while the snapshot is written). */
  readonly journalBytes: () => number;
  /** The frames of the snapshot file in place (written or loaded last), which unchanged records are copied from. */
  readonly previous: SnapshotFrames | undefined;
  /** Its monotonic time measures SLICE_MS. */
  readonly clock: Clock;
}

/** What a written snapshot holds, its size in bytes, and where its frames are. */
interface Written extends Counts {
  readonly bytes: number;
  readonly frames: SnapshotFrames;
}

export type CheckpointOutcome =
  | { readonly kind: 'written'; readonly bytes: number; readonly frames: SnapshotFrames }
  | { readonly kind: 'failed' | 'abandoned' };

/**
 * Writes the snapshot, then deletes the journals it covers (those before `journalStart`). Never
 * throws: a failure is logged and the journals are kept, so nothing is lost.
 */
export async function checkpointSnapshot(
  io: FileIO,
  crc: Crc32c,
  dir: string,
  capture: SnapshotCapture,
  journalStart: number,
  options: SnapshotOptions,
): Promise<CheckpointOutcome> {
  const { aborted, log } = options;
  const started = performance.now();
  let written: Written;
  try {
    written = await writeSnapshot(io, crc, dir, capture, options);
  } catch (error) {
    if (aborted()) {
      log('info', 'snapshot abandoned because the store is closing; the journals are kept', { seq: capture.seq });
      return { kind: 'abandoned' };
    }
    log('error', 'snapshot failed; the journals are kept', { seq: capture.seq, error: describeError(error) });
    return { kind: 'failed' };
  }
  const ms = Math.round(performance.now() - started);
  log('info', 'snapshot written', { seq: capture.seq, records: written.records, bytes: written.bytes, ms });
  try {
    await removeJournalsBefore(io, dir, journalStart);
  } catch (error) {
    // The snapshot is good; stale journals are skipped by recovery and deleted by the next one.
    log('error', 'cannot delete journals covered by the snapshot', { seq: capture.seq, error: describeError(error) });
  }
  return { kind: 'written', bytes: written.bytes, frames: written.frames };
}

/**
 * Where the records frames of a snapshot file sit and which records each one holds: what the next
 * snapshot needs to copy a frame whose records are all unchanged instead of encoding them again.
 * Made as a snapshot is written or loaded: ~190 bytes of heap per frame, ~0.7 MB for 1M records.
 * `seq` and `at` are its header's: the next snapshot copies from the file only while its header says
 * it is still the one described (a snapshot that failed after its rename left a newer one in place).
 */
export class SnapshotFrames {
  /** Records frames by collection, then by the id of their first record. */
  readonly #starts = new Map<string, Map<string, RecordsFrameAt>>();

  constructor(
    readonly seq: number,
    readonly at: number,
    /** The header frame's length: the first bytes of the file. */
    readonly headerBytes: number,
  ) {}

  add(frame: RecordsFrameAt): void {
    let starts = this.#starts.get(frame.collection);
    if (starts === undefined) {
      starts = new Map();
      this.#starts.set(frame.collection, starts);
    }
    starts.set(frame.firstId, frame);
  }

  /** The frame whose first record has `record`'s key. */
  startingWith(record: StoredRecord): RecordsFrameAt | undefined {
    return this.#starts.get(record.collection)?.get(record.id);
  }
}

/** A records frame of a snapshot file. */
export interface RecordsFrameAt {
  readonly collection: string;
  readonly firstId: string;
  readonly lastId: string;
  readonly records: number;
  /** Where the frame starts in the file, and its length, header included. */
  readonly offset: number;
  readonly bytes: number;
  readonly checksum: number;
  /** frameFingerprint of its bytes as this process wrote them; undefined for a frame loaded at start. */
  readonly fingerprint: number | undefined;
  /** The earliest expiresAt of its records (+Infinity when none expires). */
  readonly earliestExpiry: number;
}

/**
 * Records to encode into a frame, a frame of the previous snapshot to copy (its records from `from`), or
 * `SCANNED`: SCAN_RECORDS records looked at and none yet to write, a point to give the turn back at.
 */
type RecordPiece =
  | { readonly collection: string; readonly entries: readonly RecordEntry[] }
  | CopyPiece
  | typeof SCANNED;
const SCANNED = 'scanned';
/** Records recordPieces looks at between two pieces at most (a few hundred µs: SLICE_MS). */
const SCAN_RECORDS = 1024;

/** A frame to copy: it holds `records` from `from` on (encoded again if the copy reads back damaged). */
type CopyPiece = { readonly copy: RecordsFrameAt; readonly records: readonly StoredRecord[]; readonly from: number };

/**
 * The capture's records as frames to write. A run of records that is exactly a frame of the previous
 * snapshot, none replaced, removed or expired since, is that frame again (copied from the file);
 * everything else is encoded, in frames of about CHUNK_BYTES.
 */
function* recordPieces(
  collections: ReadonlyArray<readonly StoredRecord[]>,
  at: number,
  previous: SnapshotFrames | undefined,
): Generator<RecordPiece> {
  for (const records of collections) yield* collectionPieces(records, at, previous);
}

/** recordPieces for one collection's records. */
function* collectionPieces(
  records: readonly StoredRecord[],
  at: number,
  previous: SnapshotFrames | undefined,
): Generator<RecordPiece> {
  let encodeFrom = 0;
  let index = 0;
  while (index < records.length) {
    const frame = previous === undefined ? undefined : unchangedFrame(previous, records, index, at);
    if (frame === undefined) {
      index++;
      if ((index - encodeFrom) % SCAN_RECORDS === 0) yield SCANNED;
      continue;
    }
    yield* encoded(records, encodeFrom, index, at);
    yield { copy: frame, records, from: index };
    index += frame.records;
    encodeFrom = index;
  }
  yield* encoded(records, encodeFrom, records.length, at);
}

/**
 * The previous snapshot's frame that holds exactly the records from `index` on (one collection's), as
 * they are now, or undefined. A record's version is the seq of the commit that wrote it, so every
 * record of the run at or below the previous snapshot's seq was in it, unchanged; a commit since then
 * either replaced a record in place (a newer version), removed one (the frame's last record moves off
 * the run's end) or added one (at the end of its collection, with a newer version). So a run that
 * starts and ends with the frame's first and last records and holds nothing newer is that frame.
 * Small frames are encoded again with their neighbours, so a store written a little at a time is not
 * left in small frames.
 */
function unchangedFrame(
  previous: SnapshotFrames,
  records: readonly StoredRecord[],
  index: number,
  at: number,
): RecordsFrameAt | undefined {
  const first = records[index] as StoredRecord;
  if (first.version > previous.seq) return undefined;
  const frame = previous.startingWith(first);
  if (frame === undefined || frame.bytes < MIN_COPY_BYTES || frame.earliestExpiry <= at) return undefined;
  const end = index + frame.records;
  const last = records[end - 1];
  if (last === undefined || last.id !== frame.lastId) return undefined;
  for (let next = index; next < end; next++) {
    if ((records[next] as StoredRecord).version > previous.seq) return undefined;
  }
  return frame;
}

/** The live records from `from` to `to` in frames of about CHUNK_BYTES, each of one collection. */
function encoded(
  records: readonly StoredRecord[],
  from: number,
  to: number,
  at: number,
): Generator<{ readonly collection: string; readonly entries: readonly RecordEntry[] }> {
  const live = (record: StoredRecord): boolean => record.expiresAt === undefined || record.expiresAt > at;
  const prepare = (record: StoredRecord): RecordEntry => ({ record, document: documentText(record) });
  const size = (entry: RecordEntry): number => entry.record.id.length + entry.document.length + RECORD_COLUMNS_BYTES;
  return chunks(records, from, to, live, prepare, size);
}

/**
 * Splits the items from `from` to `to` that `keep` accepts into runs of one collection of about
 * CHUNK_BYTES each, after `prepare` turns each into what its frame needs (`size` measures that).
 */
function* chunks<T extends { readonly collection: string }, P>(
  items: readonly T[],
  from: number,
  to: number,
  keep: (item: T) => boolean,
  prepare: (item: T) => P,
  size: (prepared: P) => number,
): Generator<{ readonly collection: string; readonly entries: readonly P[] }> {
  let collection: string | undefined;
  let entries: P[] = [];
  let bytes = 0;
  for (let index = from; index < to; index++) {
    const item = items[index] as T;
    if (!keep(item)) continue;
    if (collection !== undefined && (item.collection !== collection || bytes >= CHUNK_BYTES)) {
      yield { collection, entries };
      entries = [];
      bytes = 0;
    }
    collection = item.collection;
    const prepared = prepare(item);
    entries.push(prepared);
    bytes += size(prepared);
  }
  if (collection !== undefined) yield { collection, entries };
}

interface RecordEntry {
  readonly record: StoredRecord;
  readonly document: string;
}

/** Room for a record's columns beside its document, for sizing chunks. */
const RECORD_COLUMNS_BYTES = 48;

/** A records frame: its columns as one line of JSON, a newline, then each record's id and document. */
function recordsFrame(collection: string, entries: readonly RecordEntry[]): string {
  const records = entries.map((entry) => entry.record);
  const columns: { [name: string]: unknown } = {
    type: 'records',
    collection,
    versions: records.map((record) => record.version),
    modifiedAt: records.map((record) => record.modifiedAt),
    idLengths: records.map((record) => record.id.length),
    docLengths: entries.map((entry) => entry.document.length),
  };
  if (records.some((record) => record.expiresAt !== undefined)) {
    columns.expiresAt = records.map((record) => record.expiresAt ?? null);
  }
  if (records.some((record) => record.dueAt !== undefined)) {
    columns.dueAt = records.map((record) => record.dueAt ?? null);
  }
  return `${JSON.stringify(columns)}\n${entries.map((entry) => entry.record.id + entry.document).join('')}`;
}

function tombstoneRow(tombstone: Tombstone): string {
  const row: unknown[] = [tombstone.id, tombstone.version, tombstone.deletedAt, tombstone.retainUntil, tombstone.doc];
  if (tombstone.restoredVersion !== undefined) row.push(tombstone.restoredVersion);
  return JSON.stringify(row);
}

function tombstonesFrame(collection: string, rows: readonly string[]): string {
  return `{"type":"tombstones","collection":${JSON.stringify(collection)},"rows":[${rows.join(',')}]}`;
}

/** How many records and tombstones a snapshot holds (its end frame says so too). */
export interface Counts {
  records: number;
  tombstones: number;
}
