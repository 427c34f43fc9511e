/**
 * An append-only log that keeps its newest `limit` entries. A simulator left running under `--mutate` records a
 * change every few milliseconds; the ground truth must not grow without end, so the oldest entries go first and
 * `evicted` says how many went.
 */
export class Journal<T> {
  private items: T[] = [];
  private start = 0;
  evicted = 0;

  constructor(
    private readonly limit: number,
    /** The entry's sequence number: increasing in push order. */
    private readonly key: (entry: T) => number,
  ) {}

  push(entry: T): void {
    this.items.push(entry);
    if (this.items.length - this.start > this.limit) {
      this.start++;
      this.evicted++;
      // Compact now and then instead of shifting on every push.
      if (this.start >= 1024 && this.start * 2 >= this.items.length) {
        this.items = this.items.slice(this.start);
        this.start = 0;
      }
    }
  }

  get size(): number {
    return this.items.length - this.start;
  }

  /** Entries whose key is greater than `since`, oldest first. */
  since(since = 0): T[] {
    let lo = this.start;
    let hi = this.items.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.key(this.items[mid]!) <= since) lo = mid + 1;
      else hi = mid;
    }
    return this.items.slice(lo);
  }
}
