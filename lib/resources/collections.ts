// A collection: GET answers one page of the envelope (seed, "Collection envelope": never a bare
// array; "Filtering and paging on GET /{collection}") and POST creates an item with a server-chosen
// id, deduplicated by Idempotency-Key (seed row 6, CONTRACT §6).
import { collectionConfig } from '../config.js';
import { fieldLines } from '../http/fields.js';
import { evaluatePreconditions, type Validators } from '../protocol/conditional.js';
import { parseIdempotencyKey } from '../protocol/idempotency-key.js';
import { parsePrefer } from '../protocol/prefer.js';
import { problem } from '../protocol/problem.js';
import { JSON_TYPE, problemReply, type Reply } from '../http/respond.js';
import { newId } from '../ids.js';
import type { JsonObject } from '../json.js';
import { parseQueryString, type CollectionQuery } from '../query/options.js';
import { planQuery, type PlanContext } from '../query/plan.js';
import { verifyToken } from '../query/token.js';
import type { StoredRecord } from '../store/types.js';
import { IDEMPOTENCY_SPACE, type RememberedOutcome } from '../writes/writer.js';
import type { App, RequestContext } from './context.js';
import { itemPath, link, preconditionFields, readJsonObject, unavailableReply, verdictProblem } from './common.js';
import { fingerprintOf, fingerprintOfRecord, isStorable, outcomeOf, recordId, replayOf } from './idempotency.js';
import { writeReply } from './items.js';
import { buildPage, invalidTokenProblem, linkProblem, pageAnswer, pageReply } from './pages.js';

export async function getCollection(app: App, rq: RequestContext): Promise<Reply> {
  const collection = rq.params.get('collection');
  const size = pageSizeOf(app, rq);
  const path = `/${collection}`;
  // The page cache first: an identical request since the collection last changed was valid, and its page is built.
  const firstPageKey = `${rq.media}\n${size.pageSize}\n${rq.query}`;
  const cached = app.pages.get(collection, firstPageKey);
  if (cached !== undefined) return pageAnswer(app, rq, { collection, ...applied(size.preference, size.pageSize) }, cached);
  const parsed = parseQueryString(rq.query);
  if (!parsed.ok) return problemReply(parsed.problem);
  if (parsed.skiptoken !== undefined) {
    // CONTRACT §5: the token carries the whole query and the page size, so later pages keep them.
    const position = verifyToken(app.pagingKey, parsed.skiptoken, collection);
    if (position?.query === undefined) return problemReply(invalidTokenProblem());
    // A query the server signed was valid when the walk began; it is never checked again, so a
    // property that no item has any more cannot end a walk halfway (CONTRACT §5).
    const planned = planQuery(position.query, { ...planContext(app, collection), known: () => true });
    if (!planned.ok) return problemReply(planned.problem);
    const start = { scope: collection, query: position.query, pageSize: position.pageSize };
    // A later page's size is the token's, whatever Prefer says: the token alone names it.
    const cacheKey = `${rq.media}\n${rq.query}`;
    return pageReply(app, rq, { collection, plan: planned.plan, path, itemLink: itemLinkOf(app, collection), start, after: position.after, returned: position.returned, cacheKey, ...applied(size.preference, position.pageSize) });
  }
  const query = withSummary(app, collection, parsed.query);
  const planned = planQuery(query, planContext(app, collection));
  if (!planned.ok) return problemReply(planned.problem);
  const start = { scope: collection, query, pageSize: size.pageSize };
  const tooLong = linkProblem(app, path, start, query.orderby.length);
  if (tooLong !== undefined) return problemReply(tooLong);
  return pageReply(app, rq, { collection, plan: planned.plan, path, itemLink: itemLinkOf(app, collection), start, returned: 0, cacheKey: firstPageKey, ...applied(size.preference, size.pageSize) });
}

/**
 * Prefer: maxpagesize=N (RFC 7240; OData odata.maxpagesize), clamped to 1..pageSize.max; `preference`
 * is the token the client spelled it with, for Preference-Applied.
 */
export function pageSizeOf(app: App, rq: RequestContext): { pageSize: number; preference?: string } {
  const preferences = parsePrefer(fieldLines(rq.req, 'prefer'));
  const { default: fallback, max } = app.config.pageSize;
  if (preferences.maxPageSize === undefined) return { pageSize: fallback };
  return { pageSize: Math.min(Math.max(preferences.maxPageSize, 1), max), preference: preferences.maxPageSizeToken ?? 'maxpagesize' };
}

/**
 * RFC 7240 §3: Preference-Applied names the preference honoured and the value used. On a later page
 * the size comes from the token, so a client that sends its preference again learns the size in force.
 */
export function applied(preference: string | undefined, pageSize: number): { preferenceApplied?: string } {
  return preference === undefined ? {} : { preferenceApplied: `${preference}=${pageSize}` };
}

export function planContext(app: App, collection: string): PlanContext {
  // A configured summary names properties as a schema does, whether or not an item has them yet.
  const summary = collectionConfig(app.config, collection)?.summary;
  const known = summary === undefined ? (path: readonly string[]) => app.fields.has(collection, path) : (path: readonly string[]) => summary.includes(path.join('/')) || app.fields.has(collection, path);
  return { known, itemLink: itemLinkOf(app, collection) };
}

/**
 * CONTRACT §5: a collection configured with `summary` lists those fields plus `@id` unless the
 * request's `$select` asks otherwise (`$select=*` for whole items); seed, Collections rule 4:
 * "Summaries plus a select link to the detail are preferred over full records."
 */
export function withSummary(app: App, collection: string, query: CollectionQuery): CollectionQuery {
  const summary = collectionConfig(app.config, collection)?.summary;
  if (summary === undefined || query.select !== undefined || query.wholeItems === true) return query;
  return { ...query, select: summary.map((path) => path.split('/')) };
}

/** The link to an item of a user collection: a summary's `@id`, an HTML row's Select. */
export function itemLinkOf(app: App, collection: string): (id: string) => string {
  return (id) => link(app, itemPath(collection, id));
}

export async function postToCollection(app: App, rq: RequestContext): Promise<Reply> {
  const collection = rq.params.get('collection');
  const key = parseIdempotencyKey(fieldLines(rq.req, 'idempotency-key'));
  if (key.kind === 'invalid') {
    return problemReply(problem('invalid-header', key.detail, { errors: [{ header: 'Idempotency-Key', detail: key.detail }] }));
  }
  if (key.kind === 'absent') return create(app, rq, collection, undefined);
  const id = recordId(rq.principal, key.key);
  if (app.keysInFlight.has(id)) {
    return problemReply(problem('idempotency-key-in-flight', 'The first request with this Idempotency-Key has not finished yet; retry after it has.'), { 'Retry-After': '1' });
  }
  app.keysInFlight.add(id);
  try {
    return await create(app, rq, collection, id);
  } finally {
    app.keysInFlight.delete(id);
  }
}

async function create(app: App, rq: RequestContext, collection: string, keyId: string | undefined): Promise<Reply> {
  const body = await readJsonObject(rq.req, app.config.maxBodyBytes);
  if (!body.ok && !body.deterministic) return body.reply;
  const fingerprint = keyId === undefined ? undefined : fingerprintOf(rq.req, rq.path + (rq.query === '' ? '' : `?${rq.query}`), body.bytes);
  const remember = (reply: Reply): RememberedOutcome | undefined =>
    keyId === undefined || fingerprint === undefined || !isStorable(reply.status) ? undefined : outcomeOf(keyId, fingerprint, reply);
  if (keyId !== undefined) {
    // A repeat of a request that already succeeded is answered as it was, before its preconditions,
    // which the first request's own write may have changed.
    const stored = app.store.get(IDEMPOTENCY_SPACE, keyId);
    if (stored !== undefined) {
      if (fingerprintOfRecord(stored) === fingerprint) return replayOf(stored);
      return problemReply(problem('idempotency-key-reused', 'This Idempotency-Key was already used for a different request (method, path or body differ). Use a new key for a new request.'));
    }
  }
  const failed = await postPreconditionProblem(app, rq, collection);
  if (failed !== undefined) return failed;
  if (!body.ok) return refuse(app, body.reply, remember(body.reply));
  const refused = newItemProblem(body.doc);
  if (refused !== undefined) return refuse(app, refused, remember(refused));
  const id = newId(app.clock.now(), (size) => app.random.bytes(size));
  const doc: JsonObject = { id, ...body.doc };
  // Every header of the reply is known before the commit but Last-Modified, which a replay takes from
  // the record's own commit time (the same batch).
  const outcome = remember(writeReply(app, 201, { collection, id, version: 0, modifiedAt: 0, doc }));
  const result = await app.writer.write([{ kind: 'put', collection, id, doc, expect: { absent: true } }], outcome === undefined ? {} : { remember: outcome });
  if (result.ok) return writeReply(app, 201, result.records[0] as StoredRecord);
  if (result.reason === 'invalid') {
    const reply = problemReply(result.problem);
    return refuse(app, reply, remember(reply));
  }
  // A conflict here means the fresh id already exists: 80 random bits make that a broken random source.
  return unavailableReply(app, rq, result.reason === 'unavailable' ? result.detail : `POST id ${id} collided`);
}

/**
 * RFC 9110 §13.1.1-2: a POST's preconditions are about its target, the collection, whose selected
 * representation is what a plain GET of it answers (the first page as JSON). Only computed when the
 * request carries a precondition.
 */
async function postPreconditionProblem(app: App, rq: RequestContext, collection: string): Promise<Reply | undefined> {
  const fields = preconditionFields(rq.req);
  if (fields.ifMatch === undefined && fields.ifNoneMatch === undefined && fields.ifUnmodifiedSince === undefined) return undefined;
  const verdict = evaluatePreconditions('POST', fields, await collectionValidators(app, collection), { now: app.clock.now() });
  if (verdict.kind === 'malformed' || verdict.kind === 'failed') return problemReply(verdictProblem(verdict));
  return undefined;
}

async function collectionValidators(app: App, collection: string): Promise<Validators> {
  const query: CollectionQuery = { conditions: [], orderby: [], count: false };
  const planned = planQuery(query, { ...planContext(app, collection), known: () => true });
  if (!planned.ok) throw new TypeError('collectionValidators: the empty query must plan');
  const start = { scope: collection, query, pageSize: app.config.pageSize.default };
  const built = await buildPage(app, { collection, plan: planned.plan, path: `/${collection}`, itemLink: itemLinkOf(app, collection), start, returned: 0 }, JSON_TYPE);
  // A query without a filter does no filter work, so it cannot pass the budget.
  if (!built.ok) throw new TypeError('collectionValidators: an unfiltered page was refused');
  const lastModified = app.store.lastModified(collection);
  return lastModified === undefined ? { etag: built.page.representation.etag } : { etag: built.page.representation.etag, lastModified };
}

/** A refused POST; with a key, its deterministic outcome is kept so a repeat gets the same answer. */
async function refuse(app: App, reply: Reply, outcome: RememberedOutcome | undefined): Promise<Reply> {
  if (outcome !== undefined) await app.writer.remember(outcome);
  return reply;
}

function newItemProblem(body: JsonObject): Reply | undefined {
  if (!Object.hasOwn(body, 'id')) return undefined;
  return problemReply(problem('invalid-body', 'POST chooses the id; leave "id" out, or PUT to the id you want with If-None-Match: *.', { errors: [{ pointer: '/id', detail: 'not allowed on POST' }] }));
}
