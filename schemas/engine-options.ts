/**
 * The sync engine's tuning options, declared once: the same keys in `evsync.config.json` (validated by this schema,
 * see config.ts), in `SyncOptions` (the type is inferred from it) and in the engine's defaults (below). The CLI
 * copies whichever the config file sets (`TUNING_KEYS`), flags over them where a flag exists.
 */
import { z } from 'zod';
import { nonNegativeNumber, positiveInt, timeZone } from './numbers.js';

export const engineTuningFields = {
  /** Work items in flight at once. */
  concurrency: positiveInt(),
  /** The signpost is the server's time minus this many seconds. */
  lagSeconds: nonNegativeNumber(),
  /** IANA zone the service writes record timestamps in (only `expires_at` is documented as UTC). */
  recordTimezone: timeZone,
  /** Snapshot streams (no cursor) are re-read when their last snapshot is older than this. 0 = every run. */
  snapshotEveryHours: nonNegativeNumber(),
  /**
   * Streams refreshed through their parent's changes (line items through registrants) are still read in full when
   * their last full snapshot is older than this. 0: always in full, since whether a child change always moves its
   * parent's updated_at is unverified. 24 saves most of their credits when it does.
   */
  fullSnapshotEveryHours: nonNegativeNumber(),
  /** Delete sweeps in 'auto' mode run when the last one is older than this. */
  sweepEveryHours: nonNegativeNumber(),
  /** Events that ended more than `pastEventDays` ago are polled at most every `pastEventPollHours`. */
  pastEventDays: nonNegativeNumber(),
  pastEventPollHours: nonNegativeNumber(),
  /** A stream recorded unavailable is tried again after this many hours (or at once when its path changes). */
  unavailableRetryHours: nonNegativeNumber(),
};

const engineTuningSchema = z.strictObject(engineTuningFields);
export type EngineTuning = z.output<typeof engineTuningSchema>;

/** The engine's defaults, checked against the schema when this module loads (a wrong default fails at once). */
export const ENGINE_DEFAULTS: EngineTuning = engineTuningSchema.parse({
  concurrency: 2,
  lagSeconds: 5,
  recordTimezone: 'UTC',
  snapshotEveryHours: 0,
  fullSnapshotEveryHours: 0,
  sweepEveryHours: 24,
  pastEventDays: 30,
  pastEventPollHours: 24,
  unavailableRetryHours: 24,
});

const TUNING_KEYS = Object.keys(engineTuningFields) as (keyof EngineTuning)[];

/** The tuning options `source` sets (undefined ones left out), e.g. from the config file. */
export function tuningFrom(source: Partial<EngineTuning>): Partial<EngineTuning> {
  const out: Partial<Record<keyof EngineTuning, unknown>> = {};
  for (const key of TUNING_KEYS) if (source[key] !== undefined) out[key] = source[key];
  return out as Partial<EngineTuning>;
}
