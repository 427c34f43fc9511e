/** Setup shared by scenarios that fill a warehouse file from an in-process simulator before they measure. */
import { type Simulator, type SimulatorOptions, type SimulatorSize, startSimulator } from '../src/simulator/index.js';
import { runSync } from '../src/sync/index.js';
import { Warehouse } from '../src/warehouse/index.js';
import { simulatorClient } from './sim-client.js';

/**
 * Runs `fn` with a simulator started with `options` and the warehouse at `db` open; closes the warehouse, then the
 * simulator, whatever happens.
 */
export async function withSimulatorAndWarehouse<T>(
  options: SimulatorOptions,
  db: string,
  fn: (sim: Simulator, warehouse: Warehouse) => Promise<T>,
): Promise<T> {
  const sim = await startSimulator(options);
  try {
    const warehouse = await Warehouse.open(db);
    try {
      return await fn(sim, warehouse);
    } finally {
      await warehouse.close();
    }
  } finally {
    await sim.close();
  }
}

/** The seed of the warehouse backfillAll builds: a scenario's simulator takes it to start from the same state. */
export const BACKFILL_SEED = 7;

/** Backfills every stream of a `size` simulator (seed BACKFILL_SEED, unthrottled) into `db`, analytics views built. */
export function backfillAll(db: string, size: SimulatorSize, log: (m: string) => void): Promise<void> {
  return backfillStreams(db, size, 'all', log);
}

/**
 * Backfills `streams` (comma-separated, or 'all') of a `size` simulator (seed BACKFILL_SEED, unthrottled) into `db`,
 * analytics views built: on `large`, `events,registrants,contacts` is what the readers' copies are measured on
 * (every stream would take far longer to build).
 */
export async function backfillStreams(
  db: string,
  size: SimulatorSize,
  streams: string,
  log: (m: string) => void,
): Promise<void> {
  const options = { size, seed: BACKFILL_SEED, port: 0, rateLimit: { credits: 1_000_000, windowSeconds: 1 } };
  await withSimulatorAndWarehouse(options, db, async (sim, w) => {
    const client = simulatorClient(sim, {
      rateLimit: { limit: 1_000_000, windowMs: 1000 },
    });
    try {
      const r = await runSync(client, w, { mode: 'backfill', streams, lagSeconds: 0 });
      log(`built ${size}: ${r.status}, ${Object.keys(r.streams).length} streams`);
      await w.buildAnalyticsViews();
    } finally {
      await client.close();
    }
  });
}
