// Recovering a window after an outage (CONVENTIONS.md#recovering-after-an-outage):
// `POST /$subscriptions/{id}/$recover` `{ "since", "until"? }` queues again the subscription's failed
// and dead deliveries whose event happened in the window (the delivery's `createdAt`, its event's
// `occurredAt`), and `POST /$inbox/$recover` `{ "since", "until"?, "source"? }` the failed and dead
// received events of the window (their `receivedAt`), of one source when named. Both are the job
// queue's `requeueWindow` (lib/jobs/queue.ts): each job from its first attempt, in the order the jobs
// first came, never one that is running, at most WINDOW_LIMIT per request (the answer says how many
// are left for a repeat), in atomic batches. 202 `{ "requeued", "remaining" }`.
//
// The window is RFC 3339 date-times (lib/protocol/date-time.ts), both bounds included; `until`
// defaults to now. A malformed body is 400 naming the member (CONVENTIONS.md#problem-details), and
// nothing is queued. A subscription that is disabled answers 409: its deliveries would be dead again
// at once, without a request, so it is re-enabled first.
import { noStoreCacheControl } from '../http/cache-policy.js';
import { jsonReply, problemReply, type Reply } from '../http/respond.js';
import type { WindowRequeue } from '../jobs/queue.js';
import type { JsonObject } from '../json.js';
import { parseDateTime } from '../protocol/date-time.js';
import { problem, type Problem } from '../protocol/problem.js';
import { DEFAULT_SOURCE, receivingSources } from '../webhooks/sources.js';
import { SUBSCRIPTION_SPACE, subscriptionOf } from '../webhooks/subscriptions.js';
import { readJsonObject, shown } from './common.js';
import type { App, RequestContext } from './context.js';

const EXAMPLE = '2026-04-14T09:00:00Z';

type Recovering = Pick<App, 'store' | 'config' | 'clock' | 'policy' | 'log'>;

/** A window read from a body: its bounds (ms), and the source it names, if any. */
interface Window {
  readonly since: number;
  readonly until: number;
  readonly source?: string;
}

export async function recoverDeliveries(app: Recovering & Pick<App, 'outbox'>, rq: RequestContext): Promise<Reply> {
  const id = rq.params.get('id');
  const body = await readJsonObject(rq.req, app.config.maxBodyBytes);
  if (!body.ok) return body.reply;
  const stored = app.store.get(SUBSCRIPTION_SPACE, id);
  const subscription = stored === undefined ? undefined : subscriptionOf(stored.doc);
  if (subscription === undefined) {
    return problemReply(problem('not-found', `There is no subscription ${shown(id)}.`));
  }
  const window = readWindow(body.doc, ['since', 'until'], [], app.clock.now());
  if (!window.ok) return problemReply(window.problem);
  if (!subscription.active) {
    const detail =
      `The subscription ${shown(id)} is disabled, and a delivery to a disabled subscription is dead without ` +
      'being sent: re-enable it first (PUT it with "status": "active"), then recover the window.';
    return problemReply(problem('conflict', detail));
  }
  const { since, until } = window.value;
  const where = (doc: JsonObject): boolean => doc['subscription'] === id;
  const outcome = await app.outbox.queue.requeueWindow({ field: 'createdAt', since, until, where });
  return recoveredReply(app, rq, outcome, `the deliveries of ${shown(id)}`);
}

export async function recoverInbox(app: Recovering & Pick<App, 'inbox'>, rq: RequestContext): Promise<Reply> {
  const body = await readJsonObject(rq.req, app.config.maxBodyBytes);
  if (!body.ok) return body.reply;
  const names = receivingSources(app.config).map((one) => one.name);
  const window = readWindow(body.doc, ['since', 'until', 'source'], names, app.clock.now());
  if (!window.ok) return problemReply(window.problem);
  const { since, until, source } = window.value;
  // An item without a source came to the default path (it was received before items named theirs).
  const where =
    source === undefined ? () => true : (doc: JsonObject): boolean => (doc['source'] ?? DEFAULT_SOURCE) === source;
  const outcome = await app.inbox.queue.requeueWindow({ field: 'receivedAt', since, until, where });
  return recoveredReply(app, rq, outcome, 'the received events');
}

/**
 * The window a body asks for, or the 400 naming every member that is wrong: one not in `members`, a
 * `since` or `until` that is not an RFC 3339 date-time, a `since` after `until` (now when absent), a
 * `source` that is not one of `sources`.
 */
function readWindow(
  body: JsonObject,
  members: readonly string[],
  sources: readonly string[],
  now: number,
): { ok: true; value: Window } | { ok: false; problem: Problem } {
  const errors: { pointer: string; detail: string }[] = [];
  const refuse = (pointer: string, detail: string): void => void errors.push({ pointer, detail });
  for (const key of Object.keys(body)) {
    if (!members.includes(key)) refuse(`/${key}`, `is not a member of a recover request (${members.join(', ')})`);
  }
  if (!Object.hasOwn(body, 'since')) refuse('/since', `is required: the date-time the window starts at (${EXAMPLE})`);
  const since = dateTime(body, 'since', refuse);
  const until = Object.hasOwn(body, 'until') ? dateTime(body, 'until', refuse) : now;
  if (since !== undefined && until !== undefined && since > until) {
    if (Object.hasOwn(body, 'until')) refuse('/until', 'is before since: the window would be empty');
    else refuse('/since', 'is in the future: without until, the window ends now');
  }
  const { source } = body;
  if (Object.hasOwn(body, 'source') && members.includes('source') && !sources.includes(source as string)) {
    const names = sources.map((name) => `"${name}"`).join(', ');
    refuse('/source', `must name a source this server receives from: ${names}`);
  }
  if (errors.length > 0 || since === undefined || until === undefined) {
    const each = errors.map((error) => `${error.pointer} ${error.detail}`).join('; ');
    const detail = `The body is not a valid recover request: ${each}.`;
    return { ok: false, problem: problem('invalid-body', detail, { errors }) };
  }
  return { ok: true, value: { since, until, ...(typeof source === 'string' ? { source } : {}) } };
}

/** The member as an instant, or undefined (refused) when it is present but not an RFC 3339 date-time. */
function dateTime(
  body: JsonObject,
  member: string,
  refuse: (pointer: string, detail: string) => void,
): number | undefined {
  if (!Object.hasOwn(body, member)) return undefined;
  const value = body[member];
  const at = typeof value === 'string' ? parseDateTime(value) : undefined;
  if (at === undefined) refuse(`/${member}`, `must be an RFC 3339 date-time with seconds and a time zone (${EXAMPLE})`);
  return at;
}

/** 202 with how many were queued again and how many are left for a repeat; 503 when the store failed. */
function recoveredReply(app: Recovering, rq: RequestContext, outcome: WindowRequeue, what: string): Reply {
  if (outcome.result === 'unavailable') {
    // The batches before the failure stand; a repeat of the request takes the rest.
    const fields = { requestId: rq.requestId, requeued: outcome.requeued };
    app.log('error', `recover: could not queue all of ${what} again`, fields);
    return problemReply(problem('unavailable', ''), { 'Retry-After': '1' });
  }
  const report = { requeued: outcome.requeued, remaining: outcome.remaining };
  return jsonReply(202, Buffer.from(JSON.stringify(report)), { 'Cache-Control': noStoreCacheControl(app.policy) });
}
