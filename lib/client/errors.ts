// The client's errors are values that say what happened (errors are RFC 9457 problem documents,
// CONVENTIONS.md#problem-details): a ResourceError carries the problem document the server answered with (or one made
// from the status when the body was not one), a NetworkError says no answer came after every retry
// allowed, and a ProtocolError says an answer broke the conventions (a bare array where an envelope
// belongs, a link to another origin, a write answered without an ETag).

/** An RFC 9457 problem document as the client received it. */
export interface ProblemDocument {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail?: string;
  readonly instance?: string;
  readonly errors?: readonly ProblemDetail[];
  readonly [extension: string]: unknown;
}

export interface ProblemDetail {
  readonly detail: string;
  readonly pointer?: string;
  readonly parameter?: string;
  readonly header?: string;
  readonly row?: number;
}

export class ResourceError extends Error {
  override readonly name = 'ResourceError';

  constructor(
    readonly method: string,
    readonly url: string,
    readonly problem: ProblemDocument,
  ) {
    const detail = problem.detail === undefined || problem.detail === '' ? '' : `: ${problem.detail}`;
    super(`${method} ${url}: ${problem.status} ${problem.title}${detail}`);
  }

  get status(): number {
    return this.problem.status;
  }
}

export class NetworkError extends Error {
  override readonly name = 'NetworkError';

  constructor(
    readonly method: string,
    readonly url: string,
    readonly attempts: number,
    cause: unknown,
  ) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super(`${method} ${url}: no answer after ${attempts} attempt(s): ${reason}`, { cause });
  }
}

export class ProtocolError extends Error {
  override readonly name = 'ProtocolError';

  constructor(
    readonly method: string,
    readonly url: string,
    message: string,
  ) {
    super(`${method} ${url}: ${message}`);
  }
}

/** The problem document of an error answer: its body when it is one, else one made from the status. */
export function problemOf(
  status: number,
  statusText: string,
  contentType: string | null,
  text: string,
): ProblemDocument {
  if (contentType !== null && /^application\/problem\+json\s*(;|$)/i.test(contentType)) {
    try {
      const body: unknown = JSON.parse(text);
      if (typeof body === 'object' && body !== null && !Array.isArray(body)) {
        const object = body as Record<string, unknown>;
        return {
          ...object,
          type: typeof object['type'] === 'string' ? object['type'] : 'about:blank',
          title: typeof object['title'] === 'string' ? object['title'] : statusText,
          status,
        };
      }
    } catch {
      // Not JSON after all: described from the status below.
    }
  }
  return { type: 'about:blank', title: statusText === '' ? `HTTP ${status}` : statusText, status };
}
