// The request pipeline: request id → route → authentication → 404/405 → the resource handler →
// the one `send`. The checks that do not depend on state come first (CONTRACT §4), the handlers then
// evaluate preconditions before reading any body. Unexpected exceptions become a 500 whose detail is
// fixed text; the exception itself goes to the log under the request id (seed, Errors rule 2).
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiKeys } from './http/auth.js';
import { noStoreCacheControl, varyOf } from './http/cache-policy.js';
import { problem } from './protocol/problem.js';
import { problemReply, send, type Reply } from './http/respond.js';
import { ALLOWED_METHODS, matchRoute, splitTarget, type Route } from './http/route.js';
import type { App, RequestContext } from './resources/context.js';
import { getCollection, postToCollection } from './resources/collections.js';
import { deleteItem, getItem, putItem, undoDelete } from './resources/items.js';
import { getHealth, getServiceDocument } from './resources/service.js';
import { putBulk } from './resources/bulk.js';
import { deleteQuery, getQueryDefinition, getQueryResults, putQuery } from './resources/queries.js';

/** A client-supplied X-Request-Id is kept when it is short and harmless in a log line. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function createHandler(app: App, apiKeys: ApiKeys): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const supplied = req.headers['x-request-id'];
    const requestId = typeof supplied === 'string' && REQUEST_ID.test(supplied) ? supplied : randomUUID();
    dispatch(app, apiKeys, req, requestId)
      .catch((error: unknown) => {
        app.log('error', 'unhandled error', { requestId, error: error instanceof Error ? error.stack ?? error.message : String(error) });
        return problemReply(problem('internal', ''));
      })
      .then((reply) => send(req, res, finish(app, reply, requestId)));
  };
}

async function dispatch(app: App, apiKeys: ApiKeys, req: IncomingMessage, requestId: string): Promise<Reply> {
  const method = req.method ?? 'GET';
  const target = splitTarget(req.url ?? '/');
  const route = matchRoute(target.path, app.config.webhooks.path);
  let principal = '';
  // The webhook receiver authenticates by signature instead (seed, Authentication).
  if (apiKeys.enabled && route.kind !== 'webhook') {
    const auth = apiKeys.check(req.headersDistinct['authorization']);
    if (!auth.ok) return problemReply(problem('unauthorized', auth.detail, { headers: { 'WWW-Authenticate': 'Bearer' } }));
    principal = auth.principal;
  }
  if (route.kind === 'invalid') return problemReply(problem('invalid-name', route.detail));
  if (route.kind === 'unknown') return problemReply(problem('not-found', `No resource is addressed by ${clip(target.path)}.`));
  const allowed = ALLOWED_METHODS[route.kind];
  const allow = allowed.join(', ');
  if (!allowed.includes(method)) {
    return problemReply(problem('method-not-allowed', `${clip(method)} is not allowed here; use ${allow}.`, { headers: { Allow: allow } }));
  }
  // RFC 9110 §9.3.7: OPTIONS describes the communication options of the target.
  if (method === 'OPTIONS') return { status: 204, headers: { Allow: allow } };
  const rq: RequestContext = { req, requestId, principal, path: target.path, query: target.query };
  return respondTo(app, rq, route, method);
}

function respondTo(app: App, rq: RequestContext, route: Exclude<Route, { kind: 'invalid' | 'unknown' }>, method: string): Reply | Promise<Reply> {
  switch (route.kind) {
    case 'service':
      return getServiceDocument(app, rq);
    case 'health':
      return getHealth(app, rq);
    case 'webhook':
      // CONTRACT §7: with no receiver configured the path answers 503 and the log says why.
      app.log('warn', 'webhook received but no receiver is configured', { requestId: rq.requestId });
      return problemReply(problem('unavailable', 'no webhook receiver'), { 'Retry-After': '60' });
    case 'collection':
      return method === 'POST' ? postToCollection(app, rq, route.collection) : getCollection(app, rq, route.collection);
    case 'item':
      if (method === 'PUT') return putItem(app, rq, route.collection, route.id);
      if (method === 'DELETE') return deleteItem(app, rq, route.collection, route.id);
      return getItem(app, rq, route.collection, route.id);
    case 'undo':
      return undoDelete(app, rq, route.collection, route.id);
    case 'bulk':
      return putBulk(app, rq, route.collection);
    case 'query':
      if (method === 'PUT') return putQuery(app, rq, route.collection, route.name);
      if (method === 'DELETE') return deleteQuery(app, rq, route.collection, route.name);
      return getQueryResults(app, rq, route.collection, route.name);
    case 'query-definition':
      return getQueryDefinition(app, rq, route.collection, route.name);
  }
}

/** Headers every response carries: the request id, a Cache-Control, and Vary: Authorization when credentialed. */
function finish(app: App, reply: Reply, requestId: string): Reply {
  const headers: Record<string, string> = { ...reply.headers, 'X-Request-Id': requestId };
  if (headers['Cache-Control'] === undefined || app.policy.noCacheMode) headers['Cache-Control'] = noStoreCacheControl(app.policy);
  if (headers['Vary'] === undefined) {
    const vary = varyOf(app.policy, []);
    if (vary !== undefined) headers['Vary'] = vary;
  }
  return { ...reply, headers };
}

function clip(text: string): string {
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text);
}
