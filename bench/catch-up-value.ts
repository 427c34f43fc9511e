/**
 * The daemon's catch-up at the service's real limit on `medium` (issue 33): 2,000 credits per 600 s of the
 * simulator's clock, the clock advanced instead of waiting (bench/catch-up-ticks.ts drives the daemon's own
 * ReconcileLoop and engine in-process). Two catch-ups: the first start after a backfill, and a restart after a
 * two-minute outage with changes (deletes included) to registrants of live and of past events. For each: credits,
 * windows and simulated minutes, and at which window's end the live and upcoming events' registrants were exact,
 * and the whole selection when it ended.
 *
 *   npx tsx bench/catch-up-value.ts          registrants and transactions (bench/results/catch-up-value.json)
 *   npx tsx bench/catch-up-value.ts --core   the daemon's default selection (bench/results/catch-up-value-core.json)
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { selectStreams } from '../connectors/index.js';
import type { ApiClient } from '../src/api/index.js';
import { type Simulator, startSimulator } from '../src/simulator/index.js';
import { eventRank, type PlanContext } from '../src/sync/plan.js';
import { Warehouse } from '../src/warehouse/index.js';
import { backfillByWindows, CatchUpTicks, catchUpLoop } from './catch-up-ticks.js';
import { compareStream } from './compare.js';
import { simulatorClient } from './sim-client.js';

const LIMIT = 2000;
const WINDOW_SECONDS = 600;
const CORE = process.argv.includes('--core');
/** The selection: two streams (one webhook-fed, one polled) by default, the daemon's default `core` with --core. */
const STREAMS = CORE ? 'core' : 'registrants,transactions';
const FED = 'registrants';

/** The stream names of the selection. */
function selected(): string[] {
  return selectStreams(STREAMS).map((s) => s.name);
}

interface Measured {
  creditsSlices: number;
  creditsTicks: number;
  windows: number;
  simulatedMinutes: number;
  liveExactAfterWindows: number | null;
  /** Simulated minutes from the start until the live events' registrants were exact (judged at window ends). */
  liveExactMinutes: number | null;
  /** What the first window had left for the catch-up (its first slice's spend): a restart inherits a window in use. */
  firstWindowCredits: number;
  allExactAtEnd: boolean;
}

async function behind(sim: Simulator, warehouse: Warehouse, events: ReadonlySet<number> | null): Promise<number> {
  const diff = await compareStream(sim, warehouse, FED);
  const { rows } = await warehouse.query('SELECT id, event_id FROM registrants');
  const of = new Map(rows.map((r) => [String(r.id), Number(r.event_id)]));
  for (const r of sim.truth(FED).records) of.set(String(r.id), Number(r.event_id));
  const keys = new Set([...diff.missing, ...diff.extra, ...diff.changed.map((c) => c.key)]);
  return [...keys].filter((k) => events === null || events.has(of.get(k)!)).length;
}

/** One catch-up, driven window by window; the live events' registrants judged at each window's end. */
async function catchUp(sim: Simulator, warehouse: Warehouse, client: ApiClient, heartbeat: Date | null) {
  const ctx = { now: sim.now(), pastEventDays: 30 } as PlanContext;
  const first = new Set((await warehouse.current.events()).filter((e) => eventRank(e, ctx) === 0).map((e) => e.id));
  const startedAt = sim.now().getTime();
  const loop = catchUpLoop(sim, warehouse, STREAMS);
  await loop.start(heartbeat);
  const ticks = new CatchUpTicks(sim, warehouse, client, loop, WINDOW_SECONDS);
  let liveExactAfterWindows: number | null = null;
  let liveExactMinutes: number | null = null;
  const minutes = () => Math.round((sim.now().getTime() - startedAt) / 6000) / 10;
  await ticks.untilCaughtUp(async () => {
    if (liveExactAfterWindows === null && (await behind(sim, warehouse, first)) === 0) {
      liveExactAfterWindows = ticks.waits.length;
      liveExactMinutes = minutes();
    }
  }, 200);
  const windows = ticks.waits.length + 1;
  liveExactAfterWindows ??= windows;
  liveExactMinutes ??= minutes();
  const { slices, ticks: tickCredits } = ticks.credits();
  const all = await Promise.all(selected().map((s) => compareStream(sim, warehouse, s)));
  return {
    creditsSlices: slices,
    creditsTicks: tickCredits,
    windows,
    simulatedMinutes: minutes(),
    liveExactAfterWindows,
    liveExactMinutes,
    firstWindowCredits: ticks.results[0]?.result.credits.list ?? 0,
    allExactAtEnd: all.every((d) => d.missing.length + d.extra.length + d.changed.length === 0),
  } satisfies Measured;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'evsync-bench-'));
  const sim = await startSimulator({
    size: 'medium',
    seed: 7,
    rateLimit: { credits: LIMIT, windowSeconds: WINDOW_SECONDS, clock: 'simulated' },
  });
  const warehouse = await Warehouse.open(join(dir, 'w.duckdb'));
  const now = () => sim.now().getTime();
  const client = (maxWaitMs?: number) =>
    simulatorClient(sim, {
      now,
      rateLimit: { limit: LIMIT, windowMs: WINDOW_SECONDS * 1000 },
      ...(maxWaitMs !== undefined ? { maxWaitMs } : {}),
    });
  try {
    const started = Date.now();
    const backfillWindows = await backfillByWindows(sim, warehouse, client(0), STREAMS, WINDOW_SECONDS);
    sim.advanceClock(WINDOW_SECONDS);
    const firstStart = await catchUp(sim, warehouse, client(), null);
    // The daemon dies; two minutes of silence with changes no delivery reaches; it restarts.
    sim.advanceClock(60);
    const heartbeat = sim.now();
    const changes = sim.mutate(120, { streams: [FED] });
    sim.advanceClock(120);
    const restart = await catchUp(sim, warehouse, client(), heartbeat);
    const result = {
      size: 'medium',
      streams: STREAMS,
      limit: `${LIMIT} credits per ${WINDOW_SECONDS} s (simulated clock)`,
      backfillWindows,
      firstStart,
      outage: { minutes: 2, changes },
      restart,
      wallSeconds: Math.round((Date.now() - started) / 1000),
    };
    writeFileSync(
      join(import.meta.dirname, 'results', CORE ? 'catch-up-value-core.json' : 'catch-up-value.json'),
      `${JSON.stringify(result, null, 2)}\n`,
    );
    console.log(JSON.stringify(result, null, 2));
  } finally {
    await warehouse.close();
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
