// Waiting on a store for a state to arrive, instead of sleeping: resolves on the commit that makes
// `check` true (or at once when it already is); and a record as the plain fields a reader sees.
import type { Store, StoredRecord } from '../../lib/store/types.js';

/**
 * What a caller reads from a record, as a plain object (optional fields only when set): a record's
 * `doc` is an accessor (parsed on first read), which a deep-equal of the record itself would skip.
 */
export function readable(record: StoredRecord | undefined): object | undefined {
  if (record === undefined) return undefined;
  const { collection, id, version, modifiedAt, doc, expiresAt, dueAt } = record;
  return { collection, id, version, modifiedAt, doc, ...(expiresAt === undefined ? {} : { expiresAt }), ...(dueAt === undefined ? {} : { dueAt }) };
}

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
