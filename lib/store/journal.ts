// The journal: append-only files of framed JSON records (codec.ts), one record per accepted batch
// (CONVENTIONS.md#durability: an atomic batch is one journal record, so after any crash either all of it is
// there or none). Each record is {seq, group, at, batch}; replay applies it with StoreState.apply(batch, seq,
// at), so versions and times come back exactly. Only batches whose `check` passed are journaled.
//
// Files are named by the first seq they may hold (`journal-0000000000000001.log`), so a snapshot at
// seq S starts `journal-(S+1)` and every older file can be deleted once the snapshot is durable.
//
// Group commit: takeGroup forms the next group from the queue; the writer appends it with one
// positional write and one fdatasync. The writer knows the offset of its last durable byte; after a
// failed write or fsync the file may hold a partial tail (and, after a failed fsync, pages the kernel
// may have dropped), so the next append first truncates back to that offset on a fresh handle.
import { join } from 'node:path';
import type { Crc32c } from './codec.js';
import { encodeFrame, encodeRecord } from './codec.js';
import type { FileHandleIO, FileIO } from './fs-io.js';
import { describeError, writeFully } from './fs-io.js';
import type { StoreState } from './state.js';
import type { Batch, CommitResult } from './types.js';
import type { Logger } from '../log.js';
import type { Random } from '../clock.js';
import { conflictResult, unavailable } from './commit-step.js';

const NAME = /^journal-(\d{16})\.log$/;
/** A group stops growing past this many bytes, so one write stays a reasonable size. */
const MAX_GROUP_BYTES = 8 << 20;
const PROBE_BYTES = 4096;

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

  private constructor(
    private readonly io: FileIO,
    readonly path: string,
    readonly firstSeq: number,
    private handle: FileHandleIO,
    private offset: number,
    private readonly log: Logger,
  ) {}

  /** Creates a new, empty journal and makes its directory entry durable before any append. */
  static async create(io: FileIO, dir: string, firstSeq: number, log: Logger): Promise<JournalWriter> {
    const path = join(dir, journalName(firstSeq));
    const handle = await io.open(path, 'createExclusive');
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
    const handle = await io.open(path, 'readWrite');
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

  get size(): number {
    return this.offset;
  }

  /** Writes and fsyncs `bytes` after the last durable byte. Throws on failure (nothing is durable then). */
  async append(bytes: Buffer): Promise<void> {
    if (this.damaged) await this.repair();
    try {
      await writeFully(this.handle, bytes, this.offset);
      await this.handle.datasync();
    } catch (error) {
      this.damaged = true;
      throw error;
    }
    this.offset += bytes.length;
  }

  /** Drops a partial tail left by a failed append; throws while the disk still fails. */
  async repair(): Promise<void> {
    if (!this.damaged) return;
    await this.handle.close().catch((error: unknown) => {
      this.log('warn', 'closing the damaged journal handle failed', { path: this.path, error: describeError(error) });
    });
    // A fresh handle: after a failed fsync the old one may keep reporting (or hiding) the error.
    this.handle = await this.io.open(this.path, 'readWrite');
    await this.handle.truncate(this.offset);
    await this.handle.datasync();
    this.damaged = false;
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

  async close(): Promise<void> {
    try {
      if (!this.damaged) await this.handle.datasync();
    } finally {
      await this.handle.close();
    }
  }
}


/** A commit waiting in the queue for the next group. */
export interface Waiting {
  readonly batch: Batch;
  readonly resolve: (result: CommitResult) => void;
}

/** A checked batch with the seq it will be applied at once its group is durable. */
export interface Accepted extends Waiting {
  readonly seq: number;
}

export interface Group {
  readonly members: readonly Accepted[];
  /** The members' frames, for one write and one fdatasync. */
  readonly bytes: Buffer;
  readonly at: number;
}

/**
 * Takes the next group from the front of `queue` (removing what it took). Batches are checked
 * against the state as it is before the group; that verdict is exact only when no earlier member
 * touches the same keys (or, for a batch that expects a collection unchanged, the same collection),
 * so the group stops at the first batch that overlaps it (never reordering).
 * A batch that fails its check is answered at once and never journaled.
 */
export function takeGroup(queue: Waiting[], state: StoreState, crc: Crc32c, at: number, log: Logger): Group {
  const first = state.seq + 1;
  const keys = new Set<string>();
  /** Collections the members touch: a later batch that expects one `unchanged` waits for the next group. */
  const touched = new Set<string>();
  const members: Accepted[] = [];
  const frames: Buffer[] = [];
  let size = 0;
  let taken = 0;
  for (; taken < queue.length; taken++) {
    const waiting = queue[taken] as Waiting;
    const batchKeys = waiting.batch.mutations.map((mutation) => `${mutation.collection}\u0000${mutation.id}`);
    const guarded = waiting.batch.unchanged?.collection;
    const overlaps = batchKeys.some((key) => keys.has(key)) || (guarded !== undefined && touched.has(guarded));
    if (members.length > 0 && (size >= MAX_GROUP_BYTES || overlaps)) break;
    const verdict = state.check(waiting.batch);
    if (!verdict.ok) {
      waiting.resolve(conflictResult(verdict));
      continue;
    }
    const seq = first + members.length;
    let frame: Buffer;
    try {
      frame = encodeFrame(crc, encodeRecord({ seq, group: first, at, batch: waiting.batch }));
    } catch (error) {
      log('error', 'cannot encode a batch for the journal', { error: describeError(error) });
      waiting.resolve(unavailable(`cannot encode batch: ${describeError(error)}`));
      continue;
    }
    frames.push(frame);
    size += frame.length;
    members.push({ ...waiting, seq });
    for (const key of batchKeys) keys.add(key);
    for (const mutation of waiting.batch.mutations) touched.add(mutation.collection);
  }
  queue.splice(0, taken);
  return { members, bytes: frames.length === 1 ? (frames[0] as Buffer) : Buffer.concat(frames, size), at };
}

/** Deletes every journal older than `firstSeq` (their records are in a durable snapshot). */
export async function removeJournalsBefore(io: FileIO, dir: string, firstSeq: number): Promise<void> {
  for (const name of await io.readdir(dir)) {
    const start = journalStart(name);
    if (start !== undefined && start < firstSeq) await io.unlink(join(dir, name));
  }
  await io.syncDir(dir);
}

