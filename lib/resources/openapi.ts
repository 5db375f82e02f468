// GET /$openapi (CONVENTIONS.md#openapi): the server's OpenAPI 3.1 description, made once at start
// (lib/openapi.ts), answered like any representation: ETag, and 304 on revalidation.
import type { Reply } from '../http/respond.js';
import { readCacheControl } from '../http/cache-policy.js';
import type { App, RequestContext } from './context.js';
import { readReply } from './replies.js';

export function getOpenApi(app: Pick<App, 'openapi' | 'policy' | 'clock'>, rq: RequestContext): Reply {
  return readReply(app, rq, app.openapi, { cacheControl: readCacheControl(app.policy), negotiated: ['Accept'] });
}
