// Prepared reads (README, Performance): the answers to a GET that many requests read unchanged, made
// once. For one representation served with one set of read options (its Cache-Control, Vary,
// Last-Modified, Content-Type, Link, Preference-Applied), the 200 and the 304 are fixed: the 304
// carries the fields the 200 would have, without content (RFC 9110 §15.4.5). So both are made once,
// their head fields listed once as `send` writes them (lib/http/respond.ts), and a request costs only
// the evaluation of its preconditions (RFC 9110 §13.2.2, CONVENTIONS.md#conditional-reads) and the
// pick of one of them. Both are made by the rule every read follows (lib/resources/replies.ts), so a
// prepared answer is byte for byte what an unprepared one would be.
//
// A prepared read is only as current as its representation, and is kept no longer than it: a page's
// beside it in the page cache (lib/resources/page-cache.ts), counted in its byte bound and dropped
// when a commit touches the collection (CONVENTIONS.md#limits: nothing a request names grows them
// past that bound).
//
// Items are not prepared: reads spread over more items than a bounded cache keeps would make every
// read prepare an answer that is dropped before it is asked for again, and cost three times what
// answering the read does (measured with reads over 10,000 items against a cache of 8,192).
import type { CachePolicy } from '../http/cache-policy.js';
import { keptReply, type Reply } from '../http/respond.js';
import type { Validators } from '../protocol/conditional.js';
import type { Representation } from '../protocol/representation.js';
import type { App, RequestContext } from './context.js';
import { readAnswer, readOutcome, readValidators, type ReadOptions } from './replies.js';

export interface PreparedRead {
  readonly validators: Validators;
  readonly ok: Reply;
  readonly notModified: Reply;
  /** The bytes its heads add to what keeps it (the body is the representation's own). */
  readonly headBytes: number;
}

/** The 200 and 304 of `representation` read with `options`, their heads listed once. Pure. */
export function prepareRead(policy: CachePolicy, representation: Representation, options: ReadOptions): PreparedRead {
  const ok = keptReply(readAnswer(policy, representation, options, 200));
  const notModified = keptReply(readAnswer(policy, representation, options, 304));
  return {
    validators: readValidators(representation, options),
    ok,
    notModified,
    headBytes: fieldBytes(ok) + fieldBytes(notModified),
  };
}

/** The answer to one request for a prepared read: its 400 or 412 problem, its 304, or its 200. */
export function answerRead(app: Pick<App, 'clock'>, rq: RequestContext, prepared: PreparedRead): Reply {
  const outcome = readOutcome(app, rq, prepared.validators);
  if (outcome === 200) return prepared.ok;
  return outcome === 304 ? prepared.notModified : outcome;
}

function fieldBytes(reply: Reply): number {
  let bytes = 0;
  for (const text of reply.prepared?.fields ?? []) bytes += text.length;
  return bytes;
}

