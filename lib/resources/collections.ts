// A collection: GET answers the envelope (seed, "Collection envelope": never a bare array) and POST
// creates an item with a server-chosen id, deduplicated by Idempotency-Key (seed row 6, CONTRACT §6).
import { evaluatePreconditions } from '../http/conditional.js';
import { formatHttpDate } from '../http/http-date.js';
import { parseIdempotencyKey } from '../http/idempotency-key.js';
import { problem } from '../http/problem.js';
import { jsonReply, problemReply, type Reply } from '../http/respond.js';
import { readCacheControl, varyOf } from '../http/cache-control.js';
import { newId } from '../ids.js';
import type { JsonObject } from '../json.js';
import type { Mutation, StoredRecord } from '../store/types.js';
import type { App, RequestContext } from './context.js';
import { acceptsJson, checkJsonContent, checkSchema, contentReply, preconditionFields, readJsonObject, verdictProblem } from './common.js';
import { represent } from './representation.js';
import { fingerprintOf, fingerprintOfRecord, IDEMPOTENCY_SPACE, isStorable, recordId, recordMutation, replayOf } from './idempotency.js';
import { unavailableReply, writeReply } from './items.js';

export function getCollection(app: App, rq: RequestContext, collection: string): Reply {
  const notAcceptable = acceptsJson(rq.req);
  if (notAcceptable !== undefined) return problemReply(notAcceptable);
  const page = app.store.scan(collection, { limit: app.config.pageSize.default });
  const representation = represent(envelopeJson(page));
  const lastModified = app.store.lastModified(collection);
  const headers: Record<string, string> = {
    ETag: representation.etag,
    'Cache-Control': readCacheControl(app.policy, collection),
  };
  if (lastModified !== undefined) headers['Last-Modified'] = formatHttpDate(lastModified);
  // RFC 7240 §2: the page size depends on Prefer, so caches must key on it too.
  const vary = varyOf(app.policy, ['Accept', 'Prefer']);
  if (vary !== undefined) headers['Vary'] = vary;
  const validators = lastModified === undefined ? { etag: representation.etag } : { etag: representation.etag, lastModified };
  const verdict = evaluatePreconditions(rq.req.method ?? 'GET', preconditionFields(rq.req), validators, { now: app.now() });
  if (verdict.kind === 'malformed' || verdict.kind === 'failed') return problemReply(verdictProblem(verdict));
  if (verdict.kind === 'not-modified') return { status: 304, headers };
  return jsonReply(200, representation.bytes, headers);
}

/** The envelope, written from the records' cached JSON so a page costs one concatenation. */
function envelopeJson(page: readonly StoredRecord[]): string {
  return `{"value":[${page.map((record) => JSON.stringify(record.doc)).join(',')}]}`;
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
