// The parts of a commit that both stores share, so they cannot disagree (CONVENTIONS.md#durability; the
// conformance suite in test/store/conformance.ts runs against both): the shape check that refuses a
// malformed batch as a programmer error, the conflict answer of a failed expectation, and the
// notification of watchers, which can never fail or undo a commit that is already applied.
import type { Logger } from '../log.js';
import { batchProblem } from './codec.js';
import type { Verdict } from './state.js';
import type { Batch, Commit, CommitListener, CommitResult } from './types.js';
import { describeError } from './fs-io.js';

/** Throws TypeError for a batch the journal could not replay, or a malformed `unchanged` (a programmer error). */
export function assertBatch(batch: Batch): void {
  const problem = batchProblem(batch);
  if (problem !== undefined) throw new TypeError(`commit: ${problem}`);
  const unchanged = batch.unchanged;
  if (unchanged === undefined) return;
  if (typeof unchanged.collection !== 'string' || !Number.isSafeInteger(unchanged.version)) {
    throw new TypeError('commit: batch.unchanged needs a collection name and the integer Store.collectionVersion gave');
  }
}

export function conflictResult(verdict: Verdict & { readonly ok: false }): CommitResult {
  return verdict.current === undefined
    ? { ok: false, reason: 'conflict', index: verdict.index }
    : { ok: false, reason: 'conflict', index: verdict.index, current: verdict.current };
}

export function unavailable(detail: string): CommitResult {
  return { ok: false, reason: 'unavailable', detail };
}

/** The change feed: listeners called after each applied commit, in commit order. */
export class Watchers {
  private readonly listeners = new Set<CommitListener>();

  constructor(private readonly log: Logger) {}

  add(listener: CommitListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The commit is applied and answered whatever a listener does: a throw is logged, not passed on. */
  notify(commit: Commit): void {
    for (const listener of this.listeners) {
      try {
        listener(commit);
      } catch (error) {
        this.log('error', 'a store watcher threw', { seq: commit.seq, error: describeError(error) });
      }
    }
  }
}
