/**
 * The CLI's side of a local Parquet folder's ownership (src/lake/folder-claim.ts), shared by `export --out <dir>`,
 * `sync|backfill --parquet-out <dir>` and the daemon: who writes (this warehouse by its real path, the account it
 * is bound to, else the one the credentials act for), refusals said with the flag (another owner: exit 2; a live
 * lease: exit 1), and what a claim did worth saying (a folder from an earlier evsync adopted, a stale lease taken).
 */
import type { ApiClient } from '../../api/index.js';
import type { FolderClaim, FolderClaimOptions } from '../../lake/folder-claim.js';
import { accountOf } from '../../sync/account.js';
import type { Warehouse } from '../../warehouse/index.js';
import type { Ctx } from '../context.js';
import { CliError, ExitCode, errorMessage, UsageError } from '../errors.js';
import { realPathOf } from '../output-paths.js';
import { leaseTtlMs } from './lake.js';

type FolderFlag = '--parquet-out' | '--out';

/** The client's account counts only for a warehouse no run has bound yet (the run binds it to that one). */
async function claimOptions(
  ctx: Ctx,
  warehouse: Warehouse,
  out: string,
  command: string,
  client: Pick<ApiClient, 'baseUrl' | 'clientId'> | null,
): Promise<FolderClaimOptions> {
  const bound = await warehouse.account.binding();
  return {
    out,
    writer: {
      warehouse: realPathOf(warehouse.path),
      account: bound ?? (client ? accountOf(client) : null),
      command,
    },
    unknownOrigins: (origins) => warehouse.unknownOrigins(origins),
    leaseTtlMs: leaseTtlMs(ctx),
  };
}

/** A refusal of the folder as the CLI reports it: another owner is the user's to fix (2), a live lease waits (1). */
function folderCliError(flag: FolderFlag, err: unknown): Error {
  if (err instanceof Error && err.name === 'LakeError') {
    const verdict = (err as Error & { verdict?: unknown }).verdict;
    if (verdict === 'refused') return new UsageError(`${flag}: ${err.message}`);
    return new CliError(`${flag}: ${err.message}`, ExitCode.Failure);
  }
  return err instanceof Error ? err : new Error(errorMessage(err));
}

/** Before a run spends a credit: refused if the folder is another warehouse's, or another writer holds it now. */
export async function checkOutputFolder(
  ctx: Ctx,
  warehouse: Warehouse,
  flag: FolderFlag,
  out: string,
  client: Pick<ApiClient, 'baseUrl' | 'clientId'> | null,
): Promise<void> {
  const { checkFolder } = await import('../../lake/folder-claim.js');
  try {
    await checkFolder(await claimOptions(ctx, warehouse, out, 'evsync', client));
  } catch (err) {
    throw folderCliError(flag, err);
  }
}

/** Takes the folder for this warehouse (owner record, lease) and says what was worth saying. */
export async function claimOutputFolder(
  ctx: Ctx,
  warehouse: Warehouse,
  flag: FolderFlag,
  out: string,
  command: string,
  client: Pick<ApiClient, 'baseUrl' | 'clientId'> | null,
): Promise<FolderClaim> {
  const { claimFolder } = await import('../../lake/folder-claim.js');
  let claim: FolderClaim;
  try {
    claim = await claimFolder(await claimOptions(ctx, warehouse, out, command, client));
  } catch (err) {
    throw folderCliError(flag, err);
  }
  if (claim.adopted) {
    ctx.log.info(
      `${flag} ${out}: written by an earlier evsync, whose manifests match this warehouse; adopted (owner recorded in ${out}/_evsync/owner.json)`,
    );
  }
  const stale = claim.replaced;
  if (stale) {
    ctx.log.warn(
      `${flag} ${out}: took over the folder lease of ${stale.command} on ${stale.holder.host} (PID ${stale.holder.pid}), which ${
        Date.parse(stale.expiresAt) <= ctx.now() ? `expired at ${stale.expiresAt}` : 'has exited'
      }`,
    );
  }
  return claim;
}

/** A one-shot export into the folder: claimed for the export's length, the lease given back whatever happens. */
export async function withOutputFolder<T>(
  ctx: Ctx,
  warehouse: Warehouse,
  target: { flag: FolderFlag; out: string; command: string; client: Pick<ApiClient, 'baseUrl' | 'clientId'> | null },
  write: () => Promise<T>,
): Promise<T> {
  const claim = await claimOutputFolder(ctx, warehouse, target.flag, target.out, target.command, target.client);
  try {
    const result = await write();
    claim.exported();
    return result;
  } finally {
    await claim.release().catch((err: unknown) => {
      ctx.log.warn(`${target.flag} ${target.out}: could not give back the folder lease: ${errorMessage(err)}`);
    });
  }
}
