// The HTML representations of resources (CONVENTIONS.md#html-pages; views in lib/html/views.ts). An
// HTML page is a representation of its own: its ETag is derived from its bytes, so it differs from
// the JSON one (CONVENTIONS.md#etags), and the page shows the JSON representation's ETag, which is the one a
// client sends back in If-Match, together with the Cache-Control the resource is served with.
import { itemPage, ListPage, type Fact, type ItemTable, type NavLink } from '../html/views.js';
import type { StoredRecord } from '../store/types.js';
import { represent, type Representation } from '../protocol/representation.js';
import type { App } from './context.js';
import { link } from './common.js';

/**
 * The page of one item: its JSON, the JSON's ETag and Last-Modified, and the read Cache-Control; then
 * the `tables` its resource shows besides.
 */
export function itemHtml(
  app: Pick<App, 'representations' | 'baseUrl'>,
  record: StoredRecord,
  path: string,
  listPath: string,
  cacheControl: string,
  tables: readonly ItemTable[] = [],
): Representation {
  const json = app.representations.itemJson(record);
  const facts: Fact[] = [
    { name: 'ETag (application/json)', value: json.etag },
    { name: 'Last-Modified', value: json.lastModified ?? '' },
    { name: 'Cache-Control', value: cacheControl },
  ];
  const nav = { home: link(app, '/'), list: link(app, listPath) };
  return represent(itemPage({ title: path, nav, doc: record.doc, facts, tables }));
}

export interface ListHtml {
  readonly title: string;
  readonly count?: number;
  /** Where List leads (a query resource's collection), when it is not this page's own path. */
  readonly list?: string;
  readonly cacheControl: string;
  /** On the service document, which is Home itself: no Home link, and links to the server's own listings. */
  readonly home?: { readonly related: readonly NavLink[] };
}

/**
 * A page of items (or of collections, for the service document) with Select links, built a row at a
 * time within the page's byte budget; its Next link is given when it is written.
 */
export function listHtml(app: Pick<App, 'baseUrl'>, view: ListHtml): ListPage {
  const nav = {
    ...(view.home === undefined ? { home: link(app, '/') } : { related: view.home.related }),
    ...(view.list === undefined ? {} : { list: view.list }),
  };
  const facts: Fact[] = [{ name: 'Cache-Control', value: view.cacheControl }];
  const count = view.count === undefined ? {} : { count: view.count };
  return new ListPage({ title: view.title, nav, ...count, facts });
}
