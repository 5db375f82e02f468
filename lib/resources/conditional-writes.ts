// Conditional PUT and DELETE, for everything that stores a resource: items, query resources and
// subscriptions (CONVENTIONS.md#conditional-create, #conditional-replace, #precondition-required,
// #delete-and-tombstones; RFC 9110 §13, RFC 6585 §3).
//
// Preconditions are evaluated before the body is read, so a stale If-Match with a malformed body is
// 412, not 400 (CONVENTIONS.md#precondition-order). The write then carries the version it was
// evaluated against; when another write lands in between, the store refuses it and the one
// compare-and-swap loop evaluates again against what the store holds now (lib/compare-and-swap.ts).
import { compareAndSwap, type CasStep } from '../compare-and-swap.js';
import {
  decideOwnPreconditions,
  hasEntityTagPrecondition,
  readPreconditionFields,
  type PreconditionFields,
  type Validators,
} from '../protocol/conditional.js';
import { problem, type Problem } from '../protocol/problem.js';
import { problemReply, type Reply } from '../http/respond.js';
import type { JsonObject } from '../json.js';
import type { Mutation, StoredRecord } from '../store/types.js';
import type { WriteResult } from '../writes/writer.js';
import type { App, RequestContext } from './context.js';
import { unavailableReply, verdictProblem, withJsonObject } from './common.js';

export type PutDocument =
  | { ok: true; doc: JsonObject; extra?: readonly Mutation[] }
  | { ok: false; problem: Problem };

/** Whether a write may go ahead as the store is now, and what goes with it. */
export type Admission = { ok: true; extra: readonly Mutation[] } | { ok: false; problem: Problem };

/** What a conditional write needs: the store to read and write, the settings, the clock, the log for a 503. */
export type ConditionalWriting = Pick<
  App,
  'store' | 'writer' | 'config' | 'clock' | 'random' | 'representations' | 'log'
>;

/** What a conditional PUT stores and how it answers: an item, a query resource, a subscription. */
export interface PutTarget {
  readonly collection: string;
  readonly id: string;
  /**
   * The document to store for a parsed body, and any record written with it (a subscription's
   * secret), or a problem; the write path validates the rest.
   */
  readonly document: (body: JsonObject) => PutDocument | Promise<PutDocument>;
  /**
   * Decided again at each attempt, against the record as the store holds it then: a bound on how
   * many there may be refuses a create, and `extra` goes with the write (a guard record whose
   * version it expects, so two creates racing for the last place cannot both take it).
   */
  readonly admit?: (current: StoredRecord | undefined) => Admission;
  readonly reply: (status: 200 | 201, record: StoredRecord) => Reply;
}

/** What a target without `admit` is: admitted, with nothing beside. */
const NOTHING: readonly Mutation[] = Object.freeze([]);
const ADMITTED: Admission = Object.freeze({ ok: true, extra: NOTHING });
/** The expectation of a create: nothing is stored under the id yet. */
const ABSENT = Object.freeze({ absent: true as const });

/**
 * PUT: 201 when it created, 200 when it replaced, 412 or 428 when its precondition says no. Each step
 * continues the one before (the body's read, the document, the write) rather than awaiting it in an
 * async function: a PUT spends no async frame of its own.
 */
export function conditionalPut(
  app: ConditionalWriting,
  rq: RequestContext,
  target: PutTarget,
): Promise<Reply> {
  const fields = readPreconditionFields(rq.req.rawHeaders);
  if (!hasEntityTagPrecondition(fields) && !app.config.allowUnconditionalPut) {
    return Promise.resolve(problemReply(preconditionRequired()));
  }
  const before = app.store.get(target.collection, target.id);
  const early = putRefusal(app, fields, before);
  if (early !== undefined) return Promise.resolve(early);
  return withJsonObject(rq.req, app.config.maxBodyBytes, (body) => {
    if (!body.ok) return body.reply;
    // Most targets make the document at once: continued only when it is a promise, so no turn is spent.
    const making = target.document(body.doc);
    return making instanceof Promise
      ? making.then((made) => writePut(app, rq, target, fields, before, made))
      : writePut(app, rq, target, fields, before, making);
  });
}

/** The write of a PUT whose preconditions held before its body was read, with the document it stores. */
function writePut(
  app: ConditionalWriting,
  rq: RequestContext,
  target: PutTarget,
  fields: PreconditionFields,
  before: StoredRecord | undefined,
  made: PutDocument,
): Reply | Promise<Reply> {
  if (!made.ok) return problemReply(made.problem);
  const { collection, id } = target;
  const { doc, extra = NOTHING } = made;
  // The body took time to arrive: every decision is made again against the state at the write. The
  // preconditions need it only if the record changed meanwhile: against the same record (immutable, so
  // the same object) and with no date to compare with the clock, they answer what they answered.
  const undated = fields.ifModifiedSince === undefined && fields.ifUnmodifiedSince === undefined;
  return compareAndSwap(
    app,
    (): Promise<CasStep<Reply>> => {
      const current = app.store.get(collection, id);
      const refused = current === before && undated ? undefined : putRefusal(app, fields, current);
      if (refused !== undefined) return Promise.resolve({ done: refused });
      const admitted = target.admit?.(current) ?? ADMITTED;
      if (!admitted.ok) return Promise.resolve({ done: problemReply(admitted.problem) });
      const expect = current === undefined ? ABSENT : { version: current.version };
      const put: Mutation = { kind: 'put', collection, id, doc, expect };
      const alone = extra.length === 0 && admitted.extra.length === 0;
      // Continued, not awaited in an async function: one promise for the write, no async frame.
      return app.writer
        .write(alone ? [put] : [put, ...extra, ...admitted.extra])
        .then((result) => putStep(app, rq, target, current === undefined ? 201 : 200, result));
    },
    () => unavailableReply(app, rq, 'PUT lost the race against concurrent writes too many times'),
  );
}

/** What a PUT's write came to: the answer, or a conflict to decide again. */
function putStep(
  app: ConditionalWriting,
  rq: RequestContext,
  target: PutTarget,
  status: 200 | 201,
  result: WriteResult,
): CasStep<Reply> {
  if (result.ok) return { done: target.reply(status, result.records[0] as StoredRecord) };
  if (result.reason === 'invalid') return { done: problemReply(result.problem) };
  if (result.reason === 'unavailable') return { done: unavailableReply(app, rq, result.detail) };
  return { conflict: true };
}

/**
 * DELETE, with If-Match when sent (RFC 9110 §13.1.1): 204 whether or not the resource existed, since
 * DELETE is idempotent; a tombstone is kept until `retainUntil` when given; `extra` goes with it.
 */
export function conditionalDelete(
  app: ConditionalWriting,
  rq: RequestContext,
  collection: string,
  id: string,
  retainUntil: number | undefined,
  extra: readonly Mutation[] = [],
): Promise<Reply> {
  const fields = readPreconditionFields(rq.req.rawHeaders);
  return compareAndSwap(
    app,
    async (): Promise<CasStep<Reply>> => {
      const current = app.store.get(collection, id);
      const verdict = decideOwnPreconditions('DELETE', fields, validatorsOf(app, current), app.clock);
      if (verdict.kind === 'malformed' || verdict.kind === 'failed') {
        return { done: problemReply(verdictProblem(verdict)) };
      }
      if (current === undefined) return { done: { status: 204, headers: {} } };
      const expect = { version: current.version };
      const deletion: Mutation =
        retainUntil === undefined
          ? { kind: 'delete', collection, id, expect }
          : { kind: 'delete', collection, id, expect, retainUntil };
      const result = await app.writer.write([deletion, ...extra]);
      if (result.ok) return { done: { status: 204, headers: {} } };
      if (result.reason === 'unavailable') return { done: unavailableReply(app, rq, result.detail) };
      return { conflict: true };
    },
    () => unavailableReply(app, rq, 'DELETE lost the race against concurrent writes too many times'),
  );
}

/** The validators of a stored resource: those of its JSON, the representation a write replaces. */
function validatorsOf(app: Pick<App, 'representations'>, record: StoredRecord | undefined): Validators | undefined {
  if (record === undefined) return undefined;
  return { etag: app.representations.itemJson(record).etag, lastModified: record.modifiedAt };
}

/** The answer a PUT's preconditions give against `current`, or undefined when the write may go ahead. */
function putRefusal(
  app: Pick<App, 'representations' | 'clock'>,
  fields: PreconditionFields,
  current: StoredRecord | undefined,
): Reply | undefined {
  // The validators are the server's own (a representation's ETag, a stored time): not checked again.
  const verdict = decideOwnPreconditions('PUT', fields, validatorsOf(app, current), app.clock);
  if (verdict.kind === 'malformed') return problemReply(verdictProblem(verdict));
  if (verdict.kind === 'failed') return problemReply(putPreconditionFailed(verdict.field, current));
  return undefined;
}

/** RFC 6585 §3: this server requires conditional writes, so a lost update cannot happen silently. */
function preconditionRequired(): Problem {
  const detail =
    'This PUT must be conditional: send If-None-Match: * to create the resource, or If-Match: "<etag>" ' +
    '(from a GET) to replace it.';
  return problem('precondition-required', detail, {
    errors: [
      { header: 'If-Match', detail: 'required to replace' },
      { header: 'If-None-Match', detail: 'send * to create' },
    ],
  });
}

function putPreconditionFailed(field: string, current: StoredRecord | undefined): Problem {
  if (field === 'If-None-Match' && current !== undefined) {
    const detail =
      'The resource already exists, so If-None-Match: * fails. GET it, merge, and replace it with If-Match.';
    return problem('precondition-failed', detail);
  }
  if (field === 'If-Match' && current === undefined) {
    const detail = 'The resource does not exist, so If-Match fails. Create it with If-None-Match: *.';
    return problem('precondition-failed', detail);
  }
  const detail =
    `The ${field} precondition is not met: the resource changed. ` +
    'GET it again, merge, and retry with its current ETag.';
  return problem('precondition-failed', detail);
}
