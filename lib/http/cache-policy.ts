// Cache policy (CONVENTIONS.md#cache-control, CONVENTIONS.md#vary; RFC 9111 §5.2.2).
// - Changing data is served with an ETag plus must-revalidate: the default for reads is
//   `max-age=0, must-revalidate`, so a cache may store the response but revalidates every use.
// - Reference data gets its long max-age from the collection's config.
// - Responses that depend on the caller's credentials are `private` and carry Vary: Authorization
//   (CONVENTIONS.md#vary; RFC 9111 §5.2.2.7).
// - During risky deploys every response says `no-cache, no-store` (`--no-cache-mode`).
// - Errors and the responses to PUT, POST and DELETE are `no-store`.

export const DEFAULT_READ_POLICY = 'max-age=0, must-revalidate';
export const NO_STORE = 'no-store';
export const RISKY_DEPLOY = 'no-cache, no-store';

export interface CachePolicy {
  readonly noCacheMode: boolean;
  /** True when API keys are on: every response depends on the caller's credentials. */
  readonly credentialed: boolean;
  readonly perCollection: (collection: string) => string | undefined;
}

/** Cache-Control for a successful read of `collection` (undefined for the service document). */
export function readCacheControl(policy: CachePolicy, collection?: string): string {
  if (policy.noCacheMode) return RISKY_DEPLOY;
  const configured = collection === undefined ? undefined : policy.perCollection(collection);
  if (configured === undefined) return policy.credentialed ? PRIVATE_DEFAULT_READ_POLICY : DEFAULT_READ_POLICY;
  return policy.credentialed ? makePrivate(configured) : configured;
}

/** Cache-Control for errors and for the responses to unsafe methods. */
export function noStoreCacheControl(policy: CachePolicy): string {
  return policy.noCacheMode ? RISKY_DEPLOY : NO_STORE;
}

/** Vary for a response: what the representation was chosen by, plus Authorization when credentialed. */
export function varyOf(policy: CachePolicy, negotiated: readonly string[]): string | undefined {
  if (negotiated.length === 0) return policy.credentialed ? 'Authorization' : undefined;
  const named = negotiated.length === 1 ? (negotiated[0] as string) : negotiated.join(', ');
  return policy.credentialed ? `${named}, Authorization` : named;
}

const PRIVATE_DEFAULT_READ_POLICY = makePrivate(DEFAULT_READ_POLICY);

/** Drops `public` and adds `private` (RFC 9111 §5.2.2.7): a shared cache must not store it. */
function makePrivate(value: string): string {
  const directives = value
    .split(',')
    .map((directive) => directive.trim())
    .filter((directive) => directive !== '' && !['public', 'private'].includes(directive.toLowerCase()));
  return ['private', ...directives].join(', ');
}
