/**
 * The daemon's catch-up driven in-process, as the scheduler drives it (src/cli/scheduler.ts, src/daemon/cron-job.ts: a tick closes
 * the running slice's lane, then its runs follow), against a simulator whose rate-limit windows run on its own
 * clock: a window ends when the driver advances that clock, never by waiting. Shared by the catch-up tests
 * (test/capture/catch-up-lanes.test.ts, catch-up-value.test.ts) and the catch-up-value benchmark.
 */
import type { ApiClient, WaitEvent } from '../src/api/index.js';
import { CATCH_UP_KIND } from '../src/daemon/catch-up.js';
import { ReconcileLoop } from '../src/daemon/reconcile-loop.js';
import type { Simulator } from '../src/simulator/index.js';
import { runSync, type SyncOptions, type SyncResult } from '../src/sync/index.js';
import type { Warehouse } from '../src/warehouse/index.js';

/** The daemon's loop with webhooks on (`serve`), on the simulator's clock. */
export function catchUpLoop(sim: Simulator, warehouse: Warehouse, streams: string, log: string[] = []): ReconcileLoop {
  return new ReconcileLoop({
    warehouse,
    streams,
    webhooks: true,
    everyHours: 6,
    catchUp: true,
    retentionDays: 7,
    log: (level, message) => log.push(`${level} ${message}`),
    now: () => sim.now().getTime(),
  });
}

/**
 * A backfill window by window, as a user at the limit gets it: each run stops where the window ends (the client
 * never waits), the simulator's clock moves a window, the next run resumes. Returns the windows it took.
 */
export async function backfillByWindows(
  sim: Simulator,
  warehouse: Warehouse,
  client: ApiClient,
  streams: string,
  windowSeconds: number,
): Promise<number> {
  let windows = 1;
  while ((await runSync(client, warehouse, { mode: 'backfill', streams })).status !== 'done') {
    sim.advanceClock(windowSeconds);
    windows += 1;
  }
  return windows;
}

/** What happens while a slice waits for the window: told the wait, before the window ends. */
export type DuringWait = (wait: WaitEvent) => Promise<void>;

/**
 * The daemon's ticks, played: each tick's runs in order; a slice runs until it completes or waits for the window,
 * and then (after `duringWait`, what happens while it waits) the window ends and the tick closes its lane.
 */
export class CatchUpTicks {
  readonly waits: WaitEvent[] = [];
  readonly results: { planned: Partial<SyncOptions>; result: SyncResult }[] = [];

  constructor(
    private readonly sim: Simulator,
    private readonly warehouse: Warehouse,
    private readonly client: ApiClient,
    private readonly loop: ReconcileLoop,
    private readonly windowSeconds: number,
  ) {}

  async run(planned: Partial<SyncOptions>, duringWait?: DuringWait): Promise<SyncResult> {
    this.client.beginRun();
    const startedAt = new Date(this.client.now());
    const closing = new AbortController();
    const lane = planned.lane ? { ...planned.lane, closes: closing.signal } : undefined;
    const options: SyncOptions = { mode: 'incremental', ...planned, ...(lane ? { lane } : {}) };
    const waited = new Promise<WaitEvent>((resolve) => this.client.once('wait', resolve));
    const run = runSync(this.client, this.warehouse, options);
    if (lane) {
      const wait = await Promise.race([run.then(() => null), waited]);
      if (wait) {
        this.waits.push(wait);
        await duringWait?.(wait);
        this.sim.advanceClock(this.windowSeconds);
        closing.abort('the tick is due');
      }
    }
    const result = await run;
    await this.loop.after(result, startedAt, options);
    this.results.push({ planned: options, result });
    return result;
  }

  /** Ticks until the catch-up is done (`duringWait` at each wait of a slice for the window). */
  async untilCaughtUp(duringWait?: DuringWait, maxTicks = 20): Promise<void> {
    for (let tick = 0; this.loop.pending; tick++) {
      if (tick > maxTicks) throw new Error(`the catch-up did not end in ${maxTicks} ticks`);
      for (const planned of this.loop.tick()) await this.run(planned, duringWait);
    }
  }

  /** Credits of list calls (the pages) spent by the catch-up's slices, and by the ticks' own runs. */
  credits(): { slices: number; ticks: number } {
    const sum = (slice: boolean) =>
      this.results
        .filter((r) => (r.planned.runKind === CATCH_UP_KIND) === slice)
        .reduce((n, r) => n + r.result.credits.list, 0);
    return { slices: sum(true), ticks: sum(false) };
  }
}
