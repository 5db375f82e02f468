// A binary min-heap of entries by time: the store's index of what falls due (README, Durability:
// expired idempotency records and tombstones are freed as they fall due; CONTRACT §7-8: inbox events
// and outbox deliveries wait for their next attempt). Popping what is due costs O(log n) each,
// instead of a scan of every record. Entries are never updated in place: a record that changes is
// pushed again, and whoever pops checks that the entry still describes the record.

export interface Timed {
  readonly at: number;
  /** Breaks ties between equal times: lower first (first come, first served). */
  readonly order?: number;
}

export class TimeHeap<T extends Timed> {
  private readonly heap: T[] = [];

  get size(): number {
    return this.heap.length;
  }

  push(entry: T): void {
    const heap = this.heap;
    heap.push(entry);
    let child = heap.length - 1;
    while (child > 0) {
      const parent = (child - 1) >> 1;
      if (!before(entry, heap[parent] as T)) break;
      heap[child] = heap[parent] as T;
      child = parent;
    }
    heap[child] = entry;
  }

  /** The earliest entry, left in place. */
  peek(): T | undefined {
    return this.heap[0];
  }

  /** Removes and returns the earliest entry if it is due at `now`. */
  popDue(now: number): T | undefined {
    const top = this.heap[0];
    if (top === undefined || top.at > now) return undefined;
    return this.pop();
  }

  /**
   * Visits the entries due at `now`, earliest first, until `visit` returns false, leaving the heap as
   * it is: a walk down from the root that keeps the next candidates (the children of what it has
   * visited) in a small heap of their positions, so k entries cost O(k log k) whatever the size.
   */
  visitDue(now: number, visit: (entry: T) => boolean): void {
    const heap = this.heap;
    const root = heap[0];
    if (root === undefined || root.at > now) return;
    const frontier = new PositionHeap(heap);
    frontier.push(0);
    for (let position = frontier.pop(); position !== undefined; position = frontier.pop()) {
      if (!visit(heap[position] as T)) return;
      for (let child = 2 * position + 1; child <= 2 * position + 2; child++) {
        if (child < heap.length && (heap[child] as T).at <= now) frontier.push(child);
      }
    }
  }

  /** Removes and returns the earliest entry. */
  pop(): T | undefined {
    const heap = this.heap;
    const top = heap[0];
    if (top === undefined) return undefined;
    const last = heap.pop() as T;
    if (heap.length === 0) return top;
    let parent = 0;
    for (;;) {
      const left = 2 * parent + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const child = right < heap.length && before(heap[right] as T, heap[left] as T) ? right : left;
      if (!before(heap[child] as T, last)) break;
      heap[parent] = heap[child] as T;
      parent = child;
    }
    heap[parent] = last;
    return top;
  }
}

/** Positions in a TimeHeap's array, ordered by their entries: the frontier of an ordered walk. */
class PositionHeap {
  private readonly positions: number[] = [];

  constructor(private readonly entries: readonly Timed[]) {}

  push(position: number): void {
    const positions = this.positions;
    positions.push(position);
    let child = positions.length - 1;
    while (child > 0) {
      const parent = (child - 1) >> 1;
      if (!this.earlier(position, positions[parent] as number)) break;
      positions[child] = positions[parent] as number;
      child = parent;
    }
    positions[child] = position;
  }

  pop(): number | undefined {
    const positions = this.positions;
    const top = positions[0];
    if (top === undefined) return undefined;
    const last = positions.pop() as number;
    if (positions.length === 0) return top;
    let parent = 0;
    for (;;) {
      const left = 2 * parent + 1;
      if (left >= positions.length) break;
      const right = left + 1;
      const child = right < positions.length && this.earlier(positions[right] as number, positions[left] as number) ? right : left;
      if (!this.earlier(positions[child] as number, last)) break;
      positions[parent] = positions[child] as number;
      parent = child;
    }
    positions[parent] = last;
    return top;
  }

  private earlier(a: number, b: number): boolean {
    return before(this.entries[a] as Timed, this.entries[b] as Timed);
  }
}

/** Does `a` come strictly before `b`: an earlier time, or the same time and a lower order? */
function before(a: Timed, b: Timed): boolean {
  return a.at < b.at || (a.at === b.at && (a.order ?? 0) < (b.order ?? 0));
}
