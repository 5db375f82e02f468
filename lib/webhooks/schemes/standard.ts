// The `standard` scheme: Standard Webhooks 1.0 (https://www.standardwebhooks.com, "Verifying webhook
// authenticity"; CONVENTIONS.md#standard-webhooks-scheme), what Svix and the providers built on it send.
// - `webhook-id`, `webhook-timestamp` and `webhook-signature`, each exactly once; Svix's `svix-id`,
//   `svix-timestamp` and `svix-signature` are the same fields under Svix's names. resapi's decision:
//   the `webhook-` names are read when any of the three is present, else the `svix-` names; the two
//   sets are never mixed, so a delivery that sends both is judged by its `webhook-` fields alone.
// - The signature is HMAC-SHA256 over `<webhook-id>.<webhook-timestamp>.<body>`, the id and the
//   timestamp as the exact bytes received. `webhook-signature` is a space-separated list of
//   `<version>,<base64>` entries: every `v1` entry is compared with the digest under every secret of
//   the source, in constant time, with no early exit; other versions (`v1a`, asymmetric) are ignored.
// - The key is lib/protocol/standard-signature.ts `signingKey`: a `whsec_` secret by its
//   base64-decoded bytes, any other secret by its UTF-8 bytes (the libraries' `format: "raw"`).
// - The timestamp is signed, so after the signature verifies it must be whole Unix seconds within
//   ±toleranceS of now (400 otherwise). The id is `webhook-id` (1-255 code points of UTF-8 text), the
//   kind is the body's `type`.
import { createHmac } from 'node:crypto';
import { eventIdProblem } from '../../names.js';
import { problem } from '../../protocol/problem.js';
import { signingKey } from '../../protocol/standard-signature.js';
import {
  anyDigestMatches, badBody, badHeader, bodyText, headerText, insideWindow, kindProblem, lineCountProblem,
  providerHeaders, readObject, singleLine, staleTimestamp, unixSeconds, unsigned, type HeaderLines, type Received,
  type Verdict,
} from './common.js';

interface FieldNames {
  readonly id: string;
  readonly timestamp: string;
  readonly signature: string;
}

const STANDARD: FieldNames = { id: 'webhook-id', timestamp: 'webhook-timestamp', signature: 'webhook-signature' };
const SVIX: FieldNames = { id: 'svix-id', timestamp: 'svix-timestamp', signature: 'svix-signature' };
/** Both spellings of the signature field: neither is handed on to a handler. */
const SIGNATURE_FIELDS = [STANDARD.signature, SVIX.signature];
/** `v1,` and the base64 of a 32-byte digest (RFC 4648 §4, padded). */
const V1_ENTRY = /^v1,([A-Za-z0-9+/]{43}=)$/;
const SP = ' ';
const EXPECTED = 'a JSON object with a string "type" (the kind of event)';

export function standardScheme(received: Received): Verdict {
  const { headers, body, secrets } = received;
  const names = fieldNames(headers);
  for (const field of [names.id, names.timestamp, names.signature]) {
    const count = lineCountProblem(headers, field);
    if (count === 'missing') {
      const detail = `${field} is missing: a Standard Webhooks delivery carries ${names.id}, ${names.timestamp} and ` +
        `${names.signature}, and the signature covers the first two.`;
      return unsigned(detail, `${field} missing`);
    }
    if (count === 'repeated') {
      return unsigned(`${field} is sent more than once: send it once.`, `${field} sent more than once`);
    }
  }
  const idLine = singleLine(headers, names.id) as string;
  const timestampLine = singleLine(headers, names.timestamp) as string;
  const presented = v1Digests(singleLine(headers, names.signature) as string);
  if (presented.length === 0) {
    const detail = `${names.signature} holds no v1 signature: send space-separated "v1,<base64>" entries, each the ` +
      'HMAC-SHA256 of "<id>.<timestamp>.<body>" (other versions are ignored).';
    return unsigned(detail, 'no v1 signature');
  }
  // The id and timestamp as the bytes that came (latin1 is how Node hands header bytes over).
  const prefix = Buffer.from(`${idLine}.${timestampLine}.`, 'latin1');
  const signed = (secret: string): Buffer =>
    createHmac('sha256', signingKey(secret)).update(prefix).update(body).digest();
  if (!anyDigestMatches(presented, secrets, signed)) {
    const detail = `No v1 signature in ${names.signature} matches: each must be the base64 HMAC-SHA256 of ` +
      `"<${names.id}>.<${names.timestamp}>.<body>" under the source's secret (a whsec_ secret stands for its ` +
      'base64-decoded bytes, any other for its UTF-8 bytes).';
    return unsigned(detail, 'no signature matched');
  }
  const timestampS = unixSeconds(timestampLine);
  if (timestampS === undefined) {
    const detail = `${names.timestamp} must be Unix time in whole seconds (digits only).`;
    return badHeader(names.timestamp, detail, 'timestamp malformed');
  }
  if (!insideWindow(received, timestampS)) return staleTimestamp(names.timestamp, names.timestamp, received.toleranceS);
  const id = headerText(idLine);
  const wrongId = id === undefined ? 'must be UTF-8 text' : eventIdProblem(id);
  if (wrongId !== undefined) return badHeader(names.id, `${names.id} ${wrongId} (the event id).`, 'event id invalid');
  const text = bodyText(body);
  if (text === undefined) return badBody(problem('invalid-json', 'The body is not valid UTF-8.'), 'body not UTF-8');
  const read = readObject(text, EXPECTED);
  if (!read.ok) return badBody(read.problem, 'body not a JSON object');
  const kind = read.value['type'];
  const wrongKind = kindProblem(kind, '/type', 'the kind of event');
  if (wrongKind !== undefined) {
    const refused = problem('invalid-body', `The body is not a webhook event: ${EXPECTED}.`, { errors: [wrongKind] });
    return badBody(refused, 'body not an event');
  }
  const kept = providerHeaders(headers, SIGNATURE_FIELDS);
  return { ok: true, event: { id: id as string, kind: kind as string, text, headers: kept } };
}

/** The `webhook-` names when any of them is sent, else Svix's. */
function fieldNames(headers: HeaderLines): FieldNames {
  return [STANDARD.id, STANDARD.timestamp, STANDARD.signature].some((name) => headers.has(name)) ? STANDARD : SVIX;
}

/** The digests of the well-formed `v1` entries; any other entry is ignored. */
function v1Digests(value: string): Buffer[] {
  const digests: Buffer[] = [];
  for (const entry of value.split(SP)) {
    const match = V1_ENTRY.exec(entry);
    if (match !== null) digests.push(Buffer.from(match[1] as string, 'base64'));
  }
  return digests;
}
