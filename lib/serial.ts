// One at a time per key: work on a key starts when the work before it on that key has settled. Used
// where concurrent requests would only fight each other (two bulk files over one collection), so they
// take turns instead of failing each other's conditional writes.

export class SerialQueues {
  private readonly tails = new Map<string, Promise<unknown>>();

  /** Runs `task` after every earlier task of `key`; forgets the key once its queue is empty. */
  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const next = previous.then(task, task);
    const tail = next.catch(() => undefined);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return next;
  }

  /** Keys with work queued or running. */
  get size(): number {
    return this.tails.size;
  }
}
