/** The engine's options for a run the command line starts (`sync`, `backfill`, `plan`, the daemon's runs). */
import { tuningFrom } from '../../schemas/engine-options.js';
import type { SyncMode, SyncOptions } from '../sync/index.js';
import type { Ctx } from './context.js';
import type { BudgetFlags, SelectionFlags } from './options.js';

/** Engine options from flags over the config file; the engine's own defaults for the rest. */
export function syncOptionsFrom(
  ctx: Ctx,
  flags: SelectionFlags & BudgetFlags & { deletes?: boolean },
  mode: SyncMode,
): SyncOptions {
  const v = ctx.config.values;
  const o: SyncOptions = { mode };
  if (flags.streams !== undefined) o.streams = flags.streams;
  if (flags.events) o.events = flags.events;
  if (flags.eventStatus) o.eventStatus = flags.eventStatus;
  if (flags.eventsFrom) o.eventsFrom = flags.eventsFrom;
  if (flags.eventsTo) o.eventsTo = flags.eventsTo;
  // --deletes forces sweeps now; without it the engine sweeps when due and only with spare credits.
  o.deletes = flags.deletes ? true : 'auto';
  // The config file's tuning options (one schema: schemas/engine-options.ts), then the flags that override them.
  Object.assign(o, tuningFrom(v));
  if (flags.concurrency !== undefined) o.concurrency = flags.concurrency;
  if (v.streams) o.overrides = v.streams;
  o.now = ctx.now;
  return o;
}
