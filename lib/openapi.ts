// GET /$openapi: an OpenAPI 3.1 description of the running server (CONVENTIONS.md#openapi), per the OpenAPI
// Specification 3.1.0 (https://spec.openapis.org/oas/v3.1.0). Pure: derived from the route table
// (lib/routes.ts), never written beside it, so a route cannot exist undescribed:
// - paths and methods are the table's; HEAD is listed wherever GET is and OPTIONS everywhere, as
//   allowedMethods() derives them for Allow; the webhook path is config.webhooks.path;
// - statuses are what each endpoint's handler declares (`doc.responses`) plus what the pipeline
//   (lib/app.ts) answers before any handler: 400 (Host, names, malformed preconditions), 401 with API
//   keys on a route that is not public, 403 on an unsafe method and 421 anywhere but on the signed
//   webhook receiver (CONVENTIONS.md#cors, #host-check), 406 where the route offers media, 413
//   everywhere (a declared Content-Length over the cap, CONVENTIONS.md#body-cap), 415 where it reads a
//   body, 500 anywhere;
// - a collection with a declared schema also gets its own paths (OpenAPI 3.1 §4.8.8: a concrete path
//   is matched before a templated one) whose bodies are its typed item schema.
// Not per operation, because no operation can answer them: 404 for a path no route matches, 405 for a
// method a path does not list (Allow then names the ones listed), 501 for a method no route takes,
// 408 and 431 from the connection before any route; info.description says so.
import type { Config } from './config.js';
import type { JsonObject, JsonValue } from './json.js';
import {
  headers,
  itemSchemaKey,
  parameterKey,
  parameters,
  problemResponseKey,
  problemResponses,
  ref,
  schemas,
} from './openapi-components.js';
import { allowedMethods, endpointFor, type Endpoint, type RouteEntry, type SchemaName } from './routes.js';

export interface OpenApiOptions {
  /** info.version: the package's version. */
  readonly version: string;
  /** Where the server is reached: --base-url, else the address it listens on. */
  readonly serverUrl: string;
  /** API keys on: every route but the public ones requires Authorization: Bearer (CONVENTIONS.md#api-keys). */
  readonly apiKeys: boolean;
}

const REASONS: Readonly<Record<number, string>> = {
  200: 'OK', 201: 'Created', 202: 'Accepted', 204: 'No Content', 304: 'Not Modified',
};
const PARAM = /\{([A-Za-z]+)\}/g;

const DESCRIPTION = [
  'HTTP resource API conventions: conditional requests (RFC 9110 §13), collections with paging and OData filters,',
  'idempotent writes, webhooks.',
  'Errors are RFC 9457 problems (application/problem+json); components.schemas.Problem lists every problem type.',
  'Besides the statuses listed per operation: 404 for a path no route matches,',
  '405 with Allow for a method a path does not list,',
  '501 for a method no route takes, 408 and 431 for a request that is too slow or whose header section is too large.',
].join(' ');

export function openApiDocument(config: Config, table: readonly RouteEntry[], options: OpenApiOptions): JsonObject {
  const paths: Record<string, JsonValue> = {};
  for (const entry of table) paths[entry.path] = pathItem(config, entry, options, undefined);
  // Concrete paths for collections with a declared schema, so their items are typed.
  for (const [name, collection] of Object.entries(config.collections)) {
    // A collection whose path is the webhook path is unreachable there (the literal route wins): leave it out.
    if (collection.schema === undefined || Object.hasOwn(paths, `/${name}`)) continue;
    for (const entry of table.filter((candidate) => candidate.path.startsWith('/{collection}'))) {
      paths[entry.path.replace('{collection}', name)] = pathItem(config, entry, options, name);
    }
  }
  const components: Record<string, JsonValue> = {
    schemas: schemas(config),
    parameters: parameters(),
    headers: headers(),
    responses: problemResponses(),
  };
  const document: Record<string, JsonValue> = {
    openapi: '3.1.0',
    info: { title: 'resapi', version: options.version, description: DESCRIPTION },
    servers: [{ url: options.serverUrl }],
    paths,
    components,
  };
  if (options.apiKeys) {
    components['securitySchemes'] = {
      bearer: { type: 'http', scheme: 'bearer', description: 'An API key as an RFC 6750 bearer token.' },
    };
    document['security'] = [{ bearer: [] }];
  }
  return document;
}

/**
 * Every status an operation can answer, ascending: the handler's and the pipeline's (see the top of
 * this file). With allowUnconditionalPut a PUT without a precondition is an upsert, so never 428.
 */
export function operationStatuses(
  config: Config,
  entry: RouteEntry,
  endpoint: Endpoint,
  options: Pick<OpenApiOptions, 'apiKeys'>,
): number[] {
  const statuses = new Set([...Object.keys(endpoint.doc.responses).map(Number), 400, 413, 500]);
  if (options.apiKeys && entry.public !== true) statuses.add(401);
  // CONVENTIONS.md#host-check, #cors: a Host not of this server; an unsafe method from a page not allowed.
  if (entry.signed !== true) statuses.add(421);
  if (entry.signed !== true && entry.methods.GET !== endpoint) statuses.add(403);
  if (endpoint.produces.length > 0) statuses.add(406);
  if (endpoint.body !== undefined) statuses.add(415);
  if (config.allowUnconditionalPut) statuses.delete(428);
  return [...statuses].sort((a, b) => a - b);
}

function pathItem(
  config: Config,
  entry: RouteEntry,
  options: OpenApiOptions,
  collection: string | undefined,
): JsonObject {
  const item: Record<string, JsonValue> = {};
  const params = [...entry.path.matchAll(PARAM)]
    .map((match) => match[1] as string)
    .filter((name) => collection === undefined || name !== 'collection');
  if (params.length > 0) item['parameters'] = params.map((name) => ref('parameters', name));
  const allow = allowedMethods(entry);
  for (const method of allow) {
    const id = `${method.toLowerCase()}-${entry.name}${collection === undefined ? '' : `-${collection}`}`;
    const endpoint = endpointFor(entry, method);
    item[method.toLowerCase()] = endpoint === undefined
      ? optionsOperation(entry, options, id, allow)
      : operation(config, entry, endpoint, method, options, id, collection);
  }
  return item;
}

function operation(
  config: Config,
  entry: RouteEntry,
  endpoint: Endpoint,
  method: string,
  options: OpenApiOptions,
  id: string,
  collection: string | undefined,
): JsonObject {
  const { doc } = endpoint;
  const summary = method === 'HEAD' ? `${doc.summary} (headers only)` : doc.summary;
  const op: Record<string, JsonValue> = { operationId: id, summary };
  if (doc.reads !== undefined && doc.reads.length > 0) {
    op['parameters'] = doc.reads.map((input) => ref('parameters', parameterKey(input)));
  }
  if (endpoint.body !== undefined && doc.accepts !== undefined) {
    const schema = schemaFor(doc.accepts, collection, endpoint.body.media);
    op['requestBody'] = { required: true, content: { [endpoint.body.media]: { schema } } };
  }
  const responses: Record<string, JsonValue> = {};
  for (const status of operationStatuses(config, entry, endpoint, options)) {
    responses[String(status)] = status >= 400
      ? ref('responses', problemResponseKey(status))
      : success(endpoint, method, status, collection, options);
  }
  op['responses'] = responses;
  if (options.apiKeys && entry.public === true) op['security'] = [];
  return op;
}

/** A 1xx-3xx answer: its header fields and, unless it has none (HEAD, 204, 304), its content per offered media type. */
function success(
  endpoint: Endpoint,
  method: string,
  status: number,
  collection: string | undefined,
  options: OpenApiOptions,
): JsonObject {
  const response: Record<string, JsonValue> = {
    description: REASONS[status] ?? String(status),
    headers: fieldsOf(endpoint.doc.responses[status] ?? [], options),
  };
  const returns = endpoint.doc.returns;
  if (method === 'HEAD' || status === 204 || status === 304 || returns === undefined) return response;
  // A route that ignores Accept (the webhook receiver) still answers JSON.
  const media = endpoint.produces.length > 0 ? endpoint.produces : ['application/json'];
  response['content'] = Object.fromEntries(
    media.map((type) => {
      const schema = typeof returns === 'string'
        ? schemaFor(returns, collection, type)
        : pageSchema(returns.pageOf, collection, type);
      return [type, { schema }];
    }),
  );
  return response;
}

/** OPTIONS (RFC 9110 §9.3.7): 204 with Allow, answered by the pipeline for every route. */
function optionsOperation(
  entry: RouteEntry,
  options: OpenApiOptions,
  id: string,
  allow: readonly string[],
): JsonObject {
  const responses: Record<string, JsonValue> = {
    '204': { description: `No Content; Allow: ${allow.join(', ')}`, headers: fieldsOf(['Allow'], options) },
  };
  const statuses = options.apiKeys && entry.public !== true ? [400, 401, 413, 500] : [400, 413, 500];
  if (entry.signed !== true) statuses.splice(-1, 0, 421);
  for (const status of statuses) responses[String(status)] = ref('responses', problemResponseKey(status));
  const op: Record<string, JsonValue> = { operationId: id, summary: 'The methods this path takes', responses };
  if (options.apiKeys && entry.public === true) op['security'] = [];
  return op;
}

/**
 * Header objects for the fields of an answer, and those lib/app.ts gives every answer that has none
 * of its own: Cache-Control (CONVENTIONS.md#cache-control), and Vary: Authorization when API keys are on.
 */
function fieldsOf(declared: readonly string[], options: OpenApiOptions): JsonObject {
  const names = new Set([...declared, 'Cache-Control', ...(options.apiKeys ? ['Vary'] : [])]);
  return Object.fromEntries([...names].map((name) => [name, ref('headers', name)]));
}

/** JSON content by its schema (a collection's typed item where there is one); any other media type is text. */
function schemaFor(name: SchemaName, collection: string | undefined, media: string): JsonObject {
  if (!isJson(media)) return { type: 'string' };
  return ref('schemas', name === 'Item' && collection !== undefined ? itemSchemaKey(collection) : name);
}

function pageSchema(name: SchemaName, collection: string | undefined, media: string): JsonObject {
  if (!isJson(media)) {
    const description = 'The page as CSV (RFC 4180), nested fields flattened to a/b columns; the next page is in Link.';
    return { type: 'string', description };
  }
  const items = { anyOf: [schemaFor(name, collection, media), ref('schemas', 'Summary')] };
  return { allOf: [ref('schemas', 'Envelope')], properties: { value: { type: 'array', items } } };
}

function isJson(media: string): boolean {
  const type = (media.split(';')[0] as string).trim().toLowerCase();
  return type === 'application/json' || type.endsWith('+json');
}
