// Query resources (CONVENTIONS.md#query-resources): a complex query stored as a resource with PUT; a
// GET on its URL runs it and answers a cacheable page.
//
// - PUT /{c}/$queries/{name} stores a definition `{ "filter", "orderby", "select" }` (every member
//   optional), validated when it is stored: a bad filter is 400 at the PUT, not at a later GET. The
//   same precondition rules as any PUT: If-None-Match: * creates, If-Match replaces, neither → 428.
//   Its ETag and the PUT's body are those of the definition, which is what the PUT replaced.
// - GET /{c}/$queries/{name} runs it: a collection page with its own ETag, 304 on revalidation.
//   Properties the definition names are not re-checked against the collection then (the field
//   registry never forgets a property, and a schema is fixed at start). The GET takes no options but
//   the `$skiptoken` of its own `@nextLink`, which continues the query resource (not the bare
//   collection) and ends the walk with a 400 if the definition was replaced meanwhile.
// - GET .../$definition returns the stored definition, never cached `public` whatever the
//   collection's policy (users edit it); DELETE removes the query.
import { problem, type Problem } from '../protocol/problem.js';
import { problemReply, type Reply } from '../http/respond.js';
import { readCacheControl } from '../http/cache-policy.js';
import type { JsonObject } from '../json.js';
import { parseOrderby, parseQueryString, parseSelect, type CollectionQuery } from '../query/options.js';
import { planQuery } from '../query/plan.js';
import type { StoredRecord } from '../store/types.js';
import type { App, RequestContext } from './context.js';
import { link } from './common.js';
import { collectionPlanContext, withSummary, type CollectionQuerying } from './collection-walk.js';
import { conditionalDelete, conditionalPut, type ConditionalWriting } from './conditional-writes.js';
import { pagedReply, type Paging, type Planned, type Walk } from './paging.js';
import { readReply, storedReply } from './replies.js';

const QUERY_SPACE = '$queries';

/** What storing a definition needs besides a conditional write: its validation, its answer. */
type QueryDefining = CollectionQuerying & Pick<App, 'policy'>;
const DEFINITION_MEMBERS = new Set(['filter', 'orderby', 'select']);

export function putQuery(app: ConditionalWriting & QueryDefining, rq: RequestContext): Promise<Reply> {
  const collection = rq.params.get('collection');
  const name = rq.params.get('name');
  return conditionalPut(app, rq, {
    collection: QUERY_SPACE,
    id: queryId(collection, name),
    document: (body) => checkDefinition(app, collection, body),
    reply: (status, record) => definitionWriteReply(app, status, record, collection, name),
  });
}

export function getQueryResults(app: Paging & CollectionQuerying, rq: RequestContext): Reply | Promise<Reply> {
  const collection = rq.params.get('collection');
  const name = rq.params.get('name');
  const record = app.store.get(QUERY_SPACE, queryId(collection, name));
  if (record === undefined) {
    // Its options are still checked first: a request that could never be answered says why.
    const options = queryResourceOptions(rq.query);
    return Promise.resolve(options.ok ? notFound(collection, name) : problemReply(options.problem));
  }
  return pagedReply(app, rq, queryWalk(app, collection, name, record));
}

/**
 * A query resource walks its collection with the stored definition; its tokens carry the definition's
 * version rather than the query, and a walk ends with a 400 if the definition was replaced meanwhile.
 */
function queryWalk(app: CollectionQuerying, collection: string, name: string, record: StoredRecord): Walk<null> {
  const path = `/${collection}/$queries/${name}`;
  const context = collectionPlanContext(app, collection);
  // Properties the definition names were checked when it was stored, and the registry never forgets one.
  const plan = (): Planned =>
    planQuery(withSummary(app, collection, queryOf(record.doc)), { ...context, known: () => true });
  return {
    collection,
    scope: `${collection}/$queries/${name}`,
    path,
    itemLink: context.itemLink,
    listPath: `/${collection}`,
    lastModified: record.modifiedAt,
    cacheable: false,
    options: (queryString) => {
      const options = queryResourceOptions(queryString);
      if (!options.ok) return options;
      return options.skiptoken === undefined
        ? { ok: true, first: null }
        : { ok: true, skiptoken: options.skiptoken };
    },
    begin: () => {
      const planned = plan();
      if (!planned.ok) return planned;
      return {
        ok: true,
        plan: planned.plan,
        carry: { definition: record.version },
        sortKeys: planned.plan.query.orderby.length,
      };
    },
    resume: (position) => {
      if (position.definition === undefined) return undefined;
      if (position.definition === record.version) return plan();
      const detail = `The query resource ${path} was replaced since this walk began; start again from its first page.`;
      const errors = [{ parameter: '$skiptoken', detail: 'the query changed' }];
      return { ok: false, problem: problem('bad-request', detail, { errors }) };
    },
  };
}

/** A query resource applies its stored definition: the only option it takes is its own $skiptoken. */
function queryResourceOptions(
  queryString: string,
): { ok: true; skiptoken?: string } | { ok: false; problem: Problem } {
  const refused = queryString
    .split('&')
    .filter((pair) => pair !== '')
    .map((pair) => optionName(pair.slice(0, pair.includes('=') ? pair.indexOf('=') : pair.length)))
    .find((name) => name !== '$skiptoken');
  if (refused !== undefined) {
    const detail =
      'A query resource runs its stored definition and takes no query options ' +
      `(only the $skiptoken of its own @nextLink); '${refused}' does not apply. ` +
      'Change the definition with PUT, or query the collection itself.';
    const errors = [{ parameter: refused, detail: 'not applied by a query resource' }];
    return { ok: false, problem: problem('bad-request', detail, { errors }) };
  }
  const parsed = parseQueryString(queryString);
  if (!parsed.ok) return parsed;
  return parsed.skiptoken === undefined ? { ok: true } : { ok: true, skiptoken: parsed.skiptoken };
}

/** A parameter name as written, percent-decoded when it can be (only for naming it in a problem). */
function optionName(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return raw;
  }
}

export function getQueryDefinition(
  app: Pick<App, 'store' | 'representations' | 'clock' | 'policy'>,
  rq: RequestContext,
): Reply {
  const collection = rq.params.get('collection');
  const name = rq.params.get('name');
  const record = app.store.get(QUERY_SPACE, queryId(collection, name));
  if (record === undefined) return notFound(collection, name);
  return readReply(app, rq, app.representations.itemJson(record), {
    // Not the collection's policy: a definition is edited by users, so it is never cached `public`.
    cacheControl: readCacheControl(app.policy),
    negotiated: ['Accept'],
    lastModified: record.modifiedAt,
  });
}

export function deleteQuery(app: ConditionalWriting, rq: RequestContext): Promise<Reply> {
  const id = queryId(rq.params.get('collection'), rq.params.get('name'));
  return conditionalDelete(app, rq, QUERY_SPACE, id, undefined);
}

function queryId(collection: string, name: string): string {
  return `${collection}/${name}`;
}

function checkDefinition(
  app: CollectionQuerying,
  collection: string,
  body: JsonObject,
): { ok: true; doc: JsonObject } | { ok: false; problem: Problem } {
  const errors: { pointer: string; detail: string }[] = [];
  for (const key of Object.keys(body)) {
    if (!DEFINITION_MEMBERS.has(key)) {
      errors.push({ pointer: `/${key}`, detail: 'not a member of a query definition (filter, orderby, select)' });
    }
  }
  const { filter, orderby, select } = body;
  if (filter !== undefined && typeof filter !== 'string') {
    errors.push({ pointer: '/filter', detail: 'must be a $filter expression string' });
  }
  if (orderby !== undefined && typeof orderby !== 'string') {
    errors.push({ pointer: '/orderby', detail: 'must be an $orderby string such as "price desc,name"' });
  }
  if (
    select !== undefined &&
    (!Array.isArray(select) || select.length === 0 || !select.every((path) => typeof path === 'string'))
  ) {
    errors.push({ pointer: '/select', detail: 'must be a non-empty array of property paths' });
  }
  if (errors.length > 0) {
    return { ok: false, problem: problem('invalid-body', 'The body is not a valid query definition.', { errors }) };
  }
  const query = queryOfChecked(
    filter as string | undefined,
    orderby as string | undefined,
    select as string[] | undefined,
  );
  if (typeof query === 'string') return { ok: false, problem: problem('invalid-body', query) };
  const planned = planQuery(query, collectionPlanContext(app, collection));
  if (!planned.ok) return { ok: false, problem: planned.problem };
  return { ok: true, doc: body };
}

/** The stored definition as a query (it was validated when stored). */
function queryOf(doc: JsonObject): CollectionQuery {
  const { filter, orderby, select } = doc;
  const query = queryOfChecked(
    typeof filter === 'string' ? filter : undefined,
    typeof orderby === 'string' ? orderby : undefined,
    Array.isArray(select) ? select.filter((path): path is string => typeof path === 'string') : undefined,
  );
  return typeof query === 'string' ? { conditions: [], orderby: [], count: false } : query;
}

function queryOfChecked(
  filter: string | undefined,
  orderby: string | undefined,
  select: string[] | undefined,
): CollectionQuery | string {
  let query: CollectionQuery = { conditions: [], orderby: [], count: false };
  if (filter !== undefined) query = { ...query, filter };
  if (orderby !== undefined) {
    const keys = parseOrderby(orderby);
    if (typeof keys === 'string') return `orderby: ${keys}`;
    query = { ...query, orderby: keys };
  }
  if (select !== undefined) {
    const paths = parseSelect(select.join(','));
    if (typeof paths === 'string') return `select: ${paths}`;
    query = { ...query, select: paths };
  }
  return query;
}

/** PUT's answer: the stored definition, which lives at `.../$definition` (the query runs at the resource). */
function definitionWriteReply(
  app: Pick<App, 'representations' | 'policy' | 'baseUrl'>,
  status: 200 | 201,
  record: StoredRecord,
  collection: string,
  name: string,
): Reply {
  const resource = link(app, `/${collection}/$queries/${name}`);
  return storedReply(app, status, record, resource, `${resource}/$definition`);
}

function notFound(collection: string, name: string): Reply {
  return problemReply(problem('not-found', `There is no query resource at /${collection}/$queries/${name}.`));
}
