// Tests for lib/http/body.ts: the checks on a request's content that need no body (413 declared, 415),
// and the body read under the cap (CONVENTIONS.md#body-cap).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { PassThrough } from 'node:stream';
import { checkContent, CSV_BODY, JSON_BODY, readBody } from '../../lib/http/body.js';
import { parseMediaType } from '../../lib/protocol/content-type.js';

function request(rawHeaders: string[]): IncomingMessage {
  return { rawHeaders } as unknown as IncomingMessage;
}

describe('checkContent', () => {
  it('should take the media type each body kind names, as written, since it is not parsed', () => {
    // The exact media type skips the parse: it must be one the kind accepts, with no charset.
    for (const kind of [JSON_BODY, CSV_BODY]) {
      const type = parseMediaType(kind.media);
      assert.ok(type !== undefined && kind.accepts(type) && type.parameters.size === 0, kind.media);
      assert.equal(checkContent(request(['Content-Type', kind.media]), 1000, kind), undefined);
    }
  });

  it('should still parse every other spelling: case, parameters, a charset that is not UTF-8', () => {
    const status = (fields: string[]): number | undefined => checkContent(request(fields), 1000, JSON_BODY)?.status;
    assert.equal(status(['Content-Type', 'Application/JSON; charset=utf-8']), undefined);
    assert.equal(status(['Content-Type', 'application/json; charset=latin1']), 415);
    assert.equal(status(['Content-Type', 'text/csv']), 415);
    assert.equal(status([]), 415);
    assert.equal(status(['Content-Type', 'application/json', 'Content-Length', '1001']), 413);
  });
});

describe('readBody', () => {
  it('should give the bytes of a body sent in one chunk and of one sent in several, in order', async () => {
    const one = new PassThrough();
    const reading = readBody(one as unknown as IncomingMessage, 100);
    one.end(Buffer.from('{"a":1}'));
    assert.deepEqual(await reading, { ok: true, bytes: Buffer.from('{"a":1}') });
    const several = new PassThrough();
    const joined = readBody(several as unknown as IncomingMessage, 100);
    several.write(Buffer.from('{"a"'));
    several.end(Buffer.from(':1}'));
    assert.deepEqual(await joined, { ok: true, bytes: Buffer.from('{"a":1}') });
  });

  it('should give no bytes for an empty body, and none for one counted without being kept', async () => {
    const empty = new PassThrough();
    const reading = readBody(empty as unknown as IncomingMessage, 100);
    empty.end();
    assert.deepEqual(await reading, { ok: true, bytes: Buffer.alloc(0) });
    const dropped = new PassThrough();
    const counting = readBody(dropped as unknown as IncomingMessage, 100, { keep: false });
    dropped.end(Buffer.from('abc'));
    assert.deepEqual(await counting, { ok: true, bytes: Buffer.alloc(0) });
  });

  it('should stop at the cap with too-large', async () => {
    const stream = new PassThrough();
    const reading = readBody(stream as unknown as IncomingMessage, 4);
    stream.write(Buffer.from('abc'));
    stream.end(Buffer.from('de'));
    assert.deepEqual(await reading, { ok: false, reason: 'too-large' });
  });
});
