// POST to a receiving source's path (CONVENTIONS.md#receiving-sources), in the order
// CONVENTIONS.md#receiving-order fixes: read the raw body under the cap (413, CONVENTIONS.md#body-cap)
// → the source's scheme judges those exact bytes before anything else parses them: the signature
// (401), a signed or unsigned timestamp (400), the body's shape and the event id (400)
// (lib/webhooks/schemes/*.ts) → durably record it, sharing the store's group commit (503 with
// Retry-After when that fails, so the provider retries; CONVENTIONS.md#durable-acceptance), unless
// (source, event id) is known: 200 "duplicate" (CONVENTIONS.md#deduplication) → 200 "accepted" →
// process later (lib/webhooks/inbox.ts).
//
// The dedup check is the write's own: the item is put only while its id is absent
// (lib/jobs/queue.ts `jobItem`), and the store checks that before anything is journaled, so a repeat
// is refused without a write and a new event is looked up once, not once here and again in the store.
//
// The scheme is the one of the route the request reached (lib/routes.ts binds each source's path to
// its source), never guessed from the header fields: a sender must not pick the weakest scheme.
// A refusal is a problem that says why, and one log line (lib/webhooks/refusal-log.ts) that never
// names a secret. With no secret for the source the path answers 503 without reading the body; the
// reason is logged once at start, never per request (an anonymous sender must not flood the log).
import type { IncomingMessage } from 'node:http';
import { readBody, unreadBodyReply } from '../http/body.js';
import { noStoreCacheControl, type CachePolicy } from '../http/cache-policy.js';
import { JSON_TYPE, keptReply, listedReply, problemReply, type Reply } from '../http/respond.js';
import { problem, secretMissingProblem, type Problem } from '../protocol/problem.js';
import type { StoredRecord } from '../store/types.js';
import { forwardMutations } from '../webhooks/forward.js';
import { inboxItemId, INBOX_SPACE, sourceOf } from '../webhooks/inbox.js';
import type { HeaderLines, Scheme } from '../webhooks/schemes/common.js';
import { githubScheme } from '../webhooks/schemes/github.js';
import { resapiScheme } from '../webhooks/schemes/resapi.js';
import { standardScheme } from '../webhooks/schemes/standard.js';
import { stripeScheme } from '../webhooks/schemes/stripe.js';
import { DEFAULT_SOURCE, noSecretDetail, type ReceivingSource } from '../webhooks/sources.js';
import type { WebhookScheme } from '../config.js';
import type { App, RequestContext } from './context.js';
import { unavailableReply } from './common.js';

/** What receiving an event needs: the secrets, the settings, and the inbox, which writes what it accepts. */
type Receiving = Pick<App, 'webhookSecrets' | 'webhookSources' | 'refusals' | 'config' | 'clock' | 'random'> &
  Pick<App, 'store' | 'inbox' | 'log' | 'receiverAnswers'>;

const SCHEMES: Readonly<Record<WebhookScheme, Scheme>> = {
  resapi: resapiScheme,
  standard: standardScheme,
  github: githubScheme,
  stripe: stripeScheme,
};
/** A provider told to retry a source that has no secret comes back after this long. */
const NO_SECRET_RETRY_S = '60';

export async function receiveWebhook(app: Receiving, rq: RequestContext, source: ReceivingSource): Promise<Reply> {
  const secrets = app.webhookSecrets.get(source.name) ?? [];
  if (secrets.length === 0) {
    const refused = secretMissingProblem(noSecretDetail(source), { 'Retry-After': NO_SECRET_RETRY_S });
    return { ...problemReply(refused), closeConnection: true };
  }
  const limit = app.config.maxBodyBytes;
  const body = await readBody(rq.req, limit);
  if (!body.ok) {
    if (body.reason === 'too-large') app.refusals.refused(source.name, 413, 'body over the cap', rq.requestId);
    return unreadBodyReply(body.reason, limit);
  }
  const { toleranceS, requireTimestamp } = app.config.webhooks;
  const nowS = Math.floor(app.clock.now() / 1000);
  const headers = headerLines(rq.req);
  const verdict = SCHEMES[source.scheme]({ headers, body: body.bytes, secrets, toleranceS, requireTimestamp, nowS });
  if (!verdict.ok) {
    const { refusal } = verdict;
    app.refusals.refused(source.name, refusal.problem.status, refusal.reason, rq.requestId);
    return problemReply(refusal.problem);
  }
  const event = verdict.event;
  const reserved = reservedPrefix(app, source, event.id);
  if (reserved !== undefined) return clashReply(app, rq, source, reserved);
  const { id: eventId, kind, text, headers: kept } = event;
  const accepted = { source: source.name, eventId, kind, text, headers: kept };
  // The forward goes in the acceptance's own batch (CONVENTIONS.md#forwarding).
  const forward = forwardMutations(app, {
    source: source.name, scheme: source.scheme, id: eventId, kind, body: body.bytes,
    fields: (name) => headers.get(name),
  });
  const written = await app.inbox.accept(accepted, forward);
  if (written.ok) return app.receiverAnswers.accepted;
  if (written.reason === 'conflict') {
    // Its address holds an item already: this event's, or one another source left there.
    const clash = addressClash(source, eventId, app.store.get(INBOX_SPACE, inboxItemId(source.name, eventId)));
    return clash === undefined ? app.receiverAnswers.duplicate : clashReply(app, rq, source, clash);
  }
  if (written.reason === 'unavailable') return unavailableReply(app, rq, written.detail);
  return problemReply(written.problem);
}

/** The receiver's two answers to a delivery it took or had taken (CONVENTIONS.md#deduplication). */
export interface ReceiverAnswers {
  readonly accepted: Reply;
  readonly duplicate: Reply;
}

/**
 * The two answers, made once per server (its Cache-Control does not change while it runs): every
 * accepted or repeated delivery gets one of them, its header fields listed already.
 */
export function receiverAnswers(policy: CachePolicy): ReceiverAnswers {
  const cacheControl = noStoreCacheControl(policy);
  const answer = (status: keyof ReceiverAnswers): Reply => {
    const fields = ['Content-Type', JSON_TYPE, 'Cache-Control', cacheControl];
    return keptReply(listedReply(200, fields, Buffer.from(JSON.stringify({ status }))));
  };
  return { accepted: answer('accepted'), duplicate: answer('duplicate') };
}

/**
 * Item ids are `<eventId>` for the default source and `<name>:<eventId>` for a named one
 * (CONVENTIONS.md#inbox), so two could name one item: a default-source id `stripe:evt_1` and the
 * event `evt_1` of the source `stripe`. resapi's decision: the default source refuses an id that starts
 * with a named source's name and ":" (400), whichever arrives first, so the outcome never depends on
 * the order of arrival (`reservedPrefix`); and an item stored under the address by the other source
 * (possible only in a store written before that source was configured) is a 409, never a false
 * "duplicate" (`addressClash`).
 */
function reservedPrefix(
  app: Pick<App, 'webhookSources'>,
  source: ReceivingSource,
  eventId: string,
): Problem | undefined {
  if (source.name !== DEFAULT_SOURCE) return undefined;
  const colon = eventId.indexOf(':');
  if (colon === -1) return undefined;
  const prefix = eventId.slice(0, colon);
  const named = (other: ReceivingSource): boolean => other.name === prefix && other.name !== DEFAULT_SOURCE;
  if (!app.webhookSources.some(named)) return undefined;
  const detail = `The event id starts with "${prefix}:", which addresses the events of the source ${prefix} ` +
    `in /$inbox: the ${DEFAULT_SOURCE} source cannot take it.`;
  return problem('bad-request', detail);
}

/** The 409 when the item at the event's address holds another source's event (see `reservedPrefix`). */
function addressClash(source: ReceivingSource, eventId: string, stored: StoredRecord | undefined): Problem | undefined {
  if (stored === undefined) return undefined;
  const owner = sourceOf(stored);
  if (owner.source === source.name && owner.eventId === eventId) return undefined;
  const detail = `The inbox item ${JSON.stringify(stored.id)} holds an event of the source ${owner.source}, ` +
    'received before this source was configured; it is kept until its dedup window ends.';
  return problem('conflict', detail);
}

/** A refused address: the problem, and its log line. */
function clashReply(app: Pick<App, 'refusals'>, rq: RequestContext, source: ReceivingSource, clash: Problem): Reply {
  app.refusals.refused(source.name, clash.status, 'event id clashes with another source', rq.requestId);
  return problemReply(clash);
}

/** Every header line of the request by lower-case name, in the order received (RFC 9110 §5.3). */
function headerLines(req: IncomingMessage): HeaderLines {
  const lines = new Map<string, string[]>();
  const raw = req.rawHeaders;
  for (let index = 0; index < raw.length; index += 2) {
    const name = (raw[index] as string).toLowerCase();
    const known = lines.get(name);
    if (known === undefined) lines.set(name, [raw[index + 1] as string]);
    else known.push(raw[index + 1] as string);
  }
  return lines;
}
