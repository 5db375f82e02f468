// The resapi scheme, the default source's (CONVENTIONS.md#webhook-signature): `X-Signature` is the
// lowercase hex HMAC-SHA256 of the exact body bytes (a `sha256=` prefix accepted), checked against
// every secret in constant time; `X-Timestamp` (Unix seconds) is not signed, and is refused only when
// it is malformed or outside the window, or absent while `webhooks.requireTimestamp` is on
// (CONVENTIONS.md#webhook-timestamp); the body is a JSON object with a string `id` (the event id) and
// a string `event` (its kind) (CONVENTIONS.md#webhook-event-body).
import { problem, type ProblemItem } from '../../protocol/problem.js';
import { presentedDigest, verifyDigest } from '../../protocol/signature.js';
import {
  badBody, badHeader, bodyText, idProblem, insideWindow, kindProblem, lineCountProblem, providerHeaders, readObject,
  staleTimestamp, unixSeconds, unsigned, type Received, type Verdict,
} from './common.js';

const SIGNATURE = 'x-signature';
const TIMESTAMP = 'x-timestamp';
const HOW = 'the lowercase hex HMAC-SHA256 of the exact body bytes under the shared secret';
const EXPECTED = 'a JSON object with a string "id" and a string "event"';

export function resapiScheme(received: Received): Verdict {
  const { headers, body, secrets } = received;
  const count = lineCountProblem(headers, SIGNATURE);
  if (count === 'missing') return unsigned(`X-Signature is missing: send ${HOW}.`, 'X-Signature missing');
  if (count === 'repeated') {
    return unsigned(`X-Signature is sent more than once: send it once, ${HOW}.`, 'X-Signature sent more than once');
  }
  const presented = presentedDigest(headers.get(SIGNATURE));
  if (presented === undefined) {
    const detail = `X-Signature is malformed: send 64 lowercase hex digits (optionally after "sha256="), ${HOW}.`;
    return unsigned(detail, 'X-Signature malformed');
  }
  // Every secret is tried, in constant time, whatever the outcome (lib/protocol/signature.ts).
  if (!verifyDigest(body, presented, secrets)) {
    const detail = `X-Signature does not sign this body under any configured secret: send ${HOW}.`;
    return unsigned(detail, 'no signature matched');
  }
  const stale = timestampVerdict(received);
  if (stale !== undefined) return stale;
  const text = bodyText(body);
  if (text === undefined) return badBody(problem('invalid-json', 'The body is not valid UTF-8.'), 'body not UTF-8');
  const read = readObject(text, EXPECTED);
  if (!read.ok) return badBody(read.problem, 'body not a JSON object');
  const { id, event } = read.value;
  const errors: ProblemItem[] = [];
  const wrongId = idProblem(id);
  if (wrongId !== undefined) errors.push({ pointer: '/id', detail: wrongId });
  const wrongKind = kindProblem(event, '/event', 'the kind of event');
  if (wrongKind !== undefined) errors.push(wrongKind);
  if (errors.length > 0) {
    const refused = problem('invalid-body', `The body is not a webhook event: ${EXPECTED}.`, { errors });
    return badBody(refused, 'body not an event');
  }
  const kept = providerHeaders(headers, [SIGNATURE]);
  return { ok: true, event: { id: id as string, kind: event as string, text, headers: kept } };
}

/**
 * X-Timestamp: Unix seconds within ±toleranceS of now; absent is fine unless required. It is not
 * signed, so the window stops only naive replays; the dedup of the signed id is what holds.
 */
function timestampVerdict(received: Received): Verdict | undefined {
  const { toleranceS, requireTimestamp } = received;
  const lines = received.headers.get(TIMESTAMP);
  if (lines === undefined || lines.length === 0) {
    if (!requireTimestamp) return undefined;
    const detail = 'X-Timestamp is required: send the Unix time in seconds of the delivery.';
    return badHeader('X-Timestamp', detail, 'X-Timestamp missing');
  }
  const seconds = lines.length === 1 ? unixSeconds((lines[0] as string).trim()) : undefined;
  if (seconds === undefined) {
    const detail = 'X-Timestamp must be sent once, as Unix time in whole seconds (digits only).';
    return badHeader('X-Timestamp', detail, 'X-Timestamp malformed');
  }
  return insideWindow(received, seconds) ? undefined : staleTimestamp('X-Timestamp', 'X-Timestamp', toleranceS);
}
