// What every handler receives: the server's parts (one instance per server; no module globals) and
// the request being answered.
import type { IncomingMessage } from 'node:http';
import type { Config } from '../config.js';
import type { CachePolicy } from '../http/cache-policy.js';
import type { Route } from '../http/route.js';
import type { Logger } from '../log.js';
import type { Store } from '../store/types.js';
import type { RepresentationCache } from './representation.js';
import type { FieldIndex } from '../query/fields.js';

export interface App {
  readonly store: Store;
  readonly config: Config;
  readonly policy: CachePolicy;
  readonly representations: RepresentationCache;
  readonly log: Logger;
  readonly now: () => number;
  /** Absolute base for links (CONTRACT §5: "never built from the request's Host"); '' for relative links. */
  readonly baseUrl: string;
  /** Idempotency keys whose first request is still being processed (CONTRACT §6: repeat → 409). */
  readonly keysInFlight: Set<string>;
  /** The HMAC key that authenticates `$skiptoken`s (kept in the store, so it survives restarts). */
  readonly pagingKey: Buffer;
  /** The properties each collection knows, for validating queries. */
  readonly fields: FieldIndex;
}

export interface RequestContext {
  readonly req: IncomingMessage;
  readonly requestId: string;
  /** The matched API key's name, or '' when API keys are off. */
  readonly principal: string;
  readonly path: string;
  readonly query: string;
}

export type ItemRoute = Extract<Route, { kind: 'item' | 'undo' }>;
