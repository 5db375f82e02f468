// Records and tombstones that expire (idempotency records after 24 hours, tombstones after
// `tombstoneDays`) in a binary min-heap by expiry time, so the store drops what is due in
// O(log n) each instead of scanning every record. An expired entry already reads as absent; the
// queue only frees its memory.

export interface Expiry {
  readonly at: number;
  readonly collection: string;
  readonly id: string;
  readonly tombstone: boolean;
}

export class ExpiryQueue {
  private readonly heap: Expiry[] = [];

  get size(): number {
    return this.heap.length;
  }

  push(entry: Expiry): void {
    const heap = this.heap;
    heap.push(entry);
    let child = heap.length - 1;
    while (child > 0) {
      const parent = (child - 1) >> 1;
      if ((heap[parent] as Expiry).at <= entry.at) break;
      heap[child] = heap[parent] as Expiry;
      child = parent;
    }
    heap[child] = entry;
  }

  /** Removes and returns the earliest entry if it is due at `now`. */
  popDue(now: number): Expiry | undefined {
    const heap = this.heap;
    const top = heap[0];
    if (top === undefined || top.at > now) return undefined;
    const last = heap.pop() as Expiry;
    if (heap.length === 0) return top;
    let parent = 0;
    for (;;) {
      const left = 2 * parent + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const child = right < heap.length && (heap[right] as Expiry).at < (heap[left] as Expiry).at ? right : left;
      if ((heap[child] as Expiry).at >= last.at) break;
      heap[parent] = heap[child] as Expiry;
      parent = child;
    }
    heap[parent] = last;
    return top;
  }
}
