// Reading the field lines of one header from a request (RFC 9110 §5.3: a field sent on several lines
// is one list; for a singleton field, more than one line is an error the caller must see). Node's
// `req.headers` folds or drops repeated lines, and `req.headersDistinct` builds an array for every
// header of the request the first time it is touched; this reads only the header asked for, from
// `req.rawHeaders` (name, value, name, value, ...), names compared case-insensitively (RFC 9110 §5.1).
// Every request asks for several fields, so a name is compared in place, and a field sent on one
// line (nearly every one) is handed back as the string Node made for it, with no array around it.
import type { IncomingMessage } from 'node:http';
import { sameFieldName } from '../protocol/field-syntax.js';

/** `lines` of fieldLine when the field was sent on more than one line. */
export const REPEATED = Symbol('repeated field');

/** Every line of the header `name` (lower case), in order, or undefined when it was not sent. */
export function fieldLines(req: IncomingMessage, name: string): string[] | undefined {
  const raw = req.rawHeaders;
  let lines: string[] | undefined;
  for (let index = 0; index < raw.length; index += 2) {
    if (sameFieldName(raw[index] as string, name)) (lines ??= []).push(raw[index + 1] as string);
  }
  return lines;
}

/** The header `name` (lower case) as one value: its lines joined by ", " (RFC 9110 §5.3), or undefined. */
export function fieldValue(req: IncomingMessage, name: string): string | undefined {
  const line = fieldLine(req, name);
  return line === REPEATED ? (fieldLines(req, name) as string[]).join(', ') : line;
}

/** The one line of the header `name` (lower case), undefined when it was not sent, REPEATED when sent on more. */
export function fieldLine(req: IncomingMessage, name: string): string | undefined | typeof REPEATED {
  const raw = req.rawHeaders;
  let line: string | undefined;
  for (let index = 0; index < raw.length; index += 2) {
    if (!sameFieldName(raw[index] as string, name)) continue;
    if (line !== undefined) return REPEATED;
    line = raw[index + 1] as string;
  }
  return line;
}
