// Optional API keys (RESAPI_API_KEYS, CONVENTIONS.md#api-keys): `Authorization: Bearer <key>` (RFC 6750 §2.1,
// RFC 9110 §11.6.2). Keys are compared as SHA-256 digests with crypto.timingSafeEqual against every
// configured key, without an early exit, so neither the key's content nor which key matched shows in
// the response time (constant-time comparison, as for webhook signatures: CONVENTIONS.md#webhook-signature).
import { createHash, timingSafeEqual } from 'node:crypto';

export type AuthResult =
  | {
      readonly ok: true;
      /** a stable, non-secret name of the matched key (scopes idempotency keys) */
      readonly principal: string;
    }
  | { readonly ok: false; readonly detail: string };

// RFC 6750 §2.1: credentials = "Bearer" 1*SP b64token; the scheme is case-insensitive (RFC 9110 §11.1).
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;
// b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=" (RFC 6750 §2.1; RFC 7235's token68).
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

export class ApiKeys {
  private readonly digests: readonly Buffer[];

  constructor(keys: readonly string[]) {
    if (keys.some((key) => key.length === 0)) throw new TypeError('apiKeys: an API key must not be empty');
    // A key that cannot travel in `Authorization: Bearer` would lock every client out; say which rule,
    // never the key (secrets are never logged).
    if (keys.some((key) => !B64TOKEN.test(key))) {
      throw new TypeError(
        'apiKeys: an API key must be RFC 6750 token68 characters (A-Z a-z 0-9 - . _ ~ + / then optional trailing =), ' +
          'so that it can be sent as Authorization: Bearer <key>',
      );
    }
    this.digests = keys.map(digest);
  }

  get enabled(): boolean {
    return this.digests.length > 0;
  }

  /** `lines` are every received Authorization field line (Node keeps only the first in req.headers). */
  check(lines: readonly string[] | undefined): AuthResult {
    if (lines === undefined || lines.length === 0) {
      return { ok: false, detail: 'Send Authorization: Bearer <api key>.' };
    }
    if (lines.length > 1) return { ok: false, detail: 'Send exactly one Authorization header field.' };
    const match = BEARER.exec(lines[0] as string);
    if (match === null) return { ok: false, detail: 'The Authorization header must use the Bearer scheme.' };
    const presented = digest(match[1] as string);
    let matched = -1;
    for (let index = 0; index < this.digests.length; index++) {
      if (timingSafeEqual(presented, this.digests[index] as Buffer) && matched === -1) matched = index;
    }
    if (matched === -1) return { ok: false, detail: 'The API key is not valid.' };
    return { ok: true, principal: (this.digests[matched] as Buffer).subarray(0, 8).toString('hex') };
  }
}

function digest(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}
