// Cross-origin resource sharing (Fetch Standard §3.2, "CORS protocol"; `cors.origins`,
// CONVENTIONS.md#cors): a browser app on another origin may read resapi's responses and send the
// conditional-request and idempotency headers resapi's rules need.
// - Allowed origins: `cors.origins` when configured; otherwise `*` while API keys are off and none
//   while they are on (with keys on, only listed origins, never `*`).
// - A preflight (OPTIONS carrying Origin and Access-Control-Request-Method, Fetch §3.2.2) is answered
//   before authentication, because a browser never sends credentials with it (Fetch §4.8 step 3).
// - An allowed origin's responses expose the fields a client needs (Access-Control-Expose-Headers):
//   a script can otherwise read only the CORS-safelisted response fields (Fetch §3.2.6), which leave
//   out ETag, so no conditional request could be made.
// - A response that names one origin varies by Origin (Fetch §3.2.5, "CORS protocol and HTTP caches").
// Credentials mode (cookies) is never needed: the API key travels in Authorization, which the
// preflight allows like any other request field, so Access-Control-Allow-Credentials is not sent.

/** Request fields a cross-origin script may send (beyond the CORS-safelisted ones). */
export const ALLOWED_REQUEST_HEADERS = [
  'Authorization', 'Content-Type', 'If-Match', 'If-None-Match', 'If-Modified-Since', 'If-Unmodified-Since',
  'Idempotency-Key', 'Prefer', 'X-Request-Id',
] as const;
/** Response fields a cross-origin script may read (beyond the safelisted Cache-Control, Content-Type, ...). */
export const EXPOSED_RESPONSE_HEADERS = [
  'ETag', 'Location', 'Content-Location', 'Link', 'Preference-Applied', 'Idempotent-Replayed', 'Retry-After',
  'X-Request-Id', 'WWW-Authenticate',
] as const;
/** How long a browser may reuse a preflight's answer, in seconds. */
export const PREFLIGHT_MAX_AGE_S = 600;

const ANY = '*';
/** A serialized origin (RFC 6454 §6.2): scheme "://" host [ ":" port ], lower case, nothing after. */
const ORIGIN = /^https?:\/\/(?:[a-z0-9-]+(?:\.[a-z0-9-]+)*|\[[0-9a-f:.]+\])(?::[0-9]{1,5})?$/;

export type CorsPolicyResult =
  | { readonly ok: true; readonly policy: CorsPolicy }
  | { readonly ok: false; readonly message: string };

/** Is `origin` a serialized origin as a browser sends it in the Origin field? */
export function isSerializedOrigin(origin: string): boolean {
  return ORIGIN.test(origin);
}

/** The origins allowed to read responses; `configured` undefined means the default (CONVENTIONS.md#cors). */
export function corsPolicy(configured: readonly string[] | undefined, apiKeysOn: boolean): CorsPolicyResult {
  const origins = configured ?? (apiKeysOn ? [] : [ANY]);
  if (apiKeysOn && origins.includes(ANY)) {
    return {
      ok: false,
      message: 'cors.origins must list origins, not "*", while API keys are on (CONVENTIONS.md#cors): ' +
        'a page on any site could otherwise use a key it was given',
    };
  }
  return { ok: true, policy: new CorsPolicy(origins) };
}

export class CorsPolicy {
  private readonly any: boolean;
  private readonly origins: ReadonlySet<string>;

  constructor(origins: readonly string[]) {
    this.any = origins.includes(ANY);
    this.origins = new Set(origins.filter((origin) => origin !== ANY));
  }

  /** Whether any origin at all is allowed (else no CORS field is ever sent). */
  get enabled(): boolean {
    return this.any || this.origins.size > 0;
  }

  /** Whether answers name the requesting origin, so every response (allowed or not) must Vary on Origin. */
  get variesByOrigin(): boolean {
    return !this.any && this.origins.size > 0;
  }

  /**
   * Access-Control-Allow-Origin for a request from `origin` (the Origin field's value), or undefined
   * when it is not allowed (the browser then keeps the response from the script).
   */
  allowOrigin(origin: string | undefined): string | undefined {
    if (origin === undefined) return undefined;
    if (this.any) return ANY;
    return this.origins.has(origin) ? origin : undefined;
  }
}
