// One page of a collection or query resource as a response (seed, "Collection envelope";
// CONTRACT §5): `{ "@count"?, "value": [...], "@nextLink"? }` in JSON, or the same items as CSV;
// `@nextLink` only when a next page exists (the key is absent, never null), also sent as
// `Link: <...>; rel="next"` (RFC 8288); a strong ETag of the bytes and 304 on revalidation;
// `Vary: Accept, Prefer` because both choose the bytes (RFC 7240 §2); `Preference-Applied` when a
// page-size preference was honoured (RFC 7240 §3).
import { readCacheControl } from '../http/cache-policy.js';
import { problem } from '../protocol/problem.js';
import { JSON_TYPE, type Reply } from '../http/respond.js';
import { flattenRows, writeCsv } from '../csv/write.js';
import type { JsonObject, JsonValue } from '../json.js';
import { runPage } from '../query/execute.js';
import type { QueryPlan } from '../query/plan.js';
import { signToken } from '../query/token.js';
import type { App, RequestContext } from './context.js';
import { link } from './common.js';
import { represent } from '../writes/representation.js';
import { readReply } from './replies.js';

/** RFC 4180 §3 registers text/csv with `charset` and `header` parameters. */
export const CSV_TYPE = 'text/csv';
const CSV_CONTENT_TYPE = 'text/csv; charset=utf-8; header=present';

export interface PageSource {
  readonly collection: string;
  readonly plan: QueryPlan;
  readonly pageSize: number;
  readonly after?: readonly JsonValue[];
  readonly returned: number;
  /** The page-size preference as applied, e.g. `odata.maxpagesize=10`, when the client sent one. */
  readonly preferenceApplied?: string;
  /** A later modification time than the collection's (a query resource's definition). */
  readonly lastModified?: number;
}

export function pageReply(app: App, rq: RequestContext, source: PageSource): Reply {
  const media = rq.media;
  const { collection, plan } = source;
  const page = runPage(app.store, collection, plan, { pageSize: source.pageSize, returned: source.returned, ...(source.after === undefined ? {} : { after: source.after }) });
  const nextLink =
    page.next === undefined
      ? undefined
      : link(app, `/${collection}?$skiptoken=${signToken(app.pagingKey, { scope: collection, query: plan.query, pageSize: source.pageSize, after: page.next, returned: source.returned + page.items.length })}`);
  const items: JsonObject[] = page.items.map(plan.project);
  const representation = represent(media === CSV_TYPE ? csvOf(items) : envelopeJson(items, page.count, nextLink));
  const fields: Record<string, string> = {};
  if (nextLink !== undefined) fields['Link'] = `<${nextLink}>; rel="next"`;
  if (source.preferenceApplied !== undefined) fields['Preference-Applied'] = source.preferenceApplied;
  const lastModified = Math.max(app.store.lastModified(collection) ?? 0, source.lastModified ?? 0);
  return readReply(app, rq, representation, {
    cacheControl: readCacheControl(app.policy, collection),
    // RFC 7240 §2: the page size depends on Prefer, so caches must key on it too.
    negotiated: ['Accept', 'Prefer'],
    contentType: media === CSV_TYPE ? CSV_CONTENT_TYPE : JSON_TYPE,
    fields,
    ...(lastModified > 0 ? { lastModified } : {}),
  });
}

/** `{ "@count"?, "value": [...], "@nextLink"? }`: the count first, as OData puts annotations. */
function envelopeJson(items: readonly JsonObject[], count: number | undefined, nextLink: string | undefined): string {
  const parts: string[] = [];
  if (count !== undefined) parts.push(`"@count":${count}`);
  parts.push(`"value":[${items.map((item) => JSON.stringify(item)).join(',')}]`);
  if (nextLink !== undefined) parts.push(`"@nextLink":${JSON.stringify(nextLink)}`);
  return `{${parts.join(',')}}`;
}

function csvOf(items: readonly JsonObject[]): string {
  const { columns, rows } = flattenRows(items);
  return writeCsv(columns, rows);
}

export function invalidTokenProblem(): ReturnType<typeof problem> {
  return problem('bad-request', 'The $skiptoken is not valid here: it was altered, or it belongs to another collection or server. Start again from the first page.', {
    errors: [{ parameter: '$skiptoken', detail: 'not a token this server issued for this collection' }],
  });
}
