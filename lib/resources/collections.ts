// A collection: GET answers one page of the envelope, never a bare array (CONVENTIONS.md#collection-envelope),
// through the one paging flow, and POST creates an item with a server-chosen id, deduplicated by
// Idempotency-Key (CONVENTIONS.md#post-creates, #idempotency-keys), its preconditions holding at
// commit time (CONVENTIONS.md#post-preconditions).
import { fieldLines } from '../http/field-lines.js';
import { compareAndSwap, type CasStep } from '../compare-and-swap.js';
import { evaluatePreconditions, readPreconditionFields, type PreconditionFields } from '../protocol/conditional.js';
import { parseIdempotencyKey } from '../protocol/idempotency-key.js';
import { problem } from '../protocol/problem.js';
import { problemReply, type Reply } from '../http/respond.js';
import { newId } from '../ids.js';
import type { JsonObject } from '../json.js';
import type { CollectionUnchanged, Mutation, StoredRecord } from '../store/types.js';
import type { Representation } from '../protocol/representation.js';
import { IDEMPOTENCY_SPACE, type RememberedOutcome } from '../writes/writer.js';
import type { App, RequestContext } from './context.js';
import { itemPath, link, readJsonObject, unavailableReply, verdictProblem, type JsonBody } from './common.js';
import { collectionWalk, type CollectionQuerying } from './collection-walk.js';
import { fingerprintOf, fingerprintOfRecord, isStorable, outcomeOf, recordId, replayOf } from './idempotency.js';
import { itemWriteReply, representedReply } from './replies.js';
import { pagedReply, pageValidators, type Paging } from './paging.js';

/** What a POST needs: the page its preconditions compare, their turns, the write path, the keys in flight. */
type Posting = Paging & CollectionQuerying & Pick<App, 'writer' | 'random' | 'log' | 'keysInFlight' | 'postTurns'>;

export function getCollection(app: Paging & CollectionQuerying, rq: RequestContext): Reply | Promise<Reply> {
  return pagedReply(app, rq, collectionWalk(app, rq.params.get('collection')));
}

export async function postToCollection(app: Posting, rq: RequestContext): Promise<Reply> {
  const collection = rq.params.get('collection');
  const key = parseIdempotencyKey(fieldLines(rq.req, 'idempotency-key'));
  if (key.kind === 'invalid') {
    const errors = [{ header: 'Idempotency-Key', detail: key.detail }];
    return problemReply(problem('invalid-header', key.detail, { errors }));
  }
  if (key.kind === 'absent') return create(app, rq, collection, undefined);
  const id = recordId(rq.principal, key.key);
  const answer = await app.keysInFlight.hold(id, () => create(app, rq, collection, id));
  if (answer !== undefined) return answer;
  const detail = 'The first request with this Idempotency-Key has not finished yet; retry after it has.';
  return problemReply(problem('idempotency-key-in-flight', detail), { 'Retry-After': '1' });
}

async function create(
  app: Posting,
  rq: RequestContext,
  collection: string,
  keyId: string | undefined,
): Promise<Reply> {
  const body = await readJsonObject(rq.req, app.config.maxBodyBytes);
  if (!body.ok && !body.deterministic) return body.reply;
  const target = rq.path + (rq.query === '' ? '' : `?${rq.query}`);
  const fingerprint = keyId === undefined ? undefined : fingerprintOf(rq.req, target, body.bytes);
  const remember = (reply: Reply): RememberedOutcome | undefined =>
    keyId === undefined || fingerprint === undefined || !isStorable(reply.status)
      ? undefined
      : outcomeOf(keyId, fingerprint, reply);
  if (keyId !== undefined) {
    // A repeat of a request that already succeeded is answered as it was, before its preconditions,
    // which the first request's own write may have changed.
    const stored = app.store.get(IDEMPOTENCY_SPACE, keyId);
    if (stored !== undefined) {
      if (fingerprintOfRecord(stored) === fingerprint) return replayOf(stored);
      const detail =
        'This Idempotency-Key was already used for a different request (method, path or body differ). ' +
        'Use a new key for a new request.';
      return problemReply(problem('idempotency-key-reused', detail));
    }
  }
  const creation: Creation = { collection, body, remember };
  const fields = readPreconditionFields(rq.req.rawHeaders);
  if (fields.ifMatch === undefined && fields.ifNoneMatch === undefined && fields.ifUnmodifiedSince === undefined) {
    const created = await insert(app, rq, creation, undefined);
    // Without `unchanged` the store has no collection expectation to find broken.
    if (created === CHANGED) throw new TypeError('insert: CHANGED without a collection expectation');
    return created;
  }
  // CONVENTIONS.md#post-preconditions: the preconditions hold at commit time. Conditional POSTs to one
  // collection take turns (an unconditional one never waits), and each write carries the collection's
  // version as its check read it; a write that landed in between (a PUT, a DELETE, a POST without
  // preconditions) makes the commit fail, and the check is made again against what the store now
  // holds, under the one bounded retry rule (CONVENTIONS.md#precondition-order).
  return app.postTurns.run(collection, () =>
    compareAndSwap(
      app,
      async (): Promise<CasStep<Reply>> => {
        const unchanged = { collection, version: app.store.collectionVersion(collection) };
        const failed = await postPreconditionProblem(app, fields, collection);
        if (failed !== undefined) return { done: failed };
        const created = await insert(app, rq, creation, unchanged);
        return created === CHANGED ? { conflict: true } : { done: created };
      },
      () => unavailableReply(app, rq, `POST ${collection}: the collection kept changing under its preconditions`),
    ));
}

/** What an insert needs from the request: its collection, its parsed body, how to keep a refusal. */
interface Creation {
  readonly collection: string;
  readonly body: JsonBody;
  readonly remember: (reply: Reply) => RememberedOutcome | undefined;
}

/** The answer of a conditional insert whose collection changed after its preconditions were checked. */
const CHANGED = Symbol('collection changed');

/**
 * Refuses the body's problems, or writes the new item under a fresh id, committed only while the
 * collection is `unchanged` (when given): CHANGED when it was not.
 */
async function insert(
  app: Posting,
  rq: RequestContext,
  creation: Creation,
  unchanged: CollectionUnchanged | undefined,
): Promise<Reply | typeof CHANGED> {
  const { collection, body, remember } = creation;
  if (!body.ok) return refuse(app, body.reply, remember(body.reply));
  const refused = newItemProblem(body.doc);
  if (refused !== undefined) return refuse(app, refused, remember(refused));
  const id = newId(app.clock.now(), (size) => app.random.bytes(size));
  const doc: JsonObject = { id, ...body.doc };
  // Every header of the reply is known before the commit but Last-Modified, which a replay takes from
  // the record's own commit time (the same batch); the writer hands over the representation it made.
  const location = link(app, itemPath(collection, id));
  const outcome = (representations: readonly (Representation | undefined)[]): RememberedOutcome | undefined => {
    const representation = representations[0] as Representation;
    return remember(representedReply(app, 201, representation, undefined, location, location));
  };
  const put: Mutation = { kind: 'put', collection, id, doc, expect: { absent: true } };
  const options = unchanged === undefined ? { remember: outcome } : { remember: outcome, unchanged };
  const result = await app.writer.write([put], options);
  if (result.ok) return itemWriteReply(app, 201, result.records[0] as StoredRecord);
  if (result.reason === 'invalid') {
    const reply = problemReply(result.problem);
    return refuse(app, reply, remember(reply));
  }
  if (result.reason === 'conflict' && result.index === -1) return CHANGED;
  // A conflict here means the fresh id already exists: 80 random bits make that a broken random source.
  return unavailableReply(app, rq, result.reason === 'unavailable' ? result.detail : `POST id ${id} collided`);
}

/**
 * RFC 9110 §13.1.1-2: a POST's preconditions are about its target, the collection, whose selected
 * representation is what a plain GET of it answers (CONVENTIONS.md#post-preconditions): the paging
 * flow's first page as JSON. Only computed when the request carries a precondition.
 */
async function postPreconditionProblem(
  app: Paging & CollectionQuerying,
  fields: PreconditionFields,
  collection: string,
): Promise<Reply | undefined> {
  const validators = await pageValidators(app, collectionWalk(app, collection));
  const verdict = evaluatePreconditions('POST', fields, validators, { now: app.clock.now() });
  if (verdict.kind === 'malformed' || verdict.kind === 'failed') return problemReply(verdictProblem(verdict));
  return undefined;
}

/** A refused POST; with a key, its deterministic outcome is kept so a repeat gets the same answer. */
async function refuse(app: Pick<App, 'writer'>, reply: Reply, outcome: RememberedOutcome | undefined): Promise<Reply> {
  if (outcome !== undefined) await app.writer.remember(outcome);
  return reply;
}

function newItemProblem(body: JsonObject): Reply | undefined {
  if (!Object.hasOwn(body, 'id')) return undefined;
  const detail = 'POST chooses the id; leave "id" out, or PUT to the id you want with If-None-Match: *.';
  return problemReply(problem('invalid-body', detail, { errors: [{ pointer: '/id', detail: 'not allowed on POST' }] }));
}
