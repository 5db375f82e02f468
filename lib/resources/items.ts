// One item (CONVENTIONS.md#conditional-reads, #conditional-create, #conditional-replace,
// #delete-and-tombstones, #undo-delete): GET/HEAD, PUT create and replace, DELETE, and the undo of a
// delete. The conditional writes themselves are lib/resources/conditional-writes.ts, shared with every
// other resource a PUT stores.
import { compareAndSwap, type CasStep } from '../compare-and-swap.js';
import { problem } from '../protocol/problem.js';
import { problemReply, type Reply } from '../http/respond.js';
import { readCacheControl } from '../http/cache-policy.js';
import type { JsonObject } from '../json.js';
import type { StoredRecord } from '../store/types.js';
import type { App, RequestContext } from './context.js';
import { itemPath, unavailableReply } from './common.js';
import {
  conditionalDelete, conditionalPut, type ConditionalWriting, type PutDocument, type PutTarget,
} from './conditional-writes.js';
import { HTML_TYPE } from '../html/views.js';
import { itemJsonReply, itemReadReply, itemWriteReply as writeReply, type ItemReading } from './replies.js';

const DAY_MS = 86_400_000;

/** What writing an item and answering with it needs. */
type ItemWriting = ConditionalWriting & Pick<App, 'policy' | 'baseUrl'>;

export function getItem(app: ItemReading & Pick<App, 'store'>, rq: RequestContext): Reply {
  const collection = rq.params.get('collection');
  const id = rq.params.get('id');
  const record = app.store.get(collection, id);
  // RFC 9110 §13.2.1: preconditions are ignored when the answer without them would not be 2xx or 412.
  if (record === undefined) {
    return problemReply(problem('not-found', `There is no resource at ${itemPath(collection, id)}.`));
  }
  const cacheControl = readCacheControl(app.policy, collection);
  // The JSON needs none of the paths an HTML page shows.
  if (rq.media !== HTML_TYPE) return itemJsonReply(app, rq, record, cacheControl);
  return itemReadReply(app, rq, record, { path: itemPath(collection, id), listPath: `/${collection}`, cacheControl });
}

export function putItem(app: ItemWriting, rq: RequestContext): Promise<Reply> {
  return conditionalPut(app, rq, new ItemTarget(app, rq.params.get('collection'), rq.params.get('id')));
}

/** What a PUT of an item stores and answers: one object per PUT, its two steps methods, not closures. */
class ItemTarget implements PutTarget {
  constructor(
    private readonly app: ItemWriting,
    readonly collection: string,
    readonly id: string,
  ) {}

  document(body: JsonObject): PutDocument {
    return itemDocument(this.id, body);
  }

  reply(status: 200 | 201, record: StoredRecord): Reply {
    return writeReply(this.app, status, record);
  }
}

export function deleteItem(app: ConditionalWriting, rq: RequestContext): Promise<Reply> {
  const retainUntil = app.clock.now() + app.config.tombstoneDays * DAY_MS;
  return conditionalDelete(app, rq, rq.params.get('collection'), rq.params.get('id'), retainUntil);
}

/**
 * PUT /{c}/{id}/$undoDelete (CONVENTIONS.md#undo-delete): 200 with the restored representation; 404
 * with no tombstone; 409 when something else recreated the resource; a repeat of an undo that already
 * restored it (and nothing changed since) → 200 again, so the undo is itself safe to retry.
 */
export function undoDelete(app: ItemWriting, rq: RequestContext): Promise<Reply> {
  const collection = rq.params.get('collection');
  const id = rq.params.get('id');
  return compareAndSwap(
    app,
    async (): Promise<CasStep<Reply>> => {
      const tombstone = app.store.getTombstone(collection, id);
      if (tombstone === undefined) {
        const detail =
          `${itemPath(collection, id)} has no deleted version to restore ` +
          `(deleted resources are kept for ${app.config.tombstoneDays} days).`;
        return { done: problemReply(problem('not-found', detail)) };
      }
      const current = app.store.get(collection, id);
      if (current !== undefined) {
        if (tombstone.restoredVersion === current.version) return { done: writeReply(app, 200, current) };
        const detail =
          `${itemPath(collection, id)} exists again: ` +
          'it was recreated after the delete, so the undo would overwrite it.';
        return { done: problemReply(problem('conflict', detail)) };
      }
      const result = await app.writer.write([{ kind: 'restore', collection, id }]);
      if (result.ok) return { done: writeReply(app, 200, result.records[0] as StoredRecord) };
      if (result.reason === 'unavailable') return { done: unavailableReply(app, rq, result.detail) };
      // Lost a race: someone recreated or restored it in between; answer from the new state.
      return { conflict: true };
    },
    () => unavailableReply(app, rq, 'undo lost the race against concurrent writes too many times'),
  );
}

/** The stored object always carries "id" equal to the path id (CONVENTIONS.md#items): a body without one gets it. */
function itemDocument(id: string, body: JsonObject): { ok: true; doc: JsonObject } {
  return { ok: true, doc: Object.hasOwn(body, 'id') ? body : { id, ...body } };
}
