// Reading the field lines of one header from a request (RFC 9110 §5.3: a field sent on several lines
// is one list; for a singleton field, more than one line is an error the caller must see). Node's
// `req.headers` folds or drops repeated lines, and `req.headersDistinct` builds an array for every
// header of the request the first time it is touched; this reads only the header asked for, from
// `req.rawHeaders` (name, value, name, value, ...), names compared case-insensitively (RFC 9110 §5.1).
import type { IncomingMessage } from 'node:http';

/** Every line of the header `name` (lower case), in order, or undefined when it was not sent. */
export function fieldLines(req: IncomingMessage, name: string): string[] | undefined {
  const raw = req.rawHeaders;
  let lines: string[] | undefined;
  for (let index = 0; index < raw.length; index += 2) {
    const field = raw[index] as string;
    if (field.length === name.length && field.toLowerCase() === name) (lines ??= []).push(raw[index + 1] as string);
  }
  return lines;
}

/** The header `name` (lower case) as one value: its lines joined by ", " (RFC 9110 §5.3), or undefined. */
export function fieldValue(req: IncomingMessage, name: string): string | undefined {
  const lines = fieldLines(req, name);
  return lines === undefined ? undefined : lines.length === 1 ? lines[0] : lines.join(', ');
}
