// The route table (CONVENTIONS.md#routes): every route is declared once, here: its path pattern, and per method
// the media types its response can take, the request content it reads, and the handler that runs.
// Everything a route must answer before its handler runs is derived from this table by lib/app.ts,
// for every route alike: Allow and 405 (RFC 9110 §15.5.6), OPTIONS (§9.3.7), HEAD wherever GET
// (§9.3.2), 406 (§15.5.7), 413 (§15.5.14) and 415 (§15.5.16). Each endpoint also says, in `doc`,
// what its handler itself answers and reads; GET /$openapi (lib/openapi.ts) describes the server from
// that and from the pipeline's own statuses, so no route is described anywhere else. Adding a route is
// one entry here plus its handler.
import type { Config, WebhookScheme } from './config.js';
import { EXPOSITION_TYPE } from './prometheus.js';
import { getMetrics } from './resources/metrics-scrape.js';
import { CSV_BODY, JSON_BODY, type BodyKind } from './http/body.js';
import { isJsonMediaType } from './protocol/content-type.js';
import { JSON_TYPE } from './http/respond.js';
import { HTML_TYPE } from './html/views.js';
import type { RoutePattern } from './http/route.js';
import type { Handler } from './resources/context.js';
import { putBulk } from './resources/bulk.js';
import { getCollection, postToCollection } from './resources/collections.js';
import { deleteItem, getItem, putItem, undoDelete } from './resources/items.js';
import { CSV_TYPE } from './resources/pages.js';
import { deleteQuery, getQueryDefinition, getQueryResults, putQuery } from './resources/queries.js';
import { getHealth, getServiceDocument } from './resources/service.js';
import { getOpenApi } from './resources/openapi.js';
import { getInbox, getInboxEvent, retryInboxEvent } from './resources/inbox.js';
import { receiveWebhook } from './resources/receiver.js';
import { isFormMediaType } from './webhooks/schemes/github.js';
import { receivingSources, DEFAULT_SOURCE, type ReceivingSource } from './webhooks/sources.js';
import { getDelivery, getOutbox, retryDelivery } from './resources/outbox.js';
import {
  deleteSubscription, getSubscription, getSubscriptions, getSubscriptionSecret, putSubscription,
} from './resources/subscriptions.js';
import { recoverDeliveries, recoverInbox } from './resources/recover.js';
import { pingSubscription } from './resources/ping.js';

/** The methods a route may declare; HEAD and OPTIONS are derived, never declared. */
export type DeclaredMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface Endpoint {
  /** Media types the response can be sent as, the default first; empty when it sends no content to negotiate. */
  readonly produces: readonly string[];
  /** The request content it reads; absent when it reads none. */
  readonly body?: BodyKind;
  readonly handle: Handler;
  /** What the handler answers and reads, for its OpenAPI description; the pipeline's statuses are added there. */
  readonly doc: EndpointDoc;
}

/** Response header fields a success may carry (a problem's fields belong to its status: Allow, Retry-After, ...). */
export type ResponseField =
  | 'ETag' | 'Last-Modified' | 'Cache-Control' | 'Vary' | 'Location' | 'Content-Location' | 'Link'
  | 'Preference-Applied' | 'Idempotent-Replayed';

/**
 * Request header fields and query options a handler reads; `field=value` stands for the simple query string
 * (CONVENTIONS.md#simple-query-strings).
 */
export type RequestInput =
  | 'If-Match' | 'If-None-Match' | 'If-Modified-Since' | 'If-Unmodified-Since' | 'Idempotency-Key' | 'Prefer'
  | 'X-Signature' | 'X-Timestamp'
  | 'webhook-id' | 'webhook-timestamp' | 'webhook-signature'
  | 'X-Hub-Signature-256' | 'X-GitHub-Delivery' | 'X-GitHub-Event' | 'Stripe-Signature'
  | '$filter' | '$select' | '$orderby' | '$top' | '$count' | '$skiptoken' | 'field=value';

/** The shapes bodies take, named as lib/openapi.ts names its schema components. */
export type SchemaName =
  | 'Item' | 'QueryDefinition' | 'ServiceDocument' | 'Health' | 'InboxEvent' | 'Delivery' | 'Subscription'
  | 'SubscriptionInput' | 'BulkReport' | 'WebhookEvent' | 'StandardWebhookEvent' | 'GitHubWebhookEvent'
  | 'StripeWebhookEvent' | 'WebhookReceipt' | 'Text' | 'OpenApiDocument'
  | 'SubscriptionSecret' | 'PingInput' | 'PingAnswer'
  | 'RecoverWindow' | 'InboxRecoverWindow' | 'RecoverReport';

export interface EndpointDoc {
  readonly summary: string;
  /** Every status the handler itself can answer, with the header fields that answer carries. */
  readonly responses: Readonly<Record<number, readonly ResponseField[]>>;
  readonly reads?: readonly RequestInput[];
  /**
   * The content of a success: one thing, or a page of the collection envelope
   * (CONVENTIONS.md#collection-envelope).
   */
  readonly returns?: SchemaName | { readonly pageOf: SchemaName };
  /** The request content it reads. */
  readonly accepts?: SchemaName;
}

export type RouteName =
  | 'service' | 'health' | 'metrics' | 'openapi' | 'webhook' | 'collection' | 'item' | 'undo' | 'bulk' | 'query'
  | 'query-definition' | 'inbox' | 'inbox-event' | 'inbox-retry' | 'subscriptions' | 'subscription' | 'outbox'
  | 'delivery' | 'delivery-retry'
  | 'subscription-secret' | 'subscription-ping'
  | 'inbox-recover' | 'subscription-recover'
  /** A named receiving source, `/webhooks/<name>` (the default source is `webhook`). */
  | `webhook-${string}`;

export interface RouteEntry extends RoutePattern<RouteName> {
  /**
   * Served without an API key (CONVENTIONS.md#api-keys): the webhook receiver authenticates by signature,
   * health probes carry none.
   */
  readonly public?: boolean;
  /**
   * Authenticated by its signature alone: neither the Host check (421) nor the Origin check (403) applies
   * (CONVENTIONS.md#host-check, CONVENTIONS.md#cors), since providers reach it through tunnels.
   */
  readonly signed?: boolean;
  readonly methods: Readonly<Partial<Record<DeclaredMethod, Endpoint>>>;
}

/** The order methods are listed in Allow. */
const METHOD_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

const JSON_ONLY = [JSON_TYPE];
/**
 * What can be read in a browser too (CONVENTIONS.md#content-negotiation); JSON stays the default, so JSON
 * clients see no change.
 */
const JSON_OR_HTML = [JSON_TYPE, HTML_TYPE];
const JSON_CSV_OR_HTML = [JSON_TYPE, CSV_TYPE, HTML_TYPE];

// What the shared answers carry (lib/resources/replies.ts, pages.ts, listing.ts), written once.
/** readReply: a representation and its validators (CONVENTIONS.md#conditional-reads). */
const READ: readonly ResponseField[] = ['ETag', 'Last-Modified', 'Cache-Control', 'Vary'];
/** A collection page: the read fields, the next link (RFC 8288) and the page size applied (RFC 7240 §3). */
const PAGE: readonly ResponseField[] = [...READ, 'Link', 'Preference-Applied'];
/** storedReply: the stored representation after a write (CONVENTIONS.md#put-responses). */
const STORED: readonly ResponseField[] = ['ETag', 'Last-Modified', 'Content-Location', 'Cache-Control', 'Vary'];
const NO_STORE: readonly ResponseField[] = ['Cache-Control'];
/**
 * RFC 9110 §13.2.2: a read evaluates every precondition; 304 on a match, 412 on a failed If-Match or
 * If-Unmodified-Since.
 */
const CONDITIONAL_READ = { 200: READ, 304: READ, 412: [] };
/**
 * A page: a read, or 503 with Retry-After while slow readers hold the queued-bytes cap or every slot for
 * expensive filters is taken (CONVENTIONS.md#limits).
 */
const PAGE_READ = { 200: PAGE, 304: PAGE, 412: [], 503: [] };
const READ_CONDITIONS: readonly RequestInput[] = [
  'If-None-Match', 'If-Modified-Since', 'If-Match', 'If-Unmodified-Since',
];
/** A write's preconditions (If-Modified-Since applies to GET and HEAD only, RFC 9110 §13.1.3). */
const WRITE_CONDITIONS: readonly RequestInput[] = ['If-Match', 'If-None-Match', 'If-Unmodified-Since'];
/**
 * conditionalPut: 201 creates, 200 replaces, 412 on a failed precondition, 428 without one, 503 when the store
 * fails.
 */
const CONDITIONAL_PUT = { 200: STORED, 201: [...STORED, 'Location'] as const, 412: [], 428: [], 503: [] };
const CONDITIONAL_DELETE = { 204: [], 412: [], 503: [] };
/** The options of a listing (CONVENTIONS.md#paging), and what chooses its page size. */
const LISTING: readonly RequestInput[] = [
  '$filter', '$select', '$orderby', '$top', '$count', '$skiptoken', 'field=value', 'Prefer', ...READ_CONDITIONS,
];
/** A $retry action: 202 with the item queued again, 404, 409 unless it is failed or dead, 503 when the store fails. */
const RETRY = { 202: ['Cache-Control', 'Content-Location'] as const, 404: [], 409: [], 503: [] };
/** A $recover action (CONVENTIONS.md#recovering-after-an-outage): 202 with how many, 400 naming the member, 503. */
const RECOVER = { 202: NO_STORE, 400: [], 503: [] };
/**
 * A GitHub webhook sends JSON, or a form with a `payload` field when its Content type is set so
 * (CONVENTIONS.md#github-scheme); anything else is a 415 that says which to choose.
 */
const GITHUB_BODY: BodyKind = {
  accepts: (type) => isJsonMediaType(type) || isFormMediaType(type),
  name: 'application/json (choose it as the Content type in the webhook\'s settings on GitHub), or ' +
    'application/x-www-form-urlencoded with a payload field',
  media: 'application/json',
};
/** What each receiving scheme reads, as its route describes it (CONVENTIONS.md#receiving-sources). */
interface SchemeDoc {
  readonly reads: readonly RequestInput[];
  readonly accepts: SchemaName;
  readonly body: BodyKind;
}
const SCHEME_DOCS: Readonly<Record<WebhookScheme, SchemeDoc>> = {
  resapi: { reads: ['X-Signature', 'X-Timestamp'], accepts: 'WebhookEvent', body: JSON_BODY },
  standard: {
    reads: ['webhook-id', 'webhook-timestamp', 'webhook-signature'], accepts: 'StandardWebhookEvent', body: JSON_BODY,
  },
  github: {
    reads: ['X-Hub-Signature-256', 'X-GitHub-Delivery', 'X-GitHub-Event'],
    accepts: 'GitHubWebhookEvent',
    body: GITHUB_BODY,
  },
  stripe: { reads: ['Stripe-Signature'], accepts: 'StripeWebhookEvent', body: JSON_BODY },
};

export function routeTable(config: Config): readonly RouteEntry[] {
  return [
    {
      name: 'service',
      path: '/',
      methods: {
        GET: {
          produces: JSON_OR_HTML,
          handle: getServiceDocument,
          doc: {
            summary: 'The service document: every collection and its URL, a page at a time',
            responses: PAGE_READ,
            reads: LISTING,
            returns: 'ServiceDocument',
          },
        },
      },
    },
    // Health probes carry no credentials (CONVENTIONS.md#api-keys).
    {
      name: 'health',
      path: '/$health',
      public: true,
      methods: {
        GET: {
          produces: JSON_ONLY,
          handle: getHealth,
          doc: { summary: 'Whether the store can write', responses: { 200: NO_STORE, 503: [] }, returns: 'Health' },
        },
      },
    },
    ...receivingSources(config).map(sourceRoute),
    {
      name: 'metrics',
      path: '/$metrics',
      methods: {
        GET: {
          produces: [EXPOSITION_TYPE],
          handle: getMetrics,
          doc: {
            summary: 'Metrics in the Prometheus text format 0.0.4',
            responses: { 200: NO_STORE },
            returns: 'Text',
          },
        },
      },
    },
    {
      name: 'openapi',
      path: '/$openapi',
      methods: {
        GET: {
          produces: JSON_ONLY,
          handle: getOpenApi,
          doc: {
            summary: 'This description (OpenAPI 3.1)',
            responses: CONDITIONAL_READ,
            reads: READ_CONDITIONS,
            returns: 'OpenApiDocument',
          },
        },
      },
    },
    {
      name: 'inbox',
      path: '/$inbox',
      methods: {
        GET: {
          produces: JSON_OR_HTML,
          handle: getInbox,
          doc: {
            summary: 'Received webhook events',
            responses: PAGE_READ,
            reads: LISTING,
            returns: { pageOf: 'InboxEvent' },
          },
        },
      },
    },
    {
      name: 'inbox-event',
      path: '/$inbox/{eventId}',
      methods: {
        GET: {
          produces: JSON_OR_HTML,
          handle: getInboxEvent,
          doc: {
            summary: 'One received event',
            responses: { ...CONDITIONAL_READ, 404: [] },
            reads: READ_CONDITIONS,
            returns: 'InboxEvent',
          },
        },
      },
    },
    {
      name: 'inbox-retry',
      path: '/$inbox/{eventId}/$retry',
      methods: {
        PUT: {
          produces: JSON_ONLY,
          handle: retryInboxEvent,
          doc: { summary: 'Queue a received event for processing again', responses: RETRY, returns: 'InboxEvent' },
        },
      },
    },
    {
      name: 'inbox-recover',
      path: '/$inbox/$recover',
      methods: {
        POST: {
          produces: JSON_ONLY,
          body: JSON_BODY,
          handle: recoverInbox,
          doc: {
            summary: 'Queue again the failed and dead events received in a time window (of one source)',
            responses: RECOVER,
            accepts: 'InboxRecoverWindow',
            returns: 'RecoverReport',
          },
        },
      },
    },
    {
      name: 'subscriptions',
      path: '/$subscriptions',
      methods: {
        GET: {
          produces: JSON_OR_HTML,
          handle: getSubscriptions,
          doc: {
            summary: 'Webhook subscriptions',
            responses: PAGE_READ,
            reads: LISTING,
            returns: { pageOf: 'Subscription' },
          },
        },
      },
    },
    {
      name: 'subscription',
      path: '/$subscriptions/{id}',
      methods: {
        GET: {
          produces: JSON_OR_HTML,
          handle: getSubscription,
          doc: {
            summary: 'One subscription',
            responses: { ...CONDITIONAL_READ, 404: [] },
            reads: READ_CONDITIONS,
            returns: 'Subscription',
          },
        },
        PUT: {
          produces: JSON_ONLY,
          body: JSON_BODY,
          handle: putSubscription,
          doc: {
            summary: 'Create (If-None-Match: *) or replace (If-Match) a subscription',
            // 409: a create past limits.maxSubscriptions (CONVENTIONS.md#limits).
            responses: { ...CONDITIONAL_PUT, 409: [] },
            reads: WRITE_CONDITIONS,
            accepts: 'SubscriptionInput',
            returns: 'Subscription',
          },
        },
        DELETE: {
          produces: [],
          handle: deleteSubscription,
          doc: {
            summary: 'Delete a subscription (idempotent)',
            responses: CONDITIONAL_DELETE,
            reads: WRITE_CONDITIONS,
          },
        },
      },
    },
    // The one place a subscription's secret is shown (CONVENTIONS.md#signing-secrets-and-rotation).
    {
      name: 'subscription-secret',
      path: '/$subscriptions/{id}/$secret',
      methods: {
        GET: {
          produces: JSON_ONLY,
          handle: getSubscriptionSecret,
          doc: {
            summary: "A subscription's current signing secret (never stored by a cache)",
            responses: { 200: NO_STORE, 404: [] },
            returns: 'SubscriptionSecret',
          },
        },
      },
    },
    {
      name: 'subscription-recover',
      path: '/$subscriptions/{id}/$recover',
      methods: {
        POST: {
          produces: JSON_ONLY,
          body: JSON_BODY,
          handle: recoverDeliveries,
          doc: {
            summary: "Queue again the subscription's failed and dead deliveries of events in a time window",
            // 409: the subscription is disabled (re-enable it first).
            responses: { ...RECOVER, 404: [], 409: [] },
            accepts: 'RecoverWindow',
            returns: 'RecoverReport',
          },
        },
      },
    },
    {
      name: 'subscription-ping',
      path: '/$subscriptions/{id}/$ping',
      methods: {
        POST: {
          produces: JSON_ONLY,
          body: JSON_BODY,
          handle: pingSubscription,
          doc: {
            summary: 'Send a signed ping event to the subscription now (not stored, not retried)',
            // 200 whatever the receiver answered; 409 on a disabled subscription (CONVENTIONS.md#ping).
            responses: { 200: NO_STORE, 404: [], 409: [], 503: [] },
            accepts: 'PingInput',
            returns: 'PingAnswer',
          },
        },
      },
    },
    {
      name: 'outbox',
      path: '/$outbox',
      methods: {
        GET: {
          produces: JSON_OR_HTML,
          handle: getOutbox,
          doc: { summary: 'Webhook deliveries', responses: PAGE_READ, reads: LISTING, returns: { pageOf: 'Delivery' } },
        },
      },
    },
    {
      name: 'delivery',
      path: '/$outbox/{deliveryId}',
      methods: {
        GET: {
          produces: JSON_OR_HTML,
          handle: getDelivery,
          doc: {
            summary: 'One delivery',
            responses: { ...CONDITIONAL_READ, 404: [] },
            reads: READ_CONDITIONS,
            returns: 'Delivery',
          },
        },
      },
    },
    {
      name: 'delivery-retry',
      path: '/$outbox/{deliveryId}/$retry',
      methods: {
        PUT: {
          produces: JSON_ONLY,
          handle: retryDelivery,
          doc: { summary: 'Queue a delivery again', responses: RETRY, returns: 'Delivery' },
        },
      },
    },
    {
      name: 'collection',
      path: '/{collection}',
      methods: {
        GET: {
          produces: JSON_CSV_OR_HTML,
          handle: getCollection,
          doc: {
            summary: 'One page of the collection',
            responses: PAGE_READ,
            reads: LISTING,
            returns: { pageOf: 'Item' },
          },
        },
        POST: {
          produces: JSON_ONLY,
          body: JSON_BODY,
          handle: postToCollection,
          doc: {
            summary: 'Create an item with a server-chosen id; an Idempotency-Key makes a retry safe',
            // 201 (or a stored 400/422) replayed with Idempotent-Replayed; 409 while the first request with
            // the key runs.
            responses: { 201: [...STORED, 'Location', 'Idempotent-Replayed'], 409: [], 412: [], 422: [], 503: [] },
            reads: ['Idempotency-Key', ...WRITE_CONDITIONS],
            accepts: 'Item',
            returns: 'Item',
          },
        },
      },
    },
    {
      name: 'item',
      path: '/{collection}/{id}',
      methods: {
        GET: {
          produces: JSON_OR_HTML,
          handle: getItem,
          doc: {
            summary: 'One item',
            responses: { ...CONDITIONAL_READ, 404: [] },
            reads: READ_CONDITIONS,
            returns: 'Item',
          },
        },
        PUT: {
          produces: JSON_ONLY,
          body: JSON_BODY,
          handle: putItem,
          doc: {
            summary: 'Create (If-None-Match: *) or replace (If-Match) an item',
            responses: CONDITIONAL_PUT,
            reads: WRITE_CONDITIONS,
            accepts: 'Item',
            returns: 'Item',
          },
        },
        DELETE: {
          produces: [],
          handle: deleteItem,
          doc: {
            summary: 'Delete an item, kept as a tombstone for the undo (idempotent)',
            responses: CONDITIONAL_DELETE,
            reads: WRITE_CONDITIONS,
          },
        },
      },
    },
    {
      name: 'undo',
      path: '/{collection}/{id}/$undoDelete',
      methods: {
        PUT: {
          produces: JSON_ONLY,
          handle: undoDelete,
          doc: {
            summary: 'Restore a deleted item',
            responses: { 200: STORED, 404: [], 409: [], 503: [] },
            returns: 'Item',
          },
        },
      },
    },
    {
      name: 'bulk',
      path: '/{collection}/$bulk',
      methods: {
        PUT: {
          produces: JSON_ONLY,
          body: CSV_BODY,
          handle: putBulk,
          doc: {
            summary: 'Apply current/new value pairs from a CSV file, each row only where the current value still holds',
            responses: { 200: NO_STORE, 503: [] },
            accepts: 'Text',
            returns: 'BulkReport',
          },
        },
      },
    },
    {
      name: 'query',
      path: '/{collection}/$queries/{name}',
      methods: {
        GET: {
          produces: JSON_CSV_OR_HTML,
          handle: getQueryResults,
          // A query resource takes no options but the $skiptoken of its own @nextLink.
          doc: {
            summary: 'Run the stored query: one page of its results',
            responses: { ...PAGE_READ, 404: [] },
            reads: ['$skiptoken', 'Prefer', ...READ_CONDITIONS],
            returns: { pageOf: 'Item' },
          },
        },
        PUT: {
          produces: JSON_ONLY,
          body: JSON_BODY,
          handle: putQuery,
          doc: {
            summary: 'Store a query resource (validated now)',
            responses: CONDITIONAL_PUT,
            reads: WRITE_CONDITIONS,
            accepts: 'QueryDefinition',
            returns: 'QueryDefinition',
          },
        },
        DELETE: {
          produces: [],
          handle: deleteQuery,
          doc: {
            summary: 'Delete a query resource (idempotent)',
            responses: CONDITIONAL_DELETE,
            reads: WRITE_CONDITIONS,
          },
        },
      },
    },
    {
      name: 'query-definition',
      path: '/{collection}/$queries/{name}/$definition',
      methods: {
        GET: {
          produces: JSON_ONLY,
          handle: getQueryDefinition,
          doc: {
            summary: 'The stored definition of a query resource',
            responses: { ...CONDITIONAL_READ, 404: [] },
            reads: READ_CONDITIONS,
            returns: 'QueryDefinition',
          },
        },
      },
    },
  ];
}

/**
 * One receiving source's route (CONVENTIONS.md#receiving-sources): its path, bound to its source, so the
 * scheme is the path's, never guessed from the header fields. Every path below it is reserved. It
 * answers JSON whatever Accept says: a provider that cannot be answered would only retry (RFC 9110
 * §12.5.1 lets a server disregard Accept).
 */
function sourceRoute(source: ReceivingSource): RouteEntry {
  const { reads, accepts, body } = SCHEME_DOCS[source.scheme];
  const named = source.name === DEFAULT_SOURCE ? '' : ` from the source ${source.name}`;
  return {
    name: source.name === DEFAULT_SOURCE ? 'webhook' : `webhook-${source.name}`,
    path: source.path,
    reserveBelow: true,
    public: true,
    signed: true,
    methods: {
      POST: {
        produces: [],
        body,
        handle: (app, rq) => receiveWebhook(app, rq, source),
        doc: {
          summary: `Receive a signed webhook event${named} (${source.scheme} scheme; at-least-once, deduplicated)`,
          // 409: an event id whose inbox address another source's event holds.
          responses: { 200: NO_STORE, 401: [], 409: [], 503: [] },
          reads,
          accepts,
          returns: 'WebhookReceipt',
        },
      },
    },
  };
}

/** Allow (RFC 9110 §10.2.1): the declared methods, HEAD wherever GET, and OPTIONS everywhere. */
export function allowedMethods(entry: RouteEntry): string[] {
  return METHOD_ORDER.filter((method) => {
    if (method === 'OPTIONS') return true;
    if (method === 'HEAD') return entry.methods.GET !== undefined;
    return entry.methods[method] !== undefined;
  });
}

/** The endpoint serving `method` on the route (HEAD is GET without content), or undefined. */
export function endpointFor(entry: RouteEntry, method: string): Endpoint | undefined {
  const declared = method === 'HEAD' ? 'GET' : method;
  return Object.hasOwn(entry.methods, declared) ? entry.methods[declared as DeclaredMethod] : undefined;
}

/** Every method some route takes, in Allow order: what `OPTIONS *` lists and anything else is 501. */
export function serverMethods(entries: readonly RouteEntry[]): string[] {
  return METHOD_ORDER.filter((method) => entries.some((entry) => allowedMethods(entry).includes(method)));
}
