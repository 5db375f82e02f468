// `import { ResourceClient } from 'resapi/client'` (CONVENTIONS.md#client-library). It depends
// on nothing but Node and lib/protocol, never on the server.
export { ResourceClient } from './resource-client.js';
export type {
  BulkReport,
  CacheStatus,
  ClientResponse,
  Item,
  ListOptions,
  QueryDefinition,
  RequestOptions,
  ResourceClientOptions,
  RetryPolicy,
} from './resource-client.js';
export { NetworkError, ProtocolError, ResourceError } from './errors.js';
export type { ProblemDetail, ProblemDocument } from './errors.js';
export type { CacheLimits } from './cache.js';
export { signWebhook, verifyWebhook } from './webhooks.js';
