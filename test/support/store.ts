// Waiting on a store for a state to arrive, instead of sleeping: resolves on the commit that makes
// `check` true (or at once when it already is), within a deadline; and a record as the plain fields
// a reader sees.
import type { Store, StoredRecord } from '../../lib/store/types.js';
import { DEFAULT_DEADLINE_MS } from './eventually.js';

/**
 * What a caller reads from a record, as a plain object (optional fields only when set): a record's
 * `doc` is an accessor (parsed on first read), which a deep-equal of the record itself would skip.
 */
export function readable(record: StoredRecord | undefined): object | undefined {
  if (record === undefined) return undefined;
  const { collection, id, version, modifiedAt, doc, expiresAt, dueAt } = record;
  return { collection, id, version, modifiedAt, doc, ...(expiresAt === undefined ? {} : { expiresAt }), ...(dueAt === undefined ? {} : { dueAt }) };
}

/**
 * Resolves with the record once `check` holds for it. Fails after `deadlineMs` (real time, whatever
 * clock the store reads) naming the record and showing it as last seen.
 */
export function recordWhere(
  store: Store,
  collection: string,
  id: string,
  check: (record: StoredRecord) => boolean,
  deadlineMs = DEFAULT_DEADLINE_MS,
): Promise<StoredRecord> {
  return new Promise((resolve, reject) => {
    const current = store.get(collection, id);
    if (current !== undefined && check(current)) {
      resolve(current);
      return;
    }
    const timer = setTimeout(() => {
      stop();
      const seen = JSON.stringify(readable(store.get(collection, id)));
      const what = `${collection}/${id} to reach the awaited state`;
      reject(new Error(`timed out after ${deadlineMs} ms waiting for ${what}; last seen: ${seen}`));
    }, deadlineMs);
    const stop = store.watch(() => {
      const record = store.get(collection, id);
      if (record === undefined || !check(record)) return;
      stop();
      clearTimeout(timer);
      resolve(record);
    });
  });
}
