// A collection: GET answers one page of the envelope (seed, "Collection envelope": never a bare
// array; "Filtering and paging on GET /{collection}") and POST creates an item with a server-chosen
// id, deduplicated by Idempotency-Key (seed row 6, CONTRACT §6).
import { parseIdempotencyKey } from '../protocol/idempotency-key.js';
import { parsePrefer } from '../protocol/prefer.js';
import { problem } from '../protocol/problem.js';
import { problemReply, type Reply } from '../http/respond.js';
import { newId } from '../ids.js';
import type { JsonObject } from '../json.js';
import { parseQueryString } from '../query/options.js';
import { planQuery, type PlanContext } from '../query/plan.js';
import { verifyToken } from '../query/token.js';
import type { StoredRecord } from '../store/types.js';
import { IDEMPOTENCY_SPACE, type RememberedOutcome } from '../writes/writer.js';
import type { App, RequestContext } from './context.js';
import { itemPath, link, readJsonObject, unavailableReply } from './common.js';
import { fingerprintOf, fingerprintOfRecord, isStorable, outcomeOf, recordId, replayOf } from './idempotency.js';
import { writeReply } from './items.js';
import { invalidTokenProblem, pageReply } from './pages.js';

export function getCollection(app: App, rq: RequestContext): Reply {
  const collection = rq.params.get('collection');
  const parsed = parseQueryString(rq.query);
  if (!parsed.ok) return problemReply(parsed.problem);
  if (parsed.skiptoken !== undefined) {
    // CONTRACT §5: the token carries the whole query and the page size, so later pages keep them.
    const position = verifyToken(app.pagingKey, parsed.skiptoken, collection);
    if (position === undefined) return problemReply(invalidTokenProblem());
    const planned = planQuery(position.query, planContext(app, collection));
    if (!planned.ok) return problemReply(planned.problem);
    return pageReply(app, rq, { collection, plan: planned.plan, pageSize: position.pageSize, after: position.after, returned: position.returned });
  }
  const planned = planQuery(parsed.query, planContext(app, collection));
  if (!planned.ok) return problemReply(planned.problem);
  return pageReply(app, rq, { collection, plan: planned.plan, returned: 0, ...pageSizeOf(app, rq) });
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

export async function postToCollection(app: App, rq: RequestContext): Promise<Reply> {
  const collection = rq.params.get('collection');
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
  const remember = (reply: Reply): RememberedOutcome | undefined =>
    keyId === undefined || fingerprint === undefined || !isStorable(reply.status) ? undefined : outcomeOf(keyId, fingerprint, reply);
  if (keyId !== undefined) {
    const stored = app.store.get(IDEMPOTENCY_SPACE, keyId);
    if (stored !== undefined) {
      if (fingerprintOfRecord(stored) === fingerprint) return replayOf(stored);
      return problemReply(problem('idempotency-key-reused', 'This Idempotency-Key was already used for a different request (method, path or body differ). Use a new key for a new request.'));
    }
  }
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

/** A refused POST; with a key, its deterministic outcome is kept so a repeat gets the same answer. */
async function refuse(app: App, reply: Reply, outcome: RememberedOutcome | undefined): Promise<Reply> {
  if (outcome !== undefined) await app.writer.remember(outcome);
  return reply;
}

function newItemProblem(body: JsonObject): Reply | undefined {
  if (!Object.hasOwn(body, 'id')) return undefined;
  return problemReply(problem('invalid-body', 'POST chooses the id; leave "id" out, or PUT to the id you want with If-None-Match: *.', { errors: [{ pointer: '/id', detail: 'not allowed on POST' }] }));
}
