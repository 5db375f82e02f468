// One page as bytes (CONVENTIONS.md#collection-envelope): `{ "@count"?, "value": [...], "@nextLink"? }`
// in JSON, or the same items as CSV or as an HTML table whose rows select their detail
// (lib/resources/html.ts); `@nextLink` only when a next page exists (the key is absent, never null).
// Which page, and the reply around it, are the paging flow's (lib/resources/paging.ts).
//
// A page is bounded in bytes as well as in items (CONVENTIONS.md#page-byte-budget): once its items
// pass PAGE_BYTES of JSON it ends, with `@nextLink` after the last item it holds, so no page is too
// large to build or to send whatever the items weigh.
import { nextTurn } from '../clock.js';
import { readCacheControl } from '../http/cache-policy.js';
import { problem, type Problem } from '../protocol/problem.js';
import { JSON_TYPE } from '../http/respond.js';
import { BudgetExceeded } from '../filter/index.js';
import { flattenRows, writeCsv } from '../csv/write.js';
import type { JsonObject } from '../json.js';
import { runPage, type Page } from '../query/execute.js';
import { keyOf, type SortValue } from '../query/order.js';
import type { QueryPlan } from '../query/plan.js';
import { signToken, type PagePosition } from '../query/token.js';
import type { StoredRecord } from '../store/types.js';
import { represent, type Representation } from '../protocol/representation.js';
import type { App } from './context.js';
import { link } from './common.js';
import type { BuiltPage } from './page-cache.js';
import { HTML_CONTENT_TYPE, HTML_TYPE } from '../html/views.js';
import { listHtml } from './html.js';

/** RFC 4180 §3 registers text/csv with `charset` and `header` parameters. */
export const CSV_TYPE = 'text/csv';
const CSV_CONTENT_TYPE = 'text/csv; charset=utf-8; header=present';
/** A page ends once its items pass this many bytes of JSON (the last item may carry it past). */
const PAGE_BYTES = 4 * 1024 * 1024;
/** How often a scan gives the event loop a turn: every so many rows, or so many filter steps. */
const YIELD_ROWS = 2048;
const YIELD_STEPS = 200_000;

/** What building a page needs: the items, their representations, the links and the cache policy it shows. */
export type PageBuilding = Pick<App, 'store' | 'indexes' | 'pagingKey' | 'policy' | 'representations' | 'baseUrl'>;

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
  /** What names this page among the collection's pages in the page cache, when it may be kept there. */
  readonly cacheKey?: string;
}

export async function buildPage(
  app: PageBuilding,
  source: PageSource,
  media: string,
): Promise<{ ok: true; page: BuiltPage } | { ok: false; problem: Problem }> {
  const { collection, plan } = source;
  const pace = { rows: YIELD_ROWS, steps: YIELD_STEPS, work: plan.work, yieldTurn: nextTurn };
  const request = {
    pageSize: source.start.pageSize,
    returned: source.returned,
    ...(source.after === undefined ? {} : { after: source.after }),
  };
  let page: Page;
  try {
    page = await runPage(app.store, collection, plan, request, pace, (name, terms) =>
      app.indexes.candidates(name, terms),
    );
  } catch (error) {
    // The filter passed its work budget (CONVENTIONS.md#filter-errors-and-budget): the client must narrow it.
    if (!(error instanceof BudgetExceeded)) throw error;
    const errors = [{ parameter: '$filter', detail: error.message }];
    return { ok: false, problem: problem('bad-request', `$filter: ${error.message}`, { errors }) };
  }
  const kept = keepWithinBytes(app, plan, page.items);
  const last = kept.records[kept.records.length - 1];
  const next =
    kept.records.length < page.items.length && last !== undefined
      ? keyOf(last.doc, last.id, plan.query.orderby)
      : page.next;
  const returned = source.returned + kept.records.length;
  const nextLink =
    next === undefined
      ? undefined
      : link(app, `${source.path}?$skiptoken=${signToken(app.pagingKey, { ...source.start, after: next, returned })}`);
  const linked = nextLink === undefined ? {} : { nextLink };
  if (media === CSV_TYPE) {
    const representation = represent(csvOf(kept.records.map(plan.project)));
    return { ok: true, page: { representation, contentType: CSV_CONTENT_TYPE, ...linked } };
  }
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
  const representation = envelope(kept.json, page.count, nextLink);
  return { ok: true, page: { representation, contentType: JSON_TYPE, ...linked } };
}

/** The items whose JSON fits the page's byte budget; at least one, so a walk always moves on. */
function keepWithinBytes(
  app: Pick<App, 'representations'>,
  plan: QueryPlan,
  items: readonly StoredRecord[],
): { records: StoredRecord[]; json: Buffer[] } {
  const records: StoredRecord[] = [];
  const json: Buffer[] = [];
  let bytes = 0;
  for (const record of items) {
    if (records.length > 0 && bytes >= PAGE_BYTES) break;
    // A whole item is the representation the write path already serialized; a summary is made now.
    const projected =
      plan.query.select === undefined
        ? app.representations.itemJson(record).bytes
        : Buffer.from(JSON.stringify(plan.project(record)), 'utf8');
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
