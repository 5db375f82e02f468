// Prepared reads (README, Performance): the answers to a GET that many requests read unchanged, made
// once. For one representation served with one set of read options (its Cache-Control, Vary,
// Last-Modified, Content-Type, Link, Preference-Applied), the 200 and the 304 are fixed: the 304
// carries the fields the 200 would have, without content (RFC 9110 §15.4.5). So both are made once,
// their head fields listed once as `send` writes them (lib/http/respond.ts), and a request costs only
// the evaluation of its preconditions (RFC 9110 §13.2.2, CONVENTIONS.md#conditional-reads) and the
// pick of one of them. Both are made by the rule every read follows (lib/resources/replies.ts), so a
// prepared answer is byte for byte what an unprepared one would be.
//
// A prepared read is only as current as its representation, and is kept no longer than it, within a
// bound (CONVENTIONS.md#limits: nothing a request names grows them past it):
// - a page's beside it in the page cache (lib/resources/page-cache.ts), counted in its byte bound and
//   dropped when a commit touches the collection;
// - an item's JSON by its record (PreparedItems, held by the representation cache): a record is
//   immutable and a write makes a new one, so a kept answer never goes stale; the items read lately
//   are kept, up to a number of answers and of bytes.
import { readCacheControl, type CachePolicy } from '../http/cache-policy.js';
import { prepareReply, type Reply } from '../http/respond.js';
import type { Validators } from '../protocol/conditional.js';
import type { Representation } from '../protocol/representation.js';
import type { StoredRecord } from '../store/types.js';
import type { App, RequestContext } from './context.js';
import { itemReadOptions, readAnswer, readOutcome, readValidators, type ReadOptions } from './replies.js';

export interface PreparedItemLimits {
  /** Answers kept per generation (see PreparedItems). */
  readonly entries: number;
  /** Bytes per generation: the heads and the bodies they keep alive. */
  readonly bytes: number;
}

const DEFAULT_ITEM_LIMITS: PreparedItemLimits = { entries: 4096, bytes: 8 * 1024 * 1024 };

export interface PreparedRead {
  readonly validators: Validators;
  readonly ok: Reply;
  readonly notModified: Reply;
  /** The bytes its heads add to what keeps it (the body is the representation's own). */
  readonly headBytes: number;
}

/** The 200 and 304 of `representation` read with `options`, their heads listed once. Pure. */
export function prepareRead(policy: CachePolicy, representation: Representation, options: ReadOptions): PreparedRead {
  const ok = prepareReply(readAnswer(policy, representation, options, 200));
  const notModified = prepareReply(readAnswer(policy, representation, options, 304));
  return {
    validators: readValidators(representation, options),
    ok,
    notModified,
    headBytes: fieldBytes(ok) + fieldBytes(notModified),
  };
}

/** The prepared read of an item as JSON, made the first time the record is read and kept while it is read. */
export function itemJsonRead(app: Pick<App, 'policy' | 'representations'>, record: StoredRecord): PreparedRead {
  const items = app.representations.preparedReads;
  let prepared = items.get(record);
  if (prepared === undefined) {
    const options = itemReadOptions(record, readCacheControl(app.policy, record.collection));
    prepared = prepareRead(app.policy, app.representations.itemJson(record), options);
    items.keep(record, prepared);
  }
  return prepared;
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

/**
 * The prepared reads of the items read lately, by record, in two generations: reads fill the young
 * one, which becomes the old one once it holds `entries` answers or `bytes`, the old one's being
 * dropped then; an answer found in the old one moves up. So at most twice the limits are held, and a
 * read costs a lookup, with no order kept up on every read. A record that a write replaced is never
 * asked for again and goes with its generation.
 */
export class PreparedItems {
  private young = new Map<StoredRecord, PreparedRead>();
  private old = new Map<StoredRecord, PreparedRead>();
  private youngBytes = 0;

  constructor(private readonly limits: PreparedItemLimits = DEFAULT_ITEM_LIMITS) {}

  get(record: StoredRecord): PreparedRead | undefined {
    const young = this.young.get(record);
    if (young !== undefined) return young;
    const old = this.old.get(record);
    if (old !== undefined) {
      this.old.delete(record);
      this.keep(record, old);
    }
    return old;
  }

  keep(record: StoredRecord, prepared: PreparedRead): void {
    const bytes = prepared.headBytes + (prepared.ok.body?.length ?? 0);
    if (bytes > this.limits.bytes) return;
    if (this.young.size >= this.limits.entries || this.youngBytes + bytes > this.limits.bytes) {
      this.old = this.young;
      this.young = new Map();
      this.youngBytes = 0;
    }
    this.young.set(record, prepared);
    this.youngBytes += bytes;
  }
}
