/**
 * A local Parquet folder as an output (`export --out <dir>`, `sync|backfill --parquet-out <dir>`, the daemon), its
 * ownership judged by lake/folder-claim.ts: who writes (this warehouse by its real path, the account it is bound to,
 * else the one the credentials act for), refusals said with the flag (another owner: refused, exit 2; a live lease:
 * held, exit 1), and what a claim did worth saying (a folder from an earlier evsync adopted, a stale lease taken).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { AccountBinding, Warehouse } from '../warehouse/index.js';
import { outputError } from './errors.js';
import type { FolderClaim, FolderClaimOptions } from './lake/folder-claim.js';
import { realPathOf } from './real-path.js';
import { leaseTtlMs, type OutputLog, type OutputSettings } from './settings.js';
import { type OutputWriter, type ParquetSource, selectionOf, type WriteRequest, type Written } from './writer.js';

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

export type FolderFlag = '--parquet-out' | '--out';

/** Who asks for the folder; the credentials' account counts only for a warehouse no run has bound yet. */
interface FolderRequest {
  flag: FolderFlag;
  /** The folder (absolute). */
  out: string;
  command: string;
  client: AccountBinding | null;
}

async function claimOptions(
  settings: OutputSettings,
  warehouse: Warehouse,
  req: FolderRequest,
  command: string,
): Promise<FolderClaimOptions> {
  const bound = await warehouse.account.binding();
  const client = req.client && { baseUrl: req.client.baseUrl, clientId: req.client.clientId };
  return {
    out: req.out,
    writer: { warehouse: realPathOf(warehouse.path), account: bound ?? client, command },
    unknownOrigins: (origins) => warehouse.unknownOrigins(origins),
    leaseTtlMs: leaseTtlMs(settings),
  };
}

/** Before a run spends a credit: refused if the folder is another warehouse's, or another writer holds it now. */
export async function checkOutputFolder(
  settings: OutputSettings,
  warehouse: Warehouse,
  req: FolderRequest,
): Promise<void> {
  const { checkFolder } = await import('./lake/folder-claim.js');
  try {
    await checkFolder(await claimOptions(settings, warehouse, req, 'evsync'));
  } catch (err) {
    throw outputError(req.flag, err);
  }
}

/** Takes the folder for this warehouse (owner record, lease) and says what was worth saying. */
async function claimOutputFolder(
  settings: OutputSettings,
  warehouse: Warehouse,
  req: FolderRequest,
): Promise<FolderClaim> {
  const { claimFolder } = await import('./lake/folder-claim.js');
  let claim: FolderClaim;
  try {
    claim = await claimFolder(await claimOptions(settings, warehouse, req, req.command));
  } catch (err) {
    throw outputError(req.flag, err);
  }
  const { flag, out } = req;
  if (claim.adopted) {
    settings.log(
      'info',
      `${flag} ${out}: written by an earlier evsync, whose manifests match this warehouse; adopted (owner recorded in ${out}/_evsync/owner.json)`,
    );
  }
  const stale = claim.replaced;
  if (stale) {
    settings.log(
      'warn',
      `${flag} ${out}: took over the folder lease of ${stale.command} on ${stale.holder.host} (PID ${stale.holder.pid}), which ${
        Date.parse(stale.expiresAt) <= settings.now() ? `expired at ${stale.expiresAt}` : 'has exited'
      }`,
    );
  }
  return claim;
}

/** A local Parquet folder a writer holds (lake/folder-claim.ts FolderClaim). */
export interface HeldFolder {
  /** Resolves while the folder is still this writer's; rejects once another writer has taken it. */
  assertHeld(): Promise<void>;
  /** After an export wrote into it (the owner record, written once). */
  exported(): void;
}

/** Writes into the folder `out`, held by `folder` when given (`release` gives back nothing: the holder does). */
export function folderWriter(out: string, folder: HeldFolder | null): OutputWriter {
  return {
    missingTables: (tables) => tables.filter((t) => !existsSync(join(out, t))),
    async write(source: ParquetSource, request: WriteRequest): Promise<Written> {
      await folder?.assertHeld();
      const report = await source.exportParquet({
        out,
        ...selectionOf(request),
        includeDeleted: request.includeDeleted === true,
        force: request.force === true,
        runId: request.runId ?? null,
        // A table with no folder of evsync's yet is written whole, as in the lake: its readers never miss an event.
        newTablesWhole: true,
      });
      folder?.exported();
      return { kind: 'folder', report };
    },
    release: async () => {},
  };
}

/**
 * The folder taken for writing: its owner record checked and its lease taken now, renewed every `renewEveryMs` when
 * given (a daemon holds it for its life), given back by `release`.
 */
export async function holdOutputFolder(
  settings: OutputSettings,
  warehouse: Warehouse,
  req: FolderRequest,
  renewEveryMs?: number,
): Promise<OutputWriter> {
  const { flag, out } = req;
  const claim = await claimOutputFolder(settings, warehouse, req);
  const log: OutputLog = settings.log;
  const timer =
    renewEveryMs === undefined
      ? null
      : setInterval(() => {
          claim.renewIfDue().catch((err: unknown) => log('warn', `${flag} ${out}: ${errorText(err)}`));
        }, renewEveryMs);
  timer?.unref?.();
  return {
    ...folderWriter(out, claim),
    release: async () => {
      if (timer) clearInterval(timer);
      await claim.release().catch((err: unknown) => {
        log('warn', `${flag} ${out}: could not give back the folder lease: ${errorText(err)}`);
      });
    },
  };
}
