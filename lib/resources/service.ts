// The service document (CONTRACT §2: GET / lists the collections) and the health check
// (GET /$health: 200, or 503 when the store cannot write).
import { evaluatePreconditions } from '../http/conditional.js';
import { problem } from '../http/problem.js';
import { jsonReply, problemReply, type Reply } from '../http/respond.js';
import { noStoreCacheControl, readCacheControl, varyOf } from '../http/cache-control.js';
import { isCollectionName } from '../names.js';
import type { App, RequestContext } from './context.js';
import { acceptsJson, link, preconditionFields, verdictProblem } from './common.js';
import { represent } from './representation.js';

export function getServiceDocument(app: App, rq: RequestContext): Reply {
  const notAcceptable = acceptsJson(rq.req);
  if (notAcceptable !== undefined) return problemReply(notAcceptable);
  // User collections only: `$` spaces are the server's own bookkeeping. Configured collections are
  // listed even while empty, so a client can discover where to write.
  const names = new Set([...app.store.collections().filter(isCollectionName), ...Object.keys(app.config.collections)]);
  const value = [...names].sort().map((name) => ({ name, url: link(app, `/${name}`) }));
  const representation = represent(JSON.stringify({ value }));
  const headers: Record<string, string> = { ETag: representation.etag, 'Cache-Control': readCacheControl(app.policy) };
  const vary = varyOf(app.policy, ['Accept']);
  if (vary !== undefined) headers['Vary'] = vary;
  const verdict = evaluatePreconditions(rq.req.method ?? 'GET', preconditionFields(rq.req), { etag: representation.etag }, { now: app.now() });
  if (verdict.kind === 'malformed' || verdict.kind === 'failed') return problemReply(verdictProblem(verdict));
  if (verdict.kind === 'not-modified') return { status: 304, headers };
  return jsonReply(200, representation.bytes, headers);
}

export function getHealth(app: App, rq: RequestContext): Reply {
  const health = app.store.health();
  if (!health.writable) {
    app.log('warn', 'health check: store not writable', { requestId: rq.requestId, detail: health.detail });
    return problemReply(problem('unavailable', 'store not writable'), { 'Retry-After': '5' });
  }
  return jsonReply(200, Buffer.from(JSON.stringify({ status: 'ok', durable: app.store.durable })), {
    'Cache-Control': noStoreCacheControl(app.policy),
  });
}
