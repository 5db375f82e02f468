// Cross-origin resource sharing (Fetch Standard §3.2, "CORS protocol"; `cors.origins`,
// CONVENTIONS.md#cors): a browser app on another origin may read resapi's responses and send the
// conditional-request and idempotency headers resapi's rules need.
// - Allowed origins: `cors.origins` when configured; otherwise, while API keys are off, loopback
//   origins only (a front end on this machine, any port, as Vite's dev server allows), and none while
//   they are on (with keys on, only listed origins, never `*`). A web site the developer visits gets
//   no CORS field, so its script reads nothing.
// - An unsafe method (RFC 9110 §9.2.1) carrying an Origin that is not allowed is refused before
//   anything is done: a site's form or "simple" fetch POST reaches the server without a preflight
//   (Fetch §3.2.2), and CORS would only hide the answer, not prevent the write. `Origin: null` (a
//   sandboxed frame, a file: page, a redirect) is any site's to send, so it is never allowed unless
//   every origin is (`*`).
// - Private Network Access (the WICG draft of that name, CORS-preflight part): a preflight that asks
//   `Access-Control-Request-Private-Network: true` from an allowed origin is answered
//   `Access-Control-Allow-Private-Network: true`, from any other origin with nothing. Chromium sent
//   such preflights before putting them on hold for Local Network Access (a permission prompt);
//   answering them keeps those versions working and grants nothing CORS would not.
// - A preflight (OPTIONS carrying Origin and Access-Control-Request-Method, Fetch §3.2.2) is answered
//   before authentication, because a browser never sends credentials with it (Fetch §4.8 step 3).
// - An allowed origin's responses expose the fields a client needs (Access-Control-Expose-Headers):
//   a script can otherwise read only the CORS-safelisted response fields (Fetch §3.2.6), which leave
//   out ETag, so no conditional request could be made.
// - A response that names one origin varies by Origin (Fetch §3.2.5, "CORS protocol and HTTP caches"):
//   every response while origins are listed; under the loopback default, every response to a request
//   that carries an Origin (CONVENTIONS.md#vary), so a client without one sees what it always saw.
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
/**
 * A loopback origin: localhost or a name under it (RFC 6761 §6.3: always the loopback address),
 * 127.0.0.1 or [::1], any port. The regular expression Vite's dev server allows by default.
 */
const LOOPBACK_ORIGIN = /^https?:\/\/(?:(?:[a-z0-9-]+\.)*localhost|127\.0\.0\.1|\[::1\])(?::[0-9]{1,5})?$/;
/** RFC 9110 §9.2.1: the methods defined as safe; every other one may change something. */
const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE']);

export type CorsPolicyResult =
  | { readonly ok: true; readonly policy: CorsPolicy }
  | { readonly ok: false; readonly message: string };

/** Who may read: every origin, loopback origins (the default without keys), or the listed ones. */
type Allowed =
  | { readonly kind: 'any' }
  | { readonly kind: 'loopback' }
  | { readonly kind: 'listed'; readonly origins: ReadonlySet<string> };

/** Is `origin` a serialized origin as a browser sends it in the Origin field? */
export function isSerializedOrigin(origin: string): boolean {
  return ORIGIN.test(origin);
}

/** Is `origin` a page served from this machine: localhost, *.localhost, 127.0.0.1 or [::1], any port? */
export function isLoopbackOrigin(origin: string): boolean {
  return LOOPBACK_ORIGIN.test(origin);
}

/** The origins allowed to read responses; `configured` undefined means the default (CONVENTIONS.md#cors). */
export function corsPolicy(configured: readonly string[] | undefined, apiKeysOn: boolean): CorsPolicyResult {
  if (configured === undefined) {
    const allowed: Allowed = apiKeysOn ? { kind: 'listed', origins: new Set() } : { kind: 'loopback' };
    return { ok: true, policy: new CorsPolicy(allowed) };
  }
  if (!configured.includes(ANY)) {
    return { ok: true, policy: new CorsPolicy({ kind: 'listed', origins: new Set(configured) }) };
  }
  if (apiKeysOn) {
    return {
      ok: false,
      message: 'cors.origins must list origins, not "*", while API keys are on (CONVENTIONS.md#cors): ' +
        'a page on any site could otherwise use a key it was given',
    };
  }
  return { ok: true, policy: new CorsPolicy({ kind: 'any' }) };
}

export class CorsPolicy {
  constructor(private readonly allowed: Allowed) {}

  /** Whether any origin at all is allowed (else no CORS field is ever sent). */
  get enabled(): boolean {
    return this.allowed.kind !== 'listed' || this.allowed.origins.size > 0;
  }

  /**
   * Whether the answer to a request carrying `origin` (undefined: none) depends on it, so the response
   * must carry Vary: Origin. Listed origins: every response, as a cache may hold one answer for all.
   */
  variesByOrigin(origin: string | undefined): boolean {
    if (this.allowed.kind === 'listed') return this.allowed.origins.size > 0;
    return this.allowed.kind === 'loopback' && origin !== undefined;
  }

  /**
   * Access-Control-Allow-Origin for a request from `origin` (the Origin field's value), or undefined
   * when it is not allowed (the browser then keeps the response from the script).
   */
  allowOrigin(origin: string | undefined): string | undefined {
    if (origin === undefined) return undefined;
    switch (this.allowed.kind) {
      case 'any':
        return ANY;
      case 'loopback':
        return isLoopbackOrigin(origin) ? origin : undefined;
      case 'listed':
        return this.allowed.origins.has(origin) ? origin : undefined;
    }
  }

  /**
   * Is a request with `method` from `origin` refused (403) before anything is done? Only an unsafe
   * method from a page whose origin is not allowed: a request without Origin comes from no page.
   */
  refuses(method: string, origin: string | undefined): boolean {
    return origin !== undefined && !SAFE_METHODS.has(method) && this.allowOrigin(origin) === undefined;
  }

  /**
   * Private Network Access: may a page on `origin` reach this server from a more public network?
   * `requested` is the preflight's Access-Control-Request-Private-Network value.
   */
  allowsPrivateNetwork(origin: string | undefined, requested: string | undefined): boolean {
    return requested === 'true' && this.allowOrigin(origin) !== undefined;
  }

  /** Who may write from a page, for the detail of a 403: what to configure to be allowed. */
  describe(): string {
    switch (this.allowed.kind) {
      case 'any':
        return 'every origin may';
      case 'loopback':
        return 'only pages on loopback origins (localhost, *.localhost, 127.0.0.1, [::1]) may, ' +
          'unless cors.origins lists others';
      case 'listed':
        return this.allowed.origins.size > 0
          ? 'only the origins in cors.origins may'
          : 'no origin may while API keys are on and cors.origins lists none';
    }
  }
}
