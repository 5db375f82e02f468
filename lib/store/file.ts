// The durable Store (CONVENTIONS.md#durability): the live state in memory (state.ts, shared with the memory
// store), an append-only journal of accepted batches (journal.ts), periodic snapshots (snapshot.ts),
// recovery on open (recovery.ts), a lock on the data dir (lock.ts) and side logs (side-log.ts).
//
// Group commit (CONVENTIONS.md#durability: concurrent writes share fsyncs), shaped so that the disk
// is never idle while commits wait: one group is written and made durable while the next one forms.
// A batch is checked and framed when it arrives (journal.ts Group), so when a sync returns the next
// group's write starts at once, and only then is the synced group applied and answered: the work of
// answering overlaps with the next sync instead of sitting between two. A group takes the batches in
// call order and never reorders them. A write on an idle journal starts at the end of the event loop's
// turn (setImmediate), not at the first commit of it: started at once, the first request read in a
// turn was written alone and every other one read in the same turn waited a whole sync behind it, and a
// sender's outcome, committed alone on an idle journal, took a sync of its own ahead of the requests.
// Measured (32 connections, PUTs of 10,000 items): 12.5 → 16 writes per fdatasync; with a subscription,
// groups that hold no request 37–51% → 28–48% of all; latency the same within the noise.
// Under load the journal is never idle (median gap between one write's return and the next 2–7 µs),
// so a group holds what arrives during one write: its size is the request rate divided by the write
// rate (1,750–2,100 writes a second on the bench's disk on a quiet machine, and alike for PUTs and
// webhook accepts in the same minutes), so a slower kind of request makes smaller groups, not the other way
// round. Measured (webhook accepts, 32
// connections): starting a busy journal's next write at the end of the turn too, instead of at once,
// took 13% fewer writes per accept, but the disk then idled while a group was answered (median 270 µs a
// write), and neither the CPU per accept nor the rate improved in 12 alternating rounds; it stays at once.
//
// Visibility, decided: a batch is applied to the state only after its record is durable, so a read
// never sees a write that a crash could still lose, and a failed write leaves nothing to roll back.
// A batch is checked against the state before the groups ahead of it are applied; rather than an
// overlay (a second copy of the apply logic), a batch is admitted only while its keys are disjoint from
// every group not yet applied (Group.overlaps), so that check is exact; an overlapping batch, and every
// batch after it, waits until the groups ahead are applied.
//
// A failed write or fsync answers every batch of its group `unavailable`, marks the store not
// writable and logs why; the state is as before the group, and the group forming behind it takes its
// seqs (framed again). The journal is truncated back to its last durable byte before anything else is
// written, and the first write that succeeds makes the store writable again. While it is not writable,
// health() probes the disk before it answers (CONVENTIONS.md#health), so a store that gets no writes
// (a load balancer took it out on 503) is seen to be back on the first look, never a stale 503. Looks
// that arrive while a probe runs share it, so a flood of health checks costs one probe at a time; a
// writable store answers without touching the disk. Probes, repairs and journal rotations are tasks
// that run only while no group is being written, and before the next one.
//
// When to snapshot (CONVENTIONS.md#durability): once the journals since the last snapshot hold
// max(snapshotThresholdBytes, a quarter of that snapshot's bytes). A fixed threshold alone makes each
// snapshot rewrite the whole store per fixed amount of journal, so the snapshot work per write grows
// with the store (at 1M records, 240 MB written per 64 MiB of journal); growing the trigger with the
// store, as log-structured stores do, keeps it at most 4 snapshot bytes per journal byte past the
// floor. The quarter is what recovery allows: a journal costs about twice as much to replay per byte
// as a snapshot to load (measured at 1M records of ~200 bytes: 8 ms of CPU per MiB of snapshot, 17 ms
// per MiB of single-put journal), so the worst case (a snapshot and a journal just under its trigger)
// recovers in about 1.5 times what the snapshot alone takes. Up to a snapshot of 256 MiB (about 1.1M
// such records) the floor decides, as before.
import { join } from 'node:path';
import type { Crc32c, FrameBuffer } from './codec.js';
import { assertBatch, conflictResult, unavailable, Watchers } from './commit-step.js';
import type { FileIO } from './fs-io.js';
import { describeError, hasCode, nodeFileIO } from './fs-io.js';
import type { JournalWriter, Member, Waiting } from './journal.js';
import { Group } from './journal.js';
import { FileSideLogs } from './side-log.js';
import type { DirLock } from './lock.js';
import { recover } from './recovery.js';
import { captureState, checkpointSnapshot, type SnapshotFrames } from './snapshot.js';
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
  /** Bytes in older journals that no snapshot covers yet; they count towards the trigger. */
  readonly olderJournalBytes: number;
  /** The size of the snapshot recovery loaded, 0 without one. */
  readonly snapshotBytes: number;
  /** Where that snapshot's frames are, which the next one copies unchanged records from. */
  readonly snapshotFrames: SnapshotFrames | undefined;
  readonly lock: DirLock;
  readonly clock: Clock;
  readonly random: Random;
  readonly log: Logger;
  readonly snapshotThresholdBytes: number;
  readonly observer?: StoreObserver;
}

export class FileStore implements Store {
  readonly durable = true;
  /** Batches that wait for the groups ahead of them to be applied before they can be checked (FIFO). */
  private readonly waiting: Waiting[] = [];
  /** The group that takes new batches. */
  private forming: Group;
  /** The group being written and fdatasynced. */
  private writing: Group | undefined;
  /** The buffer of the last group whose write returned: the next group to form frames into it. */
  private spare: FrameBuffer | undefined;
  /** The last seq the journal holds durably. */
  private durableSeq: number;
  /** True while a synced group is applied: a batch committed meanwhile waits until it is. */
  private applying = false;
  /** Tasks that need the journal to themselves (repair, rotation, probe), run before the next write. */
  private readonly tasks: (() => Promise<void>)[] = [];
  private task: Promise<void> | undefined;
  private pumpQueued = false;
  private readonly idleWaiters: (() => void)[] = [];
  private readonly watchers: Watchers;
  private readonly sideLogs: FileSideLogs;
  private journal: JournalWriter;
  private olderJournalBytes: number;
  /** The size of the last snapshot written or loaded: the trigger grows with it. */
  private snapshotBytes: number;
  private snapshotFrames: SnapshotFrames | undefined;
  private snapshotFailed = false;
  private snapshotting: Promise<void> | undefined;
  private failure: string | undefined;
  /** The disk probe running for health(), shared by every look that arrives meanwhile. */
  private probing: Promise<void> | undefined;
  private closing: Promise<void> | undefined;

  constructor(private readonly parts: FileStoreParts) {
    this.journal = parts.journal;
    this.olderJournalBytes = parts.olderJournalBytes;
    this.snapshotBytes = parts.snapshotBytes;
    this.snapshotFrames = parts.snapshotFrames;
    this.durableSeq = parts.state.seq;
    this.forming = new Group(parts.crc, this.durableSeq + 1);
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

  keepDocumentsAsText(): void {
    this.parts.state.keepDocumentsAsText();
  }

  /** Throws TypeError for a malformed batch: journaling it would make the next start refuse. */
  commit(batch: Batch): Promise<CommitResult> {
    assertBatch(batch);
    if (this.closing !== undefined) return Promise.resolve(unavailable('store is closed'));
    return new Promise((resolve) => {
      this.waiting.push({ batch, resolve });
      this.admit();
      // At the end of this turn of the event loop, so every commit made in the turn shares a group.
      if (this.pumpQueued) return;
      this.pumpQueued = true;
      setImmediate(() => {
        this.pumpQueued = false;
        this.pump();
      });
    });
  }

  watch(listener: CommitListener): () => void {
    return this.watchers.add(listener);
  }

  async diskBytes(): Promise<number> {
    let total = 0;
    for (const name of await this.parts.io.readdir(this.parts.dir)) {
      const path = join(this.parts.dir, name);
      // The journal being written counts its frames: the zeros prepared ahead of them (journal.ts) are room
      // that the next writes take, and would make the figure jump by steps that say nothing about the data.
      if (path === this.journal.path) {
        total += this.journal.size;
        continue;
      }
      // A file removed between the listing and its stat (an old journal after a snapshot) holds nothing.
      total += await this.parts.io.fileSize(path).catch(() => 0);
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
    this.probing ??= this.runTask(() => this.probe()).then(() => {
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
    if (this.checkpointDue()) void this.runTask(() => this.checkpoint());
  }

  /**
   * Moves waiting batches into the forming group, in order, while each can be checked exactly: a
   * batch that fails its check is answered at once and never journaled.
   */
  private admit(): void {
    if (this.applying) return;
    const { state, clock, log } = this.parts;
    while (this.waiting.length > 0) {
      const head = this.waiting[0] as Waiting;
      const forming = this.forming;
      if (this.writing?.overlaps(head.batch) === true) return;
      if (forming.length > 0 && (forming.full || forming.overlaps(head.batch))) return;
      this.waiting.shift();
      const verdict = state.check(head.batch);
      if (!verdict.ok) {
        head.resolve(conflictResult(verdict));
        continue;
      }
      try {
        forming.add(head, clock.now());
      } catch (error) {
        log('error', 'cannot encode a batch for the journal', { error: describeError(error) });
        head.resolve(unavailable(`cannot encode batch: ${describeError(error)}`));
      }
    }
  }

  /** Starts what comes next when the journal is free: a task first, else the forming group's write. */
  private pump(): void {
    if (this.writing !== undefined || this.task !== undefined || this.applying) return;
    const task = this.tasks.shift();
    if (task !== undefined) {
      this.task = task()
        .catch((error: unknown) => {
          this.parts.log('error', 'store writer failed unexpectedly', { error: describeError(error) });
        })
        .then(() => {
          this.task = undefined;
          this.admit();
          this.pump();
        });
      return;
    }
    if (this.forming.length > 0) {
      this.write();
      return;
    }
    if (this.waiting.length === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  /** Runs `task` with the journal to itself, before the next group is written; never rejects. */
  private runTask(task: () => Promise<void>): Promise<void> {
    return new Promise((resolve) => {
      this.tasks.push(() => task().finally(resolve));
      this.pump();
    });
  }

  /** Writes the forming group, durable when the write returns; the next one forms meanwhile. */
  private write(): void {
    const group = this.forming;
    const bytes = group.seal(this.durableSeq + 1);
    this.forming = new Group(this.parts.crc, group.firstSeq + group.length, this.spare);
    this.spare = undefined;
    this.writing = group;
    const started = this.parts.clock.monotonic();
    // The journal never prepares zeros past the size it is rotated at (journal.ts).
    const rotateAt = snapshotTrigger(this.parts.snapshotThresholdBytes, this.snapshotBytes);
    this.journal
      .append(bytes, rotateAt)
      .then(
        () => this.written(group, bytes.length, started),
        (error: unknown) => this.failed(group, error),
      )
      .catch((error: unknown) => {
        this.parts.log('error', 'store writer failed unexpectedly', { error: describeError(error) });
      });
  }

  /** The group is durable: start the next write, then apply, notify and answer this group. */
  private written(group: Group, bytes: number, started: number): void {
    this.writing = undefined;
    this.spare = group.reusableFrames();
    this.durableSeq = group.firstSeq + group.length - 1;
    this.markWritable();
    this.parts.observer?.groupCommitted(group.length, bytes, this.parts.clock.monotonic() - started);
    // A rotation needs the journal at a group's end: it runs after this group is applied, before the
    // next write. Otherwise the next write starts now, while this group is answered.
    if (this.checkpointDue()) this.tasks.push(() => this.checkpoint());
    else if (this.tasks.length === 0 && this.task === undefined && this.forming.length > 0) this.write();
    // Durable: apply, notify and answer in seq order, with no await in between, so readers see the
    // whole group at once.
    this.applying = true;
    try {
      const { firstSeq, members } = group;
      for (let index = 0; index < members.length; index++) {
        const member = members[index] as Member;
        const commit = this.parts.state.apply(member.batch, firstSeq + index, member.at);
        this.watchers.notify(commit);
        member.resolve({ ok: true, commit });
      }
    } finally {
      this.applying = false;
    }
    this.admit();
    this.pump();
  }

  private failed(group: Group, error: unknown): void {
    this.writing = undefined;
    this.spare = group.reusableFrames();
    const detail = `journal write failed: ${describeError(error)}`;
    const fields = { path: this.journal.path, batches: group.length, error: describeError(error) };
    this.parts.log('error', 'store write failed; answering the group as unavailable', fields);
    this.failure = detail;
    for (const member of group.members) member.resolve(unavailable(detail));
    // Cut the failed frames off before anything else is written, so a crash cannot bring back a batch
    // that was answered `unavailable`; if the disk refuses, the next append tries again first.
    this.tasks.unshift(() =>
      this.journal.repair().catch((repairError: unknown) => {
        const fields = { path: this.journal.path, error: describeError(repairError) };
        this.parts.log('warn', 'cannot yet truncate the failed write from the journal', fields);
      }),
    );
    this.admit();
    this.pump();
  }

  /**
   * The journals passed the trigger (the header above), with no snapshot running: the next group
   * starts a new journal and a snapshot.
   */
  private checkpointDue(): boolean {
    if (this.snapshotting !== undefined || this.closing !== undefined || this.failure !== undefined) return false;
    if (this.tasks.length > 0) return false;
    const older = this.snapshotFailed ? 0 : this.olderJournalBytes;
    return older + this.journal.size >= snapshotTrigger(this.parts.snapshotThresholdBytes, this.snapshotBytes);
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
    // Nothing is being written (a task), and every durable group is applied.
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
    const journalBytes = (): number => this.journal.size;
    const { clock, random } = this.parts;
    const options = { aborted, log, random, clock, journalBytes, previous: this.snapshotFrames };
    this.snapshotting = checkpointSnapshot(io, crc, dir, capture, this.journal.firstSeq, options).then((outcome) => {
      // After a failure, retry only once the current journal alone passes the trigger.
      if (outcome.kind !== 'abandoned') this.snapshotFailed = outcome.kind === 'failed';
      if (outcome.kind === 'written') {
        this.olderJournalBytes = 0;
        this.snapshotBytes = outcome.bytes;
        this.snapshotFrames = outcome.frames;
      }
      this.snapshotting = undefined;
      // Commits made while it was written may have passed the trigger again: checked only when a
      // group is written, it would otherwise wait for the next commit, which may never come.
      this.checkpointIfDue();
    });
  }

  /** Resolves once every batch committed so far is answered and no task is left. */
  private settled(): Promise<void> {
    return new Promise((resolve) => {
      this.idleWaiters.push(resolve);
      this.pump();
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
    await this.settled();
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
  /**
   * Journal bytes since the last snapshot that trigger the next one and a new journal, at the least;
   * a store whose snapshot is over 4 times this waits for a quarter of the snapshot's size. Default 64 MiB.
   */
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
/** The journals that trigger a snapshot may hold up to this share of the last snapshot's bytes. */
const SNAPSHOT_GROWTH = 0.25;

/** Journal bytes since the last snapshot that start the next one (the header above). */
export function snapshotTrigger(thresholdBytes: number, snapshotBytes: number): number {
  return Math.max(thresholdBytes, Math.floor(snapshotBytes * SNAPSHOT_GROWTH));
}

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
