// The two answers every resource handler ends with, written once:
// - a conditional read: RFC 9110 §13.2.2 evaluation of the request's preconditions against the
//   representation about to be sent, then a 400/412 problem, a 304 carrying the fields the 200 would
//   have carried (RFC 9110 §15.4.5), or the 200 itself; one item is read as its JSON or, when the
//   client asked for text/html, as its page (lib/resources/html.ts);
// - the answer to a successful PUT (CONVENTIONS.md#put-responses): the stored representation, its ETag, where it lives
//   (Content-Location, RFC 9110 §8.7) and, on 201, the Location of the new resource.
import { decideOwnPreconditions, readPreconditionFields, type Validators } from '../protocol/conditional.js';
import { formatHttpDate } from '../protocol/http-date.js';
import { noStoreCacheControl, varyOf, type CachePolicy } from '../http/cache-policy.js';
import { JSON_TYPE, listedReply, problemReply, type Reply } from '../http/respond.js';
import type { StoredRecord } from '../store/types.js';
import type { App, RequestContext } from './context.js';
import { itemPath, link, verdictProblem } from './common.js';
import type { Representation } from '../protocol/representation.js';
import { HTML_CONTENT_TYPE, HTML_SECURITY_POLICY, HTML_TYPE, type ItemTable } from '../html/views.js';
import type { JsonObject } from '../json.js';
import { itemHtml } from './html.js';

const BY_ACCEPT = ['Accept'];

export interface ReadOptions {
  readonly cacheControl: string;
  /** Request fields the representation was chosen by (Vary). */
  readonly negotiated: readonly string[];
  readonly lastModified?: number;
  readonly contentType?: string;
  /** Further fields of the 200 (and so of the 304): Link, Preference-Applied. */
  readonly fields?: Readonly<Record<string, string>>;
}

export function readReply(
  app: Pick<App, 'clock' | 'policy'>,
  rq: RequestContext,
  representation: Representation,
  options: ReadOptions,
): Reply {
  const outcome = readOutcome(app, rq, readValidators(representation, options));
  return typeof outcome === 'number' ? readAnswer(app.policy, representation, options, outcome) : outcome;
}

/** What a read's preconditions are evaluated against: the representation's ETag and, if any, its Last-Modified. */
export function readValidators(representation: Representation, options: ReadOptions): Validators {
  return options.lastModified === undefined
    ? { etag: representation.etag }
    : { etag: representation.etag, lastModified: options.lastModified };
}

/** RFC 9110 §13.2.2 for a read: the 400 or 412 problem to answer, or which of the 200 and the 304. */
export function readOutcome(app: Pick<App, 'clock'>, rq: RequestContext, validators: Validators): Reply | 200 | 304 {
  const fields = readPreconditionFields(rq.req.rawHeaders);
  // The validators are the server's own (a representation's ETag, a stored time): not checked again.
  const verdict = decideOwnPreconditions(rq.req.method ?? 'GET', fields, validators, app.clock);
  if (verdict.kind === 'malformed' || verdict.kind === 'failed') return problemReply(verdictProblem(verdict));
  return verdict.kind === 'not-modified' ? 304 : 200;
}

/** The 200 of a read, or its 304: the same fields but Content-Type (RFC 9110 §15.4.5), without content. */
export function readAnswer(
  policy: CachePolicy,
  representation: Representation,
  options: ReadOptions,
  status: 200 | 304,
): Reply {
  // The fields listed once, in the order they are sent, as `send` hands them to writeHead.
  const fields: string[] = status === 304 ? [] : ['Content-Type', options.contentType ?? JSON_TYPE];
  fields.push('ETag', representation.etag, 'Cache-Control', options.cacheControl);
  if (options.lastModified !== undefined) {
    fields.push('Last-Modified', representation.lastModified ?? formatHttpDate(options.lastModified));
  }
  const vary = varyOf(policy, options.negotiated);
  if (vary !== undefined) fields.push('Vary', vary);
  const more = options.fields;
  if (more !== undefined) for (const name in more) fields.push(name, more[name] as string);
  if (options.contentType === HTML_CONTENT_TYPE) fields.push('Content-Security-Policy', HTML_SECURITY_POLICY);
  return status === 304 ? listedReply(status, fields) : listedReply(status, fields, representation.bytes);
}

/** What serving one stored item needs. */
export type ItemReading = Pick<App, 'clock' | 'policy' | 'representations' | 'baseUrl'>;

export interface ItemRead {
  /** The item's own path, the page's title. */
  readonly path: string;
  /** Where the page's List link leads. */
  readonly listPath: string;
  readonly cacheControl: string;
  /** The tables its HTML page shows after the JSON (lib/html/views.ts ItemTable). */
  readonly tables?: (doc: JsonObject) => readonly ItemTable[];
}

/** GET of one stored item: its JSON, or its HTML page when that is what was negotiated. */
export function itemReadReply(app: ItemReading, rq: RequestContext, record: StoredRecord, read: ItemRead): Reply {
  if (rq.media !== HTML_TYPE) return itemJsonReply(app, rq, record, read.cacheControl);
  const page = itemHtml(app, record, read.path, read.listPath, read.cacheControl, read.tables?.(record.doc));
  return readReply(app, rq, page, { ...itemReadOptions(record, read.cacheControl), contentType: HTML_CONTENT_TYPE });
}

/** GET of one stored item as its JSON: what nearly every read of an item asks for. */
export function itemJsonReply(
  app: Pick<App, 'clock' | 'policy' | 'representations'>,
  rq: RequestContext,
  record: StoredRecord,
  cacheControl: string,
): Reply {
  return readReply(app, rq, app.representations.itemJson(record), itemReadOptions(record, cacheControl));
}

/** How one stored item is read: chosen by Accept, validated by its ETag and modification time. */
export function itemReadOptions(record: StoredRecord, cacheControl: string): ReadOptions {
  return { cacheControl, negotiated: BY_ACCEPT, lastModified: record.modifiedAt };
}

export function storedReply(
  app: Pick<App, 'representations' | 'policy'>,
  status: 200 | 201,
  record: StoredRecord,
  location: string,
  contentLocation: string,
): Reply {
  const representation = app.representations.itemJson(record);
  const lastModified = representation.lastModified ?? formatHttpDate(record.modifiedAt);
  return representedReply(app, status, representation, lastModified, location, contentLocation);
}

/**
 * The answer to a write from the representation it stored: what storedReply answers, without a
 * Last-Modified when `lastModified` is undefined (the write is not committed yet: a keyed POST keeps
 * this answer in the same batch, and its replay takes the date from that batch's commit time).
 */
export function representedReply(
  app: Pick<App, 'policy'>,
  status: 200 | 201,
  representation: Representation,
  lastModified: string | undefined,
  location: string,
  contentLocation: string,
): Reply {
  // Listed in the order they are sent, as `send` hands them to writeHead: no header object per write.
  const fields = ['Content-Type', JSON_TYPE, 'ETag', representation.etag];
  if (lastModified !== undefined) fields.push('Last-Modified', lastModified);
  fields.push('Content-Location', contentLocation, 'Cache-Control', noStoreCacheControl(app.policy));
  if (status === 201) fields.push('Location', location);
  const vary = varyOf(app.policy, BY_ACCEPT);
  if (vary !== undefined) fields.push('Vary', vary);
  return listedReply(status, fields, representation.bytes);
}

/** Response to a successful write of an item: its representation, at its own URL. */
export function itemWriteReply(
  app: Pick<App, 'representations' | 'policy' | 'baseUrl'>,
  status: 200 | 201,
  record: StoredRecord,
): Reply {
  const location = link(app, itemPath(record.collection, record.id));
  return storedReply(app, status, record, location, location);
}
