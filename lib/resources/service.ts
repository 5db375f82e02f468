// The service document (CONVENTIONS.md#service-document: GET / lists the collections) and the health check
// (GET /$health: 200, or 503 when the store cannot write).
import { problem } from '../protocol/problem.js';
import { jsonReply, problemReply, type Reply } from '../http/respond.js';
import { noStoreCacheControl, readCacheControl } from '../http/cache-policy.js';
import { isCollectionName } from '../names.js';
import type { App, RequestContext } from './context.js';
import { link } from './common.js';
import { represent } from '../protocol/representation.js';
import { readReply } from './replies.js';
import { HTML_CONTENT_TYPE, HTML_TYPE } from '../html/views.js';
import { listHtml } from './html.js';

/**
 * The read-only listings of the server's own records (CONVENTIONS.md#routes), linked from the HTML home
 * page.
 */
const SYSTEM_LISTINGS = ['$inbox', '$outbox', '$subscriptions'];

export function getServiceDocument(
  app: Pick<App, 'store' | 'config' | 'policy' | 'clock' | 'baseUrl'>,
  rq: RequestContext,
): Reply {
  // User collections only: `$` spaces are the server's own bookkeeping. Configured collections are
  // listed even while empty, so a client can discover where to write.
  const names = new Set([
    ...app.store.collections().filter(isCollectionName),
    ...Object.keys(app.config.collections),
  ]);
  const value = [...names].sort().map((name) => ({ name, url: link(app, `/${name}`) }));
  const cacheControl = readCacheControl(app.policy);
  if (rq.media === HTML_TYPE) {
    // The server's own listings too, so a person can find received and sent events from Home.
    const listings = SYSTEM_LISTINGS.map((name) => ({ name, url: link(app, `/${name}`) }));
    const rows = [...value, ...listings].map((doc) => ({ doc, select: doc.url }));
    const page = listHtml(app, { title: 'resapi', rows, cacheControl, home: false });
    return readReply(app, rq, page, { cacheControl, negotiated: ['Accept'], contentType: HTML_CONTENT_TYPE });
  }
  return readReply(app, rq, represent(JSON.stringify({ value })), { cacheControl, negotiated: ['Accept'] });
}

/** GET /$health: the store's answer now, a failed disk checked again before it is reported (CONVENTIONS.md#health). */
export async function getHealth(app: Pick<App, 'store' | 'log' | 'policy'>, rq: RequestContext): Promise<Reply> {
  const health = await app.store.health();
  if (!health.writable) {
    app.log('warn', 'health check: store not writable', { requestId: rq.requestId, detail: health.detail });
    return problemReply(problem('unavailable', 'store not writable'), { 'Retry-After': '5' });
  }
  return jsonReply(200, Buffer.from(JSON.stringify({ status: 'ok', durable: app.store.durable })), {
    'Cache-Control': noStoreCacheControl(app.policy),
  });
}
