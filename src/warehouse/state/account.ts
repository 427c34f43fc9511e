/**
 * `src/warehouse/state/`: what the warehouse knows about its own syncs, each part owning its SQL: what the parts
 * share (bookkeeping.ts: the `_evsync` tables' declarations), the facade's parts (runs, cursors, marks, unavailable,
 * account, current rows), rejected records, delete marks, the status history and the partitions owed to readers.
 *
 * The account whose data the warehouse holds (`Warehouse.account`): base URL and client id, recorded by the first
 * run, so that a run against another account is refused instead of mixing two accounts' rows; and which of the runs
 * and events an export folder names this warehouse never held.
 *
 * _evsync.meta  also holds `account_base_url` and `account_client_id` (never a secret): the account whose data the
 *               warehouse holds
 */
import type { Db } from '../db/connection.js';
import { num, str, tableExists } from './bookkeeping.js';

export interface AccountBinding {
  baseUrl: string;
  clientId: string;
}

async function accountBinding(db: Db): Promise<AccountBinding | null> {
  if (!(await tableExists(db, '_evsync', 'meta'))) return null;
  const r = await db.query(
    `SELECT key, value FROM _evsync.meta WHERE key IN ('account_base_url', 'account_client_id')`,
  );
  const map = new Map(r.rows.map((row) => [String(row.key), str(row.value)]));
  const baseUrl = map.get('account_base_url');
  const clientId = map.get('account_client_id');
  return baseUrl && clientId ? { baseUrl, clientId } : null;
}

async function bindAccount(db: Db, binding: AccountBinding): Promise<void> {
  await db.run(`INSERT OR REPLACE INTO _evsync.meta VALUES ('account_base_url', ?), ('account_client_id', ?)`, [
    binding.baseUrl,
    binding.clientId,
  ]);
}

/** Run ids and event ids an export folder names (its manifests' runs and event partitions). */
export interface ExportOrigins {
  runIds: string[];
  eventIds: number[];
}

/**
 * Of `origins`, those this warehouse never held: a run it did not record, an event it never stored (deleted ones
 * count as held). An export folder naming any was written from another warehouse.
 */
export async function unknownOrigins(db: Db, origins: ExportOrigins): Promise<ExportOrigins> {
  const ids = origins.eventIds.filter((id) => Number.isSafeInteger(id));
  let runIds = origins.runIds;
  if (runIds.length > 0 && (await tableExists(db, '_evsync', 'runs'))) {
    const r = await db.query(`SELECT run_id FROM _evsync.runs WHERE run_id = ANY(CAST(? AS VARCHAR[]))`, [
      JSON.stringify(runIds),
    ]);
    const known = new Set(r.rows.map((row) => String(row.run_id)));
    runIds = runIds.filter((id) => !known.has(id));
  }
  let eventIds = ids;
  if (ids.length > 0 && (await tableExists(db, 'main', 'events'))) {
    const r = await db.query(`SELECT id FROM main.events WHERE id = ANY(CAST(? AS BIGINT[]))`, [JSON.stringify(ids)]);
    const known = new Set(r.rows.map((row) => num(row.id)));
    eventIds = ids.filter((id) => !known.has(id));
  }
  return { runIds, eventIds };
}

export class AccountRecord {
  /** The bound account as the archive names it (`<client id>@<base URL>`), once read or bound. */
  label: string | null = null;

  constructor(private readonly db: Db) {}

  /** The bound account, once a run recorded it. */
  async binding(): Promise<AccountBinding | null> {
    const found = await this.db.exclusive(() => accountBinding(this.db));
    if (found) this.label = labelOf(found);
    return found;
  }

  async bind(binding: AccountBinding): Promise<void> {
    await this.db.exclusive(() => bindAccount(this.db, binding));
    this.label = labelOf(binding);
  }
}

function labelOf(binding: AccountBinding): string {
  return `${binding.clientId}@${binding.baseUrl}`;
}
