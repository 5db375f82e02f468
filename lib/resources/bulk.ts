// PUT /{collection}/$bulk (CONVENTIONS.md#bulk-updates): a new value is applied only where the stored
// one still equals the row's current value, and rows already updated are skipped. The body is
// text/csv (RFC 4180); every applied row goes through the write path in one atomic batch, each write
// conditional on the version the row was decided against, so a concurrent change between deciding
// and committing makes the whole file be decided again (the one compare-and-swap loop,
// lib/compare-and-swap.ts) rather than overwritten. Bulk files over one collection take turns, so they
// never undo each other's decisions. A row whose new
// document the write path refuses makes the file a 400 naming the row, as a PUT of that document
// would be. Sending the same file twice changes nothing the second time: every row is then "skipped".
import { noStoreCacheControl } from '../http/cache-policy.js';
import { readBody, unreadBodyReply } from '../http/body.js';
import { problem, type Problem } from '../protocol/problem.js';
import { jsonReply, problemReply, type Reply } from '../http/respond.js';
import { parseCsv } from '../csv/parse.js';
import { planBulk, readBulkHeader, reportOf, type BulkColumns, type BulkProblem } from '../bulk/plan.js';
import type { JsonObject } from '../json.js';
import type { Mutation } from '../store/types.js';
import type { App, RequestContext } from './context.js';
import { unavailableReply } from './common.js';
import { compareAndSwap, type CasStep } from '../compare-and-swap.js';

/** What a bulk file needs: the store to decide against, the write path, its turn, the settings. */
type BulkWriting = Pick<App, 'store' | 'writer' | 'config' | 'policy' | 'clock' | 'random' | 'log' | 'bulkTurns'>;

export async function putBulk(app: BulkWriting, rq: RequestContext): Promise<Reply> {
  const collection = rq.params.get('collection');
  const body = await readBody(rq.req, app.config.maxBodyBytes);
  if (!body.ok) return unreadBodyReply(body.reason, app.config.maxBodyBytes);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(body.bytes);
  } catch {
    return problemReply(problem('invalid-body', 'The CSV is not valid UTF-8.'));
  }
  const csv = parseCsv(text);
  if (!csv.ok) return rowProblem({ kind: 'bulk', message: csv.error.message, row: csv.error.row });
  const [header, ...rows] = csv.rows;
  if (header === undefined) {
    return rowProblem({ kind: 'bulk', message: 'row 1: the file is empty; the header row is missing', row: 1 });
  }
  const columns = readBulkHeader(header);
  if (!columns.ok) return rowProblem(columns.problem);
  // The turn is taken once the file is read, so a slow upload holds up no one.
  return app.bulkTurns.run(collection, () => applyBulk(app, rq, collection, columns.columns, rows));
}

function applyBulk(
  app: BulkWriting,
  rq: RequestContext,
  collection: string,
  columns: BulkColumns,
  rows: readonly (readonly string[])[],
): Promise<Reply> {
  return compareAndSwap(
    app,
    async (): Promise<CasStep<Reply>> => {
      const versions = new Map<string, number>();
      const planned = planBulk(columns, rows, (id) => {
        const record = app.store.get(collection, id);
        if (record !== undefined) versions.set(id, record.version);
        return record?.doc;
      });
      if (!planned.ok) return { done: rowProblem(planned.problem) };
      const applied = planned.plan.outcomes.filter((outcome) => outcome.outcome === 'applied');
      const changes: Mutation[] = applied.map(({ id }) => ({
        kind: 'put',
        collection,
        id,
        doc: planned.plan.updates.get(id) as JsonObject,
        expect: { version: versions.get(id) as number },
      }));
      if (changes.length > 0) {
        const result = await app.writer.write(changes);
        if (!result.ok && result.reason === 'invalid') {
          return { done: refusedRow(applied[result.index]?.row ?? 0, result.problem) };
        }
        if (!result.ok && result.reason === 'unavailable') return { done: unavailableReply(app, rq, result.detail) };
        // A row changed after it was decided: the file is decided again.
        if (!result.ok) return { conflict: true };
      }
      const report = Buffer.from(JSON.stringify(reportOf(planned.plan)));
      return { done: jsonReply(200, report, { 'Cache-Control': noStoreCacheControl(app.policy) }) };
    },
    () => {
      // Not a store failure: the rows kept changing. A retry is welcome (CONVENTIONS.md#problem-details).
      app.log('warn', 'bulk update kept losing to concurrent writes of its rows', {
        requestId: rq.requestId,
        collection,
      });
      return problemReply(problem('unavailable', ''), { 'Retry-After': '1' });
    },
  );
}

function rowProblem(bulk: BulkProblem): Reply {
  return problemReply(problem('invalid-body', bulk.message, { errors: [{ row: bulk.row, detail: bulk.message }] }));
}

/** The write path refused a row's new document: the same problem a PUT of it would get, naming the row. */
function refusedRow(row: number, refused: Problem): Reply {
  const errors = (refused.errors ?? [{ detail: refused.detail }]).map((item) => ({
    ...item,
    row,
    detail: `row ${row}: ${item.detail}`,
  }));
  return problemReply(problem('invalid-body', `row ${row}: ${refused.detail}`, { errors }));
}
