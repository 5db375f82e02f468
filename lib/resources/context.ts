// What every handler receives: the server's parts (one instance per server; no module globals) and
// the request being answered, already routed, authenticated and negotiated by lib/app.ts.
import type { IncomingMessage } from 'node:http';
import type { Clock, Random } from '../clock.js';
import type { Config } from '../config.js';
import type { CachePolicy } from '../http/cache-policy.js';
import type { SendQueue } from '../http/send-queue.js';
import type { Reply } from '../http/respond.js';
import type { RouteParams } from '../http/route.js';
import type { Logger } from '../log.js';
import type { EqualityIndexes } from '../query/equality-index.js';
import type { FilterSlots } from '../query/expensive.js';
import type { KnownProperties } from '../query/known-properties.js';
import type { SerialQueues } from '../serial.js';
import type { ServerMetrics } from '../server-metrics.js';
import type { PageCache } from './page-cache.js';
import type { Inbox } from '../webhooks/inbox.js';
import type { Outbox } from '../webhooks/outbox.js';
import type { RefusalLog } from '../webhooks/refusal-log.js';
import type { ReceivingSource } from '../webhooks/sources.js';
import type { SelfAddress } from '../webhooks/subscriptions.js';
import type { Store } from '../store/types.js';
import type { Representation } from '../protocol/representation.js';
import type { RepresentationCache } from './representation-cache.js';
import type { ReceiverAnswers } from './receiver.js';
import type { KeysInFlight } from './idempotency.js';
import type { Writer } from '../writes/writer.js';

export interface App {
  /** For reads; every write goes through `writer`. */
  readonly store: Store;
  readonly writer: Writer;
  readonly config: Config;
  readonly policy: CachePolicy;
  readonly representations: RepresentationCache;
  /** What /$metrics reports; the request pipeline and the store fill it. */
  readonly metrics: ServerMetrics;
  /** Built pages of user collections, until the collection changes. */
  readonly pages: PageCache;
  /** Value-to-ids indexes for the equality terms of filters. */
  readonly indexes: EqualityIndexes;
  /** Response bytes queued to sockets, and the room a page asks for before it is built (CONVENTIONS.md#connections). */
  readonly sendQueue: SendQueue;
  /** The slots expensive filters share (CONVENTIONS.md#filter-errors-and-budget). */
  readonly filterSlots: FilterSlots;
  readonly log: Logger;
  readonly clock: Clock;
  readonly random: Random;
  /**
   * Absolute base for links (CONVENTIONS.md#paging: never built from the request's Host); '' for relative
   * links.
   */
  readonly baseUrl: string;
  /**
   * Idempotency keys whose first request is still being processed (CONVENTIONS.md#idempotency-keys: a repeat
   * meanwhile → 409).
   */
  readonly keysInFlight: KeysInFlight;
  /** The HMAC key that authenticates `$skiptoken`s (kept in the store, so it survives restarts). */
  readonly pagingKey: Buffer;
  /** The properties each collection knows, for validating queries. */
  readonly knownProperties: KnownProperties;
  /** Bulk files take turns per collection, so two never fail each other's conditional writes. */
  readonly bulkTurns: SerialQueues;
  /** Conditional POSTs take turns per collection, so their preconditions hold at commit time. */
  readonly postTurns: SerialQueues;
  /** The receiving sources, in configuration order (CONVENTIONS.md#receiving-sources). */
  readonly webhookSources: readonly ReceivingSource[];
  /**
   * Each source's secrets by source name: the current, then the previous (CONVENTIONS.md#secret-rotation).
   * A source without an entry has none.
   */
  readonly webhookSecrets: ReadonlyMap<string, readonly string[]>;
  /** The bounded log lines of refused deliveries. */
  readonly refusals: RefusalLog;
  /** Received webhook events and the workers that process them. */
  readonly inbox: Inbox;
  /** Deliveries of the webhook sender and the workers that send them. */
  readonly outbox: Outbox;
  /** The webhook receiver's two answers, made once per server (lib/resources/receiver.ts). */
  readonly receiverAnswers: ReceiverAnswers;
  /** GET /$openapi's JSON: it depends only on the configuration, so it is made once per server (lib/openapi.ts). */
  readonly openapi: Representation;
  /** Where this server listens, so a subscription cannot point back at it. */
  readonly self: () => SelfAddress;
}

export interface RequestContext {
  readonly req: IncomingMessage;
  readonly requestId: string;
  /** The matched API key's name, or '' when API keys are off. */
  readonly principal: string;
  readonly path: string;
  readonly query: string;
  /** The route's decoded path parameters ({collection}, {id}, ...). */
  readonly params: RouteParams;
  /** The media type chosen for the response from the route's offer (lib/routes.ts); '' when it offers none. */
  readonly media: string;
}

/** A route's handler for one method. */
export type Handler = (app: App, rq: RequestContext) => Reply | Promise<Reply>;
