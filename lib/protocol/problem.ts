// Problem details for HTTP APIs, RFC 9457. Every error resapi sends is one of these, built from the
// table below so that a problem `type` always maps to the same status and title (README,
// Architecture: errors are values with a stable problem type, mapped to a status in one table).
//
// Type URIs are `tag:` URIs (RFC 4151): stable identifiers that need no registration and promise no
// dereferenceable page (RFC 9457 §3.1.1 allows that). No internal error detail reaches a caller
// (CONVENTIONS.md#problem-details), by construction: `detail` of a 5xx problem is always the fixed text
// of the table, never an internal message.

export const PROBLEM_TYPE_PREFIX = 'tag:resapi,2026:problem/';

export const PROBLEM_TYPES = {
  'bad-request': { status: 400, title: 'Bad Request' },
  'invalid-json': { status: 400, title: 'Malformed JSON body' },
  'invalid-body': { status: 400, title: 'Invalid request body' },
  'invalid-name': { status: 400, title: 'Invalid collection name or resource id' },
  'invalid-header': { status: 400, title: 'Invalid header field' },
  unauthorized: { status: 401, title: 'Unauthorized' },
  'origin-not-allowed': { status: 403, title: 'Origin not allowed to write' },
  'not-found': { status: 404, title: 'Not Found' },
  'method-not-allowed': { status: 405, title: 'Method Not Allowed' },
  'not-acceptable': { status: 406, title: 'Not Acceptable' },
  'request-timeout': { status: 408, title: 'Request Timeout' },
  conflict: { status: 409, title: 'Conflict' },
  'idempotency-key-in-flight': { status: 409, title: 'A request with this Idempotency-Key is still in progress' },
  'precondition-failed': { status: 412, title: 'Precondition Failed' },
  'content-too-large': { status: 413, title: 'Content Too Large' },
  'unsupported-media-type': { status: 415, title: 'Unsupported Media Type' },
  'misdirected-request': { status: 421, title: 'Misdirected Request' },
  'idempotency-key-reused': { status: 422, title: 'Idempotency-Key reused for a different request' },
  'precondition-required': { status: 428, title: 'Precondition Required' },
  'header-fields-too-large': { status: 431, title: 'Request Header Fields Too Large' },
  internal: { status: 500, title: 'Internal Server Error' },
  'not-implemented': { status: 501, title: 'Not Implemented' },
  unavailable: { status: 503, title: 'Service Unavailable' },
  'webhook-secret-missing': { status: 503, title: 'No webhook secret is configured' },
  'send-queue-full': { status: 503, title: 'Too many response bytes wait for slow readers' },
  'filters-busy': { status: 503, title: 'Too many expensive filters are running' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ProblemType = keyof typeof PROBLEM_TYPES;

/** One entry of the optional `errors` extension (CONVENTIONS.md#problem-details). */
export interface ProblemItem {
  readonly pointer?: string;
  readonly parameter?: string;
  readonly header?: string;
  readonly row?: number;
  readonly detail: string;
}

export interface Problem {
  readonly type: ProblemType;
  readonly status: number;
  readonly title: string;
  readonly detail: string;
  readonly errors?: readonly ProblemItem[];
  /** Response header fields the status calls for (Allow for 405, WWW-Authenticate for 401, ...). */
  readonly headers?: Readonly<Record<string, string>>;
}

const FIXED_DETAIL_5XX: Readonly<Record<number, string>> = {
  500: 'The server could not complete the request. The X-Request-Id response header identifies it in the server log.',
  501: 'This server does not implement the request method for any resource; OPTIONS * lists the methods it does.',
  503: 'The service cannot complete the request right now. Retry after the delay in Retry-After.',
};
/** A 5xx whose type names the limit it met (CONVENTIONS.md#limits) has fixed text of its own. */
const FIXED_DETAIL_BY_TYPE: Readonly<Partial<Record<ProblemType, string>>> = {
  'send-queue-full':
    'Responses still waiting for clients that read slowly have reached the limit on queued bytes ' +
    '(limits.maxQueuedResponseBytes), so no page is built now. Retry after the delay in Retry-After.',
  'filters-busy':
    'As many expensive filters as the server runs at once (limits.expensiveFilters) are running. ' +
    'Retry after the delay in Retry-After, or ask for a filter that needs less work.',
};

export function problem(
  type: ProblemType,
  detail: string,
  extras: { errors?: readonly ProblemItem[]; headers?: Readonly<Record<string, string>> } = {},
): Problem {
  const { status, title } = PROBLEM_TYPES[type];
  // A 5xx never carries a caller-visible internal message (CONVENTIONS.md#problem-details).
  if (status >= 500) {
    const fixed = FIXED_DETAIL_BY_TYPE[type] ?? FIXED_DETAIL_5XX[status] ?? (FIXED_DETAIL_5XX[500] as string);
    return extras.headers === undefined
      ? { type, status, title, detail: fixed }
      : { type, status, title, detail: fixed, headers: extras.headers };
  }
  return { type, status, title, detail, ...extras };
}

/**
 * The 503 of a webhook source without a secret (CONVENTIONS.md#receiving-sources). Its detail is resapi's
 * own words about its configuration (which source, which environment variable), never an internal
 * message or a secret: the operator reads it in the provider's delivery log, so it is kept, unlike the
 * detail `problem()` is given for a 5xx.
 */
export function secretMissingProblem(detail: string, headers: Readonly<Record<string, string>>): Problem {
  const { status, title } = PROBLEM_TYPES['webhook-secret-missing'];
  return { type: 'webhook-secret-missing', status, title, detail, headers };
}

/** The JSON body of a problem (RFC 9457 §3). */
export function problemBody(p: Problem): string {
  const body: Record<string, unknown> = {
    type: PROBLEM_TYPE_PREFIX + p.type,
    title: p.title,
    status: p.status,
    detail: p.detail,
  };
  if (p.errors !== undefined && p.errors.length > 0) body['errors'] = p.errors;
  return JSON.stringify(body);
}
