// The journal: append-only files of framed JSON records (codec.ts), one record per accepted batch
// (CONVENTIONS.md#durability: an atomic batch is one journal record, so after any crash either all of it is
// there or none). Each record is {seq, group, at, batch}; replay applies it with StoreState.apply(batch, seq,
// at), so versions and times come back exactly. Only batches whose `check` passed are journaled.
//
// Files are named by the first seq they may hold (`journal-0000000000000001.log`), so a snapshot at
// seq S starts `journal-(S+1)` and every older file can be deleted once the snapshot is durable.
//
// Group commit: a Group collects checked batches, each framed as it arrives; the writer appends a
// group with one positional write made durable on return (O_DSYNC; a write and an fdatasync where the
// platform has no O_DSYNC). The writer knows the offset of its last durable byte; after a failed
// write or fsync the file may hold a partial tail (and, after a failed fsync, pages the kernel may
// have dropped), so the next append first truncates back to that offset on a fresh handle.
//
// Prepared ahead (CONVENTIONS.md#durability): a durable write that extends the file also commits its
// new size and blocks, and costs about twice the CPU of one that overwrites blocks already written
// (measured on the bench's ext4 disk, 4 KB O_DSYNC writes: 50-68 µs against 30-35 µs, and 1.5-2 times
// the wall time; in the bench's alternating rounds, 2-13 µs less CPU per durable PUT or webhook accept,
// and shorter groups). So the file is extended with real zeros, written and made durable by
// FileHandleIO.writeZeros in steps beside the group writes and never in their way: a step starts once
// less than half a step is left ahead of the last frame, and a group waits for it only if it would
// reach the zeros still being written. A step is at most 4 MiB and a sixteenth of the size the store
// rotates the journal at, and never goes past that size, so disk use stays as the snapshot trigger
// bounds it. A journal may therefore end in zeros: recovery reads an all-zero tail after the last
// frame as the journal's end. `size` counts frames only, and a closed journal is cut back to its frames.
// A step is written and made durable in parts of PREPARE_WRITE_BYTES, one after the other, so a group
// write queues in the disk behind one part's flush at most, never a whole step's. Measured (signed
// webhook accepts, 32 connections, 4 MiB steps each made durable at once, 5-100 ms): group writes that
// overlapped a step p99 6.1-14.0 ms against 4.7-6.8 for the others, and 9.5-18.5% of the slowest 1%
// of accepts overlapped one against 1.3-2.3% of all; in 256 KiB parts, 5.0 against 5.9 ms, and none of
// the slowest 1% against 7% of all.
import { join } from 'node:path';
import type { Crc32c } from './codec.js';
import { FrameBuffer } from './codec.js';
import type { FileHandleIO, FileIO } from './fs-io.js';
import { describeError, writeFully } from './fs-io.js';
import type { Batch, CommitResult } from './types.js';
import type { Logger } from '../log.js';
import type { Random } from '../clock.js';

const NAME = /^journal-(\d{16})\.log$/;
/** A group stops growing past this many bytes, so one write stays a reasonable size. */
const MAX_GROUP_BYTES = 8 << 20;
/** A group's buffer to start with: its frames are written into it, and it grows when they need more. */
const GROUP_BUFFER_BYTES = 16 << 10;
/** A buffer at most this large is written into again by a later group (Group.reusableFrames). */
const REUSED_BUFFER_BYTES = 1 << 20;
const PROBE_BYTES = 4096;
/** The largest step of zeros written ahead of the last frame (the header above). */
const MAX_PREPARE_BYTES = 4 << 20;
/** A step is also at most this share of the size the journal is rotated at. */
const PREPARE_SHARE = 1 / 16;
/** A step's zeros are made durable this much at a time (the header above). */
const PREPARE_WRITE_BYTES = 256 << 10;
/**
 * Journal writes are durable on return where the platform can (fs-io.ts OpenOptions): a group then
 * costs one trip through the thread pool, not a write and an fdatasync each waiting for the main
 * thread to pass the result on, which under load doubled the time a group took to become durable.
 */
const DURABLE_WRITES = { durableWrites: true } as const;

export function journalName(firstSeq: number): string {
  return `journal-${String(firstSeq).padStart(16, '0')}.log`;
}

/** The first seq of a journal file name, or undefined for any other name. */
export function journalStart(name: string): number | undefined {
  const match = NAME.exec(name);
  return match === null ? undefined : Number(match[1]);
}

/** The journal file being appended to. */
export class JournalWriter {
  private damaged = false;
  /** The end of the durable zeros ahead of the last frame; never below `offset`. */
  private prepared: number;
  /** The step of zeros being written, if any (it never rejects), and where it starts. */
  private preparing: Promise<void> | undefined;
  private preparingFrom = 0;
  /** After a step failed, the next is tried only once the frames reach this offset. */
  private retryAt = 0;

  private constructor(
    private readonly io: FileIO,
    readonly path: string,
    readonly firstSeq: number,
    private handle: FileHandleIO,
    private offset: number,
    private readonly log: Logger,
  ) {
    this.prepared = offset;
  }

  /** Creates a new, empty journal and makes its directory entry durable before any append. */
  static async create(io: FileIO, dir: string, firstSeq: number, log: Logger): Promise<JournalWriter> {
    const path = join(dir, journalName(firstSeq));
    const handle = await io.open(path, 'createExclusive', DURABLE_WRITES);
    try {
      await io.syncDir(dir);
    } catch (error) {
      // Leave no half-made file behind: recovery would find an empty journal between two others.
      await handle.close().catch((closeError: unknown) => {
        log('warn', 'closing a new journal failed', { path, error: describeError(closeError) });
      });
      await io.unlink(path).catch((unlinkError: unknown) => {
        log('warn', 'removing a new journal failed', { path, error: describeError(unlinkError) });
      });
      throw error;
    }
    return new JournalWriter(io, path, firstSeq, handle, 0, log);
  }

  /** Opens a recovered journal for appending after its last good byte, dropping anything beyond. */
  static async open(io: FileIO, dir: string, firstSeq: number, goodBytes: number, log: Logger): Promise<JournalWriter> {
    const path = join(dir, journalName(firstSeq));
    const handle = await io.open(path, 'readWrite', DURABLE_WRITES);
    try {
      if ((await handle.size()) !== goodBytes) {
        await handle.truncate(goodBytes);
        await handle.datasync();
      }
    } catch (error) {
      await handle.close();
      throw error;
    }
    return new JournalWriter(io, path, firstSeq, handle, goodBytes, log);
  }

  /** The bytes of the frames written (zeros prepared ahead of them do not count). */
  get size(): number {
    return this.offset;
  }

  /**
   * Writes and fsyncs `bytes` after the last durable byte, then prepares zeros ahead if due; `rotateAt`
   * is the size at which the store rotates this journal at the latest. Throws on failure (nothing is
   * durable then).
   */
  async append(bytes: Buffer, rotateAt: number): Promise<void> {
    if (this.damaged) await this.repair();
    const end = this.offset + bytes.length;
    // A write that would reach the zeros being written waits until they are down.
    if (this.preparing !== undefined && end > this.preparingFrom) await this.preparing;
    try {
      await writeFully(this.handle, bytes, this.offset);
      if (this.handle.writesAreDurable !== true) await this.handle.datasync();
    } catch (error) {
      this.damaged = true;
      throw error;
    }
    this.offset = end;
    this.prepared = Math.max(this.prepared, end);
    this.prepareAhead(rotateAt);
  }

  /** Drops a partial tail left by a failed append; throws while the disk still fails. */
  async repair(): Promise<void> {
    if (!this.damaged) return;
    await this.preparing;
    await this.handle.close().catch((error: unknown) => {
      this.log('warn', 'closing the damaged journal handle failed', { path: this.path, error: describeError(error) });
    });
    // A fresh handle: after a failed fsync the old one may keep reporting (or hiding) the error.
    this.handle = await this.io.open(this.path, 'readWrite', DURABLE_WRITES);
    await this.handle.truncate(this.offset);
    await this.handle.datasync();
    this.prepared = this.offset;
    this.damaged = false;
  }

  /** Starts writing the next step of zeros when less than half a step is left ahead (the header above). */
  private prepareAhead(rotateAt: number): void {
    const handle = this.handle;
    if (handle.writeZeros === undefined || this.preparing !== undefined || this.offset < this.retryAt) return;
    const step = Math.min(MAX_PREPARE_BYTES, Math.floor(rotateAt * PREPARE_SHARE));
    if (this.prepared - this.offset >= step / 2) return;
    // With nothing prepared (a new journal, or after a failed step) the step starts an eighth of a step
    // past the last frame, and the groups append into that gap (a hole until they fill it) meanwhile:
    // started at the last frame, it would hold up the very next group for as long as it takes.
    const from = Math.max(this.prepared, this.offset + Math.floor(step / 8));
    const length = Math.min(step, rotateAt - from);
    if (length <= 0) return;
    this.preparingFrom = from;
    this.preparing = this.writeZeros(handle, from, length).then(
      () => {
        this.preparing = undefined;
      },
      (error: unknown) => {
        // Only a cost: the groups append meanwhile, and a partial step is zeros that the next groups overwrite.
        this.log('warn', 'cannot prepare the journal ahead; appending meanwhile', {
          path: this.path,
          error: describeError(error),
        });
        this.retryAt = this.offset + step;
        this.preparing = undefined;
      },
    );
  }

  /**
   * Writes a step's zeros a PREPARE_WRITE_BYTES part at a time, each durable before the next starts
   * (the header above), so a group write never queues behind more than one part's flush.
   */
  private async writeZeros(handle: FileHandleIO, from: number, length: number): Promise<void> {
    for (let done = 0; done < length; ) {
      const part = Math.min(PREPARE_WRITE_BYTES, length - done);
      // Defined: prepareAhead starts no step on a handle without it.
      await handle.writeZeros?.(from + done, part);
      done += part;
      this.prepared = from + done;
      this.preparingFrom = from + done;
    }
  }

  /** Starts the journal that holds `firstSeq` on, and closes this one (whose records are all durable). */
  async rotate(dir: string, firstSeq: number): Promise<JournalWriter> {
    const next = await JournalWriter.create(this.io, dir, firstSeq, this.log);
    await this.close().catch((error: unknown) => {
      this.log('warn', 'closing the previous journal failed', { path: this.path, error: describeError(error) });
    });
    return next;
  }

  /**
   * After a failure: drops the torn tail and writes (and removes) a small file next to the journal,
   * to see whether the disk takes writes again. Throws while it does not.
   */
  async probe(random: Random): Promise<void> {
    await this.repair();
    const path = `${this.path}.probe.tmp-${process.pid}-${random.bytes(8).toString('hex')}`;
    const handle = await this.io.open(path, 'createExclusive');
    try {
      await writeFully(handle, Buffer.alloc(PROBE_BYTES), 0);
      await handle.datasync();
    } finally {
      await handle.close();
      await this.io.unlink(path);
    }
  }

  /** Makes the frames durable and cuts the zeros prepared past them, so a closed journal holds its frames alone. */
  async close(): Promise<void> {
    await this.preparing;
    try {
      if (!this.damaged) {
        if ((await this.handle.size()) > this.offset) await this.handle.truncate(this.offset);
        await this.handle.datasync();
      }
    } finally {
      await this.handle.close();
    }
  }
}


/** A commit waiting to be checked and framed. */
export interface Waiting {
  readonly batch: Batch;
  readonly resolve: (result: CommitResult) => void;
}

/** A checked batch, framed at the time it was accepted; its seq is its group's first plus its index. */
export interface Member extends Waiting {
  readonly at: number;
}

/**
 * One group commit: the batches that share one durable write, each checked and framed as it
 * arrives (while the group before it is being synced), so that when that sync returns the next write
 * is ready. A batch's check against the state is exact only if no batch before it that is not yet
 * applied touches the same records (or, for a batch that expects a collection unchanged, the same
 * collection): `overlaps` says so, and such a batch waits for the groups before it to be applied.
 */
export class Group {
  readonly members: Member[] = [];
  /** The ids the members write, by collection: what `overlaps` compares. */
  private readonly written = new Map<string, Set<string>>();

  /**
   * `first`: the seq of the first member, as long as every group before this one becomes durable.
   * `frames`: a group's buffer to write into (`reusableFrames`), or a new one.
   */
  constructor(
    private readonly crc: Crc32c,
    private first: number,
    private readonly frames = new FrameBuffer(GROUP_BUFFER_BYTES),
  ) {
    frames.clear();
  }

  get firstSeq(): number {
    return this.first;
  }

  get length(): number {
    return this.members.length;
  }

  /** No more members once past MAX_GROUP_BYTES, so one write stays a reasonable size. */
  get full(): boolean {
    return this.frames.length >= MAX_GROUP_BYTES;
  }

  /** Does `batch` read or write a record (or guard a collection) that a member of this group writes? */
  overlaps(batch: Batch): boolean {
    const guarded = batch.unchanged?.collection;
    if (guarded !== undefined && this.written.has(guarded)) return true;
    for (const { collection, id } of batch.mutations) if (this.written.get(collection)?.has(id) === true) return true;
    return false;
  }

  /** Frames a checked batch as the next member. Throws when it cannot be encoded (nothing is added then). */
  add(waiting: Waiting, at: number): void {
    const { batch } = waiting;
    this.frames.appendRecord(this.crc, { seq: this.first + this.members.length, group: this.first, at, batch });
    this.members.push({ batch, resolve: waiting.resolve, at });
    for (const { collection, id } of batch.mutations) {
      const ids = this.written.get(collection);
      if (ids === undefined) this.written.set(collection, new Set([id]));
      else ids.add(id);
    }
  }

  /**
   * The frames for the write, starting at seq `first`: framed again when that is not the seq they were
   * framed for (a group before this one failed, and its seqs are used again).
   */
  seal(first: number): Buffer {
    if (first !== this.first) {
      this.first = first;
      this.frames.clear();
      for (const [index, { batch, at }] of this.members.entries()) {
        this.frames.appendRecord(this.crc, { seq: first + index, group: first, at, batch });
      }
    }
    return this.frames.contents();
  }

  /**
   * Once this group's write has returned, its buffer for a later group to frame into: a new buffer per
   * group would be some 30-40 MB a second outside the heap at the bench's 2,000-2,500 writes a second,
   * for the collector to track. None when it grew past REUSED_BUFFER_BYTES (a large batch), so an idle
   * store does not hold on to that much.
   */
  reusableFrames(): FrameBuffer | undefined {
    return this.frames.capacity <= REUSED_BUFFER_BYTES ? this.frames : undefined;
  }
}

/** Deletes every journal older than `firstSeq` (their records are in a durable snapshot). */
export async function removeJournalsBefore(io: FileIO, dir: string, firstSeq: number): Promise<void> {
  for (const name of await io.readdir(dir)) {
    const start = journalStart(name);
    if (start !== undefined && start < firstSeq) await io.unlink(join(dir, name));
  }
  await io.syncDir(dir);
}

