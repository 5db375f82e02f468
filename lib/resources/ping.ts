// `POST /$subscriptions/{id}/$ping` (CONVENTIONS.md#ping; the sending is lib/webhooks/ping.ts): the
// body is `{}` (a ping takes no options, and any other body is refused with a problem before
// anything is sent) → 200 `{ "status", "error"?, "durationMs" }` whatever the receiver answered, so
// the answer tells about the receiver, not about this request; 404 for an unknown subscription, 409
// for a disabled one. It is a write like any other POST: the API key, the Host check and the
// Origin check of lib/app.ts apply, so no web page can make the server send requests.
import { noStoreCacheControl } from '../http/cache-policy.js';
import { jsonReply, problemReply, type Reply } from '../http/respond.js';
import { escapePointerToken } from '../json-pointer.js';
import { problem } from '../protocol/problem.js';
import type { App, RequestContext } from './context.js';
import { readJsonObject, shown } from './common.js';

export async function pingSubscription(
  app: Pick<App, 'outbox' | 'config' | 'policy'>,
  rq: RequestContext,
): Promise<Reply> {
  const id = rq.params.get('id');
  const body = await readJsonObject(rq.req, app.config.maxBodyBytes);
  if (!body.ok) return body.reply;
  const members = Object.keys(body.doc);
  if (members.length > 0) {
    const errors = members.map((member) => ({ pointer: `/${escapePointerToken(member)}`, detail: 'not a member' }));
    return problemReply(problem('invalid-body', 'The body of a ping must be {}: a ping takes no options.', { errors }));
  }
  const result = await app.outbox.ping(id);
  switch (result.kind) {
    case 'missing':
      return problemReply(problem('not-found', `There is no subscription ${shown(id)}.`));
    case 'disabled': {
      const detail =
        `The subscription ${shown(id)} is disabled: nothing is sent to it, a ping neither. ` +
        'PUT it with "status": "active" to turn it back on.';
      return problemReply(problem('conflict', detail));
    }
    case 'no-secret':
      return problemReply(problem('conflict', `The subscription ${shown(id)} has no secret to sign a ping with.`));
    case 'stopped':
      return problemReply(problem('unavailable', ''), { 'Retry-After': '1' });
    case 'sent':
      return jsonReply(200, Buffer.from(JSON.stringify(result.answer)), {
        'Cache-Control': noStoreCacheControl(app.policy),
      });
  }
}
