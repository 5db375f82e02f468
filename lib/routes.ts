// The route table (CONTRACT §2): every route is declared once, here: its path pattern, and per method
// the media types its response can take, the request content it reads, and the handler that runs.
// Everything a route must answer before its handler runs is derived from this table by lib/app.ts,
// for every route alike: Allow and 405 (RFC 9110 §15.5.6), OPTIONS (§9.3.7), HEAD wherever GET
// (§9.3.2), 406 (§15.5.7), 413 (§15.5.14) and 415 (§15.5.16). Adding a route is one entry here plus
// its handler.
import type { Config } from './config.js';
import { EXPOSITION_TYPE } from './metrics.js';
import { getMetrics } from './resources/metrics.js';
import { CSV_BODY, JSON_BODY, type BodyKind } from './http/body.js';
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
import { getInbox, getInboxEvent, retryInboxEvent } from './resources/inbox.js';
import { receiveWebhook } from './resources/receiver.js';
import { getDelivery, getOutbox, retryDelivery } from './resources/outbox.js';
import { deleteSubscription, getSubscription, getSubscriptions, putSubscription } from './resources/subscriptions.js';

/** The methods a route may declare; HEAD and OPTIONS are derived, never declared. */
export type DeclaredMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface Endpoint {
  /** Media types the response can be sent as, the default first; empty when it sends no content to negotiate. */
  readonly produces: readonly string[];
  /** The request content it reads; absent when it reads none. */
  readonly body?: BodyKind;
  readonly handle: Handler;
}

export type RouteName =
  | 'service' | 'health' | 'metrics' | 'webhook' | 'collection' | 'item' | 'undo' | 'bulk' | 'query' | 'query-definition'
  | 'inbox' | 'inbox-event' | 'inbox-retry' | 'subscriptions' | 'subscription' | 'outbox' | 'delivery' | 'delivery-retry';

export interface RouteEntry extends RoutePattern<RouteName> {
  /** Served without an API key (CONTRACT §1): the webhook receiver authenticates by signature, health probes carry none. */
  readonly public?: boolean;
  readonly methods: Readonly<Partial<Record<DeclaredMethod, Endpoint>>>;
}

/** The order methods are listed in Allow. */
const METHOD_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

const JSON_ONLY = [JSON_TYPE];
/** What can be read in a browser too (CONTRACT §3); JSON stays the default, so JSON clients see no change. */
const JSON_OR_HTML = [JSON_TYPE, HTML_TYPE];
const JSON_CSV_OR_HTML = [JSON_TYPE, CSV_TYPE, HTML_TYPE];

export function routeTable(config: Config): readonly RouteEntry[] {
  return [
    { name: 'service', path: '/', methods: { GET: { produces: JSON_OR_HTML, handle: getServiceDocument } } },
    // Health probes carry no credentials (CONTRACT §1).
    { name: 'health', path: '/$health', public: true, methods: { GET: { produces: JSON_ONLY, handle: getHealth } } },
    // Answers JSON whatever Accept says: a provider that cannot be answered would only retry (RFC 9110 §12.5.1 lets a server disregard Accept).
    { name: 'webhook', path: config.webhooks.path, reserveBelow: true, public: true, methods: { POST: { produces: [], body: JSON_BODY, handle: receiveWebhook } } },
    { name: 'metrics', path: '/$metrics', methods: { GET: { produces: [EXPOSITION_TYPE], handle: getMetrics } } },
    { name: 'inbox', path: '/$inbox', methods: { GET: { produces: JSON_OR_HTML, handle: getInbox } } },
    { name: 'inbox-event', path: '/$inbox/{eventId}', methods: { GET: { produces: JSON_OR_HTML, handle: getInboxEvent } } },
    { name: 'inbox-retry', path: '/$inbox/{eventId}/$retry', methods: { PUT: { produces: JSON_ONLY, handle: retryInboxEvent } } },
    { name: 'subscriptions', path: '/$subscriptions', methods: { GET: { produces: JSON_OR_HTML, handle: getSubscriptions } } },
    {
      name: 'subscription',
      path: '/$subscriptions/{id}',
      methods: {
        GET: { produces: JSON_OR_HTML, handle: getSubscription },
        PUT: { produces: JSON_ONLY, body: JSON_BODY, handle: putSubscription },
        DELETE: { produces: [], handle: deleteSubscription },
      },
    },
    { name: 'outbox', path: '/$outbox', methods: { GET: { produces: JSON_OR_HTML, handle: getOutbox } } },
    { name: 'delivery', path: '/$outbox/{deliveryId}', methods: { GET: { produces: JSON_OR_HTML, handle: getDelivery } } },
    { name: 'delivery-retry', path: '/$outbox/{deliveryId}/$retry', methods: { PUT: { produces: JSON_ONLY, handle: retryDelivery } } },
    {
      name: 'collection',
      path: '/{collection}',
      methods: {
        GET: { produces: JSON_CSV_OR_HTML, handle: getCollection },
        POST: { produces: JSON_ONLY, body: JSON_BODY, handle: postToCollection },
      },
    },
    {
      name: 'item',
      path: '/{collection}/{id}',
      methods: {
        GET: { produces: JSON_OR_HTML, handle: getItem },
        PUT: { produces: JSON_ONLY, body: JSON_BODY, handle: putItem },
        DELETE: { produces: [], handle: deleteItem },
      },
    },
    { name: 'undo', path: '/{collection}/{id}/$undoDelete', methods: { PUT: { produces: JSON_ONLY, handle: undoDelete } } },
    { name: 'bulk', path: '/{collection}/$bulk', methods: { PUT: { produces: JSON_ONLY, body: CSV_BODY, handle: putBulk } } },
    {
      name: 'query',
      path: '/{collection}/$queries/{name}',
      methods: {
        GET: { produces: JSON_CSV_OR_HTML, handle: getQueryResults },
        PUT: { produces: JSON_ONLY, body: JSON_BODY, handle: putQuery },
        DELETE: { produces: [], handle: deleteQuery },
      },
    },
    { name: 'query-definition', path: '/{collection}/$queries/{name}/$definition', methods: { GET: { produces: JSON_ONLY, handle: getQueryDefinition } } },
  ];
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
