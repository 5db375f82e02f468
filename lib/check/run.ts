// Runs the checks against one server (`resapi check <base_url>`, CONVENTIONS.md#conformance-checker).
// The run works in collections of its own, named `rcheck-<random>` (and `-list`), so it never reads or
// changes what the server already holds; everything it stored (items, query resources) is deleted at
// the end, whatever the checks found. Checks run one after another, in the order of the report's
// sections, and each line of the report is one rule, cited by its section of CONVENTIONS.md.
import { systemRandom, type Random } from '../clock.js';
import type { JsonObject } from '../json.js';
import { checksInOrder } from './checks.js';
import { JSON_CREATE_ONLY } from './define.js';
import { expectHeader, expectStatus, seen } from './expect.js';
import { Probe, ProbeRefused, type ProbeRequest, type ProbeResponse } from './probe.js';
import { citationText, isDocumentUrl, ruleUrl, type Anchor, type SpecReference } from './rules.js';
import { CheckFailed, CheckSkipped, LISTING_ITEMS, listingItem } from './types.js';
import type { Check, CheckContext, MadeItem, Section } from './types.js';

export interface CheckOptions {
  /** The receiver's secret: without it the webhook checks are skipped. */
  readonly webhookSecret?: string;
  /** The receiver's path (default /webhooks). */
  readonly webhookPath?: string;
  /** Sent as `Authorization: Bearer <key>` on every request. */
  readonly apiKey?: string;
  /** Requests the whole run may send (default 1000). */
  readonly maxRequests?: number;
  readonly timeoutMs?: number;
  /** Only the checks whose id starts with one of these (`conditional/`, `paging/next-link`). */
  readonly only?: readonly string[];
  /** Where the run's collection name comes from (default: the system's random source). */
  readonly random?: Random;
  /**
   * The URL of the conventions document as published (`https://example.org/resapi/CONVENTIONS.md`):
   * each outcome then carries its rule's address, `ruleUrl`. An absolute http(s) URL without a fragment.
   */
  readonly docsBase?: string;
}

export type CheckResult = 'pass' | 'fail' | 'skip';

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
  /** What was seen (a failure) or why the check could not judge (a skip). */
  readonly detail?: string;
}

export interface CheckReport {
  readonly baseUrl: string;
  readonly outcomes: readonly CheckOutcome[];
  readonly summary: { readonly pass: number; readonly fail: number; readonly skip: number };
  readonly requests: number;
  /** What the clean-up could not remove, if anything. */
  readonly leftBehind: readonly string[];
}

const DEFAULT_MAX_REQUESTS = 1000;
const DEFAULT_TIMEOUT_MS = 10_000;
/** Requests kept back from the checks so the clean-up can always run. */
const CLEAN_UP_RESERVE = 200;

export async function runChecks(baseUrl: string, options: CheckOptions = {}): Promise<CheckReport> {
  if (options.docsBase !== undefined && !isDocumentUrl(options.docsBase)) {
    throw new TypeError(`options.docsBase must be an absolute http(s) URL without a fragment: ${options.docsBase}`);
  }
  const maxRequests = options.maxRequests ?? DEFAULT_MAX_REQUESTS;
  const headers: Record<string, string> =
    options.apiKey === undefined ? {} : { Authorization: `Bearer ${options.apiKey}` };
  const probe = new Probe(baseUrl, { maxRequests, timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS, headers });
  const run = new RunState(probe, options, maxRequests - CLEAN_UP_RESERVE);
  const outcomes: CheckOutcome[] = [];
  const checks = checksInOrder().filter((check) => isSelected(check.id, options.only));
  try {
    for (const check of checks) outcomes.push(await runOne(check, run, options.docsBase));
  } finally {
    await run.cleanUp();
  }
  const count = (result: CheckResult): number => outcomes.filter((outcome) => outcome.result === result).length;
  return {
    baseUrl,
    outcomes,
    summary: { pass: count('pass'), fail: count('fail'), skip: count('skip') },
    requests: probe.count,
    leftBehind: run.leftBehind,
  };
}

async function runOne(check: Check, run: RunState, docsBase: string | undefined): Promise<CheckOutcome> {
  const { id, section, rule, anchor, rfc } = check;
  const base = {
    id,
    section,
    rule,
    source: citationText(check),
    anchor,
    ...(rfc === undefined ? {} : { rfc }),
    ...(docsBase === undefined ? {} : { ruleUrl: ruleUrl(docsBase, anchor) }),
  };
  try {
    await check.run(run.context);
    return { ...base, result: 'pass' };
  } catch (error) {
    if (error instanceof CheckSkipped) return { ...base, result: 'skip', detail: error.why };
    if (error instanceof CheckFailed) return { ...base, result: 'fail', detail: error.seen };
    if (error instanceof ProbeRefused) return { ...base, result: 'fail', detail: error.message };
    const message = error instanceof Error ? error.message : String(error);
    return { ...base, result: 'fail', detail: `the request failed: ${message}` };
  }
}

/** Whether the check `id` runs: no `only` prefixes given, or `id` starts with one of them. */
function isSelected(id: string, only: readonly string[] | undefined): boolean {
  return only === undefined || only.some((prefix) => id.startsWith(prefix));
}

/** The run's collections, what it made in them, and the context every check gets. */
class RunState {
  readonly context: CheckContext;
  readonly leftBehind: string[] = [];
  private readonly collection: string;
  private readonly listingCollection: string;
  private readonly madeIds = new Set<string>();
  private readonly madeQueries = new Set<string>();
  private listingMade: Promise<string> | undefined;
  private sequence = 0;

  constructor(
    private readonly probe: Probe,
    options: CheckOptions,
    private readonly checkBudget: number,
  ) {
    const tag = (options.random ?? systemRandom).bytes(6).toString('hex');
    this.collection = `rcheck-${tag}`;
    this.listingCollection = `rcheck-${tag}-list`;
    const secret = options.webhookSecret;
    this.context = {
      send: (request) => this.send(request),
      collection: this.collection,
      newId: () => this.newId(),
      newItem: (fields) => this.newItem(fields ?? {}),
      listing: () => (this.listingMade ??= this.makeListing()),
      newQueryName: () => {
        const name = `q${++this.sequence}`;
        this.madeQueries.add(name);
        return name;
      },
      webhook: secret === undefined || secret === '' ? undefined : { path: options.webhookPath ?? '/webhooks', secret },
      credentialed: options.apiKey !== undefined,
    };
  }

  private send(request: ProbeRequest): Promise<ProbeResponse> {
    if (this.probe.count >= this.checkBudget) {
      return Promise.reject(new ProbeRefused(`not sent: the checks' budget of ${this.checkBudget} requests is spent`));
    }
    return this.probe.send(request);
  }

  private newId(): string {
    const id = `c${++this.sequence}`;
    this.madeIds.add(id);
    return id;
  }

  private async newItem(fields: JsonObject): Promise<MadeItem> {
    const id = this.newId();
    const path = `/${this.collection}/${id}`;
    const doc: JsonObject = { id, name: `check item ${id}`, price: 10, ...fields };
    const response = await this.send({ method: 'PUT', path, headers: JSON_CREATE_ONLY, body: JSON.stringify(doc) });
    try {
      expectStatus(response, 201);
      return { id, path, etag: expectHeader(response, 'etag'), doc };
    } catch (error) {
      // A check that needs an item cannot judge its own rule when the item cannot be made.
      if (error instanceof CheckFailed) {
        throw new CheckFailed(`could not create a test item with PUT and If-None-Match: * (${error.seen})`);
      }
      throw error;
    }
  }

  private async makeListing(): Promise<string> {
    for (let n = 1; n <= LISTING_ITEMS; n++) {
      const doc = listingItem(n);
      const path = `/${this.listingCollection}/${String(doc['id'])}`;
      const body = JSON.stringify(doc);
      const response = await this.send({ method: 'PUT', path, headers: JSON_CREATE_ONLY, body });
      if (response.status !== 201) {
        throw new CheckFailed(`could not create the listing's items with PUT and If-None-Match: * (${seen(response)})`);
      }
    }
    return this.listingCollection;
  }

  /** Deletes everything the run stored; what cannot be deleted is reported, never retried for ever. */
  async cleanUp(): Promise<void> {
    const paths: string[] = [];
    for (const name of this.madeQueries) paths.push(`/${this.collection}/$queries/${name}`);
    for (const id of this.madeIds) paths.push(`/${this.collection}/${id}`);
    if (this.listingMade !== undefined) {
      for (let n = 1; n <= LISTING_ITEMS; n++) paths.push(`/${this.listingCollection}/${String(listingItem(n)['id'])}`);
    }
    for (const path of paths) {
      try {
        const response = await this.probe.send({ method: 'DELETE', path });
        if (response.status >= 300 && response.status !== 404) {
          this.leftBehind.push(`${path} (DELETE answered ${response.status})`);
        }
      } catch (error) {
        this.leftBehind.push(`${path} (${error instanceof Error ? error.message : String(error)})`);
      }
    }
  }
}
