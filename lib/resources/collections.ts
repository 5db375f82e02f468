// A collection: GET answers one page of the envelope (seed, "Collection envelope": never a bare
// array; "Filtering and paging on GET /{collection}") and POST creates an item with a server-chosen
// id, deduplicated by Idempotency-Key (seed row 6, CONTRACT §6).
import { parseIdempotencyKey } from '../protocol/idempotency-key.js';
import { parsePrefer } from '../protocol/prefer.js';
import { problem } from '../protocol/problem.js';
import { JSON_TYPE, problemReply, type Reply } from '../http/respond.js';
import { newId } from '../ids.js';
import type { JsonObject } from '../json.js';
import { parseQueryString } from '../query/options.js';
import { planQuery, type PlanContext } from '../query/plan.js';
import { verifyToken } from '../query/token.js';
import type { Mutation, StoredRecord } from '../store/types.js';
import type { App, RequestContext } from './context.js';
import { acceptsJson, checkJsonContent, checkSchema, contentReply, itemPath, link, negotiate, readJsonObject } from './common.js';
import { fingerprintOf, fingerprintOfRecord, IDEMPOTENCY_SPACE, isStorable, recordId, recordMutation, replayOf } from './idempotency.js';
import { unavailableReply, writeReply } from './items.js';
import { CSV_TYPE, invalidTokenProblem, pageReply } from './pages.js';

export function getCollection(app: App, rq: RequestContext, collection: string): Reply {
  const media = negotiate(rq.req, [JSON_TYPE, CSV_TYPE]);
  if (typeof media !== 'string') return problemReply(media);
  const parsed = parseQueryString(rq.query);
  if (!parsed.ok) return problemReply(parsed.problem);
  if (parsed.skiptoken !== undefined) {
    // CONTRACT §5: the token carries the whole query and the page size, so later pages keep them.
    const position = verifyToken(app.pagingKey, parsed.skiptoken, collection);
    if (position === undefined) return problemReply(invalidTokenProblem());
    const planned = planQuery(position.query, planContext(app, collection));
    if (!planned.ok) return problemReply(planned.problem);
    return pageReply(app, rq, media, { collection, plan: planned.plan, pageSize: position.pageSize, after: position.after, returned: position.returned });
  }
  const planned = planQuery(parsed.query, planContext(app, collection));
  if (!planned.ok) return problemReply(planned.problem);
  return pageReply(app, rq, media, { collection, plan: planned.plan, returned: 0, ...pageSizeOf(app, rq) });
}

/** Prefer: maxpagesize=N (RFC 7240; OData odata.maxpagesize), clamped to 1..pageSize.max. */
export function pageSizeOf(app: App, rq: RequestContext): { pageSize: number; preferenceApplied?: string } {
  const preferences = parsePrefer(rq.req.headersDistinct['prefer']);
  const { default: fallback, max } = app.config.pageSize;
  if (preferences.maxPageSize === undefined) return { pageSize: fallback };
  const pageSize = Math.min(Math.max(preferences.maxPageSize, 1), max);
  return { pageSize, preferenceApplied: `${preferences.maxPageSizeToken ?? 'maxpagesize'}=${pageSize}` };
}

export function planContext(app: App, collection: string): PlanContext {
  return {
    known: (path) => app.fields.has(collection, path),
    itemLink: (id) => link(app, itemPath(collection, id)),
  };
}

export async function postToCollection(app: App, rq: RequestContext, collection: string): Promise<Reply> {
  const notAcceptable = acceptsJson(rq.req);
  if (notAcceptable !== undefined) return problemReply(notAcceptable);
  const contentProblem = checkJsonContent(rq.req, app.config.maxBodyBytes);
  if (contentProblem !== undefined) return contentReply(contentProblem);
  const key = parseIdempotencyKey(rq.req.headersDistinct['idempotency-key']);
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
  if (keyId !== undefined && fingerprint !== undefined) {
    const stored = app.store.get(IDEMPOTENCY_SPACE, keyId);
    if (stored !== undefined) {
      if (fingerprintOfRecord(stored) === fingerprint) return replayOf(stored);
      return problemReply(problem('idempotency-key-reused', 'This Idempotency-Key was already used for a different request (method, path or body differ). Use a new key for a new request.'));
    }
  }
  const outcome = body.ok ? checkNewItem(app, collection, body.doc) : { ok: false as const, reply: body.reply };
  if (!outcome.ok) {
    if (keyId !== undefined && fingerprint !== undefined && isStorable(outcome.reply.status)) {
      await app.store.commit({ mutations: [recordMutation(keyId, fingerprint, outcome.reply, app.now())] });
    }
    return outcome.reply;
  }
  const id = newId(app.now());
  const doc: JsonObject = { id, ...outcome.doc };
  const mutations: Mutation[] = [{ kind: 'put', collection, id, doc, expect: { absent: true } }];
  if (keyId !== undefined && fingerprint !== undefined) {
    // Same atomic batch as the item (CONTRACT §6). Every header of the reply is known before the
    // commit but Last-Modified, which a replay takes from the record's own commit time (the same).
    const provisional = writeReply(app, 201, { collection, id, version: 0, modifiedAt: 0, doc });
    mutations.push(recordMutation(keyId, fingerprint, provisional, app.now()));
  }
  const result = await app.store.commit({ mutations });
  if (result.ok) return writeReply(app, 201, result.commit.applied[0]?.record as StoredRecord);
  // A conflict here means the fresh id already exists: 80 random bits make that a broken random source.
  return unavailableReply(app, rq, result.reason === 'unavailable' ? result.detail : `POST id ${id} collided`);
}

function checkNewItem(app: App, collection: string, body: JsonObject): { ok: true; doc: JsonObject } | { ok: false; reply: Reply } {
  if (Object.hasOwn(body, 'id')) {
    return {
      ok: false,
      reply: problemReply(problem('invalid-body', 'POST chooses the id; leave "id" out, or PUT to the id you want with If-None-Match: *.', { errors: [{ pointer: '/id', detail: 'not allowed on POST' }] })),
    };
  }
  const schemaProblem = checkSchema(body, app.config.collections[collection]);
  if (schemaProblem !== undefined) return { ok: false, reply: problemReply(schemaProblem) };
  return { ok: true, doc: body };
}
