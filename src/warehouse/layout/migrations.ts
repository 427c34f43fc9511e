/**
 * The one linear chain of layout migrations: step N brings a warehouse of layout N to N + 1, and every step from the
 * file's layout up to LAYOUT_VERSION runs in order at open (Warehouse.open), each stamping the version it reached
 * once it is done. A step may be run again on a file a killed process left half-way (its layout still says N), so
 * each is written to find its work partly done. A step is never edited once released: a new layout is a new step.
 */
import type { MigrationContext } from './context.js';
import { migrate1To2 } from './migrate-1-to-2.js';
import { migrate2To3 } from './migrate-2-to-3.js';
import { migrate3To4 } from './migrate-3-to-4.js';
import { LAYOUT_VERSION, stampLayoutVersion } from './version.js';

interface Migration {
  /** The layout the step starts from; it ends at `from + 1`. */
  from: number;
  run: (ctx: MigrationContext) => Promise<void>;
}

const MIGRATIONS: readonly Migration[] = [
  { from: 1, run: migrate1To2 },
  { from: 2, run: migrate2To3 },
  { from: 3, run: migrate3To4 },
];

/** Runs the steps from `found` up to LAYOUT_VERSION; returns whether any ran (stream tables may have changed). */
export async function migrateLayout(ctx: MigrationContext, found: number): Promise<boolean> {
  let at = found;
  for (const step of MIGRATIONS) {
    if (step.from < at) continue;
    if (step.from !== at) throw new Error(`no layout migration from version ${at}`);
    await step.run(ctx);
    at = step.from + 1;
    await stampLayoutVersion(ctx.db, at);
  }
  if (at !== LAYOUT_VERSION) throw new Error(`layout migrations end at version ${at}, not ${LAYOUT_VERSION}`);
  return at !== found;
}
