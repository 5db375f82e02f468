// One page of a collection or query resource as a response (seed, "Collection envelope";
// CONTRACT §5): `{ "@count"?, "value": [...], "@nextLink"? }` in JSON, or the same items as CSV or
// as an HTML table whose rows select their detail (lib/resources/html.ts);
// `@nextLink` only when a next page exists (the key is absent, never null), also sent as
// `Link: <...>; rel="next"` (RFC 8288); a strong ETag of the bytes and 304 on revalidation;
// `Vary: Accept, Prefer` because both choose the bytes (RFC 7240 §2); `Preference-Applied` when a
// page-size preference was honoured (RFC 7240 §3).
//
// A page is bounded in bytes as well as in items (CONTRACT §5): once its items pass PAGE_BYTES of
// JSON it ends, with `@nextLink` after the last item it holds, so no page is too large to build or to
// send whatever the items weigh. Every `@nextLink` stays under MAX_LINK_BYTES: a query whose longest
// possible link would not is refused before its first page (linkProblem).
import { nextTurn } from '../clock.js';
import { readCacheControl } from '../http/cache-policy.js';
import { problem, type Problem } from '../protocol/problem.js';
import { JSON_TYPE, problemReply, type Reply } from '../http/respond.js';
import { BudgetExceeded } from '../filter/index.js';
import { flattenRows, writeCsv } from '../csv/write.js';
import type { JsonObject } from '../json.js';
import { runPage, type Page } from '../query/execute.js';
import { keyOf, type SortValue } from '../query/order.js';
import type { QueryPlan } from '../query/plan.js';
import { longestToken, signToken, type PagePosition } from '../query/token.js';
import type { StoredRecord } from '../store/types.js';
import { represent, type Representation } from '../writes/representation.js';
import type { App, RequestContext } from './context.js';
import { link } from './common.js';
import { readReply } from './replies.js';
import type { BuiltPage } from './page-cache.js';
import { HTML_CONTENT_TYPE, HTML_TYPE } from '../html/views.js';
import { listHtml } from './html.js';

/** RFC 4180 §3 registers text/csv with `charset` and `header` parameters. */
export const CSV_TYPE = 'text/csv';
const CSV_CONTENT_TYPE = 'text/csv; charset=utf-8; header=present';
/** A page ends once its items pass this many bytes of JSON (the last item may carry it past). */
export const PAGE_BYTES = 4 * 1024 * 1024;
/** The longest `@nextLink` the server emits: it must be able to follow its own links. */
export const MAX_LINK_BYTES = 8192;
/** How often a scan gives the event loop a turn: every so many rows, or so many filter steps. */
const YIELD_ROWS = 2048;
const YIELD_STEPS = 200_000;

/** Where a walk is and what it pages through. */
export interface PageSource {
  readonly collection: string;
  readonly plan: QueryPlan;
  /** The path links continue at (`/products` or `/products/$queries/cheap`). */
  readonly path: string;
  /** The link to an item's detail: an HTML row's Select. */
  readonly itemLink: (id: string) => string;
  /** Where an HTML page's List leads, when somewhere other than `path` (a query resource's collection). */
  readonly listPath?: string;
  /** What every token of the walk carries besides the position. */
  readonly start: Omit<PagePosition, 'after' | 'returned'>;
  readonly after?: readonly SortValue[];
  readonly returned: number;
  /** The page-size preference as applied, e.g. `odata.maxpagesize=10`, when the client sent one. */
  readonly preferenceApplied?: string;
  /** A later modification time than the collection's (a query resource's definition). */
  readonly lastModified?: number;
  /** What names this page among the collection's pages in the page cache, when it may be kept there. */
  readonly cacheKey?: string;
}

export async function pageReply(app: App, rq: RequestContext, source: PageSource): Promise<Reply> {
  const { cacheKey, collection } = source;
  let page = cacheKey === undefined ? undefined : app.pages.get(collection, cacheKey);
  if (page === undefined) {
    const generation = app.pages.generation(collection);
    const built = await buildPage(app, source, rq.media);
    if (!built.ok) return problemReply(built.problem);
    page = built.page;
    if (cacheKey !== undefined) app.pages.keep(collection, cacheKey, generation, page);
  }
  return pageAnswer(app, rq, source, page);
}

/** The reply carrying a built page (or its 304). */
export function pageAnswer(app: App, rq: RequestContext, source: Pick<PageSource, 'collection' | 'preferenceApplied' | 'lastModified'>, page: BuiltPage): Reply {
  const fields: Record<string, string> = {};
  if (page.nextLink !== undefined) fields['Link'] = `<${page.nextLink}>; rel="next"`;
  if (source.preferenceApplied !== undefined) fields['Preference-Applied'] = source.preferenceApplied;
  const lastModified = Math.max(app.store.lastModified(source.collection) ?? 0, source.lastModified ?? 0);
  return readReply(app, rq, page.representation, {
    cacheControl: readCacheControl(app.policy, source.collection),
    // RFC 7240 §2: the page size depends on Prefer, so caches must key on it too.
    negotiated: ['Accept', 'Prefer'],
    contentType: page.contentType,
    fields,
    ...(lastModified > 0 ? { lastModified } : {}),
  });
}

export async function buildPage(app: App, source: PageSource, media: string): Promise<{ ok: true; page: BuiltPage } | { ok: false; problem: Problem }> {
  const { collection, plan } = source;
  const pace = { rows: YIELD_ROWS, steps: YIELD_STEPS, work: plan.work, yieldTurn: nextTurn };
  const request = { pageSize: source.start.pageSize, returned: source.returned, ...(source.after === undefined ? {} : { after: source.after }) };
  let page: Page;
  try {
    page = await runPage(app.store, collection, plan, request, pace, (name, terms) => app.indexes.candidates(name, terms));
  } catch (error) {
    // The filter passed its work budget (README, Collections: limits): the client must narrow it.
    if (!(error instanceof BudgetExceeded)) throw error;
    return { ok: false, problem: problem('bad-request', `$filter: ${error.message}`, { errors: [{ parameter: '$filter', detail: error.message }] }) };
  }
  const kept = keepWithinBytes(app, plan, page.items);
  const last = kept.records[kept.records.length - 1];
  const next = kept.records.length < page.items.length && last !== undefined ? keyOf(last.doc, last.id, plan.query.orderby) : page.next;
  const nextLink =
    next === undefined ? undefined : link(app, `${source.path}?$skiptoken=${signToken(app.pagingKey, { ...source.start, after: next, returned: source.returned + kept.records.length })}`);
  const linked = nextLink === undefined ? {} : { nextLink };
  if (media === CSV_TYPE) return { ok: true, page: { representation: represent(csvOf(kept.records.map(plan.project))), contentType: CSV_CONTENT_TYPE, ...linked } };
  if (media === HTML_TYPE) {
    const rows = kept.records.map((record) => ({ doc: plan.project(record), select: source.itemLink(record.id) }));
    const representation = listHtml(app, {
      title: source.path,
      rows,
      cacheControl: readCacheControl(app.policy, collection),
      ...(page.count === undefined ? {} : { count: page.count }),
      ...(nextLink === undefined ? {} : { next: nextLink }),
      ...(source.listPath === undefined ? {} : { list: link(app, source.listPath) }),
    });
    return { ok: true, page: { representation, contentType: HTML_CONTENT_TYPE, ...linked } };
  }
  return { ok: true, page: { representation: envelope(kept.json, page.count, nextLink), contentType: JSON_TYPE, ...linked } };
}

/** A 400 for a walk whose longest `@nextLink` could not stay under MAX_LINK_BYTES, before its first page. */
export function linkProblem(app: App, path: string, start: Omit<PagePosition, 'after' | 'returned'>, sortKeys: number): Problem | undefined {
  const longest = Buffer.byteLength(link(app, `${path}?$skiptoken=`)) + longestToken(app.pagingKey, start, sortKeys);
  if (longest <= MAX_LINK_BYTES) return undefined;
  const detail = `This query is too large to page through: its @nextLink could reach ${longest} bytes, over the ${MAX_LINK_BYTES} a link may have. Use a shorter $filter or fewer $orderby keys, or store it as a query resource (PUT /{collection}/$queries/{name}).`;
  return problem('bad-request', detail);
}

export function invalidTokenProblem(): Problem {
  return problem('bad-request', 'The $skiptoken is not valid here: it was altered, or it belongs to another collection, query or server. Start again from the first page.', {
    errors: [{ parameter: '$skiptoken', detail: 'not a token this server issued for this resource' }],
  });
}

/** The items whose JSON fits the page's byte budget; at least one, so a walk always moves on. */
function keepWithinBytes(app: App, plan: QueryPlan, items: readonly StoredRecord[]): { records: StoredRecord[]; json: Buffer[] } {
  const records: StoredRecord[] = [];
  const json: Buffer[] = [];
  let bytes = 0;
  for (const record of items) {
    if (records.length > 0 && bytes >= PAGE_BYTES) break;
    // A whole item is the representation the write path already serialized; a summary is made now.
    const projected = plan.query.select === undefined ? app.representations.itemJson(record).bytes : Buffer.from(JSON.stringify(plan.project(record)), 'utf8');
    records.push(record);
    json.push(projected);
    bytes += projected.length;
  }
  return { records, json };
}

/** `{ "@count"?, "value": [...], "@nextLink"? }`: the count first, as OData puts annotations. */
function envelope(items: readonly Buffer[], count: number | undefined, nextLink: string | undefined): Representation {
  const parts: Buffer[] = [Buffer.from(count === undefined ? '{"value":[' : `{"@count":${count},"value":[`)];
  items.forEach((item, index) => {
    if (index > 0) parts.push(Buffer.from(','));
    parts.push(item);
  });
  parts.push(Buffer.from(nextLink === undefined ? ']}' : `],"@nextLink":${JSON.stringify(nextLink)}}`));
  return represent(Buffer.concat(parts));
}

function csvOf(items: readonly JsonObject[]): string {
  const { columns, rows } = flattenRows(items);
  return writeCsv(columns, rows);
}
