/**
 * What an output needs from its surroundings, given once by whoever composes it (the CLI from its context and
 * config): where relative paths start, the warehouse file (the lake stages beside it), the config's `lake` block and
 * the account's id in the lake, the environment the object store reads credentials from, the clock and the log.
 */
import type { Now } from '../../schemas/clock.js';
import type { LakeConfig } from '../../schemas/config.js';
import type { S3Settings } from './lake/s3-store.js';

export type OutputLog = (level: 'info' | 'warn' | 'debug', message: string) => void;

export interface OutputSettings {
  /** Relative paths are read from here. */
  cwd: string;
  /** The warehouse file (absolute). */
  db: string;
  lake: LakeConfig;
  /** The account's id in the lake (`account=<id>`). */
  account: string;
  env: S3Settings['env'];
  now: Now;
  log: OutputLog;
}

const DEFAULT_LEASE_SECONDS = 900;

/** How long a lease (the lake's, a local folder's) keeps other writers out without renewal: `lake.leaseSeconds`. */
export function leaseTtlMs(settings: Pick<OutputSettings, 'lake'>): number {
  return (settings.lake.leaseSeconds ?? DEFAULT_LEASE_SECONDS) * 1000;
}
