/**
 * `--snapshot-grace <minutes>`: how long the parts a newer snapshot replaced stay for readers still holding the older
 * one (src/warehouse/copies/snapshot-parts.ts). DuckDB reads a view's file list when the reader opens the snapshot, so
 * a connection held open longer than this (a BI tool's pool) must reconnect; a longer grace keeps more replaced
 * parts on disk.
 */
import type { Command } from 'commander';
import { SNAPSHOT_GRACE_MS } from '../warehouse/index.js';

export interface SnapshotGraceFlags {
  snapshotGrace?: number;
}

function minutes(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) throw new Error('expected a number of minutes >= 0');
  return n;
}

export function addSnapshotGraceOption(cmd: Command): void {
  cmd.option(
    '--snapshot-grace <minutes>',
    `how long parts a newer --snapshot replaced stay for readers still holding the older one (default ${
      SNAPSHOT_GRACE_MS / 60_000
    }); a reader holding the snapshot open longer reconnects`,
    minutes,
  );
}

/** The grace in milliseconds, when given. */
export function graceMsOf(flags: SnapshotGraceFlags): number | undefined {
  return flags.snapshotGrace === undefined ? undefined : flags.snapshotGrace * 60_000;
}
