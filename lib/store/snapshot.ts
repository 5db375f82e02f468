// Snapshots (CONVENTIONS.md#durability): the live state is written to a temp file, fsynced, renamed over the
// snapshot, and the directory fsynced; then the old journals are deleted. The file is a sequence of the same
// checksummed frames as the journal (codec.ts):
//
//   {"type":"header","format":2,"seq":S,"at":T,"lastModified":[[collection, ms], ...]}
//   {"type":"records","collection":C,"versions":[...],"modifiedAt":[...],"idLengths":[...],
//    "docLengths":[...],"expiresAt":[...]?,"dueAt":[...]?}\n<id><doc><id><doc>...            (repeated)
//   {"type":"tombstones","collection":C,"rows":[[id, version, deletedAt, retainUntil, doc, restoredVersion?], ...]}
//   {"type":"end","records":N,"tombstones":M}
//
// A records frame is one line of JSON, a newline, then each record's id (raw text) and document (JSON
// text) one after another, as long as the `idLengths` and `docLengths` entries say (in UTF-16 code
// units of the decoded payload: JavaScript string length). Recovery parses only the line and keeps each
// document as a slice of the payload until something reads it (state.ts, RecordVersion, LoadedFrame):
// building a million document objects at start was most of what opening a 1M-record store cost. The
// line's columns are arrays of numbers rather than one array per record, which parses faster and
// leaves less for the collector; expiresAt and dueAt columns (null where a record has none) appear
// only when some record has one.
// The next snapshot writes an all-ASCII records frame whose records are all still as loaded (none read,
// replaced, removed or expired since) back as the bytes it was read from, with the checksum it had (recordPieces):
// encoding every record again and checksumming it was most of a snapshot's main-thread time (of a
// store of 1M records loaded at start plus 50k new ones, 0.9-1.25 s; with the frames copied, 0.33-0.4 s,
// most of it the new records').
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
// The capture is a list of references to immutable record objects taken at one seq (in the state's
// insertion order, the cheapest walk), so it can be written chunk by chunk while new commits go on
// (to the next journal). It is a plain copy of the state's Maps (the one synchronous step); records and
// tombstones already expired at the capture's time are skipped as the frames are built.
import { isAscii } from 'node:buffer';
import { join } from 'node:path';
import type { JsonObject } from '../json.js';
import { isJsonObject } from '../json.js';
import type { Crc32c } from './codec.js';
import { encodeFrame, encodeKnownFrame, isCount, parseJsonText, parsePayload, scanFrames } from './codec.js';
import type { FileIO } from './fs-io.js';
import { describeError, hasCode, writeFully } from './fs-io.js';
import { removeJournalsBefore } from './journal.js';
import type { StoreState } from './state.js';
import { documentText, LoadedFrame, loadedFrame, makeLoadedRecord, makeRecord } from './state.js';
import type { StoredRecord, Tombstone } from './types.js';
import type { Logger } from '../log.js';
import type { Random } from '../clock.js';

export const SNAPSHOT_FILE = 'snapshot.dat';
const CHUNK_BYTES = 64 << 10;
/** Frames gathered into one write at the least: a few frames' encoding (~2 ms) between the turns it gives back. */
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
const FORMAT = 2;

/** The state at one seq, as references to immutable objects (expired ones included: see `at`). */
export interface SnapshotCapture {
  readonly seq: number;
  /** Records and tombstones expired at this time are not written. */
  readonly at: number;
  readonly lastModified: ReadonlyArray<readonly [string, number]>;
  readonly records: readonly StoredRecord[];
  readonly tombstones: readonly Tombstone[];
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
  let offset = 0;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let journalAtLastWrite = journalBytes();
  const counts: Counts = { records: 0, tombstones: 0 };
  const flush = async (): Promise<void> => {
    if (pendingBytes === 0) return;
    const bytes = pending.length === 1 ? (pending[0] as Buffer) : Buffer.concat(pending, pendingBytes);
    pending = [];
    pendingBytes = 0;
    journalAtLastWrite = journalBytes();
    await writeFully(handle, bytes, offset);
    offset += bytes.length;
  };
  const emitFrame = async (frame: Buffer): Promise<void> => {
    if (aborted()) throw new Error('snapshot aborted: the store is closing');
    pending.push(frame);
    pendingBytes += frame.length;
    const paced = Math.min(MAX_WRITE_BYTES, PACE * (journalBytes() - journalAtLastWrite));
    if (pendingBytes >= Math.max(WRITE_BYTES, paced)) await flush();
  };
  const emit = (json: string): Promise<void> => emitFrame(encodeFrame(crc, json));
  try {
    const { seq, at, lastModified } = capture;
    await emit(JSON.stringify({ type: 'header', format: FORMAT, seq, at, lastModified }));
    for (const piece of recordPieces(capture.records, at)) {
      if ('loaded' in piece) {
        await emitFrame(encodeKnownFrame(piece.loaded, piece.checksum));
        counts.records += piece.records;
      } else {
        await emit(recordsFrame(piece.collection, piece.entries));
        counts.records += piece.entries.length;
      }
    }
    const live = (tombstone: Tombstone): boolean => tombstone.retainUntil > at;
    const { tombstones } = capture;
    const rowBytes = (row: string): number => row.length;
    for (const { collection, entries } of chunks(tombstones, 0, tombstones.length, live, tombstoneRow, rowBytes)) {
      await emit(tombstonesFrame(collection, entries));
      counts.tombstones += entries.length;
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
  }
  await handle.close();
  await io.rename(temp, join(dir, SNAPSHOT_FILE));
  await io.syncDir(dir);
  return { ...counts, bytes: offset };
}

export interface SnapshotOptions {
  /** Polled between writes: the store is closing. */
  readonly aborted: () => boolean;
  readonly log: Logger;
  readonly random: Random;
  /** Bytes in the journal the commits go on into meanwhile (it grows while the snapshot is written). */
  readonly journalBytes: () => number;
}

/** What a written snapshot holds, and its size in bytes. */
interface Written extends Counts {
  readonly bytes: number;
}

export type CheckpointOutcome =
  | { readonly kind: 'written'; readonly bytes: number }
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
  return { kind: 'written', bytes: written.bytes };
}

/** A frame loaded from the last snapshot written as it was, or records to encode into frames. */
type RecordPiece =
  | { readonly loaded: Buffer; readonly checksum: number; readonly records: number }
  | { readonly collection: string; readonly entries: readonly RecordEntry[] };

/**
 * The capture's records as frames to write. A run of records that are exactly those of one all-ASCII
 * frame loaded from a snapshot, none read or replaced since and none expired, is that frame again: its
 * bytes written back as they were read, with the checksum it had (a copy, no encoding, no
 * checksum to compute). Records are captured in insertion order, which for records loaded together is
 * their frame's order; a replaced record keeps its place, so its new version breaks the run and the
 * frame's other records are encoded anew, from their text. Everything else is encoded.
 */
function* recordPieces(records: readonly StoredRecord[], at: number): Generator<RecordPiece> {
  const live = (record: StoredRecord): boolean => record.expiresAt === undefined || record.expiresAt > at;
  const prepare = (record: StoredRecord): RecordEntry => ({ record, document: documentText(record) });
  const size = (entry: RecordEntry): number => entry.record.id.length + entry.document.length + RECORD_COLUMNS_BYTES;
  let encodeFrom = 0;
  let index = 0;
  while (index < records.length) {
    const loaded = loadedFrame(records[index] as StoredRecord);
    if (loaded === undefined) {
      index++;
      continue;
    }
    // The records from here on that come from the same frame (in a run of a frame's records, every
    // start but the first is missing one of them).
    const limit = Math.min(records.length, index + loaded.records);
    let end = index + 1;
    while (end < limit && loadedFrame(records[end] as StoredRecord) === loaded) end++;
    const { checksum, payload } = loaded;
    const whole = end - index === loaded.records && loaded.earliestExpiry > at;
    if (checksum !== undefined && typeof payload !== 'string' && whole) {
      yield* chunks(records, encodeFrom, index, live, prepare, size);
      yield { loaded: payload, checksum, records: loaded.records };
      encodeFrom = end;
    }
    index = end;
  }
  yield* chunks(records, encodeFrom, records.length, live, prepare, size);
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

export type LoadResult =
  | { readonly ok: true; readonly seq: number; readonly bytes: number }
  | { readonly ok: false; readonly message: string };

/** Loads a snapshot into an empty state (in bulk mode). Any damage is reported, never skipped. */
export async function loadSnapshot(
  io: FileIO,
  crc: Crc32c,
  path: string,
  state: StoreState,
  progress: (done: number, total: number) => void,
): Promise<LoadResult> {
  const handle = await io.open(path, 'read');
  const counts: Counts = { records: 0, tombstones: 0 };
  let seq: number | undefined;
  let format: number | undefined;
  let ended = false;
  try {
    const size = await handle.size();
    const end = await scanFrames(crc, handle, size, (payload, _offset, checksum) => {
      if (seq === undefined) {
        const frame = parsePayload(payload);
        if (!isJsonObject(frame) || frame.type !== 'header') return 'bad header';
        if (frame.format !== 1 && frame.format !== FORMAT) return 'bad header';
        if (!isCount(frame.seq) || !Array.isArray(frame.lastModified)) return 'bad header';
        for (const pair of frame.lastModified) {
          if (!Array.isArray(pair) || typeof pair[0] !== 'string' || typeof pair[1] !== 'number') return 'bad header';
          state.setLastModified(pair[0], pair[1]);
        }
        seq = frame.seq;
        format = frame.format;
        state.advanceSeq(seq);
        return undefined;
      }
      if (ended) return 'unexpected frame';
      // As decodePayload does; an all-ASCII payload's text is also its bytes (a loaded frame's `checksum`).
      const ascii = isAscii(payload);
      const text = payload.toString(ascii ? 'latin1' : 'utf8');
      // Only a records frame has a newline: JSON.stringify writes none, so it ends the frame's JSON.
      const split = text.indexOf('\n');
      const frame = parseJsonText(split === -1 ? text : text.slice(0, split));
      if (!isJsonObject(frame)) return 'unexpected frame';
      const withText = split !== -1;
      if (frame.type === 'end' && !withText) {
        ended = true;
        const matches = frame.records === counts.records && frame.tombstones === counts.tombstones;
        return matches ? undefined : 'row counts do not match';
      }
      if (format === 1) {
        return frame.type === 'chunk' && !withText ? loadFormat1Chunk(state, frame, counts) : 'unknown frame type';
      }
      if (frame.type === 'records' && withText) {
        return loadRecords(state, frame, text, split + 1, ascii ? keptBytes(payload, checksum) : undefined, counts);
      }
      if (frame.type === 'tombstones' && !withText) return loadTombstones(state, frame.collection, frame.rows, counts);
      return 'unknown frame type';
    }, (done) => progress(done, size));
    if (end.kind !== 'end') return { ok: false, message: corrupt(path, end.offset, end.reason) };
    if (seq === undefined || !ended) return { ok: false, message: corrupt(path, end.offset, 'snapshot is incomplete') };
    return { ok: true, seq, bytes: size };
  } finally {
    await handle.close();
  }
}

interface Counts {
  records: number;
  tombstones: number;
}

function corrupt(path: string, offset: number, reason: string): string {
  return `refusing to start: snapshot ${path} is corrupt at offset ${offset} (${reason}). ` +
    'Nothing was changed; restore the data dir from a backup';
}

/**
 * An all-ASCII payload's bytes, copied out of the read buffer (which the next chunk overwrites) into
 * memory of their own, with their checksum: what a loaded frame keeps (state.ts LoadedFrame).
 */
function keptBytes(payload: Buffer, checksum: number): { readonly bytes: Buffer; readonly checksum: number } {
  const bytes = Buffer.allocUnsafeSlow(payload.length);
  payload.copy(bytes);
  return { bytes, checksum };
}

/**
 * V8 copies a slice shorter than this; a longer one is a view that keeps the whole text alive, which
 * a frame kept as bytes would then hold twice. (Only memory depends on it: either way the id is right.)
 */
const SLICE_COPIES_BELOW = 13;

/**
 * Format 2: a records frame's columns; each id and document is a slice of the text after the line.
 * `kept`: the payload's bytes when it is all ASCII, which the records keep instead of the text.
 */
function loadRecords(
  state: StoreState,
  frame: JsonObject,
  text: string,
  start: number,
  kept: { readonly bytes: Buffer; readonly checksum: number } | undefined,
  counts: Counts,
): string | undefined {
  const { collection, versions, modifiedAt, idLengths, docLengths, expiresAt, dueAt } = frame;
  if (typeof collection !== 'string' || !Array.isArray(versions)) return 'bad records frame';
  const column = (value: unknown): value is unknown[] => Array.isArray(value) && value.length === versions.length;
  if (!column(modifiedAt) || !column(idLengths) || !column(docLengths)) return 'bad records frame';
  if (expiresAt !== undefined && !column(expiresAt)) return 'bad records frame';
  if (dueAt !== undefined && !column(dueAt)) return 'bad records frame';
  let earliestExpiry = Number.POSITIVE_INFINITY;
  for (const expires of expiresAt ?? []) {
    if (typeof expires === 'number') earliestExpiry = Math.min(earliestExpiry, expires);
  }
  // An ASCII payload's bytes and its text have the same offsets (one byte, one code unit each).
  const loaded = kept === undefined
    ? new LoadedFrame(text, undefined, versions.length, earliestExpiry)
    : new LoadedFrame(kept.bytes, kept.checksum, versions.length, earliestExpiry);
  let offset = start;
  for (let index = 0; index < versions.length; index++) {
    const version: unknown = versions[index];
    const modified: unknown = modifiedAt[index];
    const idLength: unknown = idLengths[index];
    const docLength: unknown = docLengths[index];
    const expires = expiresAt === undefined ? null : expiresAt[index];
    const due = dueAt === undefined ? null : dueAt[index];
    if (!isCount(version) || typeof modified !== 'number') return 'bad record row';
    if (!isCount(idLength) || !isCount(docLength)) return 'bad record row';
    if (expires !== null && typeof expires !== 'number') return 'bad record row';
    if (due !== null && typeof due !== 'number') return 'bad record row';
    // Sliced ids, unlike JSON string values, are not interned: a third of the time of parsing them.
    const docStart = offset + idLength;
    const end = docStart + docLength;
    // The frame's checksum held, so this only catches a writer defect; the rest is checked when read.
    if (docLength < 2 || end > text.length) return 'bad record document';
    if (text.charCodeAt(docStart) !== 0x7b || text.charCodeAt(end - 1) !== 0x7d) return 'bad record document';
    const id = idLength < SLICE_COPIES_BELOW ? text.slice(offset, docStart) : loaded.slice(offset, docStart);
    const record = makeLoadedRecord(
      collection, id, version, modified, loaded, docStart, end, expires ?? undefined, due ?? undefined,
    );
    state.load({ record });
    counts.records++;
    offset = end;
  }
  return offset === text.length ? undefined : 'record text left over';
}

/** Format 1: a chunk of record rows with their documents inline, and tombstone rows. */
function loadFormat1Chunk(state: StoreState, frame: JsonObject, counts: Counts): string | undefined {
  const { collection, records, tombstones } = frame;
  if (typeof collection !== 'string' || !Array.isArray(records)) return 'bad chunk';
  for (const row of records) {
    if (!Array.isArray(row) || row.length < 4 || row.length > 6) return 'bad record row';
    const [id, version, modifiedAt, doc, expiresAt, dueAt] = row;
    if (typeof id !== 'string' || !isCount(version) || typeof modifiedAt !== 'number' || !isJsonObject(doc)) {
      return 'bad record row';
    }
    if (expiresAt !== undefined && expiresAt !== null && typeof expiresAt !== 'number') return 'bad record row';
    if (dueAt !== undefined && typeof dueAt !== 'number') return 'bad record row';
    state.load({ record: makeRecord(collection, id, version, modifiedAt, doc, expiresAt ?? undefined, dueAt) });
    counts.records++;
  }
  return loadTombstones(state, collection, tombstones, counts);
}

function loadTombstones(state: StoreState, collection: unknown, rows: unknown, counts: Counts): string | undefined {
  if (typeof collection !== 'string' || !Array.isArray(rows)) return 'bad tombstones';
  for (const row of rows) {
    if (!Array.isArray(row) || row.length < 5 || row.length > 6) return 'bad tombstone row';
    const [id, version, deletedAt, retainUntil, doc, restoredVersion] = row;
    if (typeof id !== 'string' || !isCount(version) || typeof deletedAt !== 'number') return 'bad tombstone row';
    if (typeof retainUntil !== 'number' || !isJsonObject(doc)) {
      return 'bad tombstone row';
    }
    if (restoredVersion !== undefined && !isCount(restoredVersion)) return 'bad tombstone row';
    const tombstone: Tombstone =
      restoredVersion === undefined
        ? { collection, id, version, deletedAt, retainUntil, doc }
        : { collection, id, version, deletedAt, retainUntil, doc, restoredVersion };
    state.load({ tombstone });
    counts.tombstones++;
  }
  return undefined;
}
