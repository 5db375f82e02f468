// PUT /{collection}/$bulk (seed, "Bulk price-style update body": "The service applies newPrice only
// when the stored value still equals currentPrice. Records already updated are skipped."; CONTRACT
// §6). The body is text/csv (RFC 4180); every applied row commits in one atomic store batch, each
// write conditional on the version the row was decided against, so a concurrent change between
// deciding and committing makes the whole file be decided again rather than overwritten. Sending
// the same file twice changes nothing the second time: every row is then "skipped".
import { isCsvMediaType } from '../protocol/content-type.js';
import { noStoreCacheControl } from '../http/cache-policy.js';
import { readBody } from '../http/body.js';
import { problem } from '../protocol/problem.js';
import { jsonReply, problemReply, type Reply } from '../http/respond.js';
import { parseCsv } from '../csv/parse.js';
import { planBulk, readBulkHeader, reportOf, type BulkProblem } from '../bulk/plan.js';
import type { Mutation } from '../store/types.js';
import type { App, RequestContext } from './context.js';
import { acceptsJson, checkContent, contentReply, tooLargeReply, type BodyKind } from './common.js';
import { unavailableReply } from './items.js';

const MAX_PLAN_ATTEMPTS = 5;
const CSV_BODY: BodyKind = { accepts: isCsvMediaType, name: 'text/csv (RFC 4180)' };

export async function putBulk(app: App, rq: RequestContext, collection: string): Promise<Reply> {
  const notAcceptable = acceptsJson(rq.req);
  if (notAcceptable !== undefined) return problemReply(notAcceptable);
  const contentProblem = checkContent(rq.req, app.config.maxBodyBytes, CSV_BODY);
  if (contentProblem !== undefined) return contentReply(contentProblem);
  const body = await readBody(rq.req, app.config.maxBodyBytes);
  if (!body.ok) return body.reason === 'too-large' ? tooLargeReply(app.config.maxBodyBytes) : problemReply(problem('bad-request', 'The request body ended early.'));
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(body.bytes);
  } catch {
    return problemReply(problem('invalid-body', 'The CSV is not valid UTF-8.'));
  }
  const csv = parseCsv(text);
  if (!csv.ok) return rowProblem({ kind: 'bulk', message: csv.error.message, row: csv.error.row });
  const [header, ...rows] = csv.rows;
  if (header === undefined) return rowProblem({ kind: 'bulk', message: 'row 1: the file is empty; the header row is missing', row: 1 });
  const columns = readBulkHeader(header);
  if (!columns.ok) return rowProblem(columns.problem);
  for (let attempt = 0; attempt < MAX_PLAN_ATTEMPTS; attempt++) {
    const versions = new Map<string, number>();
    const planned = planBulk(columns.columns, rows, (id) => {
      const record = app.store.get(collection, id);
      if (record !== undefined) versions.set(id, record.version);
      return record?.doc;
    });
    if (!planned.ok) return rowProblem(planned.problem);
    const mutations: Mutation[] = [...planned.plan.updates].map(([id, doc]) => ({ kind: 'put', collection, id, doc, expect: { version: versions.get(id) as number } }));
    if (mutations.length > 0) {
      const result = await app.store.commit({ mutations });
      if (!result.ok && result.reason === 'unavailable') return unavailableReply(app, rq, result.detail);
      if (!result.ok) continue;
    }
    return jsonReply(200, Buffer.from(JSON.stringify(reportOf(planned.plan))), { 'Cache-Control': noStoreCacheControl(app.policy) });
  }
  return unavailableReply(app, rq, 'bulk update lost the race against concurrent writes too many times');
}

function rowProblem(bulk: BulkProblem): Reply {
  return problemReply(problem('invalid-body', bulk.message, { errors: [{ row: bulk.row, detail: bulk.message }] }));
}
