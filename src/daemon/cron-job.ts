/**
 * The cron job a daemon's runs hang on: one run per tick, never two at once (cron's waitForCompletion), and a watch
 * on the tick times while a run goes, since cron skips a tick silently while the previous run is still going: the
 * watch logs the skip, or has a slice of bulk work (the catch-up) yield to the tick.
 */

/** Where the job says what it skipped or what failed. */
interface CronLog {
  warn(message: string): void;
  error(message: string): void;
}

/** A validated cron expression, with where it came from (for error messages) and its time zone. */
export interface CronSchedule {
  cronTime: string;
  where: string;
  timeZone: string | undefined;
}

/** The longest a Node timer waits (about 24.8 days); a tick further off is watched in steps. */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * cron skips a tick silently while the previous run is still going: watch the tick times ourselves to log them, or
 * to have a slice of bulk work yield to them (`yieldTo`: true when one did; the tick is then not skipped).
 */
class SkipWatcher {
  skipped = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly log: CronLog,
    private readonly signal: AbortSignal,
    private readonly isRunning: () => boolean,
    private readonly nextTickAt: () => number,
    private readonly yieldTo: (tickAt: number) => boolean,
  ) {}

  watch(nextAt: number): void {
    // The cron library times its ticks on the machine's clock: the watch that mirrors them reads the same one.
    const delay = Math.max(0, nextAt - Date.now()) + 20;
    this.timer = setTimeout(
      () => {
        if (Date.now() < nextAt) return this.watch(nextAt);
        // After a stop request the run is winding down: more "skipped" lines would only be noise.
        if (!this.isRunning() || this.signal.aborted) return;
        if (!this.yieldTo(nextAt)) {
          this.skipped += 1;
          this.log.warn(`tick at ${new Date(nextAt).toISOString()} skipped: the previous sync is still running`);
        }
        this.watch(this.nextTickAt());
      },
      // A longer delay would overflow and fire at once.
      Math.min(delay, MAX_TIMER_MS),
    );
    this.timer.unref();
  }

  clear(): void {
    if (this.timer) clearTimeout(this.timer);
  }
}

/**
 * The cron job: one run per tick, never two at once (waitForCompletion), the skip watcher armed while a run goes.
 * `runOnce` is called on each tick; `inFlight` is the run going now, for a stop to wait on.
 */
export async function createCronJob(
  schedule: CronSchedule,
  log: CronLog,
  signal: AbortSignal,
  runOnce: () => Promise<void>,
  onBusy: (running: boolean) => void,
  yieldTo: (tickAt: number) => boolean,
) {
  const { CronJob } = await import('cron');
  const state: { inFlight: Promise<void> | null } = { inFlight: null };
  const job = CronJob.from({
    cronTime: schedule.cronTime,
    ...(schedule.timeZone ? { timeZone: schedule.timeZone } : {}),
    waitForCompletion: true,
    start: false,
    onTick: async () => {
      const run = runOnce();
      state.inFlight = run;
      onBusy(true);
      skips.watch(job.nextDate().toMillis());
      try {
        await run;
      } finally {
        state.inFlight = null;
        onBusy(false);
        skips.clear();
      }
    },
    errorHandler: (err) => log.error(`scheduled run failed: ${err instanceof Error ? err.message : String(err)}`),
  });
  const skips = new SkipWatcher(
    log,
    signal,
    () => state.inFlight !== null,
    () => job.nextDate().toMillis(),
    yieldTo,
  );
  return { job, skips, inFlight: () => state.inFlight };
}
