/**
 * A local Parquet folder (`--parquet-out <dir>`, `export --out <dir>`) belongs to one warehouse and one account, as
 * a lake prefix does. Two warehouses of two accounts given one folder replaced each other's partitions and
 * manifests (account 1's events replaced account 0's); now the second is refused before anything is written.
 *
 * - The owner record (`<out>/_evsync/owner.json`, src/warehouse/copies/export-owner.ts) is written once the first export
 *   into the folder has written (an export refused for a table folder leaves no trace), and names the warehouse (real path) and its account (base URL, client id; never a secret). Another warehouse, or the
 *   same path bound to another account, is refused (LakeError 'refused': exit 2), naming the owner.
 * - A folder an evsync from before the record wrote (table manifests, no record) is adopted by the warehouse its
 *   manifests match: every run they name is one of its runs, every event partition one of its events. A manifest
 *   naming anything the warehouse never held is another warehouse's export, and refused.
 * - Writing takes the folder's lease (`<out>/_evsync/lease.json`: host, PID, expiry), the lake's lease (lease.ts)
 *   through a store on the folder (folder-store.ts): a one-shot export holds it while it writes, a daemon for its
 *   whole life, renewed on its cadence and released when it stops. A live holder refuses other writers
 *   (LakeError 'held': exit 1); a stale one (expired, or its PID gone on this host) is taken over.
 *
 * Handing a folder over is removing its owner record: the next writer adopts the folder only if its files are that
 * writer's (the rule for folders from before the record), so a folder of another account never is.
 */

import { lstatSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';
import { systemNow } from '../../../schemas/clock.js';
import { ensureFolder } from '../../warehouse/copies/export-folder.js';
import { MARKER_DIR } from '../../warehouse/copies/export-manifest.js';
import {
  earlierExport,
  ensureMarkerDir,
  type FolderOwner,
  OWNER_FORMAT,
  ownerPath,
  readOwner,
  writeOwner,
} from '../../warehouse/copies/export-owner.js';
import type { AccountBinding, ExportOrigins } from '../../warehouse/index.js';
import { LakeError } from './errors.js';
import { FolderLeaseStore } from './folder-store.js';
import { Lease, type LeaseBody, type LeaseWording, leaseRefusal, liveLease } from './lease.js';

/** The folder's lease, beside its owner record. */
export const FOLDER_LEASE_KEY = `${MARKER_DIR}/lease.json`;

const WORDING: LeaseWording = { name: 'the folder lease', rule: 'two writers never write one Parquet folder' };

/** Who asks to write the folder. */
export interface FolderWriter {
  /** The warehouse's real path (every symbolic link resolved). */
  warehouse: string;
  /** The account it belongs to; null when no run has bound it yet. */
  account: AccountBinding | null;
  /** Recorded in the owner record and the lease, for whoever is refused: `evsync export`, `evsync serve`. */
  command: string;
}

export interface FolderClaimOptions {
  /** The folder (absolute). */
  out: string;
  writer: FolderWriter;
  /** Of the runs and events a folder from before the owner record names, those the warehouse never held. */
  unknownOrigins: (origins: ExportOrigins) => Promise<ExportOrigins>;
  /** How long the lease keeps other writers out without renewal. */
  leaseTtlMs: number;
  now?: () => number;
}

/** The base URL as recorded: without user, password, query or fragment, where a credential could hide. */
function publicAccount(account: AccountBinding | null): AccountBinding | null {
  if (account === null) return null;
  try {
    const url = new URL(account.baseUrl);
    url.username = '';
    url.password = '';
    url.search = '';
    url.hash = '';
    return { baseUrl: url.toString().replace(/\/$/, ''), clientId: account.clientId };
  } catch {
    return { baseUrl: account.baseUrl.replace(/[?#].*$/, ''), clientId: account.clientId };
  }
}

function describeAccount(account: AccountBinding | null): string {
  return account === null ? 'no account bound yet' : `client id ${account.clientId} at ${account.baseUrl}`;
}

const sameAccount = (a: AccountBinding, b: AccountBinding) => a.baseUrl === b.baseUrl && a.clientId === b.clientId;

/** What a claim does to the owner record: nothing, write it (new or adopted), or add the account it lacked. */
type Verdict =
  | { record: 'keep'; owner: FolderOwner }
  | { record: 'write'; adopted: boolean }
  | { record: 'add-account'; owner: FolderOwner };

function handOver(out: string): string {
  return (
    `Choose another folder for this warehouse; to hand this one over, remove ${ownerPath(out)}: the next export ` +
    `adopts the folder only if its files are this warehouse's, else move the folder away first`
  );
}

function ownerRefusal(out: string, owner: FolderOwner, writer: FolderWriter, account: AccountBinding | null) {
  return new LakeError(
    `${out} belongs to the warehouse ${owner.warehouse} (${describeAccount(owner.account)}), recorded in ` +
      `${ownerPath(out)} by ${owner.claimedBy} at ${owner.claimedAt}; this is ${writer.warehouse} ` +
      `(${describeAccount(account)}). One Parquet folder holds one warehouse's export, of one account. ${handOver(out)}`,
    'refused',
  );
}

function list(values: readonly (string | number)[]): string {
  const shown = values.slice(0, 3).join(', ');
  return values.length > 3 ? `${shown} and ${values.length - 3} more` : shown;
}

/** The folder's `_evsync` is evsync's own folder, or absent: never a link or a file evsync would write through. */
function checkMarker(out: string): void {
  const st = lstatSync(join(out, MARKER_DIR), { throwIfNoEntry: false });
  if (st && !st.isDirectory()) {
    throw new LakeError(
      `${join(out, MARKER_DIR)} is not a folder (a symbolic link?); evsync keeps its owner record and lease there and will not write through it: move it away`,
      'refused',
    );
  }
}

/** lstat that answers undefined where nothing can be (a path under a file: export says why, ENOTDIR). */
function entryAt(path: string): ReturnType<typeof lstatSync> | undefined {
  try {
    return lstatSync(path, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

/** Whether `writer` may write `out`, and what that does to the owner record; writes nothing. */
async function judge(opts: FolderClaimOptions): Promise<Verdict> {
  const { out, writer } = opts;
  const account = publicAccount(writer.account);
  const st = entryAt(out);
  // Missing, or not a folder: export creates it, or says why it cannot (a file there, a path under a file).
  if (!st?.isDirectory()) return { record: 'write', adopted: false };
  checkMarker(out);
  const read = readOwner(out);
  if (read.state === 'bad') {
    throw new LakeError(
      `${ownerPath(out)} is not an evsync owner record (${read.problem}); evsync will not write into ${out}: move it away or choose another folder`,
      'refused',
    );
  }
  if (read.state === 'owned') {
    const owner = read.owner;
    if (owner.warehouse !== writer.warehouse) throw ownerRefusal(out, owner, writer, account);
    if (owner.account === null) return account === null ? { record: 'keep', owner } : { record: 'add-account', owner };
    if (account === null || !sameAccount(owner.account, account)) throw ownerRefusal(out, owner, writer, account);
    return { record: 'keep', owner };
  }
  const earlier = earlierExport(out);
  if (earlier === null) return { record: 'write', adopted: false };
  const unknown = await opts.unknownOrigins(earlier);
  if (unknown.runIds.length > 0 || unknown.eventIds.length > 0) {
    const what = [
      unknown.runIds.length > 0 ? `run(s) ${list(unknown.runIds)}` : null,
      unknown.eventIds.length > 0 ? `event(s) ${list(unknown.eventIds)}` : null,
    ].filter((x): x is string => x !== null);
    throw new LakeError(
      `${out} holds an export of another warehouse: its manifests (${list(earlier.tables)}; no owner record, as an ` +
        `evsync before owner records left them) name ${what.join(' and ')} that ${writer.warehouse} never held. One ` +
        `Parquet folder holds one warehouse's export, of one account: choose another folder, or move that one away`,
      'refused',
    );
  }
  return { record: 'write', adopted: true };
}

/** Refuses before a run spends a credit: another owner (exit 2) or a live lease (exit 1). Writes nothing. */
export async function checkFolder(opts: FolderClaimOptions): Promise<void> {
  await judge(opts);
  if (!entryAt(join(opts.out, MARKER_DIR))?.isDirectory()) return;
  const store = new FolderLeaseStore(opts.out);
  const held = await liveLease(store, FOLDER_LEASE_KEY, (opts.now ?? systemNow)());
  if (held) throw leaseRefusal(store, FOLDER_LEASE_KEY, held, WORDING);
}

/** `<out>/_evsync` made by a claim that recorded nothing: a refused or failed export leaves no trace of it. */
function removeMarkerIfEmpty(out: string): void {
  try {
    rmdirSync(join(out, MARKER_DIR));
  } catch {
    // Not empty (another writer's lease or record meanwhile): it stays.
  }
}

/** A folder taken for writing: its lease held until `release`, its owner record written once an export wrote. */
export class FolderClaim {
  private recorded: boolean;
  /** The folder was written by an evsync from before owner records, and is adopted by this claim. */
  readonly adopted: boolean;

  constructor(
    private readonly lease: Lease,
    readonly out: string,
    private readonly owner: FolderOwner,
    /** What the owner record needs: nothing, or written (new, adopted, or with the account it lacked). */
    record: Verdict['record'],
    /** `<out>/_evsync` was made by this claim: removed again if nothing was recorded in it. */
    private readonly madeMarker: boolean,
  ) {
    this.recorded = record === 'keep';
    this.adopted = record === 'write' && owner.adopted;
  }

  /** The stale lease this claim took over (its holder died or let it expire), for a warning. */
  get replaced(): LeaseBody | null {
    return this.lease.replaced;
  }

  /** Pushes the lease's expiry forward once a third of it has passed (call it on a cadence). */
  renewIfDue(): Promise<void> {
    return this.lease.renewIfDue();
  }

  /** Before writing: the lease must still be this claim's (LakeError 'held' when another writer took it). */
  assertHeld(): Promise<void> {
    return this.lease.assertHeld();
  }

  /** After an export wrote into the folder: the owner record, written once. */
  exported(): void {
    if (this.recorded) return;
    writeOwner(this.out, this.owner);
    this.recorded = true;
  }

  /** Gives the lease back (never another writer's); the owner record stays. */
  async release(): Promise<void> {
    await this.lease.release();
    if (this.madeMarker && !this.recorded) removeMarkerIfEmpty(this.out);
  }
}

/**
 * Takes `out` for `writer`: judged (nothing written if refused), the folder and its `_evsync` created, the lease
 * taken, then judged again under the lease (another writer may have claimed it meanwhile). The owner record is
 * written by `exported()`, once an export has written.
 */
export async function claimFolder(opts: FolderClaimOptions): Promise<FolderClaim> {
  await judge(opts);
  const { out, writer } = opts;
  ensureFolder(out);
  checkMarker(out);
  const madeMarker = !entryAt(join(out, MARKER_DIR));
  ensureMarkerDir(out);
  const account = publicAccount(writer.account);
  let lease: Lease;
  try {
    lease = await Lease.acquire(new FolderLeaseStore(out), FOLDER_LEASE_KEY, {
      account: account?.clientId ?? 'unbound',
      ttlMs: opts.leaseTtlMs,
      command: writer.command,
      wording: WORDING,
      ...(opts.now ? { now: opts.now } : {}),
    });
  } catch (err) {
    if (madeMarker) removeMarkerIfEmpty(out);
    throw err;
  }
  try {
    const verdict = await judge(opts);
    const now = new Date((opts.now ?? systemNow)()).toISOString();
    const kept = verdict.record === 'write' ? null : verdict.owner;
    const owner: FolderOwner = {
      format: OWNER_FORMAT,
      version: 1,
      warehouse: writer.warehouse,
      account,
      claimedAt: kept?.claimedAt ?? now,
      claimedBy: kept?.claimedBy ?? writer.command,
      adopted: kept?.adopted ?? (verdict.record === 'write' && verdict.adopted),
    };
    return new FolderClaim(lease, out, owner, verdict.record, madeMarker);
  } catch (err) {
    await lease.release().catch(() => undefined);
    if (madeMarker) removeMarkerIfEmpty(out);
    throw err;
  }
}
