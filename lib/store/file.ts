// The durable Store (CONVENTIONS.md#durability): the live state in memory (state.ts, shared with the memory
// store), an append-only journal of accepted batches (journal.ts), periodic snapshots (snapshot.ts),
// recovery on open (recovery.ts), a lock on the data dir (lock.ts) and side logs (side-log.ts).
//
// Group commit (CONVENTIONS.md#durability: concurrent writes share fsyncs). Commits enter one serial queue. While a
// group is being written and fsynced, new batches wait; the next group takes the waiting batches (in
// call order), writes them with one write and one fdatasync, applies them and answers them all.
//
// Visibility, decided: a batch is applied to the state only after its record is durable, so a read
// never sees a write that a crash could still lose, and a failed write leaves nothing to roll back.
// `check` of a later batch must still see the earlier batches of its group; rather than an overlay
// (a second copy of the apply logic), a group only admits batches whose keys are disjoint from it
// (journal.ts takeGroup), so checking against the state before the group is exact, and an
// overlapping batch simply waits for the next group.
//
// A failed write or fsync answers every batch of its group `unavailable`, marks the store not
// writable and logs why; the state is as before the group. The next append first truncates the
// journal back to its last durable byte, and the first write that succeeds makes the store writable
// again. While it is not writable, health() probes the disk before it answers (CONVENTIONS.md#health),
// so a store that gets no writes (a load balancer took it out on 503) is seen to be back on the first
// look, never a stale 503. Looks that arrive while a probe runs share it, so a flood of health checks
// costs one probe at a time; a writable store answers without touching the disk.
import { join } from 'node:path';
import type { Crc32c } from './codec.js';
import { assertBatch, unavailable, Watchers } from './commit-step.js';
import type { FileIO } from './fs-io.js';
import { describeError, hasCode, nodeFileIO } from './fs-io.js';
import type { Accepted, JournalWriter, Waiting } from './journal.js';
import { takeGroup } from './journal.js';
import { FileSideLogs } from './side-log.js';
import type { DirLock } from './lock.js';
import { recover } from './recovery.js';
import { captureState, checkpointSnapshot } from './snapshot.js';
import type { StoreState } from './state.js';
import type {
  Batch,
  CommitListener,
  CommitResult,
  ScanOptions,
  SideLogResult,
  Store,
  StoreHealth,
  StoredRecord,
  StoreObserver,
  Tombstone,
} from './types.js';
import type { JsonObject } from '../json.js';
import type { Logger } from '../log.js';
import { stderrLogger } from '../log.js';
import { systemClock, systemRandom, type Clock, type Random } from '../clock.js';

/** What the store needs from openFileStore (recovery builds all of it). */
export interface FileStoreParts {
  readonly io: FileIO;
  readonly dir: string;
  readonly crc: Crc32c;
  readonly state: StoreState;
  readonly journal: JournalWriter;
  /** Bytes in older journals that no snapshot covers yet; they count towards the threshold. */
  readonly olderJournalBytes: number;
  readonly lock: DirLock;
  readonly clock: Clock;
  readonly random: Random;
  readonly log: Logger;
  readonly snapshotThresholdBytes: number;
  readonly observer?: StoreObserver;
}

export class FileStore implements Store {
  readonly durable = true;
  private readonly queue: Waiting[] = [];
  private readonly watchers: Watchers;
  private readonly sideLogs: FileSideLogs;
  private journal: JournalWriter;
  private olderJournalBytes: number;
  private snapshotFailed = false;
  /** The serial writer: set while a drain (groups, rotation, probe) runs. */
  private running: Promise<void> | undefined;
  private snapshotting: Promise<void> | undefined;
  private failure: string | undefined;
  /** The disk probe running for health(), shared by every look that arrives meanwhile. */
  private probing: Promise<void> | undefined;
  private closing: Promise<void> | undefined;

  constructor(private readonly parts: FileStoreParts) {
    this.journal = parts.journal;
    this.olderJournalBytes = parts.olderJournalBytes;
    this.watchers = new Watchers(parts.log);
    this.sideLogs = new FileSideLogs(parts.io, parts.dir);
  }

  get(collection: string, id: string): StoredRecord | undefined {
    return this.parts.state.get(collection, id);
  }

  getTombstone(collection: string, id: string): Tombstone | undefined {
    return this.parts.state.getTombstone(collection, id);
  }

  scan(collection: string, options?: ScanOptions): StoredRecord[] {
    return this.parts.state.scan(collection, options);
  }

  count(collection: string): number {
    return this.parts.state.count(collection);
  }

  collections(): string[] {
    return this.parts.state.collections();
  }

  due(collection: string, now: number, limit: number): StoredRecord[] {
    return this.parts.state.due(collection, now, limit);
  }

  nextDue(collection: string): number | undefined {
    return this.parts.state.nextDue(collection);
  }

  lastModified(collection: string): number | undefined {
    return this.parts.state.lastModified(collection);
  }

  collectionVersion(collection: string): number {
    return this.parts.state.collectionVersion(collection);
  }

  /** Throws TypeError for a malformed batch: journaling it would make the next start refuse. */
  commit(batch: Batch): Promise<CommitResult> {
    assertBatch(batch);
    if (this.closing !== undefined) return Promise.resolve(unavailable('store is closed'));
    return new Promise((resolve) => {
      this.queue.push({ batch, resolve });
      this.kick();
    });
  }

  watch(listener: CommitListener): () => void {
    return this.watchers.add(listener);
  }

  async diskBytes(): Promise<number> {
    let total = 0;
    for (const name of await this.parts.io.readdir(this.parts.dir)) {
      // A file removed between the listing and its stat (an old journal after a snapshot) holds nothing.
      total += await this.parts.io.fileSize(join(this.parts.dir, name)).catch(() => 0);
    }
    return total;
  }

  appendSideLog(name: string, entry: JsonObject): Promise<SideLogResult> {
    if (this.closing !== undefined) return Promise.resolve({ ok: false, detail: 'store is closed' });
    return this.sideLogs.append(name, entry);
  }

  readSideLog(name: string): Promise<JsonObject[]> {
    return this.sideLogs.read(name);
  }

  async health(): Promise<StoreHealth> {
    if (this.closing !== undefined) return { writable: false, detail: 'store is closed' };
    if (this.failure === undefined) return { writable: true };
    this.probing ??= this.run(() => this.probe()).then(() => {
      this.probing = undefined;
    });
    await this.probing;
    if (this.closing !== undefined) return { writable: false, detail: 'store is closed' };
    return this.failure === undefined ? { writable: true } : { writable: false, detail: this.failure };
  }

  /** Waits for queued commits and a running snapshot (asked to stop early), then releases the dir. */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  /** Starts a snapshot now if the journals are over the threshold (used right after recovery). */
  checkpointIfDue(): void {
    if (this.checkpointDue()) void this.run(() => this.checkpoint());
  }

  private kick(): void {
    if (this.running === undefined) void this.run(() => this.drain());
  }

  /**
   * Runs `task` in the serial writer slot, then drains whatever queued meanwhile. Resolves when `task`
   * is done; never rejects.
   */
  private run(task: () => Promise<void>): Promise<void> {
    const previous = this.running ?? Promise.resolve();
    const current = previous.then(task).catch((error: unknown) => {
      this.parts.log('error', 'store writer failed unexpectedly', { error: describeError(error) });
    });
    this.running = current;
    void current.then(() => {
      if (this.running !== current) return;
      this.running = undefined;
      if (this.queue.length > 0) this.kick();
    });
    return current;
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const { state, crc, clock, log } = this.parts;
      const { members, bytes, at } = takeGroup(this.queue, state, crc, clock.now(), log);
      if (members.length > 0) await this.writeGroup(members, bytes, at);
    }
  }

  private async writeGroup(group: readonly Accepted[], bytes: Buffer, at: number): Promise<void> {
    const started = this.parts.clock.monotonic();
    try {
      await this.journal.append(bytes);
    } catch (error) {
      const detail = `journal write failed: ${describeError(error)}`;
      const fields = { path: this.journal.path, batches: group.length, error: describeError(error) };
      this.parts.log('error', 'store write failed; answering the group as unavailable', fields);
      this.failure = detail;
      for (const item of group) item.resolve(unavailable(detail));
      // Cut the failed frames off now, so a crash before the next write cannot bring back a batch
      // that was answered `unavailable`; if the disk refuses, the next append tries again first.
      await this.journal.repair().catch((repairError: unknown) => {
        const fields = { path: this.journal.path, error: describeError(repairError) };
        this.parts.log('warn', 'cannot yet truncate the failed write from the journal', fields);
      });
      return;
    }
    this.markWritable();
    this.parts.observer?.groupCommitted(group.length, bytes.length, this.parts.clock.monotonic() - started);
    // Durable: apply, notify and answer in seq order, with no await in between, so readers see the
    // whole group at once.
    for (const item of group) {
      const commit = this.parts.state.apply(item.batch, item.seq, at);
      this.watchers.notify(commit);
      item.resolve({ ok: true, commit });
    }
    if (this.checkpointDue()) await this.checkpoint();
  }

  private checkpointDue(): boolean {
    const older = this.snapshotFailed ? 0 : this.olderJournalBytes;
    return older + this.journal.size >= this.parts.snapshotThresholdBytes;
  }

  private markWritable(): void {
    if (this.failure === undefined) return;
    this.parts.log('info', 'store is writable again', { previous: this.failure });
    this.failure = undefined;
  }

  /**
   * Rotates the journal and writes a snapshot of the state at this seq in the background: commits go
   * on into the new journal, and the old ones are deleted only once the snapshot is durable.
   */
  private async checkpoint(): Promise<void> {
    if (this.snapshotting !== undefined || this.closing !== undefined || this.failure !== undefined) return;
    const { io, dir, crc, state, log } = this.parts;
    // An empty journal (a rotation that a crash interrupted) already starts at the next seq.
    if (this.journal.size > 0) {
      const previous = this.journal;
      try {
        this.journal = await previous.rotate(dir, state.seq + 1);
      } catch (error) {
        log('error', 'cannot start a new journal; will retry after the next commit', { error: describeError(error) });
        return;
      }
      this.olderJournalBytes += previous.size;
    }
    // Taken synchronously, with no commit applied since the rotation: exactly the state at this seq.
    const capture = captureState(state, this.parts.clock.now());
    const aborted = (): boolean => this.closing !== undefined;
    const options = { aborted, log, random: this.parts.random };
    this.snapshotting = checkpointSnapshot(io, crc, dir, capture, this.journal.firstSeq, options).then((outcome) => {
      // After a failure, retry only once the current journal alone passes the threshold.
      if (outcome !== 'abandoned') this.snapshotFailed = outcome === 'failed';
      if (outcome === 'written') this.olderJournalBytes = 0;
      this.snapshotting = undefined;
    });
  }

  /** After a failure: see whether the disk takes writes again, without a commit to try it. */
  private async probe(): Promise<void> {
    if (this.failure === undefined) return;
    try {
      await this.journal.probe(this.parts.random);
    } catch (error) {
      this.parts.log('warn', 'store is still not writable', { error: describeError(error) });
      return;
    }
    this.markWritable();
  }

  private async shutdown(): Promise<void> {
    const { log } = this.parts;
    while (this.running !== undefined) await this.running;
    await this.snapshotting;
    const logged = (message: string) => (error: unknown): void => {
      log('error', message, { error: describeError(error) });
    };
    await this.sideLogs.close().catch(logged('closing a side log failed'));
    await this.journal.close().catch(logged('closing the journal failed'));
    await this.parts.lock.release().catch(logged('releasing the store lock failed'));
  }
}

export interface FileStoreOptions {
  readonly dir: string;
  readonly clock?: Clock;
  /** Temp-file names and the lock's token and jitter. */
  readonly random?: Random;
  /** Injectable file operations; default the real node:fs implementation. */
  readonly io?: FileIO;
  /** Journal size that triggers a snapshot and a new journal; default 64 MiB. */
  readonly snapshotThresholdBytes?: number;
  /** Default: one JSON line per event on stderr. */
  readonly log?: Logger;
  /** Recovery progress of a large store; default stderr. */
  readonly progress?: (message: string) => void;
  readonly observer?: StoreObserver;
}

export type OpenResult =
  | { readonly ok: true; readonly store: FileStore }
  | {
      readonly ok: false;
      readonly kind: 'locked' | 'corrupt' | 'io';
      /** For people: names the file and offset when corrupt, the holder's pid when locked. */
      readonly message: string;
    };

const DEFAULT_THRESHOLD = 64 << 20;

/**
 * Opens (creating when missing) and recovers the store in `options.dir`: takes the lock, removes
 * leftover temp files, loads the snapshot, replays the journals, drops a torn last record (logged)
 * and refuses to start on corruption anywhere else, naming the file and offset.
 */
export async function openFileStore(options: FileStoreOptions): Promise<OpenResult> {
  if (typeof options.dir !== 'string' || options.dir === '') {
    throw new TypeError('openFileStore: options.dir must be a non-empty path');
  }
  const threshold = options.snapshotThresholdBytes ?? DEFAULT_THRESHOLD;
  if (!Number.isSafeInteger(threshold) || threshold <= 0) {
    throw new TypeError('openFileStore: options.snapshotThresholdBytes must be a positive integer');
  }
  const io = options.io ?? nodeFileIO();
  const clock = options.clock ?? systemClock;
  const random = options.random ?? systemRandom;
  const log = options.log ?? stderrLogger();
  const progress = options.progress ?? ((message: string) => void process.stderr.write(`${message}\n`));
  const opened = await recover(io, options.dir, { clock, random, log, progress });
  if (!opened.ok) return opened;
  const store = new FileStore({
    ...opened.parts,
    io,
    dir: options.dir,
    clock,
    random,
    log,
    snapshotThresholdBytes: threshold,
    ...(options.observer === undefined ? {} : { observer: options.observer }),
  });
  store.checkpointIfDue();
  return { ok: true, store };
}

/** Does a data dir exist at `dir`? (A start that fails before opening the store must not create one.) */
export async function dataDirExists(dir: string, io: FileIO = nodeFileIO()): Promise<boolean> {
  try {
    await io.readdir(dir);
    return true;
  } catch (error) {
    if (hasCode(error, 'ENOENT')) return false;
    throw error;
  }
}
