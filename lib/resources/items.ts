// One resource: GET/HEAD (seed, Endpoints row 2), PUT create and replace (rows 3-4), DELETE (row 5)
// and the undo of a delete (row 8), with the conditional-request rules of RFC 9110 §13 and CONTRACT §4.
//
// Preconditions are evaluated before the body is read (CONTRACT §4: "a stale If-Match with malformed
// JSON is 412, not 400"), and the write then carries the version it was evaluated against, so a
// concurrent write between evaluation and commit is detected by the store and the evaluation repeats.
import { evaluatePreconditions, hasEntityTagPrecondition, type Validators } from '../protocol/conditional.js';
import { problem, type Problem } from '../protocol/problem.js';
import { problemReply, type Reply } from '../http/respond.js';
import { readCacheControl } from '../http/cache-policy.js';
import type { JsonObject } from '../json.js';
import type { Mutation, StoredRecord } from '../store/types.js';
import type { App, RequestContext } from './context.js';
import { itemPath, link, preconditionFields, readJsonObject, unavailableReply, verdictProblem } from './common.js';
import { itemReadReply, storedReply } from './replies.js';

/** How often a write re-evaluates its preconditions after losing a race before giving up with 503. */
const MAX_WRITE_ATTEMPTS = 5;
const DAY_MS = 86_400_000;

export function getItem(app: App, rq: RequestContext): Reply {
  const collection = rq.params.get('collection');
  const id = rq.params.get('id');
  const record = app.store.get(collection, id);
  // RFC 9110 §13.2.1: preconditions are ignored when the answer without them would not be 2xx or 412.
  if (record === undefined) return problemReply(problem('not-found', `There is no resource at ${itemPath(collection, id)}.`));
  return itemReadReply(app, rq, record, { path: itemPath(collection, id), listPath: `/${collection}`, cacheControl: readCacheControl(app.policy, collection) });
}

export function putItem(app: App, rq: RequestContext): Promise<Reply> {
  const collection = rq.params.get('collection');
  const id = rq.params.get('id');
  return conditionalPut(app, rq, {
    collection,
    id,
    document: (body) => itemDocument(id, body),
    reply: (status, record) => writeReply(app, status, record),
  });
}

export type PutDocument = { ok: true; doc: JsonObject; extra?: readonly Mutation[] } | { ok: false; problem: Problem };

/** What a conditional PUT stores and how it answers: an item, a query resource, a subscription. */
export interface PutTarget {
  readonly collection: string;
  readonly id: string;
  /**
   * The document to store for a parsed body, and any record written with it (a subscription's
   * secret), or a problem; the write path validates the rest.
   */
  readonly document: (body: JsonObject) => PutDocument | Promise<PutDocument>;
  readonly reply: (status: 200 | 201, record: StoredRecord) => Reply;
}

/**
 * PUT with the preconditions of RFC 9110 §13 and RFC 6585 §3 (CONTRACT §4: "The 428 rule covers every
 * PUT that stores a resource"). The validators are those of the stored document's JSON.
 */
export async function conditionalPut(app: App, rq: RequestContext, target: PutTarget): Promise<Reply> {
  const fields = preconditionFields(rq.req);
  if (!hasEntityTagPrecondition(fields) && !app.config.allowUnconditionalPut) {
    // RFC 6585 §3: this server requires conditional writes, so a lost update cannot happen silently.
    return problemReply(
      problem(
        'precondition-required',
        'This PUT must be conditional: send If-None-Match: * to create the resource, or If-Match: "<etag>" (from a GET) to replace it.',
        { errors: [{ header: 'If-Match', detail: 'required to replace' }, { header: 'If-None-Match', detail: 'send * to create' }] },
      ),
    );
  }
  const { collection, id } = target;
  let doc: JsonObject | undefined;
  let extra: readonly Mutation[] = [];
  for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
    const current = app.store.get(collection, id);
    const verdict = evaluatePreconditions('PUT', fields, validatorsOf(app, current), { now: app.clock.now() });
    if (verdict.kind === 'malformed') return problemReply(verdictProblem(verdict));
    if (verdict.kind === 'failed') return problemReply(putPreconditionFailed(verdict.field, current));
    if (doc === undefined) {
      const body = await readJsonObject(rq.req, app.config.maxBodyBytes);
      if (!body.ok) return body.reply;
      const made = await target.document(body.doc);
      if (!made.ok) return problemReply(made.problem);
      doc = made.doc;
      extra = made.extra ?? [];
      continue; // the body took time to arrive: evaluate against the state as it is now
    }
    const result = await app.writer.write([{ kind: 'put', collection, id, doc, expect: current === undefined ? { absent: true } : { version: current.version } }, ...extra]);
    if (result.ok) return target.reply(current === undefined ? 201 : 200, result.records[0] as StoredRecord);
    if (result.reason === 'invalid') return problemReply(result.problem);
    if (result.reason === 'unavailable') return unavailableReply(app, rq, result.detail);
  }
  return unavailableReply(app, rq, 'PUT lost the race against concurrent writes too many times');
}

export function deleteItem(app: App, rq: RequestContext): Promise<Reply> {
  const retainUntil = app.clock.now() + app.config.tombstoneDays * DAY_MS;
  return conditionalDelete(app, rq, rq.params.get('collection'), rq.params.get('id'), retainUntil);
}

/** DELETE with If-Match (RFC 9110 §13.1.1); a tombstone is kept until `retainUntil` when given; `extra` goes with it. */
export async function conditionalDelete(
  app: App,
  rq: RequestContext,
  collection: string,
  id: string,
  retainUntil: number | undefined,
  extra: readonly Mutation[] = [],
): Promise<Reply> {
  const fields = preconditionFields(rq.req);
  for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
    const current = app.store.get(collection, id);
    const verdict = evaluatePreconditions('DELETE', fields, validatorsOf(app, current), { now: app.clock.now() });
    if (verdict.kind === 'malformed' || verdict.kind === 'failed') return problemReply(verdictProblem(verdict));
    // Seed row 5: DELETE is idempotent, so deleting what is not there is the same success.
    if (current === undefined) return { status: 204, headers: {} };
    const expect = { version: current.version };
    const result = await app.writer.write([
      retainUntil === undefined ? { kind: 'delete', collection, id, expect } : { kind: 'delete', collection, id, expect, retainUntil },
      ...extra,
    ]);
    if (result.ok) return { status: 204, headers: {} };
    if (result.reason === 'unavailable') return unavailableReply(app, rq, result.detail);
  }
  return unavailableReply(app, rq, 'DELETE lost the race against concurrent writes too many times');
}

/**
 * PUT /{c}/{id}/$undoDelete (seed row 8, CONTRACT §4): 200 with the restored representation; 404 with
 * no tombstone; 409 when something else recreated the resource; a repeat of an undo that already
 * restored it (and nothing changed since) → 200 again, so the undo is itself safe to retry.
 */
export async function undoDelete(app: App, rq: RequestContext): Promise<Reply> {
  const collection = rq.params.get('collection');
  const id = rq.params.get('id');
  for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
    const tombstone = app.store.getTombstone(collection, id);
    if (tombstone === undefined) {
      return problemReply(problem('not-found', `${itemPath(collection, id)} has no deleted version to restore (deleted resources are kept for ${app.config.tombstoneDays} days).`));
    }
    const current = app.store.get(collection, id);
    if (current !== undefined) {
      if (tombstone.restoredVersion === current.version) return writeReply(app, 200, current);
      return problemReply(problem('conflict', `${itemPath(collection, id)} exists again: it was recreated after the delete, so the undo would overwrite it.`));
    }
    const result = await app.writer.write([{ kind: 'restore', collection, id }]);
    if (result.ok) return writeReply(app, 200, result.records[0] as StoredRecord);
    if (result.reason === 'unavailable') return unavailableReply(app, rq, result.detail);
    // Lost a race: someone recreated or restored it in between; answer from the new state.
  }
  return unavailableReply(app, rq, 'undo lost the race against concurrent writes too many times');
}

export function validatorsOf(app: App, record: StoredRecord | undefined): Validators | undefined {
  if (record === undefined) return undefined;
  return { etag: app.representations.itemJson(record).etag, lastModified: record.modifiedAt };
}

/** Response to a successful write of an item: its representation, at its own URL. */
export function writeReply(app: App, status: 200 | 201, record: StoredRecord): Reply {
  const location = link(app, itemPath(record.collection, record.id));
  return storedReply(app, status, record, location, location);
}

/** The stored object always carries "id" equal to the path id (CONTRACT §3): a body without one gets it. */
function itemDocument(id: string, body: JsonObject): { ok: true; doc: JsonObject } {
  return { ok: true, doc: Object.hasOwn(body, 'id') ? body : { id, ...body } };
}

function putPreconditionFailed(field: string, current: StoredRecord | undefined): Problem {
  if (field === 'If-None-Match' && current !== undefined) {
    return problem('precondition-failed', 'The resource already exists, so If-None-Match: * fails. GET it, merge, and replace it with If-Match.');
  }
  if (field === 'If-Match' && current === undefined) {
    return problem('precondition-failed', 'The resource does not exist, so If-Match fails. Create it with If-None-Match: *.');
  }
  return problem('precondition-failed', `The ${field} precondition is not met: the resource changed. GET it again, merge, and retry with its current ETag.`);
}
