// Preconditions: the four conditional request fields of RFC 9110 §13.1, read from the field lines and
// evaluated in the order of §13.2.2, as a pure decision that the HTTP layer applies
// (CONVENTIONS.md#precondition-order). No I/O, no clock unless the caller leaves `now` out.
// The caller owns §13.2.1: preconditions are evaluated only when the request, without them, would
// get a 2xx or 412 (a GET of a missing resource is a 404 with every precondition ignored), and only
// after the state-independent checks (401, 405, 406, 413, 415) and before the body is read.
import { isEntityTag, parseEntityTag, parseEntityTagList, strongCompare, weakCompare } from './etag.js';
import type { EntityTag, EntityTagList } from './etag.js';
import { DQUOTE, sameFieldName } from './field-syntax.js';
import { parseHttpDate } from './http-date.js';
import { systemClock } from '../clock.js';

/** Validators of the selected representation; `undefined` for the whole argument means the resource does not exist. */
export interface Validators {
  /** An entity-tag as sent in ETag, e.g. '"abc"'. */
  readonly etag: string;
  /** Last modification time in ms since the epoch; absent when the resource has none. */
  readonly lastModified?: number;
}

/**
 * Every received field line of each header, as in Node's req.headersDistinct (Node folds or drops duplicates
 * in req.headers).
 */
export interface PreconditionFields {
  readonly ifMatch?: readonly string[];
  readonly ifNoneMatch?: readonly string[];
  readonly ifModifiedSince?: readonly string[];
  readonly ifUnmodifiedSince?: readonly string[];
}

export type PreconditionVerdict =
  | { readonly kind: 'proceed' }
  | { readonly kind: 'not-modified' } // respond 304 (GET/HEAD only)
  // respond 412
  | { readonly kind: 'failed'; readonly field: 'If-Match' | 'If-Unmodified-Since' | 'If-None-Match' }
  // respond 400
  | { readonly kind: 'malformed'; readonly field: 'If-Match' | 'If-None-Match'; readonly detail: string };

export interface PreconditionOptions {
  /** The origin server's clock in ms since the epoch (default: the system clock). */
  readonly now?: number;
}

const MS_PER_SECOND = 1000;
const LOWER_I = 0x69;
const LOWER_F = 0x66;
const PROCEED: PreconditionVerdict = Object.freeze({ kind: 'proceed' });
const NOT_MODIFIED: PreconditionVerdict = Object.freeze({ kind: 'not-modified' });
const NO_FIELDS: PreconditionFields = Object.freeze({});
const IF_MATCH = 'if-match';
const IF_NONE_MATCH = 'if-none-match';
const IF_MODIFIED_SINCE = 'if-modified-since';
const IF_UNMODIFIED_SINCE = 'if-unmodified-since';

/**
 * The four fields from a request's raw field lines (Node's `rawHeaders`: name, value, name, value…),
 * every line kept (RFC 9110 §5.3): a date sent twice must be ignored (§13.1.3–4), which a folded
 * value cannot tell. One pass for all four, since most requests carry none of them.
 */
export function readPreconditionFields(raw: readonly string[]): PreconditionFields {
  let fields: {
    ifMatch?: string[];
    ifNoneMatch?: string[];
    ifModifiedSince?: string[];
    ifUnmodifiedSince?: string[];
  } | undefined;
  for (let index = 0; index < raw.length; index += 2) {
    const name = raw[index] as string;
    // Not "if-…": the shortest of the four names has eight characters.
    if (name.length < 8 || (name.charCodeAt(0) | 0x20) !== LOWER_I || (name.charCodeAt(1) | 0x20) !== LOWER_F) continue;
    const value = raw[index + 1] as string;
    // The four names differ in length: each is compared in place with the one of its length.
    switch (name.length) {
      case IF_MATCH.length:
        if (sameFieldName(name, IF_MATCH)) (fields ??= {}).ifMatch = withLine(fields.ifMatch, value);
        break;
      case IF_NONE_MATCH.length:
        if (sameFieldName(name, IF_NONE_MATCH)) (fields ??= {}).ifNoneMatch = withLine(fields.ifNoneMatch, value);
        break;
      case IF_MODIFIED_SINCE.length:
        if (sameFieldName(name, IF_MODIFIED_SINCE)) {
          (fields ??= {}).ifModifiedSince = withLine(fields.ifModifiedSince, value);
        }
        break;
      case IF_UNMODIFIED_SINCE.length:
        if (sameFieldName(name, IF_UNMODIFIED_SINCE)) {
          (fields ??= {}).ifUnmodifiedSince = withLine(fields.ifUnmodifiedSince, value);
        }
        break;
    }
  }
  // A request without any of them (most) shares one empty answer.
  return fields ?? NO_FIELDS;
}

/** A field's lines with one more: its first makes a list of one (a push onto an empty list reserves 16 places). */
function withLine(lines: string[] | undefined, value: string): string[] {
  if (lines === undefined) return [value];
  lines.push(value);
  return lines;
}

/**
 * Decides what a conditional request gets, following RFC 9110 §13.2.2 steps 1-4 (step 5, If-Range,
 * does not apply: resapi serves no ranges).
 * Note: a syntactically malformed If-Match or If-None-Match is answered 400 (`malformed`) rather
 * than ignored. The RFC does not say what to do with one; resapi's choice is that a client that sent
 * a validator it could not express is told so, rather than having its write silently unguarded.
 * The check comes first, so the answer to a malformed request does not depend on the resource's state.
 * A malformed date, by contrast, is ignored, as §13.1.3 and §13.1.4 require.
 */
export function evaluatePreconditions(
  method: string,
  fields: PreconditionFields,
  current: Validators | undefined,
  options: PreconditionOptions = {},
): PreconditionVerdict {
  if (typeof method !== 'string') {
    throw new TypeError('evaluatePreconditions: method must be a string');
  }
  const now = options.now ?? systemClock.now();
  if (!Number.isFinite(now)) {
    throw new TypeError('evaluatePreconditions: options.now must be a finite number');
  }
  // Checked before anything is decided, so a bad argument throws whatever the request carries.
  if (current !== undefined) checkValidators(current);
  return decidePreconditions(method, fields, current, now);
}

/**
 * evaluatePreconditions for validators the server made itself (a strong ETag of bytes it serves, a
 * stored time) and a clock reading: the same decision, without checking its arguments again on every
 * read. Its tag is parsed only past the three common cases, which need no parsing.
 */
export function decidePreconditions(
  method: string,
  fields: PreconditionFields,
  current: Validators | undefined,
  now: number,
): PreconditionVerdict {
  // RFC 9110 §9.1: method names are case-sensitive, so "get" is not GET.
  const isRead = method === 'GET' || method === 'HEAD';
  // The common cases, decided without parsing anything: no condition at all, a revalidation that sends
  // back exactly the one ETag it was given (a weak comparison that matches, §13.1.2), and below, a write
  // on the same terms.
  if (fields.ifMatch === undefined && fields.ifUnmodifiedSince === undefined) {
    if (fields.ifNoneMatch === undefined && (!isRead || fields.ifModifiedSince === undefined)) return PROCEED;
    if (fields.ifNoneMatch?.length === 1 && current !== undefined && fields.ifNoneMatch[0] === current.etag) {
      return isRead ? NOT_MODIFIED : { kind: 'failed', field: 'If-None-Match' };
    }
  } else if (fields.ifNoneMatch === undefined && (!isRead || fields.ifModifiedSince === undefined)) {
    // The common conditional write: If-Match alone (If-Unmodified-Since yields to it, §13.1.4), one line
    // of "*" or of the very strong ETag it was given, both true when the resource exists (§13.1.1).
    const line = fields.ifMatch?.length === 1 ? fields.ifMatch[0] : undefined;
    if (line === '*') return current === undefined ? { kind: 'failed', field: 'If-Match' } : PROCEED;
    if (line !== undefined && line === current?.etag && line.charCodeAt(0) === DQUOTE) return PROCEED;
  }
  const currentTag = current === undefined ? undefined : (parseEntityTag(current.etag) as EntityTag);
  const lastModified = current === undefined ? undefined : lastModifiedSeconds(current);

  const ifMatch = readEntityTagField(fields.ifMatch);
  if (ifMatch === 'malformed') {
    return malformed('If-Match');
  }
  const ifNoneMatch = readEntityTagField(fields.ifNoneMatch);
  if (ifNoneMatch === 'malformed') {
    return malformed('If-None-Match');
  }

  if (ifMatch !== undefined) {
    // §13.2.2 step 1, with §13.1.1: If-Match uses the strong comparison; false → 412.
    if (!listMatches(ifMatch, currentTag, strongCompare)) {
      return { kind: 'failed', field: 'If-Match' };
    }
  } else {
    // §13.2.2 step 2: If-Unmodified-Since only when If-Match is absent (§13.1.4).
    const date = readSingleDate(fields.ifUnmodifiedSince, now);
    // §13.1.4: ignored without a modification date; false when modified after the date → 412.
    if (date !== undefined && lastModified !== undefined && lastModified > date) {
      return { kind: 'failed', field: 'If-Unmodified-Since' };
    }
  }

  if (ifNoneMatch !== undefined) {
    // §13.2.2 step 3, with §13.1.2: If-None-Match uses the weak comparison; a match makes it false,
    // which is 304 for GET/HEAD and 412 for every other method.
    if (listMatches(ifNoneMatch, currentTag, weakCompare)) {
      return isRead ? NOT_MODIFIED : { kind: 'failed', field: 'If-None-Match' };
    }
  } else if (isRead) {
    // §13.2.2 step 4: If-Modified-Since only for GET/HEAD and only when If-None-Match is absent (§13.1.3).
    const date = readSingleDate(fields.ifModifiedSince, now);
    // Note: RFC 9110 does not require ignoring a date later than the server's clock; resapi does,
    // because it cannot be a Last-Modified this server sent (§8.8.2.1 forbids future ones) and
    // honouring it would answer 304 to every change made before that future moment.
    if (date !== undefined && date <= now && lastModified !== undefined && lastModified <= date) {
      return NOT_MODIFIED; // §13.1.3: not modified since the date → false → 304
    }
  }
  return PROCEED;
}

/**
 * decidePreconditions for the server's own validators, the time read from `clock` only when a date is
 * to be compared with it (RFC 9110 §13.1.3-4): most requests carry no date, and read no clock.
 */
export function decideOwnPreconditions(
  method: string,
  fields: PreconditionFields,
  current: Validators | undefined,
  clock: { now(): number },
): PreconditionVerdict {
  const dated = fields.ifModifiedSince !== undefined || fields.ifUnmodifiedSince !== undefined;
  return decidePreconditions(method, fields, current, dated ? clock.now() : 0);
}

/** True when the request carries If-Match or If-None-Match (used for 428 Precondition Required, RFC 6585 §3). */
export function hasEntityTagPrecondition(fields: PreconditionFields): boolean {
  return guards(readEntityTagField(fields.ifMatch)) || guards(readEntityTagField(fields.ifNoneMatch));
}

/**
 * Does a parsed field state a condition? An empty list (`If-None-Match: ,`) names no tag: it is
 * well-formed (RFC 9110 §5.6.1) but guards nothing, so it cannot stand in for the condition that
 * RFC 6585 §3's 428 asks for. A malformed field counts, so that it is answered 400, not 428.
 */
function guards(field: EntityTagList | 'malformed' | undefined): boolean {
  return field === 'malformed' || (field !== undefined && (field.any || field.tags.length > 0));
}

/** Parses an If-Match / If-None-Match field: undefined when absent. */
function readEntityTagField(lines: readonly string[] | undefined): EntityTagList | 'malformed' | undefined {
  if (!isPresent(lines)) {
    return undefined;
  }
  // RFC 9110 §5.3: field lines of one list-based field combine, in order, into one comma-separated list.
  return parseEntityTagList(lines.join(', ')) ?? 'malformed';
}

/**
 * §13.1.1 / §13.1.2: "*" matches when the resource has a current representation; a list matches
 * when any member does. Without a current representation nothing matches.
 */
function listMatches(
  list: EntityTagList,
  current: EntityTag | undefined,
  compare: (a: EntityTag, b: EntityTag) => boolean,
): boolean {
  if (current === undefined) {
    return false;
  }
  return list.any || list.tags.some((tag) => compare(tag, current));
}

/**
 * Reads If-Modified-Since / If-Unmodified-Since. §13.1.3 and §13.1.4: the field is ignored (undefined)
 * when it is not a valid HTTP-date, including when it was sent more than once (two field lines) or
 * its value is a list of dates (which no HTTP-date parses as).
 */
function readSingleDate(lines: readonly string[] | undefined, now: number): number | undefined {
  if (lines === undefined || lines.length !== 1) {
    return undefined;
  }
  const [line] = lines;
  return line === undefined ? undefined : parseHttpDate(line, now);
}

/** HTTP dates have one-second resolution (§5.6.7), so the stored time is compared in whole seconds. */
function lastModifiedSeconds(current: Validators): number | undefined {
  const { lastModified } = current;
  return lastModified === undefined ? undefined : Math.floor(lastModified / MS_PER_SECOND) * MS_PER_SECOND;
}

/** The validators a caller passes are its own to get right: a wrong one is a programmer error. */
function checkValidators(current: Validators): void {
  if (!isEntityTag(current.etag)) {
    throw new TypeError('evaluatePreconditions: current.etag must be an entity-tag such as \'"abc"\'');
  }
  if (current.lastModified !== undefined && !Number.isFinite(current.lastModified)) {
    throw new TypeError('evaluatePreconditions: current.lastModified must be a finite number');
  }
}

function isPresent(lines: readonly string[] | undefined): lines is readonly string[] {
  return lines !== undefined && lines.length > 0;
}

function malformed(field: 'If-Match' | 'If-None-Match'): PreconditionVerdict {
  return {
    kind: 'malformed',
    field,
    detail: `${field} must be "*" or a comma-separated list of entity-tags such as "abc" or W/"abc".`,
  };
}
