// The ids of a collection in ascending code-unit order, for keyset paging (`scan` after an id).
//
// A single sorted array costs O(n) per insert (the splice moves every later id), which at a million
// ids and random insert positions dominates a write. So the ids live in chunks of at most
// MAX_CHUNK sorted ids each, the chunks themselves in order: an insert or delete finds its chunk by
// binary search over the chunks' last ids and splices only inside that chunk. The ids the store
// writes most (time-ordered: lib/ids.ts) are added after the last one and mostly removed from the
// front; both ends are taken without a search.

const MAX_CHUNK = 512;

/** Index of the first element >= key. */
export function lowerBound(keys: readonly string[], key: string): number {
  let low = 0;
  let high = keys.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if ((keys[mid] as string) < key) low = mid + 1;
    else high = mid;
  }
  return low;
}

/** Index of the first element > key. */
export function upperBound(keys: readonly string[], key: string): number {
  let low = 0;
  let high = keys.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if ((keys[mid] as string) <= key) low = mid + 1;
    else high = mid;
  }
  return low;
}

export class SortedKeys {
  private chunks: string[][] = [];
  private total = 0;

  get size(): number {
    return this.total;
  }

  /** Adds `key`; false when it was already there. */
  insert(key: string): boolean {
    if (this.chunks.length === 0) {
      this.chunks.push([key]);
      this.total = 1;
      return true;
    }
    // Time-ordered ids (events, deliveries: lib/ids.ts) come after every id there is: one comparison
    // instead of two binary searches, and the last chunk is filled before a new one starts.
    const tail = this.chunks[this.chunks.length - 1] as string[];
    if (key > (tail[tail.length - 1] as string)) {
      if (tail.length < MAX_CHUNK) tail.push(key);
      else this.chunks.push([key]);
      this.total++;
      return true;
    }
    // The first chunk whose last id is >= key.
    const index = this.chunkFor(key);
    const chunk = this.chunks[index] as string[];
    const at = lowerBound(chunk, key);
    if (chunk[at] === key) return false;
    chunk.splice(at, 0, key);
    this.total++;
    if (chunk.length > MAX_CHUNK) {
      const half = chunk.length >> 1;
      this.chunks.splice(index, 1, chunk.slice(0, half), chunk.slice(half));
    }
    return true;
  }

  /** Removes `key`; false when it was not there. */
  remove(key: string): boolean {
    // The earliest id first (an event's body dropped once it is processed): no search.
    const head = this.chunks[0];
    if (head !== undefined && head[0] === key) {
      head.shift();
      this.total--;
      if (head.length === 0) this.chunks.shift();
      return true;
    }
    const index = this.chunkFor(key);
    const chunk = this.chunks[index];
    if (chunk === undefined) return false;
    const at = lowerBound(chunk, key);
    if (chunk[at] !== key) return false;
    chunk.splice(at, 1);
    this.total--;
    if (chunk.length === 0) this.chunks.splice(index, 1);
    return true;
  }

  /** Ids strictly greater than `after` (all ids when undefined), ascending. */
  *after(after?: string): Generator<string> {
    let index = after === undefined ? 0 : this.chunkFor(after);
    let at = after === undefined ? 0 : upperBound(this.chunks[index] ?? [], after);
    for (; index < this.chunks.length; index++, at = 0) {
      const chunk = this.chunks[index] as string[];
      for (; at < chunk.length; at++) yield chunk[at] as string;
    }
  }

  /** Replaces the content with `sorted` (ascending, no duplicates): one pass, for bulk loads. */
  replaceAll(sorted: readonly string[]): void {
    this.chunks = [];
    const size = MAX_CHUNK >> 1;
    for (let start = 0; start < sorted.length; start += size) this.chunks.push(sorted.slice(start, start + size));
    this.total = sorted.length;
  }

  /** Index of the first chunk whose last id is >= key (chunks.length when none). */
  private chunkFor(key: string): number {
    let low = 0;
    let high = this.chunks.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      const chunk = this.chunks[mid] as string[];
      if ((chunk[chunk.length - 1] as string) < key) low = mid + 1;
      else high = mid;
    }
    return low;
  }
}
