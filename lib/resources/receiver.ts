// POST /webhooks, the receiver, in the order CONVENTIONS.md#receiving-order fixes: read the raw body
// under the cap (413, CONVENTIONS.md#body-cap) → verify X-Signature over those exact bytes, before
// anything parses them (401, nothing recorded; CONVENTIONS.md#webhook-signature) → reject a stale or
// future X-Timestamp (400; CONVENTIONS.md#webhook-timestamp) → check the body's shape (400;
// CONVENTIONS.md#webhook-event-body) → deduplicate by the event id (200 "duplicate";
// CONVENTIONS.md#deduplication) → durably record it, sharing the store's group commit (503 with
// Retry-After when that fails, so the provider retries; CONVENTIONS.md#durable-acceptance) → 200
// "accepted" → process later (lib/webhooks/inbox.ts).
//
// The 401 carries `WWW-Authenticate: HMAC-SHA256 realm="webhooks"`: RFC 9110 §15.5.2 requires a
// challenge with every 401, and no registered scheme describes a body signature, so resapi names
// its own. With no secret configured the receiver answers 503 without reading the body; the reason
// is logged once at start, never per request (an anonymous sender must not be able to flood the log).
import { fieldLines } from '../http/field-lines.js';
import { readBody, unreadBodyReply } from '../http/body.js';
import { noStoreCacheControl } from '../http/cache-policy.js';
import { jsonReply, problemReply, type Reply } from '../http/respond.js';
import { isJsonObject } from '../json.js';
import { eventIdProblem, MAX_EVENT_ID } from '../names.js';
import { parseJson } from '../json-text.js';
import { problem, type Problem } from '../protocol/problem.js';
import { verifySignature } from '../protocol/signature.js';
import { forwardMutations } from '../webhooks/forward.js';
import { INBOX_SPACE } from '../webhooks/inbox.js';
import type { App, RequestContext } from './context.js';
import { unavailableReply } from './common.js';

/** What receiving an event needs: the secrets, the settings, the inbox and the write path. */
type Receiving = Pick<
  App,
  'webhookSecrets' | 'config' | 'clock' | 'random' | 'store' | 'writer' | 'inbox' | 'policy' | 'log'
>;

const UNIX_SECONDS = /^\d{1,15}$/;
const CHALLENGE = 'HMAC-SHA256 realm="webhooks"';

export async function receiveWebhook(app: Receiving, rq: RequestContext): Promise<Reply> {
  if (app.webhookSecrets.length === 0) {
    return { ...problemReply(problem('unavailable', ''), { 'Retry-After': '60' }), closeConnection: true };
  }
  const limit = app.config.maxBodyBytes;
  const body = await readBody(rq.req, limit);
  if (!body.ok) return unreadBodyReply(body.reason, limit);
  if (!verifySignature(body.bytes, fieldLines(rq.req, 'x-signature'), app.webhookSecrets)) {
    const detail =
      'X-Signature is missing, malformed, or does not sign this body: ' +
      'send the lowercase hex HMAC-SHA256 of the exact body bytes under the shared secret.';
    return problemReply(problem('unauthorized', detail, { headers: { 'WWW-Authenticate': CHALLENGE } }));
  }
  const stale = timestampProblem(app, fieldLines(rq.req, 'x-timestamp'));
  if (stale !== undefined) return problemReply(stale);
  const event = eventOf(body.bytes);
  if (!event.ok) return problemReply(event.problem);
  if (app.store.get(INBOX_SPACE, event.id) !== undefined) return status(app, 'duplicate');
  // The forward goes in the acceptance's own batch (CONVENTIONS.md#forwarding).
  const forward = forwardMutations(app, {
    source: 'webhooks', scheme: 'resapi', id: event.id, kind: event.kind, body: body.bytes,
    fields: (name) => fieldLines(rq.req, name),
  });
  const written = await app.writer.write([...app.inbox.acceptance(event.id, event.kind, event.text), ...forward]);
  if (written.ok) return status(app, 'accepted');
  // Another delivery of the same id was recorded between the check and this write.
  if (written.reason === 'conflict') return status(app, 'duplicate');
  if (written.reason === 'unavailable') return unavailableReply(app, rq, written.detail);
  return problemReply(written.problem);
}

function status(app: Pick<App, 'policy'>, value: 'accepted' | 'duplicate'): Reply {
  const headers = { 'Cache-Control': noStoreCacheControl(app.policy) };
  return jsonReply(200, Buffer.from(JSON.stringify({ status: value })), headers);
}

/**
 * X-Timestamp (CONVENTIONS.md#webhook-timestamp): Unix seconds within ±toleranceS of now; absent is
 * fine unless required. "Now" is the clock's whole second, as the header is: with a fractional now the
 * window would reach up to a second less far into the past than into the future.
 */
function timestampProblem(
  app: Pick<App, 'config' | 'clock'>,
  lines: readonly string[] | undefined,
): Problem | undefined {
  const { toleranceS, requireTimestamp } = app.config.webhooks;
  if (lines === undefined || lines.length === 0) {
    if (!requireTimestamp) return undefined;
    return timestampRefused('X-Timestamp is required: send the Unix time in seconds of the delivery.');
  }
  const text = lines.length === 1 ? (lines[0] as string).trim() : '';
  if (!UNIX_SECONDS.test(text)) {
    return timestampRefused('X-Timestamp must be sent once, as Unix time in whole seconds (digits only).');
  }
  const skew = Math.abs(Math.floor(app.clock.now() / 1000) - Number(text));
  if (skew > toleranceS) {
    const away = `X-Timestamp is more than ${toleranceS} s away from the server's clock`;
    const detail = `${away}: a replay, or a clock to fix.`;
    return timestampRefused(detail);
  }
  return undefined;
}

function timestampRefused(detail: string): Problem {
  return problem('bad-request', detail, { errors: [{ header: 'X-Timestamp', detail }] });
}

type ReadEvent = { ok: true; id: string; kind: string; text: string } | { ok: false; problem: Problem };

/**
 * The verified body as an event: a JSON object with a string `id` and a string `event`. The id is text
 * of 1-255 code points (CONVENTIONS.md#webhook-event-body): a lone surrogate, which JSON can spell as
 * "\ud800" but no URL or UTF-8 can carry, would make an event that cannot be addressed or listed.
 */
function eventOf(bytes: Buffer): ReadEvent {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return { ok: false, problem: problem('invalid-json', 'The body is not valid UTF-8.') };
  }
  const parsed = parseJson(text);
  // A number a double cannot hold exactly is no reason to refuse an event: the raw text is what is kept.
  if (!parsed.ok && parsed.error.kind === 'syntax') {
    return { ok: false, problem: problem('invalid-json', `The body is not valid JSON: ${parsed.error.message}.`) };
  }
  const value: unknown = parsed.ok ? parsed.value : JSON.parse(text);
  const errors: { pointer: string; detail: string }[] = [];
  if (!isJsonObject(value)) errors.push({ pointer: '', detail: 'expected an object' });
  else {
    const { id, event } = value;
    const idProblem = typeof id === 'string' ? eventIdProblem(id) : `must be a string of 1-${MAX_EVENT_ID} code points`;
    if (idProblem !== undefined) errors.push({ pointer: '/id', detail: `${idProblem} (the event id)` });
    if (typeof event !== 'string' || event === '') {
      errors.push({ pointer: '/event', detail: 'must be a non-empty string (the kind of event)' });
    }
  }
  if (errors.length > 0) {
    const detail = 'The body is not a webhook event: a JSON object with a string "id" and a string "event".';
    return { ok: false, problem: problem('invalid-body', detail, { errors }) };
  }
  const event = value as { id: string; event: string };
  return { ok: true, id: event.id, kind: event.event, text };
}
