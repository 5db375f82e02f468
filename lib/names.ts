// Names in paths (CONVENTIONS.md#names): collection names ^[A-Za-z][A-Za-z0-9_-]{0,63}$; resource ids 1-128
// characters of [A-Za-z0-9._~-] (RFC 3986 §2.3 unreserved characters, so an id never needs
// percent-encoding), and never "." or "..", which RFC 3986 §5.2.4 dot-segment removal would eat.
// A segment that starts with "$" is a system segment and is never a collection or id.
//
// Event ids are the providers' (CONVENTIONS.md#webhook-event-body): any text of 1-255 code points,
// percent-encoded in a path. Text means well-formed Unicode: a JSON string may spell a lone surrogate
// ("\ud800"), which no UTF-8 can carry, so such an id could be neither addressed nor linked to.
// An inbox item's id is its event id, or `<source>:<eventId>` for a named receiving source
// (CONVENTIONS.md#inbox): the 255 limit is on the event id, so an item id may be longer.

// Exported for GET /$openapi, which states them as the path parameters' patterns.
export const COLLECTION_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;
export const RESOURCE_ID = /^[A-Za-z0-9._~-]{1,128}$/;
/** The longest event id, in code points. */
export const MAX_EVENT_ID = 255;
/** The longest inbox item id, in code points: a source name (64), ":" and an event id. */
export const MAX_INBOX_ITEM_ID = 64 + 1 + MAX_EVENT_ID;

/** A named receiving source's prefix of an inbox item id: its name (a collection name) and ":". */
const SOURCE_PREFIX = /^[A-Za-z][A-Za-z0-9_-]{0,63}:/;

/** With the u flag a surrogate pair is one code point, so only a lone surrogate is category Cs. */
const LONE_SURROGATE = /\p{Cs}/u;

export function isCollectionName(name: string): boolean {
  return COLLECTION_NAME.test(name);
}

export function isResourceId(id: string): boolean {
  return RESOURCE_ID.test(id) && id !== '.' && id !== '..';
}

export function isSystemSegment(segment: string): boolean {
  return segment.startsWith('$');
}

/** What is wrong with an event id, said for a problem's `errors` entry; undefined when it is one. */
export function eventIdProblem(id: string): string | undefined {
  const lone = LONE_SURROGATE.exec(id);
  if (lone !== null) {
    const unit = (lone[0].codePointAt(0) as number).toString(16);
    return `must be well-formed Unicode: a lone surrogate (\\u${unit}) at UTF-16 offset ${lone.index} is not text`;
  }
  const length = codePointsUpTo(id, MAX_EVENT_ID + 1);
  if (length === 0 || length > MAX_EVENT_ID) return `must be 1-${MAX_EVENT_ID} code points long`;
  return undefined;
}

export function isEventId(id: string): boolean {
  return eventIdProblem(id) === undefined;
}

/**
 * What is wrong with an inbox item id, or undefined: an event id, or a source name, ":" and an event
 * id. Said as for an event id, whose rule is the one a wrong item id breaks.
 */
export function inboxItemIdProblem(id: string): string | undefined {
  const plain = eventIdProblem(id);
  if (plain === undefined) return undefined;
  const prefix = SOURCE_PREFIX.exec(id);
  return prefix !== null && eventIdProblem(id.slice(prefix[0].length)) === undefined ? undefined : plain;
}

export function isInboxItemId(id: string): boolean {
  return inboxItemIdProblem(id) === undefined;
}

/**
 * A name as one percent-encoded path segment (RFC 3986 §3.3). Never throws: a stored id from before
 * ids had to be well-formed gets U+FFFD for each lone surrogate, as the WHATWG URL parser does, so a
 * listing that holds one still answers.
 */
export function pathSegment(name: string): string {
  const text = LONE_SURROGATE.test(name) ? name.replace(/\p{Cs}/gu, '\ufffd') : name;
  return encodeURIComponent(text);
}

/** The code points of `text`, counting no further than `limit` (a 1 MiB string costs no more than a short one). */
function codePointsUpTo(text: string, limit: number): number {
  let count = 0;
  for (let index = 0; index < text.length && count < limit; count++) {
    index += (text.codePointAt(index) as number) > 0xffff ? 2 : 1;
  }
  return count;
}
