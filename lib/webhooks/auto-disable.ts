// Auto-disable (CONVENTIONS.md#auto-disable): a subscription whose every delivery failed for
// `outbox.disableAfterS` (5 days by default), with at least 10 failed attempts in that time, is
// disabled: `"status": "disabled"` with `disabledReason` and `disabledAt`, in the same atomic batch as
// the outcome of the attempt that decided it, with a `subscription.disabled` notice for the other
// subscriptions that name it (events.ts). A 410 answer disables at once, with its own reason
// (CONVENTIONS.md#delivery-retries). Its pending deliveries wait (outbox.ts parks them) until a PUT
// makes it active again.
//
// A subscription's failure streak is one small record beside it, `$subscription-streaks/<id>`:
// `{ "basis", "since", "attempts" }`, the time of the first failed attempt since the last 2xx, and the
// failed attempts since. It goes in the batch that records the outcome of the attempt that changes it,
// so it is exactly as durable as that outcome, and nothing ever reads deliveries to find it. A 2xx
// deletes it; a 2xx with no streak writes nothing more. `basis` is the version of the subscription
// record it counts against: a replace of the subscription (a re-enable, a new URL) and the disabling
// itself change that version, so the streak of an older version is over, and a late write of one
// cannot bring it back.
//
// An outcome that changes the streak is written before the subscription's next delivery starts
// (RunOutcome `recordFirst`), but up to `outbox.inFlight` deliveries of one subscription are in flight
// at once, and those that end while it is written must not each count on the streak it replaces: each
// decision reads the streak the one before it decided, kept here until the subscription changes, and
// the store only when there is none (after a start). So every attempt counts once, in the order the
// attempts ended.
//
// The log line, the metric and the parked deliveries going out again follow the store's change feed:
// they happen once a disabling or a re-enable is committed, never for an outcome that lost a race (a
// PUT of the subscription meanwhile makes the disabling conflict, and the attempt is made again).
import type { Clock, Random } from '../clock.js';
import type { Logger } from '../log.js';
import type { Commit, Mutation, Store, StoredRecord } from '../store/types.js';
import { disabledNoticeMutations } from './events.js';
import { SUBSCRIPTION_SPACE } from './subscriptions.js';

export const STREAK_SPACE = '$subscription-streaks';
/** Failed attempts a streak needs, besides its span, to disable (CONVENTIONS.md#auto-disable). */
export const MIN_FAILED_ATTEMPTS = 10;
/** The `disabledReason` of a subscription whose receiver answered 410. */
export const GONE_REASON = 'the receiver answered 410 Gone';
/** What a 2xx without a streak changes: one array for all of them. */
const NOTHING: readonly Mutation[] = Object.freeze([]);
/** Why the server disabled a subscription, as /$metrics counts it. */
export type DisableCause = 'gone' | 'failing';

export interface AutoDisableOptions {
  readonly store: Store;
  readonly clock: Clock;
  readonly random: Random;
  readonly log: Logger;
  /** `outbox.disableAfterS`. */
  readonly disableAfterS: number;
  /** Counts each disabling once it is committed (lib/server-metrics.ts). */
  readonly countDisabled?: (cause: DisableCause) => void;
  /** Parked deliveries may go now: a subscription is active again, or was deleted. */
  readonly resume: () => void;
}

interface Streak {
  readonly since: number;
  readonly attempts: number;
}

/** The streak the last decision left (undefined: none), and the subscription version it counts against. */
interface Decided {
  readonly basis: number;
  readonly streak: Streak | undefined;
}

export class AutoDisable {
  private readonly unwatch: () => void;
  /** Per subscription, the streak the last decision left, written or not yet (see the header). */
  private readonly decided = new Map<string, Decided>();

  constructor(private readonly options: AutoDisableOptions) {
    this.unwatch = options.store.watch((commit) => this.committed(commit));
  }

  close(): void {
    this.unwatch();
  }

  /** A 2xx from the subscription's receiver: its streak, if it has one, is over (nearly always: none). */
  delivered(subscription: StoredRecord): readonly Mutation[] {
    if (this.streakOf(subscription) === undefined) return NOTHING;
    this.decide(subscription, undefined);
    return [{ kind: 'delete', collection: STREAK_SPACE, id: subscription.id }];
  }

  /**
   * A failed attempt (`error`: what went wrong, as /$outbox tells it) is counted; with at least
   * MIN_FAILED_ATTEMPTS of them, the first `disableAfterS` or longer ago, the subscription is disabled.
   */
  failed(subscription: StoredRecord, error: string): Mutation[] {
    const now = this.options.clock.now();
    const streak = this.streakOf(subscription);
    const since = streak?.since ?? now;
    const attempts = (streak?.attempts ?? 0) + 1;
    const { disableAfterS } = this.options;
    if (attempts >= MIN_FAILED_ATTEMPTS && now - since >= disableAfterS * 1000) {
      const span = spanText(disableAfterS);
      const reason = `every delivery failed for ${span} (${attempts} attempts); last error: ${error}`;
      return this.disabling(subscription, reason);
    }
    this.decide(subscription, { since, attempts });
    const doc = { basis: subscription.version, since, attempts };
    return [{ kind: 'put', collection: STREAK_SPACE, id: subscription.id, doc }];
  }

  /** The receiver answered 410 Gone: disabled at once. */
  gone(subscription: StoredRecord): Mutation[] {
    return this.disabling(subscription, GONE_REASON);
  }

  /**
   * The subscription as it was read, disabled (a PUT meanwhile makes the batch conflict), its streak
   * gone, and the notice for the subscriptions that name it.
   */
  private disabling(subscription: StoredRecord, reason: string): Mutation[] {
    const { id, version } = subscription;
    // Attempts still in flight to it count from nothing: their outcomes are written, and a streak of
    // this version is of no use once the disabling changes the version.
    this.decide(subscription, undefined);
    const disabledAt = new Date(this.options.clock.now()).toISOString();
    return [
      {
        kind: 'patch',
        collection: SUBSCRIPTION_SPACE,
        id,
        set: { status: 'disabled', disabledReason: reason, disabledAt },
        expect: { version },
      },
      { kind: 'delete', collection: STREAK_SPACE, id },
      ...disabledNoticeMutations(this.options, id, reason, disabledAt),
    ];
  }

  /** The subscription's streak, if one was counted against this version of it. */
  private streakOf(subscription: StoredRecord): Streak | undefined {
    const decided = this.decided.get(subscription.id);
    if (decided !== undefined && decided.basis === subscription.version) return decided.streak;
    const doc = this.options.store.get(STREAK_SPACE, subscription.id)?.doc;
    if (doc === undefined || doc['basis'] !== subscription.version) return undefined;
    const { since, attempts } = doc;
    return typeof since === 'number' && typeof attempts === 'number' ? { since, attempts } : undefined;
  }

  private decide(subscription: StoredRecord, streak: Streak | undefined): void {
    this.decided.set(subscription.id, { basis: subscription.version, streak });
  }

  /**
   * A disabling committed: one log line and a count. A re-enable or a delete: parked deliveries may go.
   * Any change of a subscription ends what was decided for its former version.
   */
  private committed(commit: Commit): void {
    for (const { mutation, record, previous } of commit.applied) {
      if (mutation.collection !== SUBSCRIPTION_SPACE) continue;
      if (this.decided.get(mutation.id)?.basis !== record?.version) this.decided.delete(mutation.id);
      // Only the server's own disabling patches a subscription with a reason; a PUT replaces it whole.
      if (mutation.kind === 'patch' && record !== undefined && typeof mutation.set['disabledReason'] === 'string') {
        this.said(record);
        continue;
      }
      const reenabled = previous?.doc['status'] === 'disabled' && record?.doc['status'] === 'active';
      if (reenabled || (record === undefined && previous !== undefined)) this.options.resume();
    }
  }

  private said(record: StoredRecord): void {
    const { disabledReason: reason, disabledAt } = record.doc;
    const cause: DisableCause = reason === GONE_REASON ? 'gone' : 'failing';
    const fields = { subscription: record.id, cause, reason, disabledAt };
    this.options.log('error', 'webhook deliveries: a subscription is disabled', fields);
    this.options.countDisabled?.(cause);
  }
}

/** `disableAfterS` as a person says it: 432000 → "5 days", 60 → "1 minute". */
function spanText(seconds: number): string {
  const units = [['day', 86_400], ['hour', 3600], ['minute', 60], ['second', 1]] as const;
  for (const [unit, size] of units) {
    if (seconds % size !== 0) continue;
    const count = seconds / size;
    return `${count} ${unit}${count === 1 ? '' : 's'}`;
  }
  return `${seconds} seconds`;
}
