// The in-memory Store (`--memory`, and the embedded default for tests): the same StoreState as the
// file store, no files. Commits are applied in call order; `commit` resolves on the next microtask so
// callers never depend on it being synchronous.
import type { Batch, CommitListener, CommitResult, Store, StoreHealth, StoredRecord, Tombstone, ScanOptions } from './types.js';
import { StoreState } from './state.js';

export interface MemoryStoreOptions {
  readonly now?: () => number;
}

export class MemoryStore implements Store {
  readonly durable = false;
  private readonly state: StoreState;
  private readonly now: () => number;
  private readonly listeners = new Set<CommitListener>();
  private closed = false;

  constructor(options: MemoryStoreOptions = {}) {
    this.now = options.now ?? Date.now;
    this.state = new StoreState(this.now);
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

  lastModified(collection: string): number | undefined {
    return this.state.lastModified(collection);
  }

  async commit(batch: Batch): Promise<CommitResult> {
    if (this.closed) return { ok: false, reason: 'unavailable', detail: 'store is closed' };
    const verdict = this.state.check(batch);
    if (!verdict.ok) {
      return verdict.current === undefined
        ? { ok: false, reason: 'conflict', index: verdict.index }
        : { ok: false, reason: 'conflict', index: verdict.index, current: verdict.current };
    }
    const commit = this.state.apply(batch, this.state.seq + 1, this.now());
    for (const listener of this.listeners) listener(commit);
    return { ok: true, commit };
  }

  watch(listener: CommitListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  health(): StoreHealth {
    return this.closed ? { writable: false, detail: 'store is closed' } : { writable: true };
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}
