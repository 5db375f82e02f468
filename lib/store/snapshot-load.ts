// Loading a snapshot (CONVENTIONS.md#durability) into an empty state at start: the frames described in
// snapshot.ts, checked frame by frame; any damage refuses the start, since a snapshot is only ever renamed
// into place whole. A records frame's documents stay slices of its payload until read (state.ts
// LoadedFrame), and each frame is indexed (SnapshotFrames) so that the next snapshot can copy it.
import { isAscii } from 'node:buffer';
import type { JsonObject } from '../json.js';
import { isJsonObject } from '../json.js';
import type { Crc32c } from './codec.js';
import { FRAME_HEADER_BYTES, isCount, parseJsonText, parsePayload, scanFrames } from './codec.js';
import type { FileIO } from './fs-io.js';
import type { Counts, RecordsFrameAt } from './snapshot.js';
import { FORMAT, SnapshotFrames } from './snapshot.js';
import type { StoreState } from './state.js';
import { LoadedFrame, makeLoadedRecord, makeRecord } from './state.js';
import type { Tombstone } from './types.js';

export type LoadResult =
  | { readonly ok: true; readonly seq: number; readonly bytes: number; readonly frames: SnapshotFrames | undefined }
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
  let frames: SnapshotFrames | undefined;
  let ended = false;
  try {
    const size = await handle.size();
    const end = await scanFrames(crc, handle, size, (payload, offset, checksum) => {
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
        const headerBytes = FRAME_HEADER_BYTES + payload.length;
        if (format === FORMAT && typeof frame.at === 'number') frames = new SnapshotFrames(seq, frame.at, headerBytes);
        return undefined;
      }
      if (ended) return 'unexpected frame';
      // As decodePayload does; an all-ASCII payload's text is also its bytes.
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
        const loaded = new LoadedFrame(ascii ? keptBytes(payload) : text);
        const place = { offset, bytes: FRAME_HEADER_BYTES + payload.length, checksum, frames };
        return loadRecords(state, frame, loaded, text, split + 1, counts, place);
      }
      if (frame.type === 'tombstones' && !withText) return loadTombstones(state, frame.collection, frame.rows, counts);
      return 'unknown frame type';
    }, (done) => progress(done, size));
    if (end.kind !== 'end') return { ok: false, message: corrupt(path, end.offset, end.reason) };
    if (seq === undefined || !ended) return { ok: false, message: corrupt(path, end.offset, 'snapshot is incomplete') };
    return { ok: true, seq, bytes: size, frames };
  } finally {
    await handle.close();
  }
}

function corrupt(path: string, offset: number, reason: string): string {
  return `refusing to start: snapshot ${path} is corrupt at offset ${offset} (${reason}). ` +
    'Nothing was changed; restore the data dir from a backup';
}

/**
 * An all-ASCII payload's bytes, copied out of the read buffer (which the next chunk overwrites) into
 * memory of their own: what a loaded frame keeps (state.ts LoadedFrame).
 */
function keptBytes(payload: Buffer): Buffer {
  const bytes = Buffer.allocUnsafeSlow(payload.length);
  payload.copy(bytes);
  return bytes;
}

/**
 * V8 copies a slice shorter than this; a longer one is a view that keeps the whole text alive, which
 * a frame kept as bytes would then hold twice. (Only memory depends on it: either way the id is right.)
 */
const SLICE_COPIES_BELOW = 13;

/**
 * Format 2: a records frame's columns; each id and document is a slice of the text after the line,
 * which the records keep as `loaded` (the same offsets: an all-ASCII payload's bytes, or the text).
 * The frame goes into `place.frames` with where it is and which records it holds, for the next snapshot.
 */
function loadRecords(
  state: StoreState,
  frame: JsonObject,
  loaded: LoadedFrame,
  text: string,
  start: number,
  counts: Counts,
  place: Pick<RecordsFrameAt, 'offset' | 'bytes' | 'checksum'> & { readonly frames: SnapshotFrames | undefined },
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
  let offset = start;
  let firstId = '';
  let id = '';
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
    id = idLength < SLICE_COPIES_BELOW ? text.slice(offset, docStart) : loaded.slice(offset, docStart);
    if (index === 0) firstId = id;
    const record = makeLoadedRecord(
      collection, id, version, modified, loaded, docStart, end, expires ?? undefined, due ?? undefined,
    );
    state.load({ record });
    counts.records++;
    offset = end;
  }
  if (offset !== text.length) return 'record text left over';
  if (versions.length === 0 || place.frames === undefined) return undefined;
  // One literal with every field (a spread of two objects made an entry twice the size).
  const { offset: at, bytes, checksum } = place;
  const records = versions.length;
  // Its fingerprint is not known until it is first copied (snapshot.ts, unchangedCopy).
  place.frames.add({
    collection, firstId, lastId: id, records, offset: at, bytes, checksum, fingerprint: undefined, earliestExpiry,
  });
  return undefined;
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
