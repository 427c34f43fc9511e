/**
 * Group commit for the journal: deliveries that arrive while a commit is in flight wait and go together in the next
 * one, so a burst costs a few transactions instead of one each, and no delivery waits for more than one commit
 * beyond its own.
 */
import type { JournaledDelivery, NewDelivery, Warehouse } from '../../warehouse/index.js';

interface Waiting {
  entry: NewDelivery;
  resolve: (journaled: JournaledDelivery) => void;
  reject: (err: unknown) => void;
}

export class JournalWriter {
  private queue: Waiting[] = [];
  private flushing = false;
  private closed = false;

  constructor(private readonly warehouse: Warehouse) {}

  /** Resolves once the delivery is committed; rejects when the journal cannot be written (the receiver says 503). */
  append(entry: NewDelivery): Promise<JournaledDelivery> {
    if (this.closed) return Promise.reject(new Error('the journal is closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ entry, resolve, reject });
      if (!this.flushing) void this.flush();
    });
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue;
        this.queue = [];
        try {
          const journaled = await this.warehouse.capture.append(batch.map((w) => w.entry));
          for (const [i, w] of batch.entries()) w.resolve(journaled[i]!);
        } catch (err) {
          for (const w of batch) w.reject(err);
        }
      }
    } finally {
      this.flushing = false;
    }
  }

  /** Refuses new deliveries; those already queued are still committed. */
  close(): void {
    this.closed = true;
  }
}
