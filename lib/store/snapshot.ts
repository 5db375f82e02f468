// Snapshots (README, Durability): the live state is written to a temp file, fsynced, renamed over the
// snapshot, and the directory fsynced; then the old journals are deleted. The file is a sequence of the same
// checksummed frames as the journal (codec.ts):
//
//   {"type":"header","format":1,"seq":S,"at":T,"lastModified":[[collection, ms], ...]}
//   {"type":"chunk","collection":C,"records":[[id, version, modifiedAt, doc, expiresAt?, dueAt?], ...],
//    "tombstones":[[id, version, deletedAt, retainUntil, doc, restoredVersion?], ...]}   (repeated)
//   {"type":"end","records":N,"tombstones":M}
//
// An absent expiresAt is written as null when a dueAt follows it. Rows are tuples, not objects, because recovery time is dominated by JSON.parse and a million rows
// of repeated key names would add ~40 MB to parse. A chunk holds rows of one collection up to about
// 1 MiB, so the collection name is parsed once per chunk and shared by its rows. The end frame makes
// a short snapshot detectable; a snapshot is only renamed into place whole, so any damage in it is
// corruption (never a torn tail) and recovery refuses to start.
// The capture is a list of references to immutable record objects taken at one seq (in the state's
// insertion order, the cheapest walk), so it can be written chunk by chunk while new commits go on
// (to the next journal).
import { join } from 'node:path';
import type { JsonObject } from '../json.js';
import { isJsonObject } from '../json.js';
import type { Crc32c } from './codec.js';
import { encodeFrame, isCount, parsePayload, scanFrames } from './codec.js';
import type { FileIO } from './fs-io.js';
import { describeError, hasCode, writeFully } from './fs-io.js';
import { removeJournalsBefore } from './journal.js';
import { makeRecord, type StoreState } from './state.js';
import type { StoredRecord, Tombstone } from './types.js';
import type { Logger } from '../log.js';
import type { Random } from '../clock.js';

export const SNAPSHOT_FILE = 'snapshot.dat';
const CHUNK_BYTES = 1 << 20;

/** The live state at one seq, as references to immutable objects. */
export interface SnapshotCapture {
  readonly seq: number;
  readonly at: number;
  readonly lastModified: ReadonlyArray<readonly [string, number]>;
  readonly records: readonly StoredRecord[];
  readonly tombstones: readonly Tombstone[];
}

/** Takes the capture synchronously; expired records and tombstones are left out. */
export function captureState(state: StoreState, at: number): SnapshotCapture {
  const { records, tombstones } = state.snapshotEntries();
  return {
    seq: state.seq,
    at,
    lastModified: state.lastModifiedTimes(),
    records: records.filter((record) => record.expiresAt === undefined || record.expiresAt > at),
    tombstones: tombstones.filter((tombstone) => tombstone.retainUntil > at),
  };
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
  options: { readonly aborted: () => boolean; readonly log: Logger; readonly random: Random },
): Promise<void> {
  const { aborted, log } = options;
  const temp = join(dir, `${SNAPSHOT_FILE}.tmp-${process.pid}-${options.random.bytes(8).toString('hex')}`);
  const handle = await io.open(temp, 'createExclusive');
  let offset = 0;
  const emit = async (json: string): Promise<void> => {
    if (aborted()) throw new Error('snapshot aborted: the store is closing');
    const frame = encodeFrame(crc, json);
    await writeFully(handle, frame, offset);
    offset += frame.length;
  };
  try {
    await emit(JSON.stringify({ type: 'header', format: 1, seq: capture.seq, at: capture.at, lastModified: capture.lastModified }));
    await writeRows(capture.records, recordRow, 'records', emit);
    await writeRows(capture.tombstones, tombstoneRow, 'tombstones', emit);
    await emit(JSON.stringify({ type: 'end', records: capture.records.length, tombstones: capture.tombstones.length }));
    await handle.sync();
  } catch (error) {
    await handle.close().catch((closeError: unknown) => log('warn', 'closing the snapshot temp file failed', { path: temp, error: describeError(closeError) }));
    await io.unlink(temp).catch((unlinkError: unknown) => {
      if (!hasCode(unlinkError, 'ENOENT')) log('warn', 'removing the snapshot temp file failed', { path: temp, error: describeError(unlinkError) });
    });
    throw error;
  }
  await handle.close();
  await io.rename(temp, join(dir, SNAPSHOT_FILE));
  await io.syncDir(dir);
}

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
  options: { readonly aborted: () => boolean; readonly log: Logger; readonly random: Random },
): Promise<'written' | 'failed' | 'abandoned'> {
  const { aborted, log } = options;
  const started = performance.now();
  try {
    await writeSnapshot(io, crc, dir, capture, options);
  } catch (error) {
    if (aborted()) {
      log('info', 'snapshot abandoned because the store is closing; the journals are kept', { seq: capture.seq });
      return 'abandoned';
    }
    log('error', 'snapshot failed; the journals are kept', { seq: capture.seq, error: describeError(error) });
    return 'failed';
  }
  log('info', 'snapshot written', { seq: capture.seq, records: capture.records.length, ms: Math.round(performance.now() - started) });
  try {
    await removeJournalsBefore(io, dir, journalStart);
  } catch (error) {
    // The snapshot is good; stale journals are skipped by recovery and deleted by the next one.
    log('error', 'cannot delete journals covered by the snapshot', { seq: capture.seq, error: describeError(error) });
  }
  return 'written';
}

async function writeRows<T extends { readonly collection: string }>(
  items: readonly T[],
  row: (item: T) => string,
  field: 'records' | 'tombstones',
  emit: (json: string) => Promise<void>,
): Promise<void> {
  let collection: string | undefined;
  let rows: string[] = [];
  let bytes = 0;
  const flush = async (): Promise<void> => {
    if (collection === undefined || rows.length === 0) return;
    const other = field === 'records' ? 'tombstones' : 'records';
    await emit(`{"type":"chunk","collection":${JSON.stringify(collection)},"${field}":[${rows.join(',')}],"${other}":[]}`);
    rows = [];
    bytes = 0;
  };
  for (const item of items) {
    if (item.collection !== collection || bytes >= CHUNK_BYTES) {
      await flush();
      collection = item.collection;
    }
    const text = row(item);
    rows.push(text);
    bytes += text.length;
  }
  await flush();
}

function recordRow(record: StoredRecord): string {
  const row: unknown[] = [record.id, record.version, record.modifiedAt, record.doc];
  if (record.expiresAt !== undefined || record.dueAt !== undefined) row.push(record.expiresAt ?? null);
  if (record.dueAt !== undefined) row.push(record.dueAt);
  return JSON.stringify(row);
}

function tombstoneRow(tombstone: Tombstone): string {
  const row: unknown[] = [tombstone.id, tombstone.version, tombstone.deletedAt, tombstone.retainUntil, tombstone.doc];
  if (tombstone.restoredVersion !== undefined) row.push(tombstone.restoredVersion);
  return JSON.stringify(row);
}

export type LoadResult = { readonly ok: true; readonly seq: number } | { readonly ok: false; readonly message: string };

/** Loads a snapshot into an empty state (in bulk mode). Any damage is reported, never skipped. */
export async function loadSnapshot(
  io: FileIO,
  crc: Crc32c,
  path: string,
  state: StoreState,
  progress: (done: number, total: number) => void,
): Promise<LoadResult> {
  const handle = await io.open(path, 'read');
  const counts = { records: 0, tombstones: 0 };
  let seq: number | undefined;
  let ended = false;
  try {
    const size = await handle.size();
    const end = await scanFrames(crc, handle, size, (payload) => {
      const frame = parsePayload(payload);
      if (!isJsonObject(frame) || ended) return 'unexpected frame';
      if (seq === undefined) {
        if (frame.type !== 'header' || frame.format !== 1 || !isCount(frame.seq) || !Array.isArray(frame.lastModified)) return 'bad header';
        seq = frame.seq;
        for (const pair of frame.lastModified) {
          if (!Array.isArray(pair) || typeof pair[0] !== 'string' || typeof pair[1] !== 'number') return 'bad header';
          state.setLastModified(pair[0], pair[1]);
        }
        state.advanceSeq(seq);
        return undefined;
      }
      if (frame.type === 'end') {
        ended = true;
        return frame.records === counts.records && frame.tombstones === counts.tombstones ? undefined : 'row counts do not match';
      }
      return frame.type === 'chunk' ? loadChunk(state, frame, counts) : 'unknown frame type';
    }, (done) => progress(done, size));
    if (end.kind !== 'end') return { ok: false, message: corrupt(path, end.offset, end.reason) };
    if (seq === undefined || !ended) return { ok: false, message: corrupt(path, end.offset, 'snapshot is incomplete') };
    return { ok: true, seq };
  } finally {
    await handle.close();
  }
}

function corrupt(path: string, offset: number, reason: string): string {
  return `refusing to start: snapshot ${path} is corrupt at offset ${offset} (${reason}). Nothing was changed; restore the data dir from a backup`;
}

function loadChunk(state: StoreState, frame: JsonObject, counts: { records: number; tombstones: number }): string | undefined {
  const { collection, records, tombstones } = frame;
  if (typeof collection !== 'string' || !Array.isArray(records) || !Array.isArray(tombstones)) return 'bad chunk';
  for (const row of records) {
    if (!Array.isArray(row) || row.length < 4 || row.length > 6) return 'bad record row';
    const [id, version, modifiedAt, doc, expiresAt, dueAt] = row;
    if (typeof id !== 'string' || !isCount(version) || typeof modifiedAt !== 'number' || !isJsonObject(doc)) return 'bad record row';
    if (expiresAt !== undefined && expiresAt !== null && typeof expiresAt !== 'number') return 'bad record row';
    if (dueAt !== undefined && typeof dueAt !== 'number') return 'bad record row';
    // Built by StoreState's own constructor, so every record shares one object shape.
    state.load({ record: makeRecord(collection, id, version, modifiedAt, doc, expiresAt ?? undefined, dueAt) });
    counts.records++;
  }
  for (const row of tombstones) {
    if (!Array.isArray(row) || row.length < 5 || row.length > 6) return 'bad tombstone row';
    const [id, version, deletedAt, retainUntil, doc, restoredVersion] = row;
    if (typeof id !== 'string' || !isCount(version) || typeof deletedAt !== 'number' || typeof retainUntil !== 'number' || !isJsonObject(doc)) {
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
