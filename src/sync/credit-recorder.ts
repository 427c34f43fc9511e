/**
 * Writes the credit window as the service reports it into the warehouse (`_evsync.credits`), as answers come, so
 * that `status`, the page and `/metrics` can say what the service last said to any run or daemon here, and the
 * page's chart sees every credit spent (a backfill waiting out three windows used to leave one row, at its end).
 *
 * Cheaply: at most one row every `everyMs` (5 s) while answers come, the latest reading always written within that
 * time (a run that spent a window and waits for the next leaves the window's lowest Remaining written before it
 * resets), and one at each run's end. Each row holds the credits spent since the previous one, so a window's rows
 * add up to what evsync spent in it.
 *
 * One per client: a one-shot run makes its own; a daemon makes one for its life and hands it to each run, which
 * records under its run id while it goes, the daemon's own spending between runs (webhook re-reads) under `daemon`.
 */
import type { Now } from '../../schemas/clock.js';
import type { CreditLedger, LimitReading } from '../api/index.js';
import type { Warehouse } from '../warehouse/index.js';

/** A reading as it came, and the ledger's running count of credits spent by then. */
interface Taken {
  reading: LimitReading;
  spent: number;
}

/** The label of what a daemon spends between runs (its webhook re-reads). */
export const DAEMON_CREDIT_LABEL = 'daemon';

/** How often a reading is written at most while answers come. */
export const CREDIT_RECORD_EVERY_MS = 5_000;

export interface CreditRecorderOptions {
  ledger: CreditLedger;
  warehouse: Warehouse;
  now: Now;
  /** What readings are recorded under between runs (a daemon's `daemon`); null: held until a run starts. */
  idleLabel?: string | null;
  everyMs?: number;
  /** A failed write (the database): the next reading tries again; the run goes on. */
  onError?: (err: unknown) => void;
}

export class CreditRecorder {
  private label: string | null;
  /** The newest reading not written yet, with the ledger's running count of credits spent when it came. */
  private pending: Taken | null = null;
  private lastWriteAt = Number.NEGATIVE_INFINITY;
  private timer: NodeJS.Timeout | null = null;
  /** Writes go one after the other, in the order they were asked. */
  private writing: Promise<void> = Promise.resolve();
  /** The ledger's running count of credits spent when the previous row was written, and that row's reading. */
  private spentAtLastRow: number;
  private lastWritten: LimitReading | null = null;
  private closed = false;
  private readonly everyMs: number;
  private readonly onReading = (reading: LimitReading): void => {
    // The first answer of a new window: the last one of the old window (its lowest Remaining) is written first.
    if (this.pending && this.label !== null && newWindow(this.pending.reading, reading, this.o.ledger.windowMs)) {
      this.writePending();
    }
    this.pending = { reading, spent: this.o.ledger.spentSinceCreated };
    this.schedule();
  };

  constructor(private readonly o: CreditRecorderOptions) {
    this.label = o.idleLabel ?? null;
    this.everyMs = o.everyMs ?? CREDIT_RECORD_EVERY_MS;
    // Counted from here: a client made for this recorder has spent nothing yet (its token call comes after).
    this.spentAtLastRow = o.ledger.spentSinceCreated;
    o.ledger.on('reading', this.onReading);
  }

  /** A run starts: readings are recorded under its id until it ends. */
  runStarted(runId: string): void {
    this.label = runId;
    if (this.pending) this.schedule();
  }

  /** A run ends: its last reading is written now (whatever the cadence), then readings go back to the idle label. */
  async runEnded(): Promise<void> {
    await this.flush();
    this.label = this.o.idleLabel ?? null;
  }

  /** Writes the newest reading now, unless it is written already and nothing was spent since; resolves once written. */
  flush(): Promise<void> {
    this.clearTimer();
    const reading = this.o.ledger.reading();
    const spent = this.o.ledger.spentSinceCreated;
    this.pending = null;
    if (reading === this.lastWritten && spent === this.spentAtLastRow) return this.writing;
    this.lastWriteAt = this.o.now();
    return this.write(reading && { reading, spent }, true);
  }

  /** Writes what is pending, then stops listening. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.o.ledger.off('reading', this.onReading);
    this.clearTimer();
    const taken = this.pending;
    this.pending = null;
    await this.write(taken, true);
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** The newest reading is written at once when the last write is `everyMs` old, else when it will be. */
  private schedule(): void {
    if (this.timer || this.closed || this.label === null) return;
    const wait = this.lastWriteAt + this.everyMs - this.o.now();
    if (wait <= 0) {
      this.writePending();
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = null;
      this.writePending();
    }, wait);
    // Never what keeps a process alive: the run's end (or close) writes what is left.
    this.timer.unref();
  }

  private writePending(): void {
    const taken = this.pending;
    this.pending = null;
    this.lastWriteAt = this.o.now();
    void this.write(taken, false);
  }

  private write(taken: Taken | null, counted: boolean): Promise<void> {
    const label = this.label;
    if (taken === null || label === null) return this.writing;
    const { reading } = taken;
    // Spent up to the reading, not up to the write: a reading written late must not take the next window's credits.
    const spent = taken.spent - this.spentAtLastRow;
    this.spentAtLastRow = taken.spent;
    this.lastWritten = reading;
    const ledger = this.o.ledger.snapshot();
    const row = {
      limit: reading.limit,
      remaining: reading.remaining,
      resetAt: reading.resetAt,
      seenAt: reading.seenAt,
      spent,
      detail: { spent: ledger.spent, windowMs: ledger.windowMs },
    };
    this.writing = this.writing
      .then(() => this.o.warehouse.runs.recordCredits(label, row, { counted }))
      .catch((err: unknown) => this.o.onError?.(err));
    return this.writing;
  }
}

/**
 * Whether two readings belong to different windows: their resets further apart than the jitter of a reset derived
 * from whole seconds (the rule `status` groups windows by: 30 s, or half a window when windows are shorter).
 */
function newWindow(a: LimitReading, b: LimitReading, windowMs: number): boolean {
  if (a.resetAt === null || b.resetAt === null) return false;
  return Math.abs(b.resetAt.getTime() - a.resetAt.getTime()) > Math.min(30_000, windowMs / 2);
}
