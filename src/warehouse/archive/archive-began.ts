/**
 * What the stream tables held when the op log began (`_evsync.meta` key `archive_began`, JSON `{table: rows}`): rows
 * loaded by a release before the archive, which no rebuild can reproduce. A new warehouse records `{}`; one migrated
 * from layout 2 records its tables' row counts. Written once: a later call keeps the first record.
 */
import type { Db } from '../db/connection.js';
import { ident } from '../db/sql.js';
import { listStreamTables } from '../load/ddl.js';

const KEY = 'archive_began';

export async function recordArchiveBegan(db: Db): Promise<void> {
  const found = await db.query(`SELECT value FROM _evsync.meta WHERE key = ?`, [KEY]);
  if (found.rows.length > 0) return;
  const counts: Record<string, number> = {};
  for (const t of await listStreamTables(db)) {
    const r = await db.query(`SELECT count(*) AS n FROM main.${ident(t)}`);
    const n = Number(r.rows[0]?.n ?? 0);
    if (n > 0) counts[t] = n;
  }
  await db.run(`INSERT INTO _evsync.meta VALUES (?, ?)`, [KEY, JSON.stringify(counts)]);
}

/** Rows each table held before the op log began (tables that had none are absent). */
export async function archiveBegan(db: Db): Promise<Record<string, number>> {
  const r = await db.query(`SELECT value FROM _evsync.meta WHERE key = ?`, [KEY]);
  const text = r.rows[0]?.value;
  if (text === null || text === undefined) return {};
  const parsed: unknown = JSON.parse(String(text));
  const out: Record<string, number> = {};
  if (parsed && typeof parsed === 'object') {
    for (const [k, v] of Object.entries(parsed)) if (typeof v === 'number') out[k] = v;
  }
  return out;
}
