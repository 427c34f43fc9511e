/**
 * `src/warehouse/layout/`: the warehouse's layout version (version.ts), a new file created at it (create.ts), and the
 * one linear chain of migrations from every layout a release has written (migrations.ts).
 */
import type { Db } from '../db/connection.js';

/** What a layout migration step may ask of the warehouse it migrates (migrations.ts). */
export interface MigrationContext {
  db: Db;
  /** Merges every staged page into its table (pages a killed process staged in the file's old layout land first). */
  mergeStaged: () => Promise<void>;
}
