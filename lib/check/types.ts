// The shape of a conformance check (CONVENTIONS.md#conformance-checker): a named rule of one section,
// in one sentence, with where the rule is written (a section of CONVENTIONS.md, and the RFC it comes
// from when there is one), what it needs before it can judge (prerequisites, lib/check/prerequisites.ts),
// and a function that probes the server through the context and either returns (PASS), throws
// CheckFailed with what it saw (FAIL), or throws CheckSkipped with why it could not judge (SKIP). A
// check is never run when a prerequisite failed: the engine reports it BLOCKED by that failure.
import type { WebhookScheme } from '../config.js';
import type { JsonObject } from '../json.js';
import type { PrerequisiteName } from './prerequisites.js';
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
  /** The section of CONVENTIONS.md that states the rule (for resapi's own webhook scheme, where that matters). */
  readonly anchor: Anchor;
  /** The RFC or OData section the rule comes from, when there is one. */
  readonly rfc?: SpecReference;
  /**
   * Whether the rule is the receiving scheme's (how it signs, its timestamp, its event): a run that
   * signs as another scheme cites that scheme's section instead of `anchor` (rules.ts anchorFor).
   */
  readonly schemeRule: boolean;
  /** What must hold before the check can judge its rule; each is another check, run once. */
  readonly needs: readonly PrerequisiteName[];
  /** What the run must be given for the check to apply at all; without it the check is skipped. */
  readonly requires: readonly Condition[];
  run(context: CheckContext): Promise<void>;
}

/**
 * What a run may or may not be given: credentials (an API key or an Authorization header), a secret
 * the webhook receiver accepts.
 */
export type Condition = 'credentials' | 'webhook-secret';

/** Why a check that requires `condition` is skipped in a run without it. */
export const CONDITION_MISSING: Readonly<Record<Condition, string>> = {
  credentials: 'no credentials sent (--api-key-env or --header Authorization)',
  'webhook-secret': 'no receiver secret given (--webhook-secret-env)',
};

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

/**
 * Thrown by a check whose request found nothing to judge (a 404 or 405 where the route its rule is
 * about should be) when the prerequisite that establishes that route did not hold: the check is then
 * BLOCKED by that prerequisite's failure, not failed a second time for it (see `routeOrBlocked`).
 */
export class CheckBlocked extends Error {
  constructor(readonly prerequisite: PrerequisiteName) {
    super(`blocked: ${prerequisite} does not hold`);
  }
}

/** An item a check made in the run's collection (removed at the end of the run). */
export interface MadeItem {
  readonly id: string;
  readonly path: string;
  readonly etag: string;
  readonly doc: JsonObject;
}

/** The receiver the webhook checks deliver to, and how its provider signs. */
export interface Receiver {
  readonly path: string;
  readonly secret: string;
  readonly scheme: WebhookScheme;
}

export interface CheckContext {
  send(request: ProbeRequest): Promise<ProbeResponse>;
  /** The run's own collection: a name no one else uses (or the one given), emptied of what the run stored. */
  readonly collection: string;
  /** Random to this run (hex): part of every id and event id it makes, so two runs never share one. */
  readonly tag: string;
  /** An id not yet used in the run's collection. */
  newId(): string;
  /** A new item in the run's collection, created with PUT and If-None-Match: * (needs `item`). */
  newItem(fields?: JsonObject): Promise<MadeItem>;
  /** The listing collection of LISTING_ITEMS items, made once for the run (needs `listing`). */
  listing(): string;
  /**
   * Makes the listing collection, its items created with `method` (POST carries each item's id in
   * its body): only the setup check that provides `listing` calls it.
   */
  makeListing(method: 'PUT' | 'POST'): Promise<string>;
  /** A query resource name not yet used in the run's collection. */
  newQueryName(): string;
  /** The receiver, when the run was given a secret it accepts. */
  readonly webhook: Receiver | undefined;
  /**
   * Whether the prerequisite `name` holds (its check passed), running its check first if need be.
   * For reading answers leniently where a rule already judged elsewhere does not hold: a check that
   * finds errors are not problem documents does not fail every other check again for it.
   */
  holds(name: PrerequisiteName): Promise<boolean>;
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
