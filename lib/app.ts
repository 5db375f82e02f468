// The request pipeline: request id → Host (RFC 9112 §3.2) → route → the sender: 421 for a Host not
// of this server (CONVENTIONS.md#host-check), 403 for an unsafe method from a page whose origin is not
// allowed (CONVENTIONS.md#cors), neither asked of the signed webhook receiver → 501 for a method no
// route has → authentication (not asked of a CORS preflight, lib/http/cors.ts) → 400/404 → OPTIONS →
// 405 → 406 → 413/415 → 100 Continue → the route's handler → the one `send`. Every check before the
// handler is derived from the route table (lib/routes.ts) and none depends on stored state
// (CONVENTIONS.md#precondition-order: 401, 404, 405, 406, 413, 415 come first); handlers then evaluate
// preconditions before reading any body. A client that waits for 100 Continue is invited to send its
// body only once those checks pass, so a 413 never follows a 100 (RFC 9110 §10.1.1).
// Unexpected exceptions become a 500 whose detail is fixed text; the exception itself goes to the log
// under the request id (CONVENTIONS.md#problem-details).
import { fieldLine, fieldLines, fieldValue, REPEATED } from './http/field-lines.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiKeys } from './http/auth.js';
import {
  checkContent, contentFraming, contentReply, declaresTooLarge, hasContent, readBody, tooLarge, unreadBodyReply,
} from './http/body.js';
import { noStoreCacheControl, varyOf } from './http/cache-policy.js';
import {
  ALLOWED_REQUEST_HEADERS, EXPOSED_RESPONSE_HEADERS, PREFLIGHT_MAX_AGE_S, type CorsPolicy,
} from './http/cors.js';
import { HostCheck } from './http/host-check.js';
import type { RequestHandler } from './http/listener.js';
import { problemReply, send, type Reply, type RequestFields, type ServerFields } from './http/respond.js';
import { RouteParams, Router, splitTarget, type RoutePattern } from './http/route.js';
import { formatHttpDate } from './protocol/http-date.js';
import { MediaOffer } from './protocol/negotiate.js';
import { problem, type Problem } from './protocol/problem.js';
import type { Clock } from './clock.js';
import type { App, RequestContext } from './resources/context.js';
import {
  allowedMethods, endpointFor, serverMethods, type Endpoint, type RouteEntry, type RouteName,
} from './routes.js';

const MS_PER_SECOND = 1000;
/** A client-supplied X-Request-Id is kept when it is short and harmless in a log line. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/** Random bytes of the per-server prefix of request ids (the rest is a counter: unique, and cheap). */
const REQUEST_ID_PREFIX_BYTES = 6;
/**
 * Host = uri-host [ ":" port ] (RFC 9110 §7.2; RFC 3986 §3.2.2: reg-name or IP-literal). Empty is allowed
 * (RFC 9112 §3.2).
 */
const HOST = /^(?:[A-Za-z0-9._~!$&'()*+,;=-]|%[0-9A-Fa-f]{2})*(?::[0-9]*)?$|^\[[0-9A-Fa-f:.]+\](?::[0-9]*)?$/;

/** Who a request may come from: the names it may be sent to (undefined: any) and the pages that may write. */
interface Senders {
  readonly hosts: HostCheck | undefined;
  readonly cors: CorsPolicy;
  /**
   * The last Host value found well-formed and naming this server: a client sends the same one on every
   * request of a connection, so it is not parsed and looked up again.
   */
  knownHost: string | undefined;
}

/** The parameters of a request that matched no route. */
const NO_PARAMS = new RouteParams([], []);

/**
 * One request as the pipeline follows it, and as its handler sees it (RequestContext): one object per
 * request. Read once at its start, its route and what the handler needs filled in by dispatch, its
 * answer's own common fields (RequestFields) when it is answered. Its id is a counter's value taken at
 * the start, written out only when something reads it (an error's answer, a log line, a client that
 * sent its own id gets that one).
 */
class Exchange implements RequestFields, RequestContext {
  /** What the request reached, for /$metrics: a route name from the table, never the path itself. */
  route: RouteName | 'none' = 'none';
  date = '';
  varyOrigin = false;
  allowOrigin: string | undefined = undefined;
  principal = '';
  path = '';
  query = '';
  params: RouteParams = NO_PARAMS;
  media = '';
  /** Whether every answer carries the request id (the client sent one), or only errors. */
  readonly echoRequestId: boolean;
  private id: string | undefined;

  constructor(
    readonly req: IncomingMessage,
    /** The client's own X-Request-Id, when it is kept (REQUEST_ID), else undefined. */
    supplied: string | undefined,
    /** The server's prefix of the ids it makes, and this request's number. */
    private readonly prefix: string,
    private readonly number: number,
    /** clock.monotonic() when the request reached the pipeline. */
    readonly started: number,
    /** The Origin field (its lines joined), read once for the checks and for the answer's CORS fields. */
    readonly origin: string | undefined,
  ) {
    this.echoRequestId = supplied !== undefined;
    this.id = supplied;
  }

  get requestId(): string {
    return (this.id ??= `${this.prefix}-${this.number.toString(36)}`);
  }
}

/** The route table compiled for dispatch. */
interface Routes {
  readonly router: Router<RouteName, CompiledRoute>;
  /** Every method some route takes (OPTIONS * lists them; any other is 501). */
  readonly methods: readonly string[];
}

/** A route of the table as dispatch reads it: found by the router, with what each request of it needs, made once. */
interface CompiledRoute extends RoutePattern<RouteName> {
  readonly entry: RouteEntry;
  /** The route's Allow value. */
  readonly allow: string;
  /** The endpoint of each method it serves (endpointFor: HEAD is GET's), with its representations parsed once. */
  readonly serves: ReadonlyMap<string, Served>;
}

interface Served {
  readonly endpoint: Endpoint;
  readonly offer: MediaOffer;
}

/** The table as the router matches it: each route with its Allow value and its endpoints by method. */
function compileRoutes(table: readonly RouteEntry[]): CompiledRoute[] {
  const offers = new Map<Endpoint, MediaOffer>();
  const methods = serverMethods(table);
  return table.map((entry) => {
    const serves = new Map<string, Served>();
    for (const method of methods) {
      const endpoint = endpointFor(entry, method);
      if (endpoint === undefined) continue;
      let offer = offers.get(endpoint);
      if (offer === undefined) offers.set(endpoint, (offer = new MediaOffer(endpoint.produces)));
      serves.set(method, { endpoint, offer });
    }
    const { name, path, reserveBelow } = entry;
    const pattern = reserveBelow === undefined ? { name, path } : { name, path, reserveBelow };
    return { ...pattern, entry, allow: allowedMethods(entry).join(', '), serves };
  });
}

const EXPOSED = EXPOSED_RESPONSE_HEADERS.join(', ');
const PREFLIGHT_HEADERS = ALLOWED_REQUEST_HEADERS.join(', ');

export function createHandler(
  app: App,
  apiKeys: ApiKeys,
  cors: CorsPolicy,
  table: readonly RouteEntry[],
): RequestHandler {
  const routes: Routes = {
    router: new Router<RouteName, CompiledRoute>(compileRoutes(table)),
    methods: serverMethods(table),
  };
  // A random prefix per server and a counter: ids never repeat within a run, and a restart starts
  // a new prefix, so a log line's id is unique without drawing random bytes on every request.
  const prefix = app.random.bytes(REQUEST_ID_PREFIX_BYTES).toString('hex');
  let counter = 0;
  const dates = new DateHeader();
  // What a reply without its own Cache-Control or Vary gets (CONVENTIONS.md#cache-control, #vary).
  const common: ServerFields = {
    cacheControl: noStoreCacheControl(app.policy),
    forceCacheControl: app.policy.noCacheMode,
    vary: varyOf(app.policy, []),
    varyWithOrigin: varyOf(app.policy, ['Origin']),
    exposeHeaders: EXPOSED,
  };
  const senders: Senders = {
    hosts: HostCheck.forServer(app.self().host, app.baseUrl, app.config.allowedHosts),
    cors,
    knownHost: undefined,
  };
  const answer = (req: IncomingMessage, res: ServerResponse, trace: Exchange, reply: Reply): void => {
    const { origin } = trace;
    trace.allowOrigin = cors.enabled ? cors.allowOrigin(origin) : undefined;
    trace.varyOrigin = cors.variesByOrigin(origin);
    // One reading of the clock per answer: the latency, and when the Date text is due again.
    const answered = app.clock.monotonic();
    trace.date = dates.at(app.clock, answered);
    send(req, res, reply, app.clock, common, trace, app.sendQueue);
    const method = req.method ?? 'GET';
    const counted = routes.methods.includes(method) ? method : 'other';
    app.metrics.request(trace.route, counted, reply.status, answered - trace.started);
  };
  const fail = (req: IncomingMessage, res: ServerResponse, trace: Exchange, error: unknown): void => {
    const text = error instanceof Error ? error.stack ?? error.message : String(error);
    app.log('error', 'unhandled error', { requestId: trace.requestId, error: text });
    answer(req, res, trace, problemReply(problem('internal', '')));
  };
  return (req, res, expectsContinue) => {
    const line = fieldLine(req, 'x-request-id');
    const supplied = typeof line === 'string' && REQUEST_ID.test(line) ? line : undefined;
    const number = supplied === undefined ? counter++ : 0;
    const trace = new Exchange(req, supplied, prefix, number, app.clock.monotonic(), fieldValue(req, 'origin'));
    // A handler that answers at once is sent at once: no promise, no extra turn of the microtask queue.
    let result: Reply | Promise<Reply>;
    try {
      result = dispatch(app, apiKeys, senders, routes, req, res, expectsContinue, trace);
    } catch (error) {
      fail(req, res, trace, error);
      return;
    }
    if (result instanceof Promise) {
      result.then((reply) => answer(req, res, trace, reply), (error: unknown) => fail(req, res, trace, error));
    } else {
      answer(req, res, trace, result);
    }
  };
}

function dispatch(
  app: App,
  apiKeys: ApiKeys,
  senders: Senders,
  routes: Routes,
  req: IncomingMessage,
  res: ServerResponse,
  expectsContinue: boolean,
  trace: Exchange,
): Reply | Promise<Reply> {
  const method = req.method ?? 'GET';
  const host = fieldLine(req, 'host');
  if (host === undefined || host !== senders.knownHost) {
    const hostProblem = checkHost(req, host);
    if (hostProblem !== undefined) return { ...problemReply(hostProblem), closeConnection: true };
  }
  const target = splitTarget(req.url ?? '/');
  const match = routes.router.match(target.path);
  const route = match.kind === 'route' ? match.route : undefined;
  const entry = route?.entry;
  // A signed route is judged by its signature alone (CONVENTIONS.md#host-check): nothing is done before it passes.
  const refused = entry?.signed === true ? undefined : refusedSender(senders, host, trace.origin, method);
  if (refused !== undefined) return problemReply(refused);
  // RFC 9110 §15.6.2: 501 for a method no resource supports; 405 is for a method some resource does.
  if (!routes.methods.includes(method)) return problemReply(problem('not-implemented', ''));
  // RFC 9112 §3.2.4: the asterisk-form asks about the server as a whole, and only OPTIONS may use it.
  if (req.url === '*') {
    if (method === 'OPTIONS') return { status: 204, headers: { Allow: routes.methods.join(', ') } };
    return problemReply(problem('bad-request', 'The request target "*" is only for OPTIONS (RFC 9112 §3.2.4).'));
  }
  if (entry !== undefined) trace.route = entry.name;
  // A CORS preflight never carries credentials (Fetch §4.8), so it is answered without asking for them.
  const preflight = method === 'OPTIONS' && isPreflight(req);
  let principal = '';
  if (apiKeys.enabled && entry?.public !== true && !preflight) {
    const auth = apiKeys.check(fieldLines(req, 'authorization'));
    if (!auth.ok) {
      return problemReply(problem('unauthorized', auth.detail, { headers: { 'WWW-Authenticate': 'Bearer' } }));
    }
    principal = auth.principal;
  }
  if (match.kind === 'invalid') return problemReply(problem('invalid-name', match.detail));
  if (match.kind === 'unknown' || route === undefined || entry === undefined) {
    return problemReply(problem('not-found', `No resource is addressed by ${clip(target.path)}.`));
  }
  const { allow } = route;
  if (preflight) {
    const { origin } = trace;
    // An origin that is not allowed gets no CORS field at all, its preflight included (CONVENTIONS.md#cors).
    if (senders.cors.allowOrigin(origin) === undefined) return { status: 204, headers: { Allow: allow } };
    const headers: Record<string, string> = {
      Allow: allow,
      'Access-Control-Allow-Methods': allow,
      'Access-Control-Allow-Headers': PREFLIGHT_HEADERS,
      'Access-Control-Max-Age': String(PREFLIGHT_MAX_AGE_S),
    };
    if (senders.cors.allowsPrivateNetwork(origin, fieldValue(req, 'access-control-request-private-network'))) {
      headers['Access-Control-Allow-Private-Network'] = 'true';
    }
    return { status: 204, headers };
  }
  // RFC 9110 §9.3.7: OPTIONS describes the communication options of the target.
  if (method === 'OPTIONS') return { status: 204, headers: { Allow: allow } };
  const served = route.serves.get(method);
  if (served === undefined) {
    const detail = `${clip(method)} is not allowed here; use ${allow}.`;
    return problemReply(problem('method-not-allowed', detail, { headers: { Allow: allow } }));
  }
  const { endpoint } = served;
  let media = '';
  if (endpoint.produces.length > 0) {
    const chosen = served.offer.choose(fieldValue(req, 'accept'));
    if (chosen === undefined) {
      // The answer depends on Accept, so a cache must key this 406 on it too (RFC 9110 §12.5.5).
      const vary = varyOf(app.policy, ['Accept']) as string;
      const detail =
        `This resource is available as ${endpoint.produces.join(', ')}; ` +
        'the Accept header allows none of them.';
      return problemReply(problem('not-acceptable', detail), { Vary: vary });
    }
    media = chosen;
  }
  const limit = app.config.maxBodyBytes;
  if (endpoint.body !== undefined) {
    const refused = checkContent(req, limit, endpoint.body);
    if (refused !== undefined) return contentReply(refused);
  }
  const framing = endpoint.body === undefined ? contentFraming(req) : undefined;
  if (framing !== undefined && declaresTooLarge(framing, limit)) return contentReply(tooLarge(limit));
  if (expectsContinue) res.writeContinue();
  trace.principal = principal;
  trace.path = target.path;
  trace.query = target.query;
  trace.params = match.params;
  trace.media = media;
  const rq: RequestContext = trace;
  if (framing !== undefined && hasContent(framing)) {
    // A route that reads no content still refuses one over the cap (CONVENTIONS.md#body-cap), counting it
    // without keeping it.
    return readBody(req, limit, { keep: false }).then((discarded) =>
      discarded.ok ? endpoint.handle(app, rq) : unreadBodyReply(discarded.reason, limit),
    );
  }
  return endpoint.handle(app, rq);
}

/**
 * RFC 9112 §3.2: "A server MUST respond with a 400 (Bad Request) status code to any HTTP/1.1 request
 * message that lacks a Host header field and to any request message that contains more than one Host
 * header field line or a Host header field with an invalid field value."
 */
function checkHost(req: IncomingMessage, host: string | undefined | typeof REPEATED): Problem | undefined {
  if (host === undefined) {
    if (req.httpVersion === '1.0') return undefined;
    return problem('bad-request', 'An HTTP/1.1 request must carry a Host header field (RFC 9112 §3.2).');
  }
  if (host === REPEATED) {
    return problem('bad-request', 'The request carries more than one Host header field (RFC 9112 §3.2).');
  }
  if (!HOST.test(host)) {
    return problem('bad-request', 'The Host header field is not a valid host and port (RFC 9110 §7.2).');
  }
  return undefined;
}

/**
 * 421 for a Host that names none of the server's names while it listens on loopback (DNS rebinding,
 * CONVENTIONS.md#host-check); 403 for an unsafe method from a page whose origin is not allowed: a
 * "simple" cross-site POST comes without a preflight, so CORS alone would let it write
 * (CONVENTIONS.md#cors).
 */
function refusedSender(
  senders: Senders,
  host: string | undefined | typeof REPEATED,
  origin: string | undefined,
  method: string,
): Problem | undefined {
  // An HTTP/1.0 request without Host comes from no browser (every browser sends one), so none is rebound.
  // (A repeated Host never gets here: it is a 400 before.)
  if (typeof host === 'string' && host !== senders.knownHost) {
    if (senders.hosts !== undefined && !senders.hosts.admits(host)) {
      const detail =
        `This server does not answer to ${clip(host)}; it answers to localhost, 127.0.0.1, [::1], ` +
        'the address it listens on, the host of its base URL and the names in allowedHosts. ' +
        'Add the name to allowedHosts to reach it that way.';
      return problem('misdirected-request', detail);
    }
    senders.knownHost = host;
  }
  if (senders.cors.refuses(method, origin)) {
    const detail = `A page on ${clip(origin as string)} may not send ${clip(method)} here: ${senders.cors.describe()}.`;
    return problem('origin-not-allowed', detail);
  }
  return undefined;
}

/** Fetch §3.2.2: a CORS-preflight request is OPTIONS with Origin and Access-Control-Request-Method. */
function isPreflight(req: IncomingMessage): boolean {
  return fieldValue(req, 'origin') !== undefined && fieldValue(req, 'access-control-request-method') !== undefined;
}

/**
 * The Date field value, formatted once per second (it has one-second resolution, RFC 9110 §5.6.7): the
 * time of day is read when a second begins, and the monotonic reading every answer takes anyway says
 * when the next one does, so an answer within the same second reads no clock for its Date.
 */
class DateHeader {
  /** The monotonic span over which `text` is the current second. */
  private from = Number.POSITIVE_INFINITY;
  private until = Number.NEGATIVE_INFINITY;
  private text = '';

  at(clock: Clock, monotonic: number): string {
    if (monotonic >= this.until || monotonic < this.from) {
      const now = clock.now();
      this.text = formatHttpDate(now);
      this.from = monotonic;
      this.until = monotonic + (MS_PER_SECOND - (((now % MS_PER_SECOND) + MS_PER_SECOND) % MS_PER_SECOND));
    }
    return this.text;
  }
}

function clip(text: string): string {
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text);
}
