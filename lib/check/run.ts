// Runs the checks against one server (`resapi check <base_url>`, CONVENTIONS.md#conformance-checker).
// First one GET of the base URL: no HTTP answer ends the run there (CheckUnreachable), before anything
// is stored. Then the checks asked for, in the report's order, each after what it needs
// (lib/check/engine.ts), in collections of the run's own; what the run stored is deleted at the end,
// whatever the checks found. The report has one outcome per check settled, the failures as root
// causes with what each blocked, and a score per section.
import { systemRandom, type Random } from '../clock.js';
import type { WebhookScheme } from '../config.js';
import { isCollectionName } from '../names.js';
import { checksInOrder } from './checks.js';
import { Engine } from './engine.js';
import { Probe } from './probe.js';
import { reach } from './reach.js';
import { isDocumentUrl, type Anchor, type SpecReference } from './rules.js';
import { select } from './select.js';
import { RunState, type Exchange } from './state.js';
import { SECTIONS, type Condition, type Section } from './types.js';

export { CheckUnreachable } from './reach.js';
export type { Exchange } from './state.js';

export interface CheckOptions {
  /** The receiver's secret: without it the webhook checks are skipped. */
  readonly webhookSecret?: string;
  /** The receiver's path (default /webhooks). */
  readonly webhookPath?: string;
  /** How the checks sign deliveries, as a provider of that scheme does (default resapi). */
  readonly webhookScheme?: WebhookScheme;
  /** Sent as `Authorization: Bearer <key>` on every request. */
  readonly apiKey?: string;
  /** Header fields sent on every request (`{ 'X-Tenant': 'a' }`); an Authorization among them counts as credentials. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Requests the whole run may send (default 1000). */
  readonly maxRequests?: number;
  /** How long one request may wait for its answer, in milliseconds (default 10 000). */
  readonly timeoutMs?: number;
  /** Only these checks, by id (`conditional/replace`) or section (`paging`, `paging/`); with what they need. */
  readonly only?: readonly string[];
  /** Never these checks (ids or sections); what needs them is skipped. */
  readonly skip?: readonly string[];
  /** The run's collection (default `rcheck-<random>`); the listing goes in `<name>-list`. */
  readonly collection?: string;
  /** Keep what each check sent and saw in its outcome (`exchanges`). */
  readonly verbose?: boolean;
  /** Where the run's names come from (default: the system's random source). */
  readonly random?: Random;
  /**
   * The URL of the conventions document as published (`https://example.org/resapi/CONVENTIONS.md`):
   * each outcome then carries its rule's address, `ruleUrl`. An absolute http(s) URL without a fragment.
   */
  readonly docsBase?: string;
}

/** The three results reports had before checks could be blocked; a blocked check's is `skip`. */
export type CheckResult = 'pass' | 'fail' | 'skip';
export type Verdict = 'PASS' | 'FAIL' | 'SKIP' | 'BLOCKED';

export interface CheckOutcome {
  readonly id: string;
  readonly section: Section;
  /** The rule, in one sentence. */
  readonly rule: string;
  /** Where the rule is written, as text: `CONVENTIONS.md#etags; RFC 9110 §8.8.3`. */
  readonly source: string;
  /** The section of CONVENTIONS.md that states the rule (`etags` for CONVENTIONS.md#etags). */
  readonly anchor: Anchor;
  /** The RFC or OData section the rule comes from, when there is one. */
  readonly rfc?: SpecReference;
  /** `docsBase#anchor`, when the run was given the document's URL. */
  readonly ruleUrl?: string;
  readonly result: CheckResult;
  /** What was seen (a failure), why the check could not judge (a skip), or what blocked it. */
  readonly detail?: string;
  readonly verdict: Verdict;
  /** The failed check that kept this one from running (the root cause, through blocked prerequisites). */
  readonly blockedBy?: string;
  /** The section's title, as the report heads it. */
  readonly sectionTitle: string;
  /** The ids of the checks this one needs. */
  readonly prerequisites: readonly string[];
  /** How long the check ran, in milliseconds. */
  readonly ms: number;
  /** What the check sent and saw, with `verbose`. */
  readonly exchanges?: readonly Exchange[];
}

/** A failure, and the checks it kept from running. */
export interface RootCause {
  readonly id: string;
  readonly detail: string;
  readonly blocked: readonly string[];
}

export interface SectionScore {
  readonly section: Section;
  readonly title: string;
  readonly pass: number;
  readonly fail: number;
  readonly blocked: number;
  readonly skip: number;
  /** pass / (pass + fail + blocked), as a whole percentage; null when nothing was judged. */
  readonly score: number | null;
}

export interface CheckReport {
  readonly baseUrl: string;
  readonly outcomes: readonly CheckOutcome[];
  readonly summary: { readonly pass: number; readonly fail: number; readonly skip: number; readonly blocked: number };
  readonly requests: number;
  /** What the clean-up could not remove, if anything. */
  readonly leftBehind: readonly string[];
  /** Each FAIL, with the checks it blocked, most first. */
  readonly rootCauses: readonly RootCause[];
  /** Per section of the report, in its order, the sections with a check in the run. */
  readonly sections: readonly SectionScore[];
}

const DEFAULT_MAX_REQUESTS = 1000;
const DEFAULT_TIMEOUT_MS = 10_000;
/** Requests kept back from the checks so the clean-up can always run. */
const CLEAN_UP_RESERVE = 200;
/** The longest collection name the run can take: `<name>-list` must still be a name (CONVENTIONS.md#names). */
export const MAX_RUN_COLLECTION = 59;

export async function runChecks(baseUrl: string, options: CheckOptions = {}): Promise<CheckReport> {
  if (options.docsBase !== undefined && !isDocumentUrl(options.docsBase)) {
    throw new TypeError(`options.docsBase must be an absolute http(s) URL without a fragment: ${options.docsBase}`);
  }
  const collection = options.collection;
  if (collection !== undefined && !(isCollectionName(collection) && collection.length <= MAX_RUN_COLLECTION)) {
    throw new TypeError(`options.collection must be a collection name of at most ${MAX_RUN_COLLECTION} characters`);
  }
  const catalogue = checksInOrder();
  const { chosen, excluded } = select(catalogue, options.only, options.skip);
  const maxRequests = options.maxRequests ?? DEFAULT_MAX_REQUESTS;
  const headers: Record<string, string> = { ...options.headers };
  if (options.apiKey !== undefined) headers['Authorization'] = `Bearer ${options.apiKey}`;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const probe = new Probe(baseUrl, { maxRequests, timeoutMs, headers });
  await reach(probe, baseUrl);
  const tag = (options.random ?? systemRandom).bytes(6).toString('hex');
  const state = new RunState(probe, {
    tag,
    collection: collection ?? `rcheck-${tag}`,
    checkBudget: maxRequests - CLEAN_UP_RESERVE,
  });
  const secret = options.webhookSecret;
  const webhook =
    secret === undefined || secret === ''
      ? undefined
      : { path: options.webhookPath ?? '/webhooks', secret, scheme: options.webhookScheme ?? 'resapi' };
  const credentialed = Object.keys(headers).some((name) => name.toLowerCase() === 'authorization');
  const given = new Set<Condition>([
    ...(credentialed ? (['credentials'] as const) : []),
    ...(webhook === undefined ? [] : (['webhook-secret'] as const)),
  ]);
  const engine = new Engine(catalogue, excluded, state, probe, {
    given,
    docsBase: options.docsBase,
    verbose: options.verbose === true,
    webhook,
  });
  try {
    for (const check of chosen) await engine.settle(check);
  } finally {
    await state.cleanUp();
  }
  const outcomes = engine.outcomes(catalogue);
  return {
    baseUrl,
    outcomes,
    summary: {
      pass: count(outcomes, 'PASS'),
      fail: count(outcomes, 'FAIL'),
      skip: count(outcomes, 'SKIP'),
      blocked: count(outcomes, 'BLOCKED'),
    },
    requests: probe.count,
    leftBehind: state.leftBehind,
    rootCauses: rootCauses(outcomes),
    sections: sectionScores(outcomes),
  };
}

function count(outcomes: readonly CheckOutcome[], verdict: Verdict): number {
  return outcomes.filter((outcome) => outcome.verdict === verdict).length;
}

function rootCauses(outcomes: readonly CheckOutcome[]): RootCause[] {
  const causes = outcomes
    .filter((outcome) => outcome.verdict === 'FAIL')
    .map(({ id, detail }) => ({
      id,
      detail: detail ?? '',
      blocked: outcomes.filter((outcome) => outcome.blockedBy === id).map((outcome) => outcome.id),
    }));
  // Stable: equal counts keep the report's order.
  return causes.sort((a, b) => b.blocked.length - a.blocked.length);
}

function sectionScores(outcomes: readonly CheckOutcome[]): SectionScore[] {
  return (Object.keys(SECTIONS) as Section[]).flatMap((section) => {
    const inSection = outcomes.filter((outcome) => outcome.section === section);
    if (inSection.length === 0) return [];
    const pass = count(inSection, 'PASS');
    const fail = count(inSection, 'FAIL');
    const blocked = count(inSection, 'BLOCKED');
    const judged = pass + fail + blocked;
    const score = judged === 0 ? null : Math.floor((100 * pass) / judged);
    return [{ section, title: SECTIONS[section], pass, fail, blocked, skip: count(inSection, 'SKIP'), score }];
  });
}
