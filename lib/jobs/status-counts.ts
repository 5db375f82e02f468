// How many jobs of a queue's space hold each status now, for /$metrics (CONVENTIONS.md#metrics:
// received events and deliveries by status), kept as the store commits rather than counted at every
// scrape: an inbox keeps its events for `webhooks.dedupDays`, so a scan per scrape reads every event
// of a month, and a scraper polling a busy server took the CPU its queues needed.
//
// The first read counts the space once; from then on each commit moves its records from the status
// they had to the one they have. The store drops expired records without a commit, so the counts are
// checked against the space's live count on every read, and counted again when they differ (after
// an expiry): what a read returns is always exact.
import { nextTurn } from '../clock.js';
import type { Commit, Store } from '../store/types.js';

/** Records read per turn while counting the space again, so a recount never holds up requests. */
const COUNT_CHUNK = 4096;

/** A recount under way: what it has counted so far, up to and including the id `through`. */
interface Recount {
  readonly counts: Map<string, number>;
  total: number;
  through: string | undefined;
}

export class StatusCounts {
  private counts = new Map<string, number>();
  /** Records counted: the sum of `counts`. */
  private total = 0;
  private unwatch: (() => void) | undefined;
  private recounting: Recount | undefined;

  constructor(
    private readonly store: Store,
    private readonly space: string,
  ) {}

  /** The jobs holding each of `statuses` now. */
  async read(statuses: readonly string[]): Promise<{ status: string; count: number }[]> {
    this.unwatch ??= this.store.watch((commit) => this.committed(commit));
    while (this.total !== this.store.count(this.space)) await this.recount();
    return statuses.map((status) => ({ status, count: this.counts.get(status) ?? 0 }));
  }

  close(): void {
    this.unwatch?.();
    this.unwatch = undefined;
  }

  private committed(commit: Commit): void {
    const recount = this.recounting;
    for (const { mutation, record, previous } of commit.applied) {
      if (mutation.collection !== this.space) continue;
      const was = previous === undefined ? undefined : statusOf(previous.doc['status']);
      const is = record === undefined ? undefined : statusOf(record.doc['status']);
      this.total += move(this.counts, was, is);
      // A recount reads the space in id order: a change behind where it has read is its own to count,
      // a change ahead of it is read as it is now.
      if (recount?.through !== undefined && mutation.id <= recount.through) {
        recount.total += move(recount.counts, was, is);
      }
    }
  }

  /** Counts the space again, a chunk per turn, commits meanwhile counted as they land (`committed`). */
  private async recount(): Promise<void> {
    const recount: Recount = { counts: new Map(), total: 0, through: undefined };
    this.recounting = recount;
    try {
      for (;;) {
        const { through } = recount;
        const page = through === undefined ? { limit: COUNT_CHUNK } : { after: through, limit: COUNT_CHUNK };
        const chunk = this.store.scan(this.space, page);
        for (const record of chunk) recount.total += move(recount.counts, undefined, statusOf(record.doc['status']));
        if (chunk.length < COUNT_CHUNK) break;
        recount.through = chunk[chunk.length - 1]?.id;
        await nextTurn();
      }
    } finally {
      this.recounting = undefined;
    }
    this.counts = recount.counts;
    this.total = recount.total;
  }
}

/** Moves one record from status `was` to `is` (undefined: not there); the change of the total. */
function move(counts: Map<string, number>, was: string | undefined, is: string | undefined): number {
  if (was !== undefined) counts.set(was, (counts.get(was) ?? 0) - 1);
  if (is !== undefined) counts.set(is, (counts.get(is) ?? 0) + 1);
  return (is === undefined ? 0 : 1) - (was === undefined ? 0 : 1);
}

function statusOf(value: unknown): string {
  return typeof value === 'string' ? value : '';
}
