// The shape of a conformance check (CONVENTIONS.md#conformance-checker): a named rule of one section,
// in one sentence, with where the rule is written (a section of CONVENTIONS.md, and the RFC it comes
// from when there is one), and a function that probes the server through the context and either
// returns (PASS), throws CheckFailed with what it saw (FAIL), or throws CheckSkipped with why it
// could not judge (SKIP).
import type { JsonObject } from '../json.js';
import type { ProbeRequest, ProbeResponse } from './probe.js';
import type { Anchor, SpecReference } from './rules.js';

/** The report's sections, in the order it lists them. */
export const SECTIONS = {
  resources: 'Resources and the collection envelope',
  conditional: 'Conditional requests',
  caching: 'Caching headers',
  idempotence: 'Idempotence',
  paging: 'Filtering and paging',
  errors: 'Errors',
  webhooks: 'The webhook receiver',
} as const;

export type Section = keyof typeof SECTIONS;

export interface Check {
  /** Unique within the run, `section/name`. */
  readonly id: string;
  readonly section: Section;
  /** The rule, in one sentence. */
  readonly rule: string;
  /** The section of CONVENTIONS.md that states the rule. */
  readonly anchor: Anchor;
  /** The RFC or OData section the rule comes from, when there is one. */
  readonly rfc?: SpecReference;
  run(context: CheckContext): Promise<void>;
}

export class CheckFailed extends Error {
  constructor(readonly seen: string) {
    super(seen);
  }
}

export class CheckSkipped extends Error {
  constructor(readonly why: string) {
    super(why);
  }
}

/** An item a check made in the run's collection (removed at the end of the run). */
export interface MadeItem {
  readonly id: string;
  readonly path: string;
  readonly etag: string;
  readonly doc: JsonObject;
}

export interface CheckContext {
  send(request: ProbeRequest): Promise<ProbeResponse>;
  /** The run's own collection: a name no one else uses, emptied at the end. */
  readonly collection: string;
  /** An id not yet used in the run's collection; whatever is stored under it is removed at the end. */
  newId(): string;
  /** A new item in the run's collection, created with PUT and If-None-Match: *. */
  newItem(fields?: JsonObject): Promise<MadeItem>;
  /**
   * A second collection of the run holding LISTING_ITEMS items made once for the whole run (the
   * filtering and paging checks read it; none of them changes it).
   */
  listing(): Promise<string>;
  /** A query resource name not yet used in the run's collection; removed at the end. */
  newQueryName(): string;
  /** The receiver's path and a secret it accepts, when the run was given one. */
  readonly webhook: { readonly path: string; readonly secret: string } | undefined;
  /** Whether the run sends an API key (so responses may depend on credentials). */
  readonly credentialed: boolean;
}

/** The listing collection's items: `i01`…`i12`, categories c1–c3 in turn, price 10×n, tags. */
export const LISTING_ITEMS = 12;

export function listingItem(n: number): JsonObject {
  const id = `i${String(n).padStart(2, '0')}`;
  return {
    id,
    name: `item ${n}`,
    category: `c${((n - 1) % 3) + 1}`,
    price: 10 * n,
    tags: n % 2 === 0 ? ['even', 'sale'] : ['odd'],
  };
}
