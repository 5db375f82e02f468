// The `stripe` scheme: Stripe's webhook signatures ("Verify webhook signatures manually" in Stripe's
// docs; CONVENTIONS.md#stripe-scheme).
// - `Stripe-Signature: t=<Unix seconds>,v1=<hex>[,v1=<hex>...][,v0=<hex>]`: a comma-separated list of
//   `key=value` elements. `t` is the signing time; each `v1` is the lowercase hex HMAC-SHA256 of
//   `<t>.<body>` under the endpoint's secret, taken as its UTF-8 bytes (a `whsec_...` secret is used
//   whole, prefix included, as Stripe's libraries do). Every `v1` is compared with the digest under
//   every secret of the source in constant time, with no early exit (Stripe sends several during a
//   secret roll); `v0` (test-mode legacy) and any other key are ignored.
// - `t` is signed, so after the signature verifies it must be within ±toleranceS of now (Stripe's
//   libraries default to 300 s); 400 otherwise.
// - The body is a Stripe event: a JSON object whose `id` (1-255 code points) is the event id and
//   whose `type` is the kind (`invoice.paid`).
import { createHmac } from 'node:crypto';
import { problem, type ProblemItem } from '../../protocol/problem.js';
import {
  anyDigestMatches, badBody, bodyText, idProblem, insideWindow, kindProblem, lineCountProblem, providerHeaders,
  readObject, singleLine, staleTimestamp, unixSeconds, unsigned, type Received, type Verdict,
} from './common.js';

const SIGNATURE = 'stripe-signature';
const HEX_DIGEST = /^[0-9a-f]{64}$/;
const HOW = 't=<Unix seconds>,v1=<lowercase hex HMAC-SHA256 of "<t>.<body>" under the endpoint\'s signing secret>';
const EXPECTED = 'a JSON object with a string "id" and a string "type" (a Stripe event)';

interface Parsed {
  /** The text of the one `t` element, when there is exactly one. */
  readonly t: string | undefined;
  /** The digests of the well-formed `v1` elements. */
  readonly v1: readonly Buffer[];
}

export function stripeScheme(received: Received): Verdict {
  const { headers, body, secrets } = received;
  const count = lineCountProblem(headers, SIGNATURE);
  if (count === 'missing') return unsigned(`Stripe-Signature is missing: send ${HOW}.`, 'Stripe-Signature missing');
  if (count === 'repeated') {
    return unsigned('Stripe-Signature is sent more than once: send it once.', 'Stripe-Signature sent more than once');
  }
  const parsed = parseSignature(singleLine(headers, SIGNATURE) as string);
  const timestampS = parsed.t === undefined ? undefined : unixSeconds(parsed.t);
  if (parsed.t === undefined || timestampS === undefined) {
    const detail = `Stripe-Signature has no single t= timestamp in Unix seconds: send ${HOW}.`;
    return unsigned(detail, 'Stripe-Signature without a timestamp');
  }
  if (parsed.v1.length === 0) {
    const detail = `Stripe-Signature holds no v1 signature (v0 and other schemes are ignored): send ${HOW}.`;
    return unsigned(detail, 'no v1 signature');
  }
  const signed = (secret: string): Buffer =>
    createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${parsed.t}.`).update(body).digest();
  if (!anyDigestMatches(parsed.v1, secrets, signed)) {
    const detail = `No v1 signature in Stripe-Signature matches under any configured secret: send ${HOW}.`;
    return unsigned(detail, 'no signature matched');
  }
  if (!insideWindow(received, timestampS)) {
    return staleTimestamp('Stripe-Signature', 'The Stripe-Signature timestamp (t)', received.toleranceS);
  }
  const text = bodyText(body);
  if (text === undefined) return badBody(problem('invalid-json', 'The body is not valid UTF-8.'), 'body not UTF-8');
  const read = readObject(text, EXPECTED);
  if (!read.ok) return badBody(read.problem, 'body not a JSON object');
  const { id, type } = read.value;
  const errors: ProblemItem[] = [];
  const wrongId = idProblem(id);
  if (wrongId !== undefined) errors.push({ pointer: '/id', detail: wrongId });
  const wrongKind = kindProblem(type, '/type', 'the kind of event');
  if (wrongKind !== undefined) errors.push(wrongKind);
  if (errors.length > 0) {
    const refused = problem('invalid-body', `The body is not a webhook event: ${EXPECTED}.`, { errors });
    return badBody(refused, 'body not an event');
  }
  const kept = providerHeaders(headers, [SIGNATURE]);
  return { ok: true, event: { id: id as string, kind: type as string, text, headers: kept } };
}

/** The elements of the field: `t` when it appears exactly once, and every well-formed `v1`. */
function parseSignature(value: string): Parsed {
  let t: string | undefined;
  let times = 0;
  const v1: Buffer[] = [];
  for (const element of value.split(',')) {
    const equals = element.indexOf('=');
    if (equals === -1) continue;
    const key = element.slice(0, equals).trim();
    const text = element.slice(equals + 1).trim();
    if (key === 't') {
      times += 1;
      t = text;
    } else if (key === 'v1' && HEX_DIGEST.test(text)) {
      v1.push(Buffer.from(text, 'hex'));
    }
  }
  return { t: times === 1 ? t : undefined, v1 };
}
