// The in-memory Store (`--memory`, and the embedded default for tests): the same StoreState and the
// same commit step as the file store (commit-step.ts), no files. Commits are applied in call order, in
// groups as the file store's are: the commits of one turn of the event loop are checked, applied and
// answered together once the turn's I/O callbacks have run (setImmediate). A group shares the work
// that follows a commit (a job runner's look, the outcomes of the jobs it starts, written together),
// which one commit at a time made --memory slower than the file store for webhook accepts.
import { systemClock, type Clock } from '../clock.js';
import { silentLogger, type Logger } from '../log.js';
import { assertBatch, conflictResult, unavailable, Watchers } from './commit-step.js';
import { MemorySideLogs } from './side-log.js';
import { StoreState } from './state.js';
import type {
  Batch,
  CommitListener,
  CommitResult,
  ScanOptions,
  SideLogResult,
  Store,
  StoreHealth,
  StoredRecord,
  Tombstone,
} from './types.js';
import type { JsonObject } from '../json.js';

export interface MemoryStoreOptions {
  readonly clock?: Clock;
  readonly log?: Logger;
}

export class MemoryStore implements Store {
  readonly durable = false;
  private readonly state: StoreState;
  private readonly clock: Clock;
  private readonly watchers: Watchers;
  private readonly sideLogs = new MemorySideLogs();
  /** Commits of this turn, applied together when it ends. */
  private queue: Waiting[] = [];
  private closed = false;

  constructor(options: MemoryStoreOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.state = new StoreState(() => this.clock.now());
    this.watchers = new Watchers(options.log ?? silentLogger);
  }

  get(collection: string, id: string): StoredRecord | undefined {
    return this.state.get(collection, id);
  }

  getTombstone(collection: string, id: string): Tombstone | undefined {
    return this.state.getTombstone(collection, id);
  }

  scan(collection: string, options?: ScanOptions): StoredRecord[] {
    return this.state.scan(collection, options);
  }

  count(collection: string): number {
    return this.state.count(collection);
  }

  collections(): string[] {
    return this.state.collections();
  }

  due(collection: string, now: number, limit: number): StoredRecord[] {
    return this.state.due(collection, now, limit);
  }

  nextDue(collection: string): number | undefined {
    return this.state.nextDue(collection);
  }

  lastModified(collection: string): number | undefined {
    return this.state.lastModified(collection);
  }

  collectionVersion(collection: string): number {
    return this.state.collectionVersion(collection);
  }

  keepDocumentsAsText(): void {
    this.state.keepDocumentsAsText();
  }

  commit(batch: Batch): Promise<CommitResult> {
    assertBatch(batch);
    if (this.closed) return Promise.resolve(unavailable('store is closed'));
    return new Promise((resolve) => {
      if (this.queue.length === 0) setImmediate(() => this.flush());
      this.queue.push({ batch, resolve });
    });
  }

  async diskBytes(): Promise<number> {
    return 0;
  }

  watch(listener: CommitListener): () => void {
    return this.watchers.add(listener);
  }

  appendSideLog(name: string, entry: JsonObject): Promise<SideLogResult> {
    return this.sideLogs.append(name, entry);
  }

  readSideLog(name: string): Promise<JsonObject[]> {
    return this.sideLogs.read(name);
  }

  health(): Promise<StoreHealth> {
    return Promise.resolve(this.closed ? { writable: false, detail: 'store is closed' } : { writable: true });
  }

  async close(): Promise<void> {
    this.flush();
    this.closed = true;
  }

  /** Checks, applies and answers the queued commits in call order: each sees the ones before it. */
  private flush(): void {
    const queue = this.queue;
    this.queue = [];
    for (const { batch, resolve } of queue) {
      const verdict = this.state.check(batch);
      if (!verdict.ok) {
        resolve(conflictResult(verdict));
        continue;
      }
      const commit = this.state.apply(batch, this.state.seq + 1, this.clock.now());
      this.watchers.notify(commit);
      resolve({ ok: true, commit });
    }
  }
}

interface Waiting {
  readonly batch: Batch;
  readonly resolve: (result: CommitResult) => void;
}
