/** Setup shared by scenarios that fill a warehouse file from an in-process simulator before they measure. */
import { type Simulator, type SimulatorOptions, startSimulator } from '../src/simulator/index.js';
import { Warehouse } from '../src/warehouse/index.js';

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
