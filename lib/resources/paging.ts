// The one paging flow (CONVENTIONS.md#paging): every paged resource, be it a collection, a listing of
// the server's own records (/$inbox, /$outbox, /$subscriptions) or a query resource, answers
// "first page or continuation" here, and nowhere else:
//
//   the page cache → the query options → a `$skiptoken`, verified (CONVENTIONS.md#skip-tokens), or
//   a first page's query, planned and held to the link budget → the page built (lib/resources/pages.ts)
//   → the reply, with `Preference-Applied` for the page size in force (CONVENTIONS.md#page-size).
//
// The page cache is asked first, before any option is read, with the request as sent (media type,
// page size, query string) and the walk's scope: a later page's token was verified for that scope
// when its page was kept, and the same string verifies the same way. A kept page is answered at once
// from the answers prepared for it (lib/resources/prepared-reads.ts), without a promise: only its
// preconditions are evaluated.
//
// What differs between resources is a `Walk`: how the options are read, how a first page's query
// and a continuation's plan are made. POST's preconditions (CONVENTIONS.md#post-preconditions) ask
// the same flow for the page a plain GET answers, so the ETag a client read is the one compared.
//
// Two limits keep one client's pages from costing everyone else (CONVENTIONS.md#limits), both
// consulted before the work they bound: a GET asks the send queue for room before anything is built
// (503 while slow readers hold `maxQueuedResponseBytes`, CONVENTIONS.md#connections), and a build
// whose filter turns expensive needs one of the `expensiveFilters` slots to go on
// (CONVENTIONS.md#filter-errors-and-budget).
import { fieldLines } from '../http/field-lines.js';
import { JSON_TYPE, problemReply, type Reply } from '../http/respond.js';
import { readCacheControl } from '../http/cache-policy.js';
import type { Validators } from '../protocol/conditional.js';
import { parsePrefer } from '../protocol/prefer.js';
import { problem, type Problem } from '../protocol/problem.js';
import { FiltersBusy, limitExpensive } from '../query/expensive.js';
import { parseQueryString, type CollectionQuery } from '../query/options.js';
import type { RecordSource } from '../query/execute.js';
import type { QueryPlan } from '../query/plan.js';
import { longestToken, verifyToken, type PagePosition } from '../query/token.js';
import type { App, RequestContext } from './context.js';
import { link } from './common.js';
import type { BuiltPage, KeptPage, PageKey } from './page-cache.js';
import { buildPage, type HomeView, type PageBuilding, type PageSource } from './pages.js';
import { answerRead, prepareRead } from './prepared-reads.js';
import { readReply, type ReadOptions } from './replies.js';

/** The longest `@nextLink` the server emits: it must be able to follow its own links. */
const MAX_LINK_BYTES = 8192;
/** Seconds a client refused for a momentary limit is asked to wait (RFC 9110 §10.2.3). */
const RETRY_AFTER_S = '1';

/** What a token carries besides its position: a collection walk's query, or a query resource's version. */
export type WalkCarry = Pick<PagePosition, 'query' | 'definition'>;

export type Planned =
  | { readonly ok: true; readonly plan: QueryPlan }
  | { readonly ok: false; readonly problem: Problem };

/** A first page's query: its plan, what its tokens carry, and how many order-by keys they hold. */
export type Begun =
  | { readonly ok: true; readonly plan: QueryPlan; readonly carry: WalkCarry; readonly sortKeys: number }
  | { readonly ok: false; readonly problem: Problem };

/** The query options of a request: a continuation's token, or what a first page needs. */
export type WalkOptions<T> =
  | { readonly ok: true; readonly skiptoken: string }
  | { readonly ok: true; readonly skiptoken?: undefined; readonly first: T }
  | { readonly ok: false; readonly problem: Problem };

/** How one paged resource reads its options and makes its plans. */
export interface Walk<T> {
  /** The store space walked. */
  readonly collection: string;
  /** What its tokens are bound to: a token of another scope is refused (`products/$queries/cheap`). */
  readonly scope: string;
  /** The path links continue at (`/products`, `/$inbox`, `/products/$queries/cheap`). */
  readonly path: string;
  /** The link to an item's detail: a summary's `@id`, an HTML row's Select. */
  readonly itemLink: (id: string) => string;
  /** Where an HTML page's List leads, when somewhere other than `path`. */
  readonly listPath?: string;
  /** A later modification time than the collection's (a query resource's definition). */
  readonly lastModified?: number;
  /** Built pages may be kept in the page cache (user collections: their records never expire unseen). */
  readonly cacheable: boolean;
  readonly options: (queryString: string) => WalkOptions<T>;
  readonly begin: (first: T) => Begun;
  /** A continuation's plan from a token this server signed for `scope`; undefined when it is not usable. */
  readonly resume: (position: PagePosition) => Planned | undefined;
  /** Where the items come from when they are not the store space `collection` (the service document). */
  readonly records?: RecordSource;
  /** The id that makes the longest token, when ids may be longer than resource ids (an inbox item's). */
  readonly longestId?: string;
  /** Set when the walk is Home itself (the service document): its HTML title and links. */
  readonly home?: HomeView;
}

/** The system query options of a collection or listing (CONVENTIONS.md#refused-parameters names the rest). */
export function queryOptions(queryString: string): WalkOptions<CollectionQuery> {
  const parsed = parseQueryString(queryString);
  if (!parsed.ok) return parsed;
  return parsed.skiptoken === undefined ? { ok: true, first: parsed.query } : { ok: true, skiptoken: parsed.skiptoken };
}

/** What the paging flow needs: a page's building, the page cache, the page-size settings, the clock, the limits. */
export type Paging = PageBuilding & Pick<App, 'config' | 'pages' | 'clock' | 'sendQueue' | 'filterSlots'>;

/** The request as far as paging reads it: the key of its page (with the walk's scope), and its preference. */
export interface PageRequest extends PageKey {
  /** The page-size preference as the client spelled it, when it sent one. */
  readonly preference?: string;
}

type Resolved = { readonly ok: true; readonly page: BuiltPage } | { readonly ok: false; readonly problem: Problem };

/** GET of a paged resource: one page, or its 304, or a problem; a kept page's at once, without a promise. */
export function pagedReply<T>(app: Paging, rq: RequestContext, walk: Walk<T>): Reply | Promise<Reply> {
  // A page, kept or to be built, waits while slow readers hold the send queue's cap.
  if (app.sendQueue.full) return problemReply(momentary('send-queue-full'));
  const request = pageRequest(app, rq, walk.scope);
  const kept = keptPage(app, request, walk);
  if (kept !== undefined) return keptReply(app, rq, walk, request, kept);
  // Room for a page as large as the byte budget allows, asked before anything is built; given back
  // once the reply is made, when the send queue starts counting its real bytes.
  const room = app.sendQueue.reserve(app.config.limits.pageBytes);
  if (room === undefined) return problemReply(momentary('send-queue-full'));
  return builtReply(app, rq, walk, request, room);
}

/** The validators of what a plain GET of the resource answers: its first page as JSON, in its default size. */
export async function pageValidators<T>(app: Paging, walk: Walk<T>): Promise<Validators> {
  const request = { scope: walk.scope, query: '', media: JSON_TYPE, pageSize: app.config.pageSize.default };
  const resolved = await resolvePage(app, request, walk);
  // Without options there is no filter to refuse and no token to doubt.
  if (!resolved.ok) throw new TypeError(`pageValidators: the plain first page of ${walk.path} was refused`);
  const lastModified = app.store.lastModified(walk.collection);
  const { etag } = resolved.page.representation;
  return lastModified === undefined ? { etag } : { etag, lastModified };
}

/**
 * The request as paging reads it. Prefer: maxpagesize=N (RFC 7240; OData odata.maxpagesize), clamped
 * to 1..pageSize.max; `preference` is the token the client spelled it with, for Preference-Applied.
 */
function pageRequest(app: Pick<App, 'config'>, rq: RequestContext, scope: string): PageRequest {
  const { query, media } = rq;
  const { default: fallback, max } = app.config.pageSize;
  const lines = fieldLines(rq.req, 'prefer');
  if (lines === undefined) return { scope, media, pageSize: fallback, query };
  const preferences = parsePrefer(lines);
  if (preferences.maxPageSize === undefined) return { scope, media, pageSize: fallback, query };
  const pageSize = Math.min(Math.max(preferences.maxPageSize, 1), max);
  return { scope, media, pageSize, query, preference: preferences.maxPageSizeToken ?? 'maxpagesize' };
}

/**
 * The page cache first: an identical request since the collection last changed was valid, and its
 * page is built, so nothing of it is parsed, verified or planned again. The request is its own key.
 */
function keptPage<T>(app: Paging, request: PageRequest, walk: Walk<T>): KeptPage | undefined {
  return walk.cacheable ? app.pages.get(walk.collection, request) : undefined;
}

/**
 * What names a page among its collection's: its bytes are a function of the walk (whose scope a token
 * must name), the media type, the page size and the query string, whose token, on a later page, names
 * the page size in force instead. The key kept with a page holds nothing else of the request.
 */
function pageKey(request: PageRequest): PageKey {
  return { scope: request.scope, media: request.media, pageSize: request.pageSize, query: request.query };
}

async function resolvePage<T>(app: Paging, request: PageRequest, walk: Walk<T>): Promise<Resolved> {
  const kept = keptPage(app, request, walk);
  return kept === undefined ? buildResolved(app, request, walk) : { ok: true, page: kept.page };
}

/** The page, built: the query options, a verified token or a first page's plan, then the build. */
async function buildResolved<T>(app: Paging, request: PageRequest, walk: Walk<T>): Promise<Resolved> {
  const { scope, path } = walk;
  const options = walk.options(request.query);
  if (!options.ok) return options;
  const cacheKey = walk.cacheable ? pageKey(request) : undefined;
  let source: PageSource;
  if (options.skiptoken !== undefined) {
    const position = verifyToken(app.pagingKey, options.skiptoken, scope);
    const resumed = position === undefined ? undefined : walk.resume(position);
    if (position === undefined || resumed === undefined) return { ok: false, problem: invalidTokenProblem() };
    if (!resumed.ok) return resumed;
    // A later page's size is the token's, whatever Prefer says: the token alone names it.
    const start = { scope, ...carryOf(position), pageSize: position.pageSize };
    source = { ...sourceOf(walk, resumed.plan, start, cacheKey), after: position.after, returned: position.returned };
  } else {
    const begun = walk.begin(options.first);
    if (!begun.ok) return begun;
    const start = { scope, ...begun.carry, pageSize: request.pageSize };
    const tooLong = linkProblem(app, path, start, begun.sortKeys, walk.longestId);
    if (tooLong !== undefined) return { ok: false, problem: tooLong };
    source = { ...sourceOf(walk, begun.plan, start, cacheKey), returned: 0 };
  }
  return cachedBuild(app, source, request.media);
}

function sourceOf<T>(
  walk: Walk<T>,
  plan: QueryPlan,
  start: PageSource['start'],
  cacheKey: PageKey | undefined,
): Omit<PageSource, 'returned'> {
  return {
    collection: walk.collection,
    plan,
    path: walk.path,
    itemLink: walk.itemLink,
    start,
    ...(walk.listPath === undefined ? {} : { listPath: walk.listPath }),
    ...(cacheKey === undefined ? {} : { cacheKey }),
    ...(walk.records === undefined ? {} : { records: walk.records }),
    ...(walk.home === undefined ? {} : { home: walk.home }),
  };
}

/** Only what the token carries besides the position, so nothing else leaks into the next token. */
function carryOf(position: PagePosition): WalkCarry {
  if (position.query !== undefined) return { query: position.query };
  return position.definition === undefined ? {} : { definition: position.definition };
}

async function cachedBuild(
  app: Paging,
  source: PageSource,
  media: string,
): Promise<{ ok: true; page: BuiltPage } | { ok: false; problem: Problem }> {
  const { cacheKey, collection } = source;
  const generation = app.pages.generation(collection);
  const limited = limitExpensive(source.plan, app.filterSlots);
  let built: Awaited<ReturnType<typeof buildPage>>;
  try {
    built = await buildPage(app, { ...source, plan: limited.plan }, media);
  } catch (error) {
    if (!(error instanceof FiltersBusy)) throw error;
    return { ok: false, problem: momentary('filters-busy') };
  } finally {
    limited.release();
  }
  if (built.ok && cacheKey !== undefined) app.pages.keep(collection, cacheKey, generation, built.page);
  return built;
}

/** The reply carrying a page just built (or its 304). */
async function builtReply<T>(
  app: Paging,
  rq: RequestContext,
  walk: Walk<T>,
  request: PageRequest,
  room: () => void,
): Promise<Reply> {
  try {
    const resolved = await buildResolved(app, request, walk);
    if (!resolved.ok) return problemReply(resolved.problem);
    const { page } = resolved;
    return readReply(app, rq, page.representation, pageReadOptions(app, walk, page, request.preference));
  } finally {
    room();
  }
}

/** The reply carrying a kept page (or its 304), from the answers prepared for it (lib/resources/prepared-reads.ts). */
function keptReply<T>(app: Paging, rq: RequestContext, walk: Walk<T>, request: PageRequest, kept: KeptPage): Reply {
  const variant = request.preference === undefined ? '' : applied(request.preference, kept.page.pageSize);
  let prepared = kept.prepared.get(variant);
  if (prepared === undefined) {
    const { page } = kept;
    prepared = prepareRead(app.policy, page.representation, pageReadOptions(app, walk, page, request.preference));
    app.pages.prepare(walk.collection, request, variant, prepared);
  }
  return answerRead(app, rq, prepared);
}

/** How a page is read: its validators, its fields besides the representation's. */
function pageReadOptions<T>(app: Paging, walk: Walk<T>, page: BuiltPage, preference: string | undefined): ReadOptions {
  const fields: Record<string, string> = {};
  if (page.nextLink !== undefined) fields['Link'] = `<${page.nextLink}>; rel="next"`;
  if (preference !== undefined) fields['Preference-Applied'] = applied(preference, page.pageSize);
  const lastModified = Math.max(app.store.lastModified(walk.collection) ?? 0, walk.lastModified ?? 0);
  return {
    cacheControl: readCacheControl(app.policy, walk.collection),
    // RFC 7240 §2: the page size depends on Prefer, so caches must key on it too.
    negotiated: ['Accept', 'Prefer'],
    contentType: page.contentType,
    fields,
    ...(lastModified > 0 ? { lastModified } : {}),
  };
}

/**
 * RFC 7240 §3: Preference-Applied names the preference honoured and the value used. On a later page
 * the size comes from the token, so a client that sends its preference again learns the size in force.
 */
function applied(preference: string, pageSize: number): string {
  return `${preference}=${pageSize}`;
}

/** A 400 for a walk whose longest `@nextLink` could not stay under MAX_LINK_BYTES, before its first page. */
function linkProblem(
  app: Pick<App, 'baseUrl' | 'pagingKey'>,
  path: string,
  start: Omit<PagePosition, 'after' | 'returned'>,
  sortKeys: number,
  longestId: string | undefined,
): Problem | undefined {
  const token = longestToken(app.pagingKey, start, sortKeys, longestId);
  const longest = Buffer.byteLength(link(app, `${path}?$skiptoken=`)) + token;
  if (longest <= MAX_LINK_BYTES) return undefined;
  const detail =
    `This query is too large to page through: its @nextLink could reach ${longest} bytes, over the ` +
    `${MAX_LINK_BYTES} a link may have. Use a shorter $filter or fewer $orderby keys, or store it as a ` +
    'query resource (PUT /{collection}/$queries/{name}).';
  return problem('bad-request', detail);
}

/** A 503 for a limit that frees itself soon; its fixed detail names the limit (lib/protocol/problem.ts). */
function momentary(type: 'send-queue-full' | 'filters-busy'): Problem {
  return problem(type, '', { headers: { 'Retry-After': RETRY_AFTER_S } });
}

function invalidTokenProblem(): Problem {
  const detail =
    'The $skiptoken is not valid here: it was altered, or it belongs to another collection, query or ' +
    'server. Start again from the first page.';
  return problem('bad-request', detail, {
    errors: [{ parameter: '$skiptoken', detail: 'not a token this server issued for this resource' }],
  });
}
