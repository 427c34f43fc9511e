/**
 * The output a command writes, chosen once from what names it (`export --out`, `--parquet-out`): a local Parquet
 * folder, or the lake on `s3://bucket/prefix`. Anything else is refused here, once, for every command.
 */
import { resolve } from 'node:path';
import type { AccountBinding, Warehouse } from '../warehouse/index.js';
import { OutputError } from './errors.js';
import {
  checkOutputFolder,
  type FolderFlag,
  folderWriter,
  type HeldFolder,
  holdOutputFolder,
} from './folder-output.js';
import { type LakeAccess, lakeError, lakeWriter, openLake, refuseIfLeaseHeld } from './lake-output.js';
import type { OutputLog, OutputSettings } from './settings.js';
import { parseTarget } from './target.js';
import type { OutputWriter, WriteRequest, Written } from './writer.js';

export type OutputFlag = FolderFlag;

/** Who writes: the command recorded in the lease and owner record, and the credentials' account (null: none). */
interface OutputWho {
  command: string;
  client: AccountBinding | null;
}

export interface Output {
  readonly kind: 'folder' | 'lake';
  readonly flag: OutputFlag;
  /** The folder (absolute), or the `s3://` URL. */
  readonly where: string;
  /** Before a run spends a credit: refused if the output is another's, or another writer holds it now. */
  check(warehouse: Warehouse, who: OutputWho): Promise<void>;
  /** Takes the output for writing, until `release` (a folder's lease renewed every `renewEveryMs` when given). */
  hold(warehouse: Warehouse, who: OutputWho, renewEveryMs?: number): Promise<OutputWriter>;
  /** One write, the output held for its length and given back whatever happens. */
  write(warehouse: Warehouse, who: OutputWho, request: WriteRequest): Promise<Written>;
}

async function writeOnce(output: Output, warehouse: Warehouse, who: OutputWho, request: WriteRequest) {
  const writer = await output.hold(warehouse, who);
  try {
    return await writer.write(warehouse, request);
  } finally {
    await writer.release();
  }
}

/** The output `text` names (a relative folder read from `settings.cwd`); refused (exit 2) when it names none. */
export function chooseOutput(flag: OutputFlag, text: string, settings: OutputSettings): Output {
  const parsed = parseTarget(text);
  if (!parsed.ok) throw new OutputError(`${flag}: ${parsed.problem}`, 'refused');
  const target = parsed.target;
  if (target.kind === 'local') {
    const out = resolve(settings.cwd, target.path);
    const folder = (who: OutputWho) => ({ flag, out, ...who });
    const output: Output = {
      kind: 'folder',
      flag,
      where: out,
      check: (warehouse, who) => checkOutputFolder(settings, warehouse, folder(who)),
      hold: (warehouse, who, renewEveryMs) => holdOutputFolder(settings, warehouse, folder(who), renewEveryMs),
      write: (warehouse, who, request) => writeOnce(output, warehouse, who, request),
    };
    return output;
  }
  const output: Output = {
    kind: 'lake',
    flag,
    where: target.url,
    check: () => refuseIfLeaseHeld(settings, target),
    hold: async (_warehouse, who) => lakeWriter(target.prefix, await openLake(settings, target, who.command), settings),
    async write(warehouse, who, request) {
      try {
        return await writeOnce(output, warehouse, who, request);
      } catch (err) {
        throw lakeError(err);
      }
    },
  };
  return output;
}

/**
 * The writer a library caller names by `parquetOut` (the daemon's publisher given no writer): a folder, held by
 * `folder` when given, or the lake reached through `lake`. Whoever opened them gives them back.
 */
export function writerFor(
  parquetOut: string,
  reach: { lake?: LakeAccess | undefined; folder?: HeldFolder | undefined },
  context: { now: OutputSettings['now']; log: OutputLog },
): OutputWriter {
  const parsed = parseTarget(parquetOut);
  if (!parsed.ok) throw new Error(`parquetOut: ${parsed.problem}`);
  if (parsed.target.kind === 'local') return folderWriter(parsed.target.path, reach.folder ?? null);
  if (!reach.lake) throw new Error(`parquetOut ${parquetOut}: an s3:// target needs the lake options`);
  return lakeWriter(parsed.target.prefix, reach.lake, context);
}
