/**
 * The daemon's heartbeat in the warehouse (`_evsync.meta`): written at start, every `everyMs` while it runs, and at
 * a clean stop. The next start reads it to say how long nothing listened (deliveries the service sent meanwhile
 * may be lost: its retry schedule is undocumented), and `status` shows it.
 */
import { systemNow } from '../../schemas/clock.js';
import { DAEMON_DEFAULTS } from '../../schemas/daemon-settings.js';
import type { Warehouse } from '../warehouse/index.js';

export const HEARTBEAT_MARK = 'daemon_heartbeat_at';
export const DEFAULT_HEARTBEAT_MS = DAEMON_DEFAULTS.heartbeatMs;

export class Heartbeat {
  private timer: NodeJS.Timeout | null = null;
  private writing: Promise<void> = Promise.resolve();

  private constructor(
    private readonly warehouse: Warehouse,
    /** The last beat of the previous daemon on this warehouse (null: none ever ran). */
    readonly previous: Date | null,
    private readonly now: () => number,
  ) {}

  static async start(
    warehouse: Warehouse,
    o: { everyMs?: number; now?: () => number; onError?: (err: unknown) => void } = {},
  ): Promise<Heartbeat> {
    const now = o.now ?? systemNow;
    const text = await warehouse.marks.get(HEARTBEAT_MARK);
    const previous = text ? new Date(text) : null;
    const beat = new Heartbeat(warehouse, previous && !Number.isNaN(previous.getTime()) ? previous : null, now);
    await beat.beat();
    beat.timer = setInterval(() => {
      beat.beat().catch((err: unknown) => o.onError?.(err));
    }, o.everyMs ?? DEFAULT_HEARTBEAT_MS);
    beat.timer.unref();
    return beat;
  }

  /** Milliseconds between the previous daemon's last beat and this start (null when none ever ran). */
  get silentMs(): number | null {
    return this.previous ? Math.max(0, this.now() - this.previous.getTime()) : null;
  }

  private beat(): Promise<void> {
    this.writing = this.writing
      .catch(() => undefined)
      // Quietly: a beat alone must not make the next query copy the whole warehouse again.
      .then(() => this.warehouse.marks.setQuietly(HEARTBEAT_MARK, new Date(this.now()).toISOString()));
    return this.writing;
  }

  /** The last beat, at a clean stop. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.beat().catch(() => undefined);
  }
}
