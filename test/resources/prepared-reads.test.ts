// Tests for lib/resources/prepared-reads.ts: the prepared 200 and 304 are the answers the read rule
// makes (lib/resources/replies.ts), their heads listed as send writes them, and each request gets the
// one its preconditions choose.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import type { CachePolicy } from '../../lib/http/cache-policy.js';
import { represent } from '../../lib/protocol/representation.js';
import type { RequestContext } from '../../lib/resources/context.js';
import { answerRead, prepareRead } from '../../lib/resources/prepared-reads.js';
import { readAnswer, type ReadOptions } from '../../lib/resources/replies.js';
import { RouteParams } from '../../lib/http/route.js';

const POLICY: CachePolicy = { noCacheMode: false, credentialed: false, perCollection: () => undefined };
const PAGE = represent('{"value":[]}');
const OPTIONS: ReadOptions = {
  cacheControl: 'max-age=0, must-revalidate',
  negotiated: ['Accept', 'Prefer'],
  lastModified: Date.UTC(2026, 0, 2, 3, 4, 5),
  fields: { Link: '</p?$skiptoken=t>; rel="next"' },
};
const NOW = Date.UTC(2026, 5, 1);

function rq(method: string, rawHeaders: string[]): RequestContext {
  const req = { method, rawHeaders } as unknown as IncomingMessage;
  return { req, requestId: 'r', principal: '', path: '/p', query: '', params: new RouteParams([], []), media: '' };
}

const clock = { clock: { now: () => NOW, monotonic: () => 0, setTimer: () => ({ cancel: () => {} }) } };

describe('prepareRead', () => {
  it('should prepare the 200 and the 304 the read rule makes, their fields listed in order', () => {
    const prepared = prepareRead(POLICY, PAGE, OPTIONS);
    for (const [reply, status] of [[prepared.ok, 200], [prepared.notModified, 304]] as const) {
      const made = readAnswer(POLICY, PAGE, OPTIONS, status);
      assert.deepEqual({ ...reply, prepared: undefined }, { ...made, prepared: undefined });
      assert.deepEqual(reply.prepared?.fields, Object.entries(made.headers).flat());
    }
    assert.equal(prepared.notModified.prepared?.fields.includes('Content-Type'), false);
    assert.deepEqual(prepared.validators, { etag: PAGE.etag, lastModified: OPTIONS.lastModified });
    assert.ok(prepared.headBytes > 0);
  });
});

describe('answerRead', () => {
  const prepared = prepareRead(POLICY, PAGE, OPTIONS);

  it('should answer the prepared 200 without preconditions, and to HEAD', () => {
    assert.equal(answerRead(clock, rq('GET', ['Host', 'h']), prepared), prepared.ok);
    assert.equal(answerRead(clock, rq('HEAD', []), prepared), prepared.ok);
  });

  it('should answer the prepared 304 when If-None-Match or If-Modified-Since says the client has it', () => {
    assert.equal(answerRead(clock, rq('GET', ['If-None-Match', PAGE.etag]), prepared), prepared.notModified);
    assert.equal(answerRead(clock, rq('GET', ['if-none-match', `"other", W/${PAGE.etag}`]), prepared), prepared.notModified);
    const since = new Date(Date.UTC(2026, 0, 3)).toUTCString();
    assert.equal(answerRead(clock, rq('GET', ['If-Modified-Since', since]), prepared), prepared.notModified);
  });

  it('should answer 412 for a failed If-Match and 400 for a malformed one, as unprepared reads do', () => {
    assert.equal(answerRead(clock, rq('GET', ['If-Match', '"other"']), prepared).status, 412);
    assert.equal(answerRead(clock, rq('GET', ['If-Match', 'not a tag']), prepared).status, 400);
    assert.equal(answerRead(clock, rq('GET', ['If-None-Match', '"other"']), prepared), prepared.ok);
  });
});

