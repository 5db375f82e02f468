// A binary min-heap of entries by time: the store's index of what falls due (CONVENTIONS.md#durability:
// expired idempotency records and tombstones are freed as they fall due; inbox events and outbox
// deliveries wait for their next attempt, CONVENTIONS.md#inbox-retries-and-dead-letters and
// CONVENTIONS.md#delivery-retries). Popping what is due costs O(log n) each,
// instead of a scan of every record. Entries are never updated in place: a record that changes is
// pushed again, and whoever pops checks that the entry still describes the record.

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
  private readonly heap = new BinaryHeap<T>(before);

  get size(): number {
    return this.heap.size;
  }

  push(entry: T): void {
    this.heap.push(entry);
  }

  /** The earliest entry, left in place. */
  peek(): T | undefined {
    return this.heap.peek();
  }

  /** Removes and returns the earliest entry if it is due at `now`. */
  popDue(now: number): T | undefined {
    const top = this.heap.peek();
    if (top === undefined || top.at > now) return undefined;
    return this.heap.pop();
  }

  /** Removes and returns the earliest entry. */
  pop(): T | undefined {
    return this.heap.pop();
  }

  /**
   * Visits the entries due at `now`, earliest first, until `visit` returns false, leaving the heap as
   * it is: a walk down from the root that keeps the next candidates (the children of what it has
   * visited) in a small heap of their positions, so k entries cost O(k log k) whatever the size.
   */
  visitDue(now: number, visit: (entry: T) => boolean): void {
    const entries = this.heap.items;
    const root = entries[0];
    if (root === undefined || root.at > now) return;
    const frontier = new BinaryHeap<number>((a, b) => before(entries[a] as T, entries[b] as T));
    frontier.push(0);
    for (let position = frontier.pop(); position !== undefined; position = frontier.pop()) {
      if (!visit(entries[position] as T)) return;
      for (let child = 2 * position + 1; child <= 2 * position + 2; child++) {
        if (child < entries.length && (entries[child] as T).at <= now) frontier.push(child);
      }
    }
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
