// The request pipeline: request id → route → authentication → 400/404 → 405 and OPTIONS → 406 →
// 413/415 → the route's handler → the one `send`. Every check before the handler is derived from the
// route table (lib/routes.ts) and none depends on stored state (CONTRACT §4: 401, 404, 405, 406, 413,
// 415 come first); handlers then evaluate preconditions before reading any body. Unexpected exceptions
// become a 500 whose detail is fixed text; the exception itself goes to the log under the request id
// (seed, Errors rule 2).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiKeys } from './http/auth.js';
import { checkContent, contentReply, declaresTooLarge, tooLarge } from './http/body.js';
import { noStoreCacheControl, varyOf } from './http/cache-policy.js';
import { problemReply, send, type Reply } from './http/respond.js';
import { Router, splitTarget } from './http/route.js';
import { formatHttpDate } from './protocol/http-date.js';
import { chooseMediaType } from './protocol/negotiate.js';
import { problem } from './protocol/problem.js';
import type { App, RequestContext } from './resources/context.js';
import { allowedMethods, endpointFor, type RouteEntry, type RouteName } from './routes.js';

/** A client-supplied X-Request-Id is kept when it is short and harmless in a log line. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const REQUEST_ID_BYTES = 16;

export function createHandler(app: App, apiKeys: ApiKeys, routes: readonly RouteEntry[]): (req: IncomingMessage, res: ServerResponse) => void {
  const router = new Router<RouteName>(routes);
  const entries = new Map(routes.map((entry) => [entry.name, entry]));
  return (req, res) => {
    const supplied = req.headers['x-request-id'];
    const requestId = typeof supplied === 'string' && REQUEST_ID.test(supplied) ? supplied : app.random.bytes(REQUEST_ID_BYTES).toString('hex');
    dispatch(app, apiKeys, router, entries, req, requestId)
      .catch((error: unknown) => {
        app.log('error', 'unhandled error', { requestId, error: error instanceof Error ? error.stack ?? error.message : String(error) });
        return problemReply(problem('internal', ''));
      })
      .then((reply) => send(req, res, finish(app, reply, requestId), app.clock));
  };
}

async function dispatch(
  app: App,
  apiKeys: ApiKeys,
  router: Router<RouteName>,
  entries: ReadonlyMap<RouteName, RouteEntry>,
  req: IncomingMessage,
  requestId: string,
): Promise<Reply> {
  const method = req.method ?? 'GET';
  const target = splitTarget(req.url ?? '/');
  const match = router.match(target.path);
  const entry = match.kind === 'route' ? entries.get(match.name) : undefined;
  let principal = '';
  if (apiKeys.enabled && entry?.public !== true) {
    const auth = apiKeys.check(req.headersDistinct['authorization']);
    if (!auth.ok) return problemReply(problem('unauthorized', auth.detail, { headers: { 'WWW-Authenticate': 'Bearer' } }));
    principal = auth.principal;
  }
  if (match.kind === 'invalid') return problemReply(problem('invalid-name', match.detail));
  if (match.kind === 'unknown' || entry === undefined) return problemReply(problem('not-found', `No resource is addressed by ${clip(target.path)}.`));
  const allow = allowedMethods(entry).join(', ');
  // RFC 9110 §9.3.7: OPTIONS describes the communication options of the target.
  if (method === 'OPTIONS') return { status: 204, headers: { Allow: allow } };
  const endpoint = endpointFor(entry, method);
  if (endpoint === undefined) {
    return problemReply(problem('method-not-allowed', `${clip(method)} is not allowed here; use ${allow}.`, { headers: { Allow: allow } }));
  }
  let media = '';
  if (endpoint.produces.length > 0) {
    const chosen = chooseMediaType(req.headers.accept, endpoint.produces);
    if (chosen === undefined) {
      return problemReply(problem('not-acceptable', `This resource is available as ${endpoint.produces.join(', ')}; the Accept header allows none of them.`));
    }
    media = chosen;
  }
  if (endpoint.body !== undefined) {
    const refused = checkContent(req, app.config.maxBodyBytes, endpoint.body);
    if (refused !== undefined) return contentReply(refused);
  } else if (declaresTooLarge(req, app.config.maxBodyBytes)) {
    return contentReply(tooLarge(app.config.maxBodyBytes));
  }
  const rq: RequestContext = { req, requestId, principal, path: target.path, query: target.query, params: match.params, media };
  return endpoint.handle(app, rq);
}

/**
 * Headers every response carries: the request id, a Cache-Control, Vary: Authorization when
 * credentialed, and Date from the server's one clock, so it never disagrees with Last-Modified
 * (RFC 9110 §6.6.1, §8.8.2.1).
 */
function finish(app: App, reply: Reply, requestId: string): Reply {
  const headers: Record<string, string> = { ...reply.headers, 'X-Request-Id': requestId, Date: formatHttpDate(app.clock.now()) };
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
