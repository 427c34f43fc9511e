import type { Db } from '../connection.js';

/** What a layout migration step may ask of the warehouse it migrates (migrations.ts). */
export interface MigrationContext {
  db: Db;
  /** Merges every staged page into its table (pages a killed process staged in the file's old layout land first). */
  mergeStaged: () => Promise<void>;
}
