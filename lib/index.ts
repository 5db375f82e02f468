// Public entry point: `import { start } from 'resapi'` (CONTRACT §1 "Library").
export { start } from './server.js';
export type { ResapiServer, RuntimeOptions, StartOptions } from './server.js';
export type { Config, CollectionConfig, RetrySchedule } from './config.js';
export type { Store, StoredRecord, Batch, Mutation, CommitResult } from './store/types.js';
export type { HandlerContext, WebhookHandler, WebhookHandlers } from './webhooks/inbox.js';
