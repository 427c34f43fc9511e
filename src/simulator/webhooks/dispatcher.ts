import type { SimClock } from '../core/time.js';
import type { OutgoingRequest, Sender } from './sender.js';
import type { WebhookDelivery } from './types.js';

/**
 * Sends deliveries in the background, never on the caller's turn of the event loop: `submit` only queues and
 * schedules a pump with setImmediate, so an API handler that causes fifty deliveries answers as fast as one that
 * causes none.
 *
 * - One lane per webhook, one try in flight per lane: without faults or retries a webhook receives its deliveries in
 *   the order the changes happened. At most `concurrency` tries are in flight across lanes.
 * - Retries: a try that times out, fails to connect or gets a non-2xx is tried again after `retryBaseMs`, then
 *   2x, 4x, ... that, up to `attempts` tries in all. A delivery waiting for its retry leaves its lane, so later
 *   deliveries to the same webhook go ahead of it (as a real retrying sender reorders).
 * - The queue is bounded: with `queueLimit` deliveries pending, a new one is recorded as `overflow` and not sent.
 * - Injected faults: a delayed delivery holds its lane for its delay before the first try; a reordered one is held
 *   out of its lane until the next delivery to that webhook is queued, then goes right behind it (or, when that
 *   webhook has nothing else to send, in its own turn, and is then not counted as reordered).
 */

export interface Job {
  entry: WebhookDelivery;
  request: OutgoingRequest;
  /** Injected delay still to wait before the first try. */
  delayMs: number;
}

interface Lane {
  queue: Job[];
  held: Job[];
  busy: boolean;
  ready: boolean;
}

export interface DispatcherOptions {
  retryBaseMs: number;
  attempts: number;
  concurrency: number;
  queueLimit: number;
}

export class Dispatcher {
  private readonly lanes = new Map<number, Lane>();
  private readonly ready: Lane[] = [];
  private readonly heldLanes = new Set<Lane>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly live = new Set<Job>();
  private waiters: (() => void)[] = [];
  private scheduled = false;
  private closed = false;
  inFlight = 0;
  attemptsMade = 0;

  constructor(
    private readonly options: DispatcherOptions,
    private readonly sender: Sender,
    private readonly clock: SimClock,
    /** Called once for a delivery whose every try failed. */
    private readonly onFailed: (entry: WebhookDelivery) => void,
  ) {}

  /** Changes whose deliveries are still being worked out (idle waits for them too). */
  private reserved = 0;

  /** Deliveries not yet final, plus changes not yet turned into deliveries. */
  get pending(): number {
    return this.live.size + this.reserved;
  }

  reserve(): void {
    this.reserved++;
  }

  unreserve(): void {
    if (this.reserved > 0) this.reserved--;
    if (this.pending === 0) this.wake();
  }

  private lane(webhookId: number): Lane {
    let lane = this.lanes.get(webhookId);
    if (!lane) {
      lane = { queue: [], held: [], busy: false, ready: false };
      this.lanes.set(webhookId, lane);
    }
    return lane;
  }

  /**
   * Queues the jobs of one delivery (the delivery and an injected duplicate, if any) on the webhook's lane. With
   * `hold`, they wait to be sent behind the next delivery to that webhook.
   */
  submit(webhookId: number, jobs: Job[], hold: boolean): void {
    const accepted: Job[] = [];
    for (const job of jobs) {
      if (this.closed) job.entry.status = 'cancelled';
      else if (this.live.size >= this.options.queueLimit) job.entry.status = 'overflow';
      else {
        this.live.add(job);
        accepted.push(job);
      }
    }
    if (accepted.length === 0) return;
    const lane = this.lane(webhookId);
    if (hold) {
      for (const job of accepted) job.entry.status = 'held';
      lane.held.push(...accepted);
      this.heldLanes.add(lane);
    } else {
      lane.queue.push(...accepted);
      if (lane.held.length > 0) {
        for (const job of lane.held) {
          job.entry.status = 'queued';
          job.entry.reordered = true;
        }
        lane.queue.push(...lane.held);
        lane.held = [];
        this.heldLanes.delete(lane);
      }
    }
    this.markReady(lane);
    this.schedule();
  }

  private markReady(lane: Lane): void {
    if (lane.busy || lane.ready || lane.queue.length === 0) return;
    lane.ready = true;
    this.ready.push(lane);
  }

  private schedule(): void {
    if (this.scheduled || this.closed) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.pump();
    });
  }

  private later(ms: number, fn: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (!this.closed) fn();
    }, ms);
    this.timers.add(timer);
  }

  private pump(): void {
    // Held deliveries of a webhook with nothing else to send go in their own turn.
    for (const lane of this.heldLanes) {
      if (lane.busy || lane.queue.length > 0) continue;
      for (const job of lane.held) job.entry.status = 'queued';
      lane.queue.push(...lane.held);
      lane.held = [];
      this.heldLanes.delete(lane);
      this.markReady(lane);
    }
    while (this.inFlight < this.options.concurrency && this.ready.length > 0) {
      const lane = this.ready.shift()!;
      lane.ready = false;
      const job = lane.queue.shift();
      if (!job) continue;
      lane.busy = true;
      if (job.delayMs > 0) {
        const wait = job.delayMs;
        job.delayMs = 0;
        this.later(wait, () => {
          lane.busy = false;
          lane.queue.unshift(job);
          this.markReady(lane);
          this.pump();
        });
        continue;
      }
      this.inFlight++;
      void this.attempt(lane, job);
    }
  }

  private async attempt(lane: Lane, job: Job): Promise<void> {
    const entry = job.entry;
    entry.status = 'sending';
    const n = entry.attempts.length + 1;
    const at = new Date(this.clock.nowMs()).toISOString();
    const sent = performance.now();
    const result = await this.sender.send(job.request);
    const ms = Math.round((performance.now() - sent) * 10) / 10;
    this.inFlight--;
    this.attemptsMade++;
    lane.busy = false;
    if (this.closed) return;
    entry.attempts.push({ n, at, ms, ...result });
    if (result.outcome === 'ok') {
      entry.status = 'delivered';
      this.finish(job);
    } else if (n < this.options.attempts) {
      entry.status = 'retrying';
      this.later(this.options.retryBaseMs * 2 ** (n - 1), () => {
        entry.status = 'queued';
        lane.queue.unshift(job);
        this.markReady(lane);
        this.pump();
      });
    } else {
      entry.status = 'failed';
      this.finish(job);
      this.onFailed(entry);
    }
    this.markReady(lane);
    this.pump();
  }

  private finish(job: Job): void {
    this.live.delete(job);
    if (this.pending === 0) this.wake();
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  /** True once nothing is pending; false if `timeoutMs` passes first. */
  idle(timeoutMs?: number): Promise<boolean> {
    if (this.pending === 0 || this.closed) return Promise.resolve(true);
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const done = () => {
        if (timer) clearTimeout(timer);
        resolve(true);
      };
      this.waiters.push(done);
      if (timeoutMs !== undefined) {
        timer = setTimeout(() => {
          this.waiters = this.waiters.filter((w) => w !== done);
          resolve(false);
        }, timeoutMs);
      }
    });
  }

  /** Stops: pending deliveries become `cancelled`, tries in flight are aborted, waiters are released. */
  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const job of this.live) job.entry.status = 'cancelled';
    this.live.clear();
    this.reserved = 0;
    this.wake();
    await this.sender.close();
  }
}
