// Waiting on a store for a state to arrive, instead of sleeping: resolves on the commit that makes
// `check` true (or at once when it already is).
import type { Store, StoredRecord } from '../../lib/store/types.js';

/** Resolves with the record once `check` holds for it. */
export function recordWhere(store: Store, collection: string, id: string, check: (record: StoredRecord) => boolean): Promise<StoredRecord> {
  return new Promise((resolve) => {
    const current = store.get(collection, id);
    if (current !== undefined && check(current)) {
      resolve(current);
      return;
    }
    const stop = store.watch(() => {
      const record = store.get(collection, id);
      if (record === undefined || !check(record)) return;
      stop();
      resolve(record);
    });
  });
}
