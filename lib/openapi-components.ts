// The reusable parts of the OpenAPI 3.1 description (lib/openapi.ts): schemas (JSON Schema 2020-12,
// the dialect OpenAPI 3.1 §4.8.24 uses), header and parameter objects, and one response per problem
// status. Each states what the code it names enforces; the code stays the authority, and the e2e test
// (test/e2e/openapi.test.ts) checks the description against a running server.
import type { Config, FieldType } from './config.js';
import type { JsonObject, JsonValue } from './json.js';
import { COLLECTION_NAME, MAX_INBOX_ITEM_ID, RESOURCE_ID } from './names.js';
import { PROBLEM_TYPE_PREFIX, PROBLEM_TYPES, type ProblemType } from './protocol/problem.js';
import type { RequestInput, ResponseField, SchemaName } from './routes.js';

/** Component names allow only these characters (OpenAPI 3.1 §4.8.7.1): `$filter` is named `filter`. */
export function parameterKey(input: RequestInput | string): string {
  return input === 'field=value' ? 'fieldValue' : input.replace(/^\$/, '');
}

/** A collection's typed item schema: a name no fixed schema can take (those have no dot). */
export function itemSchemaKey(collection: string): string {
  return `Item.${collection}`;
}

export function ref(section: 'schemas' | 'parameters' | 'headers' | 'responses', name: string): JsonObject {
  return { $ref: `#/components/${section}/${name}` };
}

/** Every 4xx and 5xx is a problem (RFC 9457, CONVENTIONS.md#problem-details), answered by its status's component. */
export function problemResponseKey(status: number): string {
  return `Problem${status}`;
}

const DATE_TIME: JsonObject = { type: 'string', format: 'date-time' };
const STRING: JsonObject = { type: 'string' };
/** CONVENTIONS.md#names: 1-128 characters of [A-Za-z0-9._~-], not "." or "..". */
const RESOURCE_ID_SCHEMA: JsonObject = { type: 'string', pattern: RESOURCE_ID.source, not: { enum: ['.', '..'] } };
/** CONVENTIONS.md#rate-limits-and-timeouts: deliveries per second, optional. */
const RATE_LIMIT: JsonObject = { type: 'number', exclusiveMinimum: 0, maximum: 10_000 };

export function schemas(config: Config): JsonObject {
  const types = Object.keys(PROBLEM_TYPES) as ProblemType[];
  const fixed: Record<SchemaName | 'Problem' | 'ProblemItem' | 'Envelope' | 'Summary', JsonObject> = {
    Problem: {
      type: 'object',
      description: 'RFC 9457 problem details; `errors` (CONVENTIONS.md#problem-details) points at what was wrong. ' +
        '`x-problem-types` lists every type with its title and status.',
      required: ['type', 'title', 'status', 'detail'],
      properties: {
        type: { type: 'string', format: 'uri', enum: types.map((type) => PROBLEM_TYPE_PREFIX + type) },
        title: STRING,
        status: { type: 'integer', minimum: 400, maximum: 599 },
        detail: STRING,
        errors: { type: 'array', items: ref('schemas', 'ProblemItem') },
      },
      'x-problem-types': types.map((type) => ({
        type: PROBLEM_TYPE_PREFIX + type,
        title: PROBLEM_TYPES[type].title,
        status: PROBLEM_TYPES[type].status,
      })),
    },
    ProblemItem: {
      type: 'object',
      required: ['detail'],
      properties: {
        pointer: { type: 'string', description: 'RFC 6901 JSON Pointer into the body' },
        parameter: STRING,
        header: STRING,
        row: { type: 'integer', minimum: 1 },
        detail: STRING,
      },
    },
    // CONVENTIONS.md#collection-envelope: @count only with $count=true; @nextLink only when a next page exists.
    Envelope: {
      type: 'object',
      required: ['value'],
      properties: {
        '@count': { type: 'integer', minimum: 0, description: 'Every match, not the page (with $count=true).' },
        value: { type: 'array' },
        '@nextLink': {
          type: 'string',
          format: 'uri-reference',
          description: 'Opaque link to the next page; absent on the last page. Also sent as Link: <...>; rel="next".',
        },
      },
    },
    Summary: {
      type: 'object',
      description: 'An item as $select returns it: the selected fields and the link to the whole item.',
      required: ['@id'],
      properties: { '@id': { type: 'string', format: 'uri-reference' } },
    },
    Item: {
      type: 'object',
      description: 'An item of a collection without a declared schema (schemaless JSON object).',
      required: ['id'],
      properties: { id: RESOURCE_ID_SCHEMA },
    },
    QueryDefinition: {
      type: 'object',
      additionalProperties: false,
      properties: {
        filter: { type: 'string', description: 'An OData 4.01 $filter expression' },
        orderby: { type: 'string', examples: ['price desc,name'] },
        select: { type: 'array', minItems: 1, items: STRING },
      },
    },
    // A page of the collections: the envelope of any listing (CONVENTIONS.md#service-document).
    ServiceDocument: {
      allOf: [ref('schemas', 'Envelope')],
      properties: {
        value: {
          type: 'array',
          items: {
            anyOf: [
              {
                type: 'object',
                required: ['name', 'url'],
                properties: {
                  name: { type: 'string', pattern: COLLECTION_NAME.source },
                  url: { type: 'string', format: 'uri-reference' },
                },
              },
              ref('schemas', 'Summary'),
            ],
          },
        },
      },
    },
    Health: {
      type: 'object',
      required: ['status', 'durable'],
      properties: { status: { const: 'ok' }, durable: { type: 'boolean' } },
    },
    InboxEvent: {
      type: 'object',
      required: ['id', 'source', 'eventId', 'event', 'status', 'attempts', 'receivedAt'],
      properties: {
        id: { type: 'string', minLength: 1, maxLength: MAX_INBOX_ITEM_ID },
        source: { type: 'string', description: 'webhooks, or <name> of the receiving source /webhooks/<name>' },
        eventId: { type: 'string', minLength: 1, maxLength: 255 },
        event: STRING,
        status: { enum: ['accepted', 'processed', 'failed', 'dead'] },
        attempts: { type: 'integer', minimum: 0 },
        receivedAt: DATE_TIME,
        processedAt: DATE_TIME,
        nextAttemptAt: DATE_TIME,
        lastError: STRING,
      },
    },
    Delivery: {
      type: 'object',
      required: ['id', 'eventId', 'subscription', 'event', 'status', 'attempts'],
      properties: {
        id: STRING,
        eventId: STRING,
        subscription: STRING,
        event: STRING,
        status: { enum: ['pending', 'delivered', 'failed', 'dead'] },
        attempts: { type: 'integer', minimum: 0 },
        createdAt: DATE_TIME,
        deliveredAt: DATE_TIME,
        nextAttemptAt: DATE_TIME,
        lastStatus: { type: 'integer' },
        lastError: STRING,
        // CONVENTIONS.md#attempt-log: on the item only, never on a page of /$outbox.
        attemptLog: {
          type: 'array',
          maxItems: 15,
          items: {
            type: 'object',
            required: ['at', 'durationMs'],
            properties: {
              at: DATE_TIME, status: { type: 'integer' }, error: STRING, durationMs: { type: 'integer', minimum: 0 },
            },
          },
        },
        /** A forward's (CONVENTIONS.md#forwarding): the source its event came by. */
        source: STRING,
      },
    },
    Subscription: {
      type: 'object',
      required: ['id', 'url', 'events', 'status'],
      properties: {
        id: RESOURCE_ID_SCHEMA,
        url: { type: 'string', format: 'uri' },
        events: { type: 'array', minItems: 1, items: STRING },
        rateLimit: RATE_LIMIT,
        status: { enum: ['active', 'disabled'] },
        secretOverlapS: { type: 'integer', minimum: 0 },
        // Set by the server when it disables the subscription (CONVENTIONS.md#auto-disable).
        disabledReason: { ...STRING, readOnly: true },
        disabledAt: { ...DATE_TIME, readOnly: true },
      },
    },
    // CONVENTIONS.md#subscriptions: the secret is write-only, generated when a create leaves it out, kept when a
    // replace does; CONVENTIONS.md#signing-secrets-and-rotation: a new one leaves the old signing secretOverlapS.
    SubscriptionInput: {
      type: 'object',
      additionalProperties: false,
      required: ['url', 'events'],
      properties: {
        id: RESOURCE_ID_SCHEMA,
        url: { type: 'string', format: 'uri' },
        events: {
          type: 'array',
          minItems: 1,
          items: { type: 'string', examples: ['*', 'products.*', 'products.created'] },
        },
        rateLimit: RATE_LIMIT,
        secret: { type: 'string', minLength: 1, maxLength: 1024, writeOnly: true },
        status: { enum: ['active', 'disabled'] },
        secretOverlapS: { type: 'integer', minimum: 0, maximum: 2592000, default: 86400 },
      },
    },
    // No example: a secret is never written in documentation.
    SubscriptionSecret: {
      type: 'object',
      description: 'The current signing secret; a generated one is whsec_ and the base64 of 24 random bytes.',
      required: ['secret'],
      properties: { secret: { type: 'string', minLength: 1, maxLength: 1024 } },
    },
    BulkReport: {
      type: 'object',
      required: ['applied', 'skipped', 'conflicts', 'notFound'],
      properties: {
        applied: { type: 'integer', minimum: 0 },
        skipped: { type: 'integer', minimum: 0 },
        conflicts: {
          type: 'array',
          items: {
            type: 'object',
            required: ['row', 'id'],
            properties: { row: { type: 'integer' }, id: STRING, actual: { type: 'object' } },
          },
        },
        notFound: {
          type: 'array',
          items: { type: 'object', required: ['row', 'id'], properties: { row: { type: 'integer' }, id: STRING } },
        },
      },
    },
    // CONVENTIONS.md#webhook-event-body: the provider may send other fields.
    WebhookEvent: {
      type: 'object',
      required: ['id', 'event'],
      properties: { id: { type: 'string', minLength: 1, maxLength: 255 }, event: { type: 'string', minLength: 1 } },
    },
    // CONVENTIONS.md#standard-webhooks-scheme: the id is webhook-id; the kind is the body's type.
    StandardWebhookEvent: {
      type: 'object',
      required: ['type'],
      properties: { type: { type: 'string', minLength: 1 } },
    },
    // CONVENTIONS.md#github-scheme: the id and the kind are header fields; a form body's payload field holds this.
    GitHubWebhookEvent: {
      type: 'object',
      description: 'A GitHub event payload; its action, when present, is appended to the kind (X-GitHub-Event).',
      properties: { action: STRING },
    },
    // CONVENTIONS.md#stripe-scheme: a Stripe event.
    StripeWebhookEvent: {
      type: 'object',
      required: ['id', 'type'],
      properties: { id: { type: 'string', minLength: 1, maxLength: 255 }, type: { type: 'string', minLength: 1 } },
    },
    WebhookReceipt: {
      type: 'object',
      required: ['status'],
      properties: { status: { enum: ['accepted', 'duplicate'] } },
    },
    // CONVENTIONS.md#ping: a ping takes no options.
    PingInput: { type: 'object', additionalProperties: false, maxProperties: 0 },
    PingAnswer: {
      type: 'object',
      required: ['status', 'durationMs'],
      properties: {
        status: { type: ['integer', 'null'], description: "The receiver's status; null when it did not answer." },
        error: STRING,
        durationMs: { type: 'integer', minimum: 0 },
      },
    },
    // CONVENTIONS.md#recovering-after-an-outage: both bounds included; until defaults to now.
    RecoverWindow: {
      type: 'object',
      additionalProperties: false,
      required: ['since'],
      properties: { since: DATE_TIME, until: DATE_TIME },
    },
    InboxRecoverWindow: {
      type: 'object',
      additionalProperties: false,
      required: ['since'],
      properties: {
        since: DATE_TIME,
        until: DATE_TIME,
        source: { type: 'string', description: 'A receiving source: "webhooks", or <name> of /webhooks/<name>' },
      },
    },
    RecoverReport: {
      type: 'object',
      required: ['requeued', 'remaining'],
      properties: {
        requeued: { type: 'integer', minimum: 0 },
        remaining: { type: 'integer', minimum: 0, description: 'Left for a repeat of the request (past its limit)' },
      },
    },
    Text: STRING,
    OpenApiDocument: { type: 'object', required: ['openapi', 'info'], properties: { openapi: { type: 'string' } } },
  };
  const typed: Record<string, JsonObject> = {};
  for (const [name, collection] of Object.entries(config.collections)) {
    if (collection.schema !== undefined) typed[itemSchemaKey(name)] = typedItem(name, collection.schema);
  }
  return { ...fixed, ...typed };
}

/** lib/writes/document.ts checkSchema: only declared fields, each of its declared type or null; `id` always. */
function typedItem(name: string, schema: Readonly<Record<string, FieldType>>): JsonObject {
  const properties: Record<string, JsonValue> = { id: RESOURCE_ID_SCHEMA };
  for (const [field, type] of Object.entries(schema)) if (field !== 'id') properties[field] = { type: [type, 'null'] };
  return {
    type: 'object',
    description: `An item of ${name} (its declared schema).`,
    required: ['id'],
    additionalProperties: false,
    properties,
  };
}

/** Path parameters (CONVENTIONS.md#names) and the request inputs routes declare. */
export function parameters(): JsonObject {
  const path = (name: string, schema: JsonObject, description: string): JsonObject =>
    ({ name, in: 'path', required: true, description, schema });
  const header = (name: string, description: string, schema: JsonObject = STRING): JsonObject =>
    ({ name, in: 'header', required: false, description, schema });
  const query = (name: string, description: string, schema: JsonObject = STRING): JsonObject =>
    ({ name, in: 'query', required: false, description, schema });
  const all: Record<string, JsonObject> = {
    collection: path('collection', { type: 'string', pattern: COLLECTION_NAME.source }, 'A collection name.'),
    id: path('id', RESOURCE_ID_SCHEMA, 'A resource id.'),
    name: path('name', RESOURCE_ID_SCHEMA, 'A query resource name.'),
    deliveryId: path('deliveryId', RESOURCE_ID_SCHEMA, 'A delivery id.'),
    eventId: path(
      'eventId',
      { type: 'string', minLength: 1, maxLength: MAX_INBOX_ITEM_ID },
      'A received event\'s inbox id, percent-encoded: the event id (any 1-255 characters), or ' +
        '<source>:<eventId> for a named receiving source (CONVENTIONS.md#inbox).',
    ),
    'If-Match': header(
      'If-Match',
      'RFC 9110 §13.1.1 (strong comparison). On PUT, replaces only the representation with this ETag.',
    ),
    'If-None-Match': header(
      'If-None-Match',
      'RFC 9110 §13.1.2 (weak comparison). On GET, a match gives 304; on PUT, * creates only when absent.',
    ),
    'If-Modified-Since': header('If-Modified-Since', 'RFC 9110 §13.1.3; honoured only without If-None-Match.'),
    'If-Unmodified-Since': header('If-Unmodified-Since', 'RFC 9110 §13.1.4.'),
    'Idempotency-Key': header(
      'Idempotency-Key',
      '1-255 visible ASCII characters; a repeat with the same request within 24 hours replays the first answer ' +
        '(CONVENTIONS.md#idempotency-keys).',
      { type: 'string', minLength: 1, maxLength: 257 },
    ),
    Prefer: header(
      'Prefer',
      'RFC 7240: maxpagesize=N (or odata.maxpagesize=N) asks for N items a page, clamped to the configured maximum.',
    ),
    'X-Signature': {
      ...header(
        'X-Signature',
        'Lowercase hex HMAC-SHA256 of the exact body bytes under the shared secret (a sha256= prefix is accepted).',
        { type: 'string', pattern: '^(sha256=)?[0-9a-f]{64}$' },
      ),
      required: true,
    },
    'X-Timestamp': header(
      'X-Timestamp',
      'Unix time in seconds of the delivery; refused when outside the tolerance.',
      { type: 'string', pattern: '^[0-9]+$' },
    ),
    // The receiving schemes' fields (CONVENTIONS.md#receiving-sources): each source's route reads its scheme's.
    'webhook-id': header(
      'webhook-id',
      'Standard Webhooks: the event id, signed (svix-id is read instead when no webhook- field is sent).',
    ),
    'webhook-timestamp': header(
      'webhook-timestamp',
      'Standard Webhooks: Unix seconds of the attempt, signed; refused outside the tolerance (or svix-timestamp).',
      { type: 'string', pattern: '^[0-9]+$' },
    ),
    'webhook-signature': header(
      'webhook-signature',
      'Standard Webhooks: space-separated v1,<base64 HMAC-SHA256 of id.timestamp.body> (or svix-signature).',
    ),
    'X-Hub-Signature-256': {
      ...header(
        'X-Hub-Signature-256',
        'GitHub: sha256= and the lowercase hex HMAC-SHA256 of the exact body bytes under the webhook\'s secret.',
        { type: 'string', pattern: '^sha256=[0-9a-f]{64}$' },
      ),
      required: true,
    },
    'X-GitHub-Delivery': {
      ...header('X-GitHub-Delivery', 'GitHub: the delivery id, the event id (not signed).'),
      required: true,
    },
    'X-GitHub-Event': {
      ...header('X-GitHub-Event', 'GitHub: the event name; the body\'s action is appended for the kind (not signed).'),
      required: true,
    },
    'Stripe-Signature': {
      ...header(
        'Stripe-Signature',
        'Stripe: t=<Unix seconds>,v1=<lowercase hex HMAC-SHA256 of t.body>, several v1 allowed; v0 is ignored.',
      ),
      required: true,
    },
    filter: query('$filter', 'An OData 4.01 filter expression (CONVENTIONS.md#filter-expressions).'),
    select: query('$select', 'Comma-separated property paths: summaries with those fields and @id.'),
    orderby: query('$orderby', 'Comma-separated property paths, each optionally asc or desc; the id breaks ties.'),
    top: query('$top', 'The most items to return across all pages.', { type: 'integer', minimum: 0 }),
    count: query('$count', 'true adds @count, the number of every match.', { type: 'boolean' }),
    skiptoken: query('$skiptoken', 'Opaque: only as found in @nextLink.'),
    fieldValue: {
      name: 'field=value',
      in: 'query',
      required: false,
      description: 'Simple query string (CONVENTIONS.md#simple-query-strings): field=value pairs, ANDed; ' +
        'strings match by case-insensitive contains, arrays by membership.',
      style: 'form',
      explode: true,
      schema: { type: 'object', additionalProperties: STRING },
    },
  };
  return all;
}

type DescribedHeader = ResponseField | 'Retry-After' | 'Allow' | 'WWW-Authenticate' | 'X-Request-Id';
const HEADER_TEXT: Readonly<Record<DescribedHeader, string>> = {
  ETag: 'Strong entity tag of the exact bytes sent (RFC 9110 §8.8.3).',
  'Last-Modified': 'RFC 9110 §8.8.2.',
  'Cache-Control': 'RFC 9111 §5.2.',
  Vary: 'The request fields that chose this response (RFC 9110 §12.5.5).',
  Location: 'The created resource (RFC 9110 §10.2.2).',
  'Content-Location': 'Where the enclosed representation lives (RFC 9110 §8.7).',
  Link: 'RFC 8288: <...>; rel="next" when a next page exists.',
  'Preference-Applied': 'RFC 7240 §3: the page size applied.',
  'Idempotent-Replayed': 'true on a replayed response to a repeated Idempotency-Key.',
  'Retry-After': 'Seconds to wait before retrying (RFC 9110 §10.2.3).',
  Allow: 'The methods the target takes (RFC 9110 §10.2.1).',
  'WWW-Authenticate':
    'Bearer for API keys; HMAC-SHA256 realm="webhooks" at the webhook receiver (RFC 9110 §11.6.1).',
  'X-Request-Id': 'Names the request in the server log.',
};

export function headers(): JsonObject {
  const all: Record<string, JsonValue> = {};
  for (const [name, description] of Object.entries(HEADER_TEXT)) all[name] = { description, schema: STRING };
  return all;
}

/**
 * Fields a problem of the status carries besides X-Request-Id, Cache-Control and Vary (Authorization,
 * with API keys).
 */
const PROBLEM_FIELDS: Readonly<Record<number, readonly string[]>> = {
  401: ['WWW-Authenticate'], 405: ['Allow'], 409: ['Retry-After'], 503: ['Retry-After'],
};

/** One response per problem status; its description names each problem type that has the status. */
export function problemResponses(): JsonObject {
  const byStatus = new Map<number, ProblemType[]>();
  for (const type of Object.keys(PROBLEM_TYPES) as ProblemType[]) {
    const { status } = PROBLEM_TYPES[type];
    byStatus.set(status, [...(byStatus.get(status) ?? []), type]);
  }
  const all: Record<string, JsonValue> = {};
  for (const [status, types] of byStatus) {
    const fields: Record<string, JsonValue> = {
      'X-Request-Id': ref('headers', 'X-Request-Id'),
      'Cache-Control': ref('headers', 'Cache-Control'),
      Vary: ref('headers', 'Vary'),
    };
    for (const name of PROBLEM_FIELDS[status] ?? []) fields[name] = ref('headers', name);
    all[problemResponseKey(status)] = {
      description: types.map((type) => `${PROBLEM_TYPES[type].title} (${PROBLEM_TYPE_PREFIX}${type})`).join('; '),
      headers: fields,
      content: {
        'application/problem+json': {
          schema: {
            allOf: [ref('schemas', 'Problem')],
            properties: { type: { enum: types.map((type) => PROBLEM_TYPE_PREFIX + type) }, status: { const: status } },
          },
        },
      },
    };
  }
  return all;
}
