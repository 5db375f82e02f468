// The store's indexes of what falls due, by time (CONVENTIONS.md#durability: expired idempotency
// records and tombstones are freed as they fall due; inbox events and outbox deliveries wait for their
// next attempt, CONVENTIONS.md#inbox-retries-and-dead-letters and CONVENTIONS.md#delivery-retries).
// Taking what is due costs O(1) or O(log n) each instead of a scan of every record. Most entries come
// in time order (a job due now, an expiry a fixed window from now), so each index keeps those in a
// queue and only the others in a binary min-heap. Entries are never updated in place: a record that
// changes is pushed again, and whoever pops checks that the entry still describes the record.

export interface Timed {
  readonly at: number;
  /** Breaks ties between equal times: lower first (first come, first served). */
  readonly order?: number;
  /**
   * Breaks ties of time and order: lower first (code-unit order), so entries written by one commit
   * come out in a known order, not in whatever order the heap happens to hold them.
   */
  readonly id?: string;
}

export class TimeHeap<T extends Timed> {
  /**
   * The entries pushed in order (none before the one pushed last), oldest first from `head`: what a
   * store mostly pushes (a job due now, after the one written before it), taken and given back in O(1).
   */
  private run: T[] = [];
  private head = 0;
  /**
   * The entries pushed out of order, before the run's last one (jobs due now behind a retry's later
   * time, a test clock set back): as costly as before the run existed, never more.
   */
  private readonly heap = new BinaryHeap<T>(before);

  get size(): number {
    return this.run.length - this.head + this.heap.size;
  }

  push(entry: T): void {
    const { run } = this;
    if (run.length === this.head || !before(entry, run[run.length - 1] as T)) run.push(entry);
    else this.heap.push(entry);
  }

  /** The earliest entry, left in place. */
  peek(): T | undefined {
    const first = this.run[this.head];
    const top = this.heap.peek();
    if (top === undefined) return first;
    return first === undefined || before(top, first) ? top : first;
  }

  /** Removes and returns the earliest entry if it is due at `now`. */
  popDue(now: number): T | undefined {
    const top = this.peek();
    if (top === undefined || top.at > now) return undefined;
    return this.pop();
  }

  /** Removes and returns the earliest entry. */
  pop(): T | undefined {
    const { run } = this;
    const first = run[this.head];
    const top = this.heap.peek();
    if (first === undefined || (top !== undefined && before(top, first))) return this.heap.pop();
    this.head++;
    if (this.head === run.length) {
      run.length = 0;
      this.head = 0;
    } else if (this.head >= COMPACT_AT && this.head * 2 >= run.length) {
      // Taken entries are let go in blocks: the array keeps no reference to them for long.
      this.run = run.slice(this.head);
      this.head = 0;
    }
    return first;
  }

  /**
   * Visits the entries due at `now`, earliest first, until `visit` returns false, leaving them all in
   * place: the run is read in order, and the heap by a walk down from its root that keeps the next
   * candidates (the children of what it has visited) in a small heap of their positions, so k entries
   * cost O(k log k) whatever the size.
   */
  visitDue(now: number, visit: (entry: T) => boolean): void {
    const { run } = this;
    const entries = this.heap.items;
    const frontier = new BinaryHeap<number>((a, b) => before(entries[a] as T, entries[b] as T));
    if (entries.length > 0 && (entries[0] as T).at <= now) frontier.push(0);
    let next = this.head;
    for (;;) {
      const first = next < run.length && (run[next] as T).at <= now ? (run[next] as T) : undefined;
      const position = frontier.peek();
      let entry: T;
      if (position !== undefined && (first === undefined || before(entries[position] as T, first))) {
        frontier.pop();
        entry = entries[position] as T;
        for (let child = 2 * position + 1; child <= 2 * position + 2; child++) {
          if (child < entries.length && (entries[child] as T).at <= now) frontier.push(child);
        }
      } else if (first !== undefined) {
        next++;
        entry = first;
      } else {
        return;
      }
      if (!visit(entry)) return;
    }
  }
}

/** Taken entries at the front of a run that make it copy what is left, once they are half of it. */
const COMPACT_AT = 1024;

/**
 * Ids by the time they fall due, for records that each keep their own time (a record's expiry, a
 * tombstone's end): the store's largest time index, one entry per kept record for as long as it is
 * kept (30 days for a processed inbox event or a delivery). So an entry is no object: the times and
 * the ids are two arrays, the times unboxed (a number array of doubles), 16 bytes an entry where an
 * object with its time boxed cost 80, and four objects fewer to mark per kept record. Entries pushed
 * out of order (a shorter window after a longer one) wait in a TimeHeap. Whoever pops an id checks
 * that its owner still falls due then; `filter` lets go of the entries that no longer describe one.
 */
export class TimeQueue {
  private times: number[] = [];
  private ids: string[] = [];
  private head = 0;
  private late = new TimeHeap<{ readonly at: number; readonly id: string }>();

  get size(): number {
    return this.ids.length - this.head + this.late.size;
  }

  push(at: number, id: string): void {
    const { times, ids } = this;
    if (ids.length === this.head || at >= (times[times.length - 1] as number)) {
      times.push(at);
      ids.push(id);
    } else {
      this.late.push({ at, id });
    }
  }

  /** The earliest time, or undefined when empty. */
  next(): number | undefined {
    const first = this.head < this.ids.length ? this.times[this.head] : undefined;
    const late = this.late.peek()?.at;
    if (late === undefined) return first;
    return first === undefined || late < first ? late : first;
  }

  /** Removes the earliest entry if it is due at `now`, and returns its id. */
  popDue(now: number): string | undefined {
    const { times, ids } = this;
    const late = this.late.peek();
    const head = this.head;
    if (head < ids.length && (late === undefined || (times[head] as number) <= late.at)) {
      if ((times[head] as number) > now) return undefined;
      const id = ids[head] as string;
      this.head = head + 1;
      if (this.head === ids.length) this.reset([], []);
      else if (this.head >= COMPACT_AT && this.head * 2 >= ids.length) {
        this.reset(times.slice(this.head), ids.slice(this.head));
      }
      return id;
    }
    return late === undefined || late.at > now ? undefined : this.late.pop()?.id;
  }

  /**
   * Keeps the entries `keep` answers true for, in their order, each id once: the way to let go of the
   * entries whose owner was deleted or took another time. `keep` tells an owner's current time, so the
   * entries of an id it keeps are all the same entry (written again after a detour to another time).
   */
  filter(keep: (at: number, id: string) => boolean): void {
    const times: number[] = [];
    const ids: string[] = [];
    const seen = new Set<string>();
    const late = this.late;
    this.late = new TimeHeap();
    for (let index = this.head; index < this.ids.length; index++) {
      const at = this.times[index] as number;
      const id = this.ids[index] as string;
      if (seen.has(id) || !keep(at, id)) continue;
      seen.add(id);
      times.push(at);
      ids.push(id);
    }
    for (let entry = late.pop(); entry !== undefined; entry = late.pop()) {
      if (seen.has(entry.id) || !keep(entry.at, entry.id)) continue;
      seen.add(entry.id);
      this.late.push(entry);
    }
    this.reset(times, ids);
  }

  private reset(times: number[], ids: string[]): void {
    this.times = times;
    this.ids = ids;
    this.head = 0;
  }
}

/** Does `a` come strictly before `b`: an earlier time, else a lower order, else a lower id? */
function before(a: Timed, b: Timed): boolean {
  if (a.at !== b.at) return a.at < b.at;
  const order = (a.order ?? 0) - (b.order ?? 0);
  if (order !== 0) return order < 0;
  return a.id !== undefined && b.id !== undefined && a.id < b.id;
}

/** A binary min-heap under `before`, in an array: the parent of position i is at (i - 1) >> 1. */
class BinaryHeap<T> {
  readonly items: T[] = [];

  constructor(private readonly before: (a: T, b: T) => boolean) {}

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  push(item: T): void {
    const items = this.items;
    items.push(item);
    let child = items.length - 1;
    while (child > 0) {
      const parent = (child - 1) >> 1;
      if (!this.before(item, items[parent] as T)) break;
      items[child] = items[parent] as T;
      child = parent;
    }
    items[child] = item;
  }

  pop(): T | undefined {
    const items = this.items;
    const top = items[0];
    if (top === undefined) return undefined;
    const last = items.pop() as T;
    if (items.length === 0) return top;
    let parent = 0;
    for (;;) {
      const left = 2 * parent + 1;
      if (left >= items.length) break;
      const right = left + 1;
      const child = right < items.length && this.before(items[right] as T, items[left] as T) ? right : left;
      if (!this.before(items[child] as T, last)) break;
      items[parent] = items[child] as T;
      parent = child;
    }
    items[parent] = last;
    return top;
  }
}
