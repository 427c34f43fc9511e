/**
 * What the stream tables hold now (`Warehouse.current`): the questions the engine asks of them to plan and scope
 * its walks. Each is answered after what is staged is merged, so the rows a run just loaded are counted. Every method
 * runs in the warehouse's one queue.
 */
import type { Db, ResultRow } from '../db/connection.js';
import { ident } from '../db/sql.js';
import { readTableColumns } from '../load/ddl.js';
import type { StagedFilter } from '../load/staged.js';
import type { ScopeRef } from '../types.js';
import { num, str, tableExists } from './bookkeeping.js';

export interface EventRow {
  id: number;
  status: string | null;
  /** As stored, `YYYY-MM-DD` (or with a time). */
  startDate: string | null;
  endDate: string | null;
  createdAt: string | null;
}

/** Every current event the warehouse holds (the engine filters them by the user's flags), by id. */
async function currentEvents(db: Db): Promise<EventRow[]> {
  if (!(await tableExists(db, 'main', 'events'))) return [];
  const r = await db.query(
    `SELECT id, CAST(status AS VARCHAR) AS status, CAST(start_date AS VARCHAR) AS start_date,
            CAST(end_date AS VARCHAR) AS end_date, CAST(created_at AS VARCHAR) AS created_at
       FROM main.events WHERE _deleted_at IS NULL ORDER BY id`,
  );
  return r.rows.flatMap((row) => {
    const id = num(row.id);
    if (id === null) return [];
    return [
      {
        id,
        status: str(row.status),
        startDate: str(row.start_date),
        endDate: str(row.end_date),
        createdAt: str(row.created_at)?.slice(0, 19) ?? null,
      },
    ];
  });
}

/** What an event's own record says of its size: the documented `target_attendance` and `capacity` (null: not given). */
export interface EventSize {
  id: number;
  targetAttendance: number | null;
  capacity: number | null;
}

/** The size figures of every current event, by id (a column the table lacks reads as null). */
async function eventSizes(db: Db): Promise<EventSize[]> {
  const columns = await readTableColumns(db, 'events');
  if (!columns) return [];
  const pick = (c: string) => (columns.has(c) ? `TRY_CAST(${ident(c)} AS DOUBLE)` : 'NULL');
  const r = await db.query(
    `SELECT id, ${pick('target_attendance')} AS target_attendance, ${pick('capacity')} AS capacity
       FROM main.events WHERE _deleted_at IS NULL ORDER BY id`,
  );
  return r.rows.flatMap((row) => {
    const id = num(row.id);
    return id === null ? [] : [{ id, targetAttendance: num(row.target_attendance), capacity: num(row.capacity) }];
  });
}

/** Ids of the current rows of a table (the parents of a parent-scoped stream), ascending. */
async function liveIds(db: Db, table: string): Promise<number[]> {
  if (!(await tableExists(db, 'main', table))) return [];
  const r = await db.query(`SELECT id FROM main.${ident(table)} WHERE _deleted_at IS NULL ORDER BY id`);
  return r.rows.map((row) => num(row.id)).filter((n): n is number => n !== null);
}

/** Whether the scope (the whole table for an account-wide scope) holds a row not marked deleted. */
async function scopeHoldsRows(db: Db, table: string, scope: ScopeRef): Promise<boolean> {
  if (!(await tableExists(db, 'main', table))) return false;
  const where = scope.column === null ? '' : `AND ${ident(scope.column)} = CAST(? AS BIGINT)`;
  const params = scope.column === null ? [] : [scope.value];
  const r = await db.query(
    `SELECT 1 AS x FROM main.${ident(table)} WHERE _deleted_at IS NULL ${where} LIMIT 1`,
    params,
  );
  return r.rows.length > 0;
}

/** What a delete check compares with the service's count: the scope's live rows, and which of `ids` are live. */
interface LiveCount {
  /** Rows of the scope not marked deleted. */
  live: number;
  /** The ids among those given that are live rows of the scope. */
  liveAmong: Set<number>;
}

async function liveCount(db: Db, table: string, scope: ScopeRef, ids: readonly number[]): Promise<LiveCount> {
  if (!(await tableExists(db, 'main', table))) return { live: 0, liveAmong: new Set() };
  const where = scope.column === null ? '' : `AND ${ident(scope.column)} = CAST(? AS BIGINT)`;
  const params = scope.column === null ? [] : [scope.value];
  const base = `FROM main.${ident(table)} WHERE _deleted_at IS NULL ${where}`;
  const count = await db.query(`SELECT count(*) AS n ${base}`, params);
  const among =
    ids.length === 0
      ? { rows: [] }
      : await db.query(`SELECT id ${base} AND id IN (SELECT unnest(CAST(? AS BIGINT[])))`, [
          ...params,
          JSON.stringify(ids),
        ]);
  return {
    live: num(count.rows[0]?.n) ?? 0,
    liveAmong: new Set(among.rows.map((row) => num(row.id)).filter((n): n is number => n !== null)),
  };
}

/** The current rows of a definitions table (custom fields), as stored. */
async function currentRows(db: Db, table: string): Promise<ResultRow[]> {
  if (!(await tableExists(db, 'main', table))) return [];
  const r = await db.query(`SELECT * FROM main.${ident(table)} WHERE _deleted_at IS NULL ORDER BY id`);
  return r.rows;
}

/**
 * Ids of the rows of `table` in one scope whose `column` (`updated_at`) is at or after `from`, ascending: the
 * parents whose children a refresh re-reads. Compared as text, the form the engine's watermarks take.
 */
async function changedIds(
  db: Db,
  input: { table: string; column: string; from: string; scope: { column: string; value: number } | null },
): Promise<number[]> {
  if (!(await tableExists(db, 'main', input.table))) return [];
  const params: unknown[] = [input.from];
  let where = `CAST(${ident(input.column)} AS VARCHAR) >= ?`;
  if (input.scope) {
    where += ` AND ${ident(input.scope.column)} = ?`;
    params.push(input.scope.value);
  }
  const r = await db.query(`SELECT id FROM main.${ident(input.table)} WHERE ${where} ORDER BY id`, params);
  return r.rows.map((row) => num(row.id)).filter((n): n is number => n !== null);
}

export class CurrentRows {
  constructor(
    private readonly db: Db,
    /** Merges the staged pages `filter` selects (all without one) into their tables, inside the queue. */
    private readonly mergeStaged: (filter?: StagedFilter) => Promise<void>,
  ) {}

  private afterMerge<T>(read: () => Promise<T>, filter?: StagedFilter): Promise<T> {
    return this.db.exclusive(async () => {
      await this.mergeStaged(filter);
      return read();
    });
  }

  /**
   * Whether a scope of a stream holds a live row (after merging that scope's staged pages only: other scopes'
   * pages keep waiting for their batch). A walk that starts on a scope without one need not track seen ids.
   */
  scopeHoldsRows(table: string, scope: ScopeRef): Promise<boolean> {
    return this.afterMerge(() => scopeHoldsRows(this.db, table, scope), { stream: table, scope: scope.key });
  }

  /** The scope's live rows and which of `ids` are among them: what a delete check compares (sync/delete-check.ts). */
  liveCount(table: string, scope: ScopeRef, ids: readonly number[]): Promise<LiveCount> {
    return this.afterMerge(() => liveCount(this.db, table, scope, ids), { stream: table, scope: scope.key });
  }

  /** Every current event (for the engine's event-scope rule). */
  events(): Promise<EventRow[]> {
    return this.afterMerge(() => currentEvents(this.db));
  }

  /** The size figures the current events carry (an estimate extrapolates over the events by them). */
  eventSizes(): Promise<EventSize[]> {
    return this.afterMerge(() => eventSizes(this.db));
  }

  /** Ids of the current rows of a stream table, ascending (parents of a parent-scoped stream). */
  ids(table: string): Promise<number[]> {
    return this.afterMerge(() => liveIds(this.db, table));
  }

  /** Current rows of a stream table as stored (custom-field definitions). */
  rows(table: string): Promise<ResultRow[]> {
    return this.afterMerge(() => currentRows(this.db, table));
  }

  /** Ids of rows changed at or after `from` (by `column`) in a scope: what a refresh through the parent re-reads. */
  changedIds(input: Parameters<typeof changedIds>[1]): Promise<number[]> {
    return this.afterMerge(() => changedIds(this.db, input));
  }
}
