/**
 * `evsync archive`: what the archive beside the warehouse holds (entries, bytes, since when); `evsync archive prune
 * --before <date>` removes what is older (src/warehouse/archive/archive.ts). Pruning is the user's choice: by default
 * everything is kept, and a stream whose first pages were pruned can no longer be rebuilt.
 */
import { existsSync } from 'node:fs';
import { type Command, InvalidArgumentError } from 'commander';
import { utcText } from '../../../connectors/service.js';
import { Archive } from '../../warehouse/index.js';
import { type App, action, type Ctx, withWarehouse } from '../context.js';
import { ExitCode } from '../errors.js';
import { toJson } from '../output/format.js';

const MIB = 1_048_576;

/** `YYYY-MM-DD` or an ISO time with a zone, as UTC `YYYY-MM-DD HH:MM:SS`. */
function parseBefore(value: string): string {
  const day = /^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value;
  const ms = /(?:Z|[+-]\d\d:?\d\d)$/i.test(day) ? Date.parse(day) : Number.NaN;
  if (Number.isNaN(ms))
    throw new InvalidArgumentError('expected a date (2026-05-01) or a time with its zone (2026-05-01T12:00:00Z)');
  return utcText(ms, 'seconds');
}

async function archiveStatus(ctx: Ctx): Promise<number> {
  const archive = Archive.open(ctx.config.db, { readOnly: true });
  try {
    const stats = existsSync(archive.dir) ? await archive.stats() : null;
    const pruned = archive.pruned();
    if (ctx.json) {
      ctx.out.write(`${toJson({ dir: archive.dir, ...(stats ?? { entries: 0, bytes: 0 }), pruned }, 2)}\n`);
    } else if (!stats || stats.entries === 0) {
      ctx.out.write(`the archive (${archive.dir}) holds nothing yet: the next sync keeps every page it loads\n`);
    } else {
      ctx.out.write(
        `${archive.dir}: ${stats.entries} entr${stats.entries === 1 ? 'y' : 'ies'}, ${(stats.bytes / MIB).toFixed(1)} MiB, ` +
          `from ${stats.since} to ${stats.latest} UTC${stats.spooled ? ` (${stats.spooled} not compressed yet)` : ''}` +
          `${pruned ? `; pruned before ${pruned.before}` : ''}\n`,
      );
    }
  } finally {
    await archive.close({ keepSpool: true });
  }
  return ExitCode.Done;
}

async function archivePrune(ctx: Ctx, flags: { before: string }): Promise<number> {
  // Under the warehouse's lock: no other process appends to the archive meanwhile.
  const result = await withWarehouse(ctx, { mustExist: true }, async (live) => {
    if (!live.archive) return { entries: 0, bytes: 0, kept: 0 };
    return live.archive.prune(flags.before);
  });
  if (ctx.json) ctx.out.write(`${toJson({ before: flags.before, ...result }, 2)}\n`);
  else {
    ctx.out.write(
      `pruned ${result.entries} entr${result.entries === 1 ? 'y' : 'ies'} older than ${flags.before} UTC ` +
        `(${(result.bytes / MIB).toFixed(1)} MiB); ${result.kept} kept\n`,
    );
  }
  return ExitCode.Done;
}

export function registerArchiveCommand(program: Command, app: App): void {
  const archive = program
    .command('archive')
    .description('what the archive of every page and delivery holds, and pruning it')
    .addHelpText(
      'after',
      `
Every page evsync loads and every webhook delivery it accepts is kept, scrubbed of secrets, in
<database>.archive/ (Parquet, zstd): evsync rebuild makes the tables again from it with no API call.

Examples:
  $ evsync archive
  $ evsync archive prune --before 2026-01-01`,
    )
    .action(action(app, (ctx) => archiveStatus(ctx)));
  archive
    .command('prune')
    .description('remove archived pages and deliveries older than a date')
    .requiredOption('--before <date>', 'UTC date (2026-05-01) or time with its zone', parseBefore)
    .addHelpText(
      'after',
      `
Whole segments whose every entry is older are removed. A stream whose first pages are removed can no longer be
rebuilt (evsync rebuild says so); nothing in the warehouse changes.

Examples:
  $ evsync archive prune --before 2026-01-01
  $ evsync archive prune --before 2026-06-30T00:00:00+02:00 --json`,
    )
    .action(action<{ before: string }>(app, archivePrune));
}
