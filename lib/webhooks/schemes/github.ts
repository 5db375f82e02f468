// The `github` scheme: GitHub's webhook deliveries ("Validating webhook deliveries" in GitHub's docs;
// CONVENTIONS.md#github-scheme).
// - `X-Hub-Signature-256: sha256=<lowercase hex>` is HMAC-SHA256 of the exact body bytes under the
//   webhook's secret (its UTF-8 bytes), compared with every secret of the source in constant time.
//   The legacy SHA-1 `X-Hub-Signature` is never trusted, and never handed on.
// - The id is `X-GitHub-Delivery` (1-255 code points), the kind `X-GitHub-Event`, with the body's
//   `action` appended as `<event>.<action>` when it is a non-empty string (`issues.opened`).
// - GitHub signs the body only: no timestamp, so no window (deduplication by the delivery id is what
//   a repeat meets), and neither `X-GitHub-Delivery` nor `X-GitHub-Event` is signed.
// - A webhook whose Content type is `application/x-www-form-urlencoded` sends `payload=<JSON>`: the
//   signature is checked over the raw form bytes, then the payload is decoded and read as the JSON
//   body. Anything else that is not JSON is refused with a problem that says to choose
//   `application/json` in the webhook's settings.
import { createHmac } from 'node:crypto';
import { eventIdProblem } from '../../names.js';
import { parseMediaType, type MediaType } from '../../protocol/content-type.js';
import { problem } from '../../protocol/problem.js';
import {
  anyDigestMatches, badBody, badHeader, bodyText, headerText, lineCountProblem, providerHeaders, readObject,
  singleLine, unsigned, type HeaderLines, type Received, type Verdict,
} from './common.js';

const SIGNATURE = 'x-hub-signature-256';
const LEGACY_SIGNATURE = 'x-hub-signature';
const DELIVERY = 'x-github-delivery';
const EVENT = 'x-github-event';
const SHA256_HEX = /^sha256=([0-9a-f]{64})$/;
const HOW = '"sha256=" and the lowercase hex HMAC-SHA256 of the exact body bytes under the webhook\'s secret';
const CHOOSE_JSON = 'Choose application/json as the Content type in the webhook\'s settings on GitHub.';
const PAYLOAD = 'payload';

/** `application/x-www-form-urlencoded` (the form GitHub can send instead of JSON). */
export function isFormMediaType(type: MediaType): boolean {
  return type.type === 'application' && type.subtype === 'x-www-form-urlencoded';
}

export function githubScheme(received: Received): Verdict {
  const { headers, body, secrets } = received;
  const count = lineCountProblem(headers, SIGNATURE);
  if (count === 'missing') {
    const detail = 'X-Hub-Signature-256 is missing: give the webhook a secret in its settings on GitHub, ' +
      'the one this source is configured with.';
    return unsigned(detail, 'X-Hub-Signature-256 missing');
  }
  if (count === 'repeated') {
    const detail = 'X-Hub-Signature-256 is sent more than once: send it once.';
    return unsigned(detail, 'X-Hub-Signature-256 sent more than once');
  }
  const match = SHA256_HEX.exec(singleLine(headers, SIGNATURE) as string);
  if (match === null) {
    return unsigned(`X-Hub-Signature-256 is malformed: send ${HOW}.`, 'X-Hub-Signature-256 malformed');
  }
  const signed = (secret: string): Buffer => createHmac('sha256', secret).update(body).digest();
  if (!anyDigestMatches([Buffer.from(match[1] as string, 'hex')], secrets, signed)) {
    const detail = `X-Hub-Signature-256 does not sign this body under any configured secret: send ${HOW}.`;
    return unsigned(detail, 'no signature matched');
  }
  const id = textField(headers, DELIVERY, 'X-GitHub-Delivery');
  if (!id.ok) return id.verdict;
  const wrongId = eventIdProblem(id.text);
  if (wrongId !== undefined) {
    return badHeader('X-GitHub-Delivery', `X-GitHub-Delivery ${wrongId} (the event id).`, 'event id invalid');
  }
  const event = textField(headers, EVENT, 'X-GitHub-Event');
  if (!event.ok) return event.verdict;
  const json = jsonText(headers, body);
  if (!json.ok) return json.verdict;
  const read = readObject(json.text, 'a JSON object');
  if (!read.ok) return badBody(read.problem, 'body not a JSON object');
  const action = read.value['action'];
  const kind = typeof action === 'string' && action !== '' ? `${event.text}.${action}` : event.text;
  const kept = providerHeaders(headers, [SIGNATURE, LEGACY_SIGNATURE]);
  return { ok: true, event: { id: id.text, kind, text: json.text, headers: kept } };
}

type Text = { readonly ok: true; readonly text: string } | { readonly ok: false; readonly verdict: Verdict };

/** A header GitHub sends once, as non-empty UTF-8 text; a 400 naming it otherwise. */
function textField(headers: HeaderLines, name: string, shown: string): Text {
  const count = lineCountProblem(headers, name);
  const line = singleLine(headers, name);
  const text = line === undefined ? undefined : headerText(line);
  if (count === undefined && text !== undefined && text !== '') return { ok: true, text };
  const why = count === 'missing' ? 'is missing' : count === 'repeated' ? 'is sent more than once' : 'is not text';
  const detail = `${shown} ${why}: GitHub sends it once with every delivery.`;
  return { ok: false, verdict: badHeader(shown, detail, `${shown} ${why}`) };
}

/** The JSON text of the body: the body itself, or a form's `payload` field decoded. */
function jsonText(headers: HeaderLines, body: Buffer): Text {
  const text = bodyText(body);
  if (text === undefined) {
    const refused = problem('invalid-json', `The body is not valid UTF-8. ${CHOOSE_JSON}`);
    return { ok: false, verdict: badBody(refused, 'body not UTF-8') };
  }
  const declared = singleLine(headers, 'content-type');
  const type = declared === undefined ? undefined : parseMediaType(declared);
  if (type === undefined || !isFormMediaType(type)) return { ok: true, text };
  const payload = formPayload(text);
  if (payload !== undefined) return { ok: true, text: payload };
  const detail = `The form-encoded body has no single, well-formed "payload" field. ${CHOOSE_JSON}`;
  const errors = [{ pointer: '', detail: 'expected payload=<JSON>' }];
  return { ok: false, verdict: badBody(problem('invalid-body', detail, { errors }), 'form without a payload') };
}

/**
 * The one `payload` field of an application/x-www-form-urlencoded body, decoded: `+` is a space and
 * %XX are UTF-8 bytes (WHATWG URL "application/x-www-form-urlencoded parsing"), read strictly, so a
 * malformed escape refuses the body rather than turning into U+FFFD. Undefined without exactly one.
 */
function formPayload(text: string): string | undefined {
  let found: string | undefined;
  for (const field of text.split('&')) {
    const equals = field.indexOf('=');
    const name = decodeFormPart(equals === -1 ? field : field.slice(0, equals));
    if (name !== PAYLOAD) continue;
    if (found !== undefined) return undefined;
    found = decodeFormPart(equals === -1 ? '' : field.slice(equals + 1));
    if (found === undefined) return undefined;
  }
  return found;
}

function decodeFormPart(part: string): string | undefined {
  try {
    return decodeURIComponent(part.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}
