// An ascending array of ids (code-unit order) with binary-search insert and delete, so a collection
// can be scanned in key order for keyset paging without sorting on every read.

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

export function insertKey(keys: string[], key: string): void {
  const at = lowerBound(keys, key);
  if (keys[at] !== key) keys.splice(at, 0, key);
}

export function removeKey(keys: string[], key: string): void {
  const at = lowerBound(keys, key);
  if (keys[at] === key) keys.splice(at, 1);
}
