// One page as bytes (CONVENTIONS.md#collection-envelope): `{ "@count"?, "value": [...], "@nextLink"? }`
// in JSON, or the same walk as CSV or as an HTML table whose rows select their detail
// (lib/resources/html.ts); `@nextLink` only when a next page exists (the key is absent, never null).
// Which page, and the reply around it, are the paging flow's (lib/resources/paging.ts).
//
// A page is bounded in bytes as well as in items (CONVENTIONS.md#page-byte-budget): whatever its media
// type, it ends before the item that would carry its body, as sent, past `limits.pageBytes`, with its
// next link after the last item it holds. The body is measured while it is built (a CSV's columns and
// every row's fields for them, HTML's escaping, the next link itself), never built first and measured
// after, so no page is too large to build or to send whatever the items weigh. A JSON page's first
// item always goes out (it is the stored item, at most the body cap); a CSV or HTML page that cannot
// hold even its first item is refused with a 400 that names the limit.
import { nextTurn } from '../clock.js';
import { readCacheControl } from '../http/cache-policy.js';
import { problem, type Problem } from '../protocol/problem.js';
import { JSON_TYPE } from '../http/respond.js';
import { BudgetExceeded } from '../filter/index.js';
import { CsvTable } from '../csv/write.js';
import { runPage, type Page, type RecordSource } from '../query/execute.js';
import { keyOf, type SortValue } from '../query/order.js';
import type { QueryPlan } from '../query/plan.js';
import { signToken, type PagePosition } from '../query/token.js';
import type { StoredRecord } from '../store/types.js';
import { represent } from '../protocol/representation.js';
import type { App } from './context.js';
import { link } from './common.js';
import type { BuiltPage, PageKey } from './page-cache.js';
import { HTML_CONTENT_TYPE, HTML_TYPE, type NavLink } from '../html/views.js';
import { listHtml } from './html.js';

/** RFC 4180 §3 registers text/csv with `charset` and `header` parameters. */
export const CSV_TYPE = 'text/csv';
const CSV_CONTENT_TYPE = 'text/csv; charset=utf-8; header=present';
const COMMA = Buffer.from(',');
const END = ']}';
/** How often a scan gives the event loop a turn: every so many rows, or so many filter steps. */
const YIELD_ROWS = 2048;
const YIELD_STEPS = 200_000;

/** What building a page needs: the items, their representations, the links and the cache policy it shows. */
export type PageBuilding = Pick<
  App, 'store' | 'indexes' | 'pagingKey' | 'policy' | 'representations' | 'baseUrl' | 'config'
>;

/** What an HTML page of the service document shows instead of a collection's: Home's title and links. */
export interface HomeView {
  readonly title: string;
  readonly related: readonly NavLink[];
}

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
  readonly cacheKey?: PageKey;
  /** Where the items come from when they are not the store space `collection` (the service document). */
  readonly records?: RecordSource;
  /** Set when the walk is Home itself (the service document). */
  readonly home?: HomeView;
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
    page = await runPage(source.records ?? app.store, collection, plan, request, pace, (name, terms) =>
      app.indexes.candidates(name, terms),
    );
  } catch (error) {
    // The filter passed its work budget (CONVENTIONS.md#filter-errors-and-budget): the client must narrow it.
    if (!(error instanceof BudgetExceeded)) throw error;
    const errors = [{ parameter: '$filter', detail: error.message }];
    return { ok: false, problem: problem('bad-request', `$filter: ${error.message}`, { errors }) };
  }
  const budget = app.config.limits.pageBytes;
  const body = pageBody(app, source, media, page.count);
  for (const record of page.items) {
    // A JSON page's first item is the item as stored, at most the body cap: it goes out even alone over
    // the budget, so a JSON walk always moves on.
    if (!body.add(record, body.items === 0 && body.json ? Number.POSITIVE_INFINITY : budget)) break;
  }
  if (body.items === 0 && page.items.length > 0) return { ok: false, problem: overBudgetProblem(media, budget) };
  const nextLinkAt = (count: number): string | undefined => {
    const last = page.items[count - 1];
    const cut = count < page.items.length && last !== undefined;
    const next = cut ? keyOf(last.doc, last.id, plan.query.orderby) : page.next;
    if (next === undefined) return undefined;
    const token = signToken(app.pagingKey, { ...source.start, after: next, returned: source.returned + count });
    return link(app, `${source.path}?$skiptoken=${token}`);
  };
  let nextLink = nextLinkAt(body.items);
  // The next link is part of a JSON or HTML page's bytes: make room for it.
  while (body.items > 0 && body.bytes(nextLink) > budget && !(body.json && body.items === 1)) {
    body.pop();
    if (body.items === 0) return { ok: false, problem: overBudgetProblem(media, budget) };
    nextLink = nextLinkAt(body.items);
  }
  const representation = represent(body.text(nextLink));
  const linked = nextLink === undefined ? {} : { nextLink };
  const { pageSize } = source.start;
  return { ok: true, page: { representation, contentType: body.contentType, pageSize, ...linked } };
}

/**
 * A page's body as it is built, an item at a time, knowing its bytes before it is written
 * (CONVENTIONS.md#page-byte-budget).
 */
interface PageBody {
  readonly contentType: string;
  /** Whether this is the JSON envelope, whose first item is never refused. */
  readonly json: boolean;
  readonly items: number;
  /** Adds the next item unless the body, without a next link, would then pass `limit` bytes. */
  add(record: StoredRecord, limit: number): boolean;
  /** Takes the last item back out. */
  pop(): void;
  /** The body's UTF-8 bytes with `nextLink` (CSV carries it in Link only). */
  bytes(nextLink: string | undefined): number;
  text(nextLink: string | undefined): string | Buffer;
}

function pageBody(app: PageBuilding, source: PageSource, media: string, count: number | undefined): PageBody {
  const { plan } = source;
  if (media === CSV_TYPE) {
    const table = new CsvTable();
    return {
      contentType: CSV_CONTENT_TYPE,
      json: false,
      get items() {
        return table.rows;
      },
      add: (record, limit) => table.add(plan.project(record), limit),
      pop: () => table.pop(),
      bytes: () => table.bytes,
      text: () => table.text(),
    };
  }
  if (media === HTML_TYPE) {
    const html = listHtml(app, {
      title: source.home?.title ?? source.path,
      cacheControl: readCacheControl(app.policy, source.collection),
      ...(count === undefined ? {} : { count }),
      ...(source.listPath === undefined ? {} : { list: link(app, source.listPath) }),
      ...(source.home === undefined ? {} : { home: source.home }),
    });
    return {
      contentType: HTML_CONTENT_TYPE,
      json: false,
      get items() {
        return html.rowCount;
      },
      add: (record, limit) => html.add({ doc: plan.project(record), select: source.itemLink(record.id) }, limit),
      pop: () => html.pop(),
      bytes: (nextLink) => html.bytes(nextLink),
      text: (nextLink) => html.text(nextLink),
    };
  }
  return new JsonEnvelope(app, plan, count);
}

/** `{ "@count"?, "value": [...], "@nextLink"? }`: the count first, as OData puts annotations. */
class JsonEnvelope implements PageBody {
  readonly contentType = JSON_TYPE;
  readonly json = true;
  private readonly values: Buffer[] = [];
  private valueBytes = 0;
  private readonly start: Buffer;

  constructor(
    private readonly app: Pick<App, 'representations'>,
    private readonly plan: QueryPlan,
    count: number | undefined,
  ) {
    this.start = Buffer.from(count === undefined ? '{"value":[' : `{"@count":${count},"value":[`);
  }

  get items(): number {
    return this.values.length;
  }

  add(record: StoredRecord, limit: number): boolean {
    // A whole item is the representation the write path already serialized; a summary is made now.
    const value =
      this.plan.query.select === undefined
        ? this.app.representations.itemJson(record).bytes
        : Buffer.from(JSON.stringify(this.plan.project(record)), 'utf8');
    const bytes = this.start.length + this.valueBytes + value.length + this.values.length + END.length;
    if (bytes > limit) return false;
    this.values.push(value);
    this.valueBytes += value.length;
    return true;
  }

  pop(): void {
    const value = this.values.pop();
    if (value === undefined) throw new TypeError('JsonEnvelope.pop: the page has no items');
    this.valueBytes -= value.length;
  }

  bytes(nextLink: string | undefined): number {
    const commas = Math.max(this.values.length - 1, 0);
    return this.start.length + this.valueBytes + commas + Buffer.byteLength(this.end(nextLink));
  }

  text(nextLink: string | undefined): Buffer {
    const parts: Buffer[] = [this.start];
    this.values.forEach((value, index) => {
      if (index > 0) parts.push(COMMA);
      parts.push(value);
    });
    parts.push(Buffer.from(this.end(nextLink)));
    return Buffer.concat(parts);
  }

  private end(nextLink: string | undefined): string {
    return nextLink === undefined ? END : `],"@nextLink":${JSON.stringify(nextLink)}}`;
  }
}

/** A 400 for a page that cannot hold even its first item in the media type asked for. */
function overBudgetProblem(media: string, budget: number): Problem {
  const detail =
    `The next item does not fit on a ${media} page: alone, with its columns, it passes the page byte ` +
    `budget (limits.pageBytes, ${budget} bytes). Ask for fewer properties with $select, or for ` +
    'application/json, whose pages always hold at least one item.';
  return problem('bad-request', detail);
}
