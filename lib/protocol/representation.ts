// A representation and its validator (CONVENTIONS.md#etags): the exact bytes sent and a strong ETag
// derived from them, so the JSON, CSV and HTML of one resource each have their own (RFC 9110 §8.8.3).
import { strongEtag } from './etag.js';

export interface Representation {
  readonly bytes: Buffer;
  readonly etag: string;
  /** The Last-Modified field value (HTTP-date) of the record version it represents, for items. */
  readonly lastModified?: string;
}

export function represent(content: string | Buffer): Representation {
  const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
  return { bytes, etag: strongEtag(bytes) };
}
