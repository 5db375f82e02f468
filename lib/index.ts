// Public entry point: `import { start } from 'resapi'` (CONVENTIONS.md#embedding), and the conformance
// checker (CONVENTIONS.md#conformance-checker) for a project's own tests: `import { runChecks } from 'resapi'`.
export { start } from './server.js';
export type { ConfigOptions, ResapiServer, RuntimeOptions, StartOptions } from './server.js';
export type { Config, CollectionConfig } from './config.js';
export { FilterSlots } from './query/expensive.js';
export type { RetrySchedule } from './retry.js';
export type { Store, StoredRecord, Batch, Mutation, CommitResult } from './store/types.js';
export type { HandlerContext, WebhookHandler, WebhookHandlers } from './webhooks/inbox.js';
export { CheckUnreachable, runChecks } from './check/run.js';
export type { CheckOptions, CheckOutcome, CheckReport, CheckResult, Verdict } from './check/run.js';
export { reportText as checkReportText } from './check/report.js';
