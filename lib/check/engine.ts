// The checker's engine (CONVENTIONS.md#conformance-checker): settles each check once, its prerequisites
// first. A check runs only when everything it needs holds; when a prerequisite failed it is BLOCKED by
// that failure (the root one, when the prerequisite was itself blocked), and when a prerequisite was
// skipped it is skipped for the same reason. So one root cause is one FAIL, and every check that
// could not be judged because of it names it. A request that got no answer fails its check; when the
// server then gives no answer at all, every check not yet settled is blocked by that one.
import { PREREQUISITES, type PrerequisiteName } from './prerequisites.js';
import { ProbeRefused } from './probe.js';
import { unreachable, transportFailure } from './reach.js';
import { anchorFor, citationText, ruleUrl } from './rules.js';
import type { CheckOutcome, Verdict } from './run.js';
import type { Exchange, RunState } from './state.js';
import { CheckBlocked, CheckFailed, CheckSkipped, CONDITION_MISSING, SECTIONS } from './types.js';
import type { Check, CheckContext, Condition, Receiver } from './types.js';
import type { Probe } from './probe.js';

/** A check that asked for something it does not declare: a mistake in the checker, never a verdict. */
export class CheckDeclarationError extends TypeError {}

export interface EngineOptions {
  /** What the run was given (credentials, a receiver secret). */
  readonly given: ReadonlySet<Condition>;
  readonly docsBase: string | undefined;
  readonly verbose: boolean;
  readonly webhook: Receiver | undefined;
}

/** How a check came out before the outcome is dressed with its citation. */
interface Judgement {
  readonly verdict: Verdict;
  readonly detail?: string;
  readonly blockedBy?: string;
}

export class Engine {
  private readonly byId: ReadonlyMap<string, Check>;
  private readonly settled = new Map<string, CheckOutcome>();
  private readonly running = new Set<string>();
  /** The check after which the server stopped answering, and how. */
  private stopped: { readonly by: string; readonly why: string } | undefined;

  constructor(
    checks: readonly Check[],
    private readonly excluded: ReadonlySet<string>,
    private readonly state: RunState,
    private readonly probe: Probe,
    private readonly options: EngineOptions,
  ) {
    this.byId = new Map(checks.map((check) => [check.id, check]));
  }

  /** Every outcome settled so far, in the order of `checks` (the report's). */
  outcomes(order: readonly Check[]): CheckOutcome[] {
    return order.flatMap((check) => this.settled.get(check.id) ?? []);
  }

  /** The outcome of `check`, running it (and first what it needs) unless it was settled already. */
  async settle(check: Check): Promise<CheckOutcome> {
    const done = this.settled.get(check.id);
    if (done !== undefined) return done;
    if (this.running.has(check.id)) {
      throw new CheckDeclarationError(`${check.id} needs itself, through its prerequisites`);
    }
    this.running.add(check.id);
    try {
      const decided = await this.beforeRun(check);
      const started = performance.now();
      const exchanges = this.state.startRecording();
      let judgement: Judgement;
      try {
        judgement = decided ?? (await this.run(check));
      } finally {
        this.state.stopRecording();
      }
      const outcome = this.outcome(check, judgement, performance.now() - started, exchanges);
      this.settled.set(check.id, outcome);
      if (this.state.transportTrouble) await this.askWhetherStopped(check.id);
      return outcome;
    } finally {
      this.running.delete(check.id);
    }
  }

  /** Whether the prerequisite `name` holds: its check passed (run now if it has not run yet). */
  async holds(name: PrerequisiteName): Promise<boolean> {
    const id = PREREQUISITES[name].check;
    if (this.excluded.has(id)) return false;
    return (await this.settle(this.checkNamed(id))).verdict === 'PASS';
  }

  /** Blocked, skipped or not run at all, decided before the check sends anything; undefined: run it. */
  private async beforeRun(check: Check): Promise<Judgement | undefined> {
    // A check that does not apply to this run is skipped, whatever its prerequisites did.
    const missing = check.requires.find((condition) => !this.options.given.has(condition));
    if (missing !== undefined) return { verdict: 'SKIP', detail: CONDITION_MISSING[missing] };
    if (this.stopped !== undefined) return this.afterStop();
    let skipped: Judgement | undefined;
    for (const name of check.needs) {
      const id = PREREQUISITES[name].check;
      if (this.excluded.has(id)) {
        skipped ??= { verdict: 'SKIP', detail: `needs ${id}, left out by --skip` };
        continue;
      }
      const needed = await this.settle(this.checkNamed(id));
      if (needed.verdict === 'FAIL') return blockedBy(needed.id);
      if (needed.verdict === 'BLOCKED') return blockedBy(needed.blockedBy ?? needed.id);
      if (needed.verdict === 'SKIP') {
        // A skip passed along keeps the first reason: the one a user can act on.
        const why = needed.detail ?? '';
        skipped ??= { verdict: 'SKIP', detail: why.startsWith('needs ') ? why : `needs ${id}: ${why}` };
      }
    }
    if (this.stopped !== undefined) return this.afterStop();
    if (this.state.budgetSpent) return { verdict: 'SKIP', detail: "not run: the run's request budget is spent" };
    return skipped;
  }

  private afterStop(): Judgement {
    const { by, why } = this.stopped as { by: string; why: string };
    return { verdict: 'BLOCKED', blockedBy: by, detail: `blocked by ${by} (the server stopped answering: ${why})` };
  }

  private async run(check: Check): Promise<Judgement> {
    try {
      await check.run(this.contextFor(check));
      return { verdict: 'PASS' };
    } catch (error) {
      if (error instanceof CheckDeclarationError) throw error;
      if (error instanceof CheckBlocked) return this.blockedAtRun(error.prerequisite);
      if (error instanceof CheckSkipped) return { verdict: 'SKIP', detail: error.why };
      if (error instanceof CheckFailed) return { verdict: 'FAIL', detail: error.seen };
      if (error instanceof ProbeRefused) {
        // The budget is the run's limit, not the server's fault: the check is not judged.
        if (this.state.budgetSpent) return { verdict: 'SKIP', detail: `not judged: ${error.message}` };
        return { verdict: 'FAIL', detail: error.message };
      }
      if (this.state.transportTrouble) {
        const why = transportFailure(error);
        return { verdict: 'FAIL', detail: why.startsWith('no answer') ? why : `no answer: ${why}` };
      }
      // Something the server sent that a check could not even read (a Location that is no URL, say).
      const message = error instanceof Error ? error.message : String(error);
      return { verdict: 'FAIL', detail: `unreadable answer: ${message}` };
    }
  }

  /** A check that found the route its rule is about missing, and the prerequisite for it not holding. */
  private async blockedAtRun(name: PrerequisiteName): Promise<Judgement> {
    const id = PREREQUISITES[name].check;
    if (this.excluded.has(id)) return { verdict: 'SKIP', detail: `needs ${id}, left out by --skip` };
    const needed = await this.settle(this.checkNamed(id));
    if (needed.verdict === 'FAIL') return blockedBy(needed.id);
    if (needed.verdict === 'BLOCKED') return blockedBy(needed.blockedBy ?? needed.id);
    return { verdict: 'SKIP', detail: `needs ${id}: ${needed.detail ?? ''}` };
  }

  /** After a request got no answer: is the server still there? If not, the rest of the run is blocked. */
  private async askWhetherStopped(id: string): Promise<void> {
    this.state.transportTrouble = false;
    if (this.stopped !== undefined) return;
    const why = await unreachable(this.probe);
    if (why !== undefined) this.stopped = { by: id, why };
  }

  private contextFor(check: Check): CheckContext {
    const { state, options } = this;
    const declared = (name: PrerequisiteName, use: string): void => {
      if (!check.needs.includes(name)) {
        throw new CheckDeclarationError(`${check.id} calls ${use} but does not declare needs: ['${name}']`);
      }
    };
    return {
      send: (request) => state.send(request),
      collection: state.collection,
      tag: state.tag,
      newId: () => state.newId(),
      newItem: (fields) => {
        declared('item', 'newItem()');
        return state.newItem(fields ?? {});
      },
      listing: () => {
        declared('listing', 'listing()');
        const name = state.listing;
        if (name === undefined) throw new CheckDeclarationError(`${check.id}: the listing was not made`);
        return name;
      },
      makeListing: (method) => {
        if (PREREQUISITES.listing.check !== check.id) {
          throw new CheckDeclarationError(`${check.id} calls makeListing(), which ${PREREQUISITES.listing.check} owns`);
        }
        return state.makeListing(method);
      },
      newQueryName: () => state.newQueryName(),
      webhook: options.webhook,
      holds: (name) => {
        if (PREREQUISITES[name].check === check.id) {
          throw new CheckDeclarationError(`${check.id} asks whether its own rule holds`);
        }
        return this.holds(name);
      },
    };
  }

  private outcome(check: Check, judgement: Judgement, ms: number, exchanges: Exchange[]): CheckOutcome {
    const { id, section, rule, rfc, needs } = check;
    const { verdict, detail, blockedBy } = judgement;
    const anchor = anchorFor(check.anchor, check.schemeRule, this.options.webhook?.scheme);
    return {
      id,
      section,
      rule,
      source: citationText(rfc === undefined ? { anchor } : { anchor, rfc }),
      anchor,
      ...(rfc === undefined ? {} : { rfc }),
      ...(this.options.docsBase === undefined ? {} : { ruleUrl: ruleUrl(this.options.docsBase, anchor) }),
      result: verdict === 'PASS' ? 'pass' : verdict === 'FAIL' ? 'fail' : 'skip',
      ...(detail === undefined ? {} : { detail }),
      verdict,
      ...(blockedBy === undefined ? {} : { blockedBy }),
      sectionTitle: SECTIONS[section],
      prerequisites: needs.map((name) => PREREQUISITES[name].check),
      ms: Math.round(ms),
      ...(this.options.verbose ? { exchanges } : {}),
    };
  }

  private checkNamed(id: string): Check {
    const check = this.byId.get(id);
    if (check === undefined) throw new CheckDeclarationError(`no check ${id}, yet a prerequisite names it`);
    return check;
  }
}

function blockedBy(id: string): Judgement {
  return { verdict: 'BLOCKED', blockedBy: id, detail: `blocked by ${id}` };
}
