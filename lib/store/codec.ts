// Framing and checksums shared by the journal and the snapshot (CONVENTIONS.md#durability: each record is
// framed so that a torn or corrupted one is detected by its length and checksum; snapshots are
// written by the same crash-safe path as everything else).
//
// A frame is   magic u32le | length u32le | crc32c(payload) u32le | payload (UTF-8 JSON)
//
// - The magic lets recovery find frame starts again after damage (Buffer#indexOf, native speed), which
//   is how a torn tail is told apart from corruption in the middle (recovery.ts).
// - The length bounds the payload; a damaged length makes the checksum fail (or run past the end).
// - CRC-32C (Castagnoli), computed here with slicing-by-16 tables: it detects every burst error of up to
//   32 bits, which is what torn writes and bit rot look like. It is not a defence against tampering, and
//   needs none: only this process writes the data dir. SHA-256 from node:crypto would cost a hash
//   object per record (measured about 5x slower on 300-byte records), and `zlib.crc32` only exists
//   from Node 20.15 while the package supports every Node 20 (a snapshot uses it where it exists, for a
//   fingerprint kept in memory and never written: snapshot.ts, frameFingerprint).
import { isAscii } from 'node:buffer';
import { isJsonObject } from '../json.js';
import type { FileHandleIO } from './fs-io.js';
import { readFully } from './fs-io.js';
import type { Batch, Mutation } from './types.js';

/** "RSF1" read as a little-endian u32. */
const FRAME_MAGIC = 0x31465352;
export const FRAME_HEADER_BYTES = 12;
/** A length above this is damage, not data: no batch or snapshot chunk is ever this large. */
const MAX_FRAME_PAYLOAD = 1 << 30;
/** FRAME_MAGIC as it appears in the file (a string: immutable, unlike a module-level Buffer). */
const MAGIC_TEXT = 'RSF1';
const READ_CHUNK_BYTES = 8 << 20;
/** Bytes the CRC-32C consumes a step, one table each (Crc32c.compute's step is written out for 16). */
const SLICES = 16;

/**
 * CRC-32C with slicing-by-16: sixteen tables of 256 entries, one after another in one array (table t at
 * t * 256), read by index. The table lives in the instance (no module-level mutable state).
 */
export class Crc32c {
  private readonly table = new Uint32Array(SLICES * 256);

  constructor() {
    const table = this.table;
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
      table[n] = c >>> 0;
    }
    for (let n = 0; n < 256; n++) {
      let c = table[n] as number;
      for (let t = 1; t < SLICES; t++) {
        c = (table[c & 0xff] as number) ^ (c >>> 8);
        table[t * 256 + n] = c >>> 0;
      }
    }
  }

  compute(bytes: Uint8Array, start = 0, end = bytes.length): number {
    // Indexed, not destructured: until the optimizing compiler removed it, destructuring the tables
    // ran the iterator protocol on every call (about 300 bytes of garbage per journal record, measured).
    const t = this.table;
    // Four little-endian words a step, read whole: 1.4-1.8 GB/s against 1.0 for slicing-by-8 reading
    // byte by byte (measured on 64 MiB); the same on 300-byte records. A snapshot checks every frame it
    // copies from the last one, on the main thread: 230 MB at 1,000,000 records.
    const words = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    let c = ~0;
    let i = start;
    for (; i + 16 <= end; i += 16) {
      c ^= words.getUint32(i, true);
      const b = words.getUint32(i + 4, true);
      const d = words.getUint32(i + 8, true);
      const e = words.getUint32(i + 12, true);
      c =
        (t[3840 + (c & 0xff)] as number) ^ (t[3584 + ((c >>> 8) & 0xff)] as number) ^
        (t[3328 + ((c >>> 16) & 0xff)] as number) ^ (t[3072 + (c >>> 24)] as number) ^
        (t[2816 + (b & 0xff)] as number) ^ (t[2560 + ((b >>> 8) & 0xff)] as number) ^
        (t[2304 + ((b >>> 16) & 0xff)] as number) ^ (t[2048 + (b >>> 24)] as number) ^
        (t[1792 + (d & 0xff)] as number) ^ (t[1536 + ((d >>> 8) & 0xff)] as number) ^
        (t[1280 + ((d >>> 16) & 0xff)] as number) ^ (t[1024 + (d >>> 24)] as number) ^
        (t[768 + (e & 0xff)] as number) ^ (t[512 + ((e >>> 8) & 0xff)] as number) ^
        (t[256 + ((e >>> 16) & 0xff)] as number) ^ (t[e >>> 24] as number);
    }
    for (; i < end; i++) c = (t[(c ^ (bytes[i] as number)) & 0xff] as number) ^ (c >>> 8);
    return ~c >>> 0;
  }
}

/** Frames one JSON payload. */
export function encodeFrame(crc: Crc32c, json: string): Buffer {
  const length = Buffer.byteLength(json);
  if (length > MAX_FRAME_PAYLOAD) throw new RangeError(`frame payload of ${length} bytes exceeds ${MAX_FRAME_PAYLOAD}`);
  const frame = Buffer.allocUnsafe(FRAME_HEADER_BYTES + length);
  frame.write(json, FRAME_HEADER_BYTES);
  writeHeader(crc, frame, 0, length);
  return frame;
}

function writeHeader(crc: Crc32c, buffer: Buffer, at: number, length: number): void {
  buffer.writeUInt32LE(FRAME_MAGIC, at);
  buffer.writeUInt32LE(length, at + 4);
  buffer.writeUInt32LE(crc.compute(buffer, at + FRAME_HEADER_BYTES, at + FRAME_HEADER_BYTES + length), at + 8);
}

/** The checksum field of the frame that starts at `at` (its payload's CRC-32C). */
export function frameChecksum(buffer: Buffer, at: number): number {
  return buffer.readUInt32LE(at + 8);
}

/** What sits at one position of a buffer: a whole valid frame, too few bytes to tell, or damage. */
export type FrameAt =
  | { readonly kind: 'frame'; readonly start: number; readonly end: number }
  | { readonly kind: 'short' }
  | { readonly kind: 'bad'; readonly reason: string };

/** Decodes the frame at `pos`; `limit` is the end of the valid bytes in `buffer`. */
export function frameAt(crc: Crc32c, buffer: Buffer, pos: number, limit: number): FrameAt {
  if (limit - pos < FRAME_HEADER_BYTES) return { kind: 'short' };
  if (buffer.readUInt32LE(pos) !== FRAME_MAGIC) return { kind: 'bad', reason: 'no frame marker' };
  const length = buffer.readUInt32LE(pos + 4);
  if (length > MAX_FRAME_PAYLOAD) return { kind: 'bad', reason: `impossible frame length ${length}` };
  const start = pos + FRAME_HEADER_BYTES;
  if (limit - start < length) return { kind: 'short' };
  if (crc.compute(buffer, start, start + length) !== frameChecksum(buffer, pos)) {
    return { kind: 'bad', reason: 'checksum mismatch' };
  }
  return { kind: 'frame', start, end: start + length };
}

/** The next offset at or after `from` where a frame marker starts (-1 if none), to resynchronise after damage. */
export function nextMarker(buffer: Buffer, from: number, limit: number): number {
  return buffer.subarray(0, limit).indexOf(MAGIC_TEXT, from, 'latin1');
}

/** Where a scan of a file stopped. `offset` is the end of the last whole valid frame. */
export type ScanEnd =
  | { readonly kind: 'end'; readonly offset: number }
  | { readonly kind: 'damaged'; readonly offset: number; readonly reason: string }
  | { readonly kind: 'rejected'; readonly offset: number; readonly reason: string };

/**
 * Reads a file of frames in large chunks and hands each payload, with its offset and checksum, to
 * `onFrame` (synchronously, so a million small records cost no promise each). `onFrame` returns an
 * error text to stop the scan: a frame whose checksum holds but whose content is wrong is corruption
 * wherever it sits.
 */
export async function scanFrames(
  crc: Crc32c,
  handle: FileHandleIO,
  size: number,
  onFrame: (payload: Buffer, offset: number, checksum: number) => string | undefined,
  onProgress?: (offset: number) => void,
): Promise<ScanEnd> {
  let buffer = Buffer.allocUnsafe(Math.min(READ_CHUNK_BYTES, Math.max(size, FRAME_HEADER_BYTES)));
  let base = 0; // file offset of buffer[0]
  let filled = 0;
  let pos = 0;
  for (;;) {
    const found = frameAt(crc, buffer, pos, filled);
    if (found.kind === 'frame') {
      const checksum = frameChecksum(buffer, pos);
      const rejected = onFrame(buffer.subarray(found.start, found.end), base + pos, checksum);
      if (rejected !== undefined) return { kind: 'rejected', offset: base + pos, reason: rejected };
      pos = found.end;
      continue;
    }
    if (found.kind === 'bad') return { kind: 'damaged', offset: base + pos, reason: found.reason };
    if (base + filled >= size) {
      return base + pos === size
        ? { kind: 'end', offset: size }
        : { kind: 'damaged', offset: base + pos, reason: 'truncated frame' };
    }
    // Keep the unread tail, grow the buffer when one frame is larger than it, and read more.
    const needed = filled - pos >= FRAME_HEADER_BYTES ? FRAME_HEADER_BYTES + buffer.readUInt32LE(pos + 4) : 0;
    const capacity = Math.max(buffer.length, needed);
    const next = capacity === buffer.length ? buffer : Buffer.allocUnsafe(capacity);
    buffer.copy(next, 0, pos, filled);
    buffer = next;
    base += pos;
    filled -= pos;
    pos = 0;
    const wanted = Math.min(buffer.length - filled, size - base - filled);
    const got = await readFully(handle, buffer.subarray(filled), wanted, base + filled);
    if (got < wanted) throw new Error(`file shrank while reading: ${got} of ${wanted} bytes at ${base + filled}`);
    filled += got;
    onProgress?.(base + filled);
  }
}

/** One journal record: an accepted batch with the sequence number and time it was committed at. */
export interface JournalRecord {
  readonly seq: number;
  /** Seq of the first record written by the same group commit (tells a torn group from corruption). */
  readonly group: number;
  readonly at: number;
  readonly batch: Batch;
}

export type Decoded<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly reason: string };

/**
 * Record frames written one after another into one growing buffer: a journal group's write. Each
 * payload is written in place, so a group costs no buffer per frame, no pass to measure a text
 * before it is written, and no copy to join its frames.
 */
export class FrameBuffer {
  private bytes: Buffer;
  /** The end of the last whole frame. */
  private size = 0;
  /** Where the frame being written is at. */
  private cursor = 0;

  constructor(capacity: number) {
    this.bytes = Buffer.allocUnsafe(capacity);
  }

  get length(): number {
    return this.size;
  }

  /** The bytes the buffer holds before it has to grow. */
  get capacity(): number {
    return this.bytes.length;
  }

  /** The frames written so far, a view of the buffer: the next append may write past it. */
  contents(): Buffer {
    return this.bytes.subarray(0, this.size);
  }

  clear(): void {
    this.size = 0;
  }

  /**
   * Appends the record's frame; throws when it cannot be encoded, adding nothing. The payload is the
   * journal record as JSON, in the compact form: an array, so no field name is written per record
   * (CONVENTIONS.md#durability):
   *
   *   [seq, seq - group, at, mutation, ...]
   *
   * A put, the mutation nearly every write is, is an array too: [collection, id, doc] with expiresAt, or
   * null and dueAt, after it when it has them; its id is null when the document carries it as "id" (every
   * item does), so the id is stored once. Its document is the mutation's `json` bytes when the writer made
   * them (the item's representation: JSON.stringify(doc), so a write serializes its document once), else
   * JSON.stringify(doc). Any other mutation is its object. Expectations are left out: they were checked
   * before the record was written, and replay applies only what was accepted.
   * Records of the first form, {"seq", "group", "at", "batch": {"mutations": [...]}}, are still read.
   */
  appendRecord(crc: Crc32c, record: JournalRecord): void {
    const start = this.size;
    this.cursor = start + FRAME_HEADER_BYTES;
    this.reserve(0); // the header's room
    const { seq, group, at } = record;
    let text = `[${seq},${seq - group},${JSON.stringify(at)}`;
    for (const mutation of record.batch.mutations) {
      if (mutation.kind !== 'put') {
        text += `,${encodeOther(mutation)}`;
        continue;
      }
      text += `,${putHead(mutation)}`;
      if (mutation.json === undefined) {
        text += JSON.stringify(mutation.doc);
      } else {
        this.text(text);
        this.reserve(mutation.json.length);
        this.bytes.set(mutation.json, this.cursor);
        this.cursor += mutation.json.length;
        text = '';
      }
      text += putTail(mutation);
    }
    this.text(`${text}]`);
    const length = this.cursor - start - FRAME_HEADER_BYTES;
    if (length > MAX_FRAME_PAYLOAD) {
      throw new RangeError(`frame payload of ${length} bytes exceeds ${MAX_FRAME_PAYLOAD}`);
    }
    writeHeader(crc, this.bytes, start, length);
    this.size = this.cursor;
  }

  /** Writes `text` as UTF-8 at the cursor. */
  private text(text: string): void {
    // A UTF-16 code unit is at most 3 bytes of UTF-8: only a text that may not fit is measured first.
    const room = this.bytes.length - this.cursor;
    if (text.length * 3 > room) this.reserve(Buffer.byteLength(text));
    this.cursor += this.bytes.write(text, this.cursor);
  }

  /** Makes room for `bytes` more at the cursor, keeping what is written. */
  private reserve(bytes: number): void {
    const needed = this.cursor + bytes;
    if (needed <= this.bytes.length) return;
    const grown = Buffer.allocUnsafe(Math.max(needed, 2 * this.bytes.length));
    this.bytes.copy(grown, 0, 0, this.cursor);
    this.bytes = grown;
  }
}

type Put = Extract<Mutation, { kind: 'put' }>;

/** A put's array form up to its document: `[collection,id,` (id null when the document carries it). */
function putHead(put: Put): string {
  return `[${JSON.stringify(put.collection)},${put.doc['id'] === put.id ? 'null' : JSON.stringify(put.id)},`;
}

/** A put's array form after its document: expiresAt, or null and dueAt, when it has them. */
function putTail(put: Put): string {
  const { expiresAt, dueAt } = put;
  if (dueAt !== undefined) {
    return `,${expiresAt === undefined ? 'null' : JSON.stringify(expiresAt)},${JSON.stringify(dueAt)}]`;
  }
  return expiresAt === undefined ? ']' : `,${JSON.stringify(expiresAt)}]`;
}

function encodeOther(mutation: Exclude<Mutation, Put>): string {
  if (mutation.kind === 'restore' || mutation.expect === undefined) return JSON.stringify(mutation);
  const { expect: _expect, ...kept } = mutation;
  return JSON.stringify(kept);
}

/** Parses and checks a journal payload whose checksum already held (either form). */
export function decodeRecord(payload: Buffer): Decoded<JournalRecord> {
  const value = parsePayload(payload);
  if (Array.isArray(value)) return decodeCompact(value);
  if (!isJsonObject(value)) return { ok: false, reason: 'record is not a JSON object' };
  const { seq, group, at, batch } = value;
  if (!isCount(seq) || !isCount(group) || group > seq) return { ok: false, reason: 'record has no valid seq/group' };
  if (typeof at !== 'number' || !Number.isFinite(at)) return { ok: false, reason: 'record has no valid time' };
  const problem = batchProblem(batch);
  if (problem !== undefined) return { ok: false, reason: problem };
  return { ok: true, value: { seq, group, at, batch: batch as unknown as Batch } };
}

function decodeCompact(value: readonly unknown[]): Decoded<JournalRecord> {
  const [seq, back, at] = value;
  if (!isCount(seq) || !isCount(back) || back > seq) return { ok: false, reason: 'record has no valid seq/group' };
  if (!isTime(at)) return { ok: false, reason: 'record has no valid time' };
  const mutations: Mutation[] = [];
  for (let index = 3; index < value.length; index++) {
    const entry = value[index];
    const mutation = Array.isArray(entry) ? decodePut(entry) : entry;
    const problem = mutation === undefined ? 'put has a bad form' : mutationProblem(mutation);
    if (problem !== undefined) return { ok: false, reason: problem };
    mutations.push(mutation as Mutation);
  }
  return { ok: true, value: { seq, group: seq - back, at, batch: { mutations } } };
}

/** A put from its array form, or undefined; mutationProblem checks the rest. */
function decodePut(entry: readonly unknown[]): Mutation | undefined {
  const [collection, id, doc, expiresAt, dueAt] = entry;
  if (entry.length < 3 || entry.length > 5 || typeof collection !== 'string' || !isJsonObject(doc)) return undefined;
  const key = id === null ? doc['id'] : id;
  if (typeof key !== 'string') return undefined;
  if (expiresAt !== null && expiresAt !== undefined && !isTime(expiresAt)) return undefined;
  if (dueAt !== undefined && !isTime(dueAt)) return undefined;
  const put = { kind: 'put' as const, collection, id: key, doc };
  if (isTime(expiresAt)) return dueAt === undefined ? { ...put, expiresAt } : { ...put, expiresAt, dueAt };
  return dueAt === undefined ? put : { ...put, dueAt };
}

/** What is wrong with a batch's shape, or undefined; the same rules guard writing and replay. */
export function batchProblem(batch: unknown): string | undefined {
  if (!isJsonObject(batch) || !Array.isArray(batch.mutations)) return 'batch has no mutations array';
  for (const mutation of batch.mutations) {
    const problem = mutationProblem(mutation);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/**
 * A payload as text. Payloads that are all ASCII (most are: JSON.stringify escapes nothing above 0x7f,
 * but documents may hold such text) are decoded as latin1, which reads bytes below 0x80 exactly as
 * UTF-8 does and is many times faster than Node 20's UTF-8 decoder (0.7 s over a 1M-record snapshot).
 */
export function decodePayload(payload: Buffer): string {
  return payload.toString(isAscii(payload) ? 'latin1' : 'utf8');
}

/** JSON.parse that reports failure as a value; `__proto__` keys stay own data properties (ECMA-262 JSON.parse). */
export function parseJsonText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export function parsePayload(payload: Buffer): unknown {
  return parseJsonText(decodePayload(payload));
}

/** A time in ms: finite, so that JSON carries it through the journal unchanged. */
function isTime(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

function isStringList(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((key) => typeof key === 'string');
}

export function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

function mutationProblem(value: unknown): string | undefined {
  if (!isJsonObject(value)) return 'mutation is not an object';
  if (typeof value.collection !== 'string' || typeof value.id !== 'string') return 'mutation has no collection/id';
  switch (value.kind) {
    case 'put':
      if (!isJsonObject(value.doc)) return 'put has no document';
      if (value.json !== undefined && !(value.json instanceof Uint8Array)) return 'put has bad json bytes';
      if (value.expiresAt !== undefined && !isTime(value.expiresAt)) return 'put has a bad expiresAt';
      if (value.dueAt !== undefined && !isTime(value.dueAt)) return 'put has a bad dueAt';
      return expectationProblem(value.expect);
    case 'patch':
      if (!isJsonObject(value.set)) return 'patch has no set object';
      if (value.unset !== undefined && !isStringList(value.unset)) return 'patch has a bad unset';
      if (value.dueAt !== undefined && value.dueAt !== null && !isTime(value.dueAt)) return 'patch has a bad dueAt';
      if (value.upsert !== undefined && typeof value.upsert !== 'boolean') return 'patch has a bad upsert';
      return expectationProblem(value.expect);
    case 'delete':
      if (value.retainUntil !== undefined && !isTime(value.retainUntil)) return 'delete has a bad retainUntil';
      return expectationProblem(value.expect);
    case 'restore':
      return undefined;
    default:
      return 'unknown mutation kind';
  }
}

function expectationProblem(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (isJsonObject(value) && (value.absent === true || value.present === true || isCount(value.version))) {
    return undefined;
  }
  return 'bad expectation';
}
