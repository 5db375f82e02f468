// How a user collection is paged and queried (CONVENTIONS.md#paging, #summaries, #filter-errors-and-budget):
// the properties a query may name, the summary a page lists by default, and the `Walk` the paging
// flow follows. The collection's GET, the validators of its POST and its query resources all use
// these, so what one of them accepts or lists the others do too.
import { collectionConfig } from '../config.js';
import type { CollectionQuery } from '../query/options.js';
import { planQuery, type PlanContext } from '../query/plan.js';
import type { App } from './context.js';
import { itemPath, link } from './common.js';
import type { PagePosition } from '../query/token.js';
import { queryOptions, type Begun, type Planned, type Walk } from './paging.js';

/** What querying a user collection needs: its configuration, the properties it knows, the base of links. */
export type CollectionQuerying = Pick<App, 'config' | 'knownProperties' | 'baseUrl'>;

/** GET /{collection}: the request's own query options; a token carries the whole query. */
export function collectionWalk(app: CollectionQuerying, collection: string): Walk<CollectionQuery> {
  return new CollectionWalk(app, collection);
}

/**
 * A collection's walk, made on every GET of it: one object, whose links and plans are made only when a
 * page is built (a kept page needs none of them, lib/resources/paging.ts).
 */
class CollectionWalk implements Walk<CollectionQuery> {
  readonly cacheable = true;
  readonly options = queryOptions;

  constructor(
    private readonly app: CollectionQuerying,
    readonly collection: string,
  ) {}

  get scope(): string {
    return this.collection;
  }

  get path(): string {
    return `/${this.collection}`;
  }

  get itemLink(): (id: string) => string {
    return itemLinks(this.app, this.collection);
  }

  begin(parsed: CollectionQuery): Begun {
    const query = withSummary(this.app, this.collection, parsed);
    const planned = planQuery(query, collectionPlanContext(this.app, this.collection));
    return planned.ok ? { ok: true, plan: planned.plan, carry: { query }, sortKeys: query.orderby.length } : planned;
  }

  // A query the server signed was valid when the walk began; it is never checked again, so a
  // property that no item has any more cannot end a walk halfway (CONVENTIONS.md#skip-tokens).
  resume(position: PagePosition): Planned | undefined {
    if (position.query === undefined) return undefined;
    return planQuery(position.query, { ...collectionPlanContext(this.app, this.collection), known: () => true });
  }
}

/** The properties a query over `collection` may name, and where its items' select links lead. */
export function collectionPlanContext(app: CollectionQuerying, collection: string): PlanContext {
  // A configured summary names properties as a schema does, whether or not an item has them yet.
  const summary = collectionConfig(app.config, collection)?.summary;
  const registered = (path: readonly string[]): boolean => app.knownProperties.has(collection, path);
  const known =
    summary === undefined
      ? registered
      : (path: readonly string[]) => summary.includes(path.join('/')) || registered(path);
  return { known, itemLink: itemLinks(app, collection) };
}

/** Where an item of `collection` lives: a summary's `@id`, an HTML row's Select. */
function itemLinks(app: Pick<App, 'baseUrl'>, collection: string): (id: string) => string {
  return (id) => link(app, itemPath(collection, id));
}

/**
 * A collection configured with `summary` lists those fields plus `@id` unless the request's `$select`
 * asks otherwise, `$select=*` asking for whole items (CONVENTIONS.md#summaries).
 */
export function withSummary(app: Pick<App, 'config'>, collection: string, query: CollectionQuery): CollectionQuery {
  const summary = collectionConfig(app.config, collection)?.summary;
  if (summary === undefined || query.select !== undefined || query.wholeItems === true) return query;
  return { ...query, select: summary.map((path) => path.split('/')) };
}
