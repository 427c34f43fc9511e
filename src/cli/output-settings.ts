/**
 * The outputs' settings (src/outputs/settings.ts) from a command's context: where relative paths start, the
 * warehouse, the lake's configuration and account, the environment, the clock and the log. Takes the context's shape
 * rather than its type, so that context.ts (the archive's lake, at open) and output-paths.ts both use it.
 */
import type { Now } from '../../schemas/clock.js';
import type { LakeConfig } from '../../schemas/config.js';
import type { OutputSettings } from '../outputs/settings.js';

interface SettingsContext {
  io: { cwd: string };
  config: {
    db: string;
    account: string | null;
    env: OutputSettings['env'];
    values: { lake?: LakeConfig | undefined };
  };
  now: Now;
  log: Record<'info' | 'warn' | 'debug', (message: string) => void>;
}

export function outputSettings(ctx: SettingsContext): OutputSettings {
  const lake = ctx.config.values.lake ?? {};
  return {
    cwd: ctx.io.cwd,
    db: ctx.config.db,
    lake,
    // The selected one of `accounts`, else `lake.account`, else `default`.
    account: ctx.config.account ?? lake.account ?? 'default',
    env: ctx.config.env,
    now: ctx.now,
    log: (level, message) => ctx.log[level](message),
  };
}
