/**
 * Loading one page: everything a page changes commits in ONE transaction (schema evolution, rejected records, the
 * merge, seen ids, the cursor), so a crash loses at most the page in flight and the cursor never runs ahead of the
 * data it covers.
 *
 * Per page:
 * 1. Deduplicate by key in JavaScript: the latest `updated_at` wins when the stream has one (ties and streams
 *    without it: the last occurrence). A row without its key goes to `_evsync.rejected`.
 * 2. Schema evolution: columns the rows carry that the table lacks are added (typed from `newColumns`, else
 *    inferred from the values); values of evolved columns that do not fit widen the column (see widen.ts).
 * 3. Stage the rows as a JSON file (see stage.ts) and MERGE it into the table in one statement, with explicit
 *    column lists (never MERGE's star UPDATE form: 30x slower on a keyed table, stack.md). Only the columns the page
 *    carries are written, so a page without an expansion never blanks columns an earlier expanded run filled.
 *    Matched rows whose values are identical (and not deleted) are left untouched (`unchanged`); others are
 *    updated and get `_synced_at`/`_run_id` of this run and `_deleted_at` NULL (a record that reappears is live
 *    again). `RETURNING merge_action` counts inserts and updates exactly.
 * 4. Seen ids (snapshots, sweeps) and the cursor row.
 */
import type { NormalizedRow, NormalizedValue, ResolvedStream, ScalarType } from '../../connectors/types.js';
import { duckdbType } from '../../schemas/columns.js';
import { cursorParams, recordRejected, SAVE_CURSOR_SQL } from './bookkeeping.js';
import type { Db } from './connection.js';
import {
  applySchemaChange,
  declaredColumns,
  isEvolvableName,
  recordSchemaChange,
  type SchemaChange,
  type TableColumns,
} from './ddl.js';
import { ident, literal, utcNow } from './sql.js';
import type { Staging } from './stage.js';
import type { LoadPageInput, LoadResult } from './types.js';
import { fits, widen } from './widen.js';

export interface LoadDeps {
  db: Db;
  staging: Staging;
  /** The table's columns (cached by the warehouse; created with ensureTable when missing). */
  columns(stream: ResolvedStream): Promise<TableColumns>;
  /** Forget cached columns and statements after DDL. */
  forget(table: string): void;
}

type Rejected = { raw: unknown; reason: string };

/** Rows unique by key; rows lacking a key value are moved to `rejected`. */
export function dedupeByKey(
  rows: readonly NormalizedRow[],
  key: readonly string[],
  byUpdatedAt: boolean,
  rejected: Rejected[],
): NormalizedRow[] {
  const out: NormalizedRow[] = [];
  const index = new Map<string, number>();
  const single = key.length === 1 ? (key[0] as string) : null;
  for (const row of rows) {
    let k: string;
    if (single !== null) {
      const v = row[single];
      if (v === null || v === undefined) {
        rejected.push({ raw: row, reason: `missing key column ${single}` });
        continue;
      }
      k = typeof v === 'object' ? JSON.stringify(v) : String(v);
    } else {
      const parts = key.map((c) => row[c]);
      const missing = key.filter((_, i) => parts[i] === null || parts[i] === undefined);
      if (missing.length) {
        rejected.push({ raw: row, reason: `missing key column ${missing.join(', ')}` });
        continue;
      }
      k = JSON.stringify(parts.map((p) => (typeof p === 'object' ? p : String(p))));
    }
    const at = index.get(k);
    if (at === undefined) {
      index.set(k, out.length);
      out.push(row);
      continue;
    }
    if (byUpdatedAt) {
      // 'YYYY-MM-DD HH:MM:SS' strings order as the times they name; a row without updated_at is the oldest.
      const prev = (out[at] as NormalizedRow).updated_at;
      const cur = row.updated_at;
      if (cur === null || cur === undefined) {
        if (prev !== null && prev !== undefined) continue;
      } else if (prev !== null && prev !== undefined && String(cur) < String(prev)) {
        continue;
      }
    }
    out[at] = row;
  }
  return out;
}

/** The type a value of an undeclared, unlisted field suggests (the first non-null value of the page). */
export function inferScalarType(value: NormalizedValue): ScalarType | null {
  if (value === null) return null;
  if (typeof value === 'boolean') return 'boolean';
  if (typeof value === 'number') return Number.isSafeInteger(value) ? 'bigint' : 'double';
  if (typeof value === 'string') {
    if (/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/.test(value)) return 'timestamp';
    if (/^\d{4}-\d{2}-\d{2}$/.test(value)) return 'date';
    return 'text';
  }
  if (value.length > 0 && value.every((x) => typeof x === 'number' && Number.isSafeInteger(x))) return 'bigint[]';
  return value.every((x) => typeof x === 'string') ? 'text[]' : 'json';
}

/** Works out the schema changes a page needs; returns them with the table's column types after the changes. */
function planEvolution(
  stream: ResolvedStream,
  table: TableColumns,
  rows: readonly NormalizedRow[],
  pageColumns: ReadonlySet<string>,
  listed: Readonly<Record<string, ScalarType>>,
): { changes: SchemaChange[]; types: Map<string, ScalarType | null> } {
  const types = new Map(table);
  const changes: SchemaChange[] = [];
  const declared = declaredColumns(stream);

  // Columns whose type came from values rather than the definition: the ones whose values are checked.
  const checked = new Map<string, { from: ScalarType | null; type: ScalarType; adding: boolean }>();
  for (const name of pageColumns) {
    if (declared.has(name)) continue;
    const current = table.get(name);
    if (current !== undefined) {
      if (current !== null) checked.set(name, { from: current, type: current, adding: false });
      continue;
    }
    if (!isEvolvableName(name)) continue;
    let type: ScalarType | null = listed[name] ?? null;
    if (type === null) {
      for (const row of rows) {
        const v = row[name];
        if (v !== null && v !== undefined) {
          type = inferScalarType(v);
          if (type !== null) break;
        }
      }
    }
    // A field that is null throughout the page says nothing about its type: wait for a page that has a value.
    if (type !== null) checked.set(name, { from: null, type, adding: true });
  }

  for (const [name, entry] of checked) {
    for (const row of rows) {
      const v = row[name];
      if (v !== undefined && !fits(entry.type, v)) entry.type = widen(entry.type, v);
    }
    if (entry.adding) {
      changes.push({
        table: stream.name,
        column: name,
        change: 'add_column',
        origin: 'evolution',
        from: null,
        to: entry.type,
        reason: listed[name] ? 'field found by schema evolution' : 'field found by schema evolution (type inferred)',
      });
      types.set(name, entry.type);
    } else if (entry.type !== entry.from) {
      changes.push({
        table: stream.name,
        column: name,
        change: 'widen',
        origin: 'evolution',
        from: entry.from,
        to: entry.type,
        reason: `a value does not fit ${entry.from}: widened to ${entry.type}`,
      });
      types.set(name, entry.type);
    }
  }
  return { changes, types };
}

interface MergePlan {
  sql: string;
  params: (file: string, scopeValue: number | null, syncedAt: string, runId: string) => unknown[];
}

function mergePlan(
  stream: ResolvedStream,
  columns: readonly { name: string; type: ScalarType }[],
  scopeColumn: string | null,
): MergePlan {
  const key = new Set(stream.key);
  // Parameters: the staged file, the scope id (only when the table has the scope column), _synced_at, _run_id.
  const usesScope = scopeColumn !== null;
  const pSynced = usesScope ? '$3' : '$2';
  const pRun = usesScope ? '$4' : '$3';
  const spec = columns
    .map((c) => `${literal(c.name)}: ${literal(c.type === 'json' ? 'VARCHAR' : duckdbType(c.type))}`)
    .join(', ');
  const select = columns
    .map((c) => {
      const col = ident(c.name);
      // JSON is read as text and cast, which validates it; the scope column falls back to the page's scope.
      if (c.type === 'json') return `CAST(${col} AS JSON) AS ${col}`;
      if (c.name === scopeColumn) return `COALESCE(${col}, CAST($2 AS BIGINT)) AS ${col}`;
      return col;
    })
    .join(', ');
  const on = stream.key.map((k) => `t.${ident(k)} = s.${ident(k)}`).join(' AND ');
  const data = columns.filter((c) => !key.has(c.name));
  const changed = [
    't."_deleted_at" IS NOT NULL',
    ...data.map((c) => `t.${ident(c.name)} IS DISTINCT FROM s.${ident(c.name)}`),
  ];
  const sets = [
    ...data.map((c) => `${ident(c.name)} = s.${ident(c.name)}`),
    `"_synced_at" = CAST(${pSynced} AS TIMESTAMP)`,
    `"_run_id" = ${pRun}`,
    `"_deleted_at" = NULL`,
  ];
  const names = [...columns.map((c) => ident(c.name)), '"_synced_at"', '"_run_id"', '"_deleted_at"'];
  const values = [...columns.map((c) => `s.${ident(c.name)}`), `CAST(${pSynced} AS TIMESTAMP)`, pRun, 'NULL'];
  const sql = `MERGE INTO ${ident(stream.name)} AS t
USING (SELECT ${select} FROM read_json($1, format = 'array', columns = {${spec}})) AS s
ON ${on}
WHEN MATCHED AND (${changed.join(' OR ')}) THEN UPDATE SET ${sets.join(', ')}
WHEN NOT MATCHED THEN INSERT (${names.join(', ')}) VALUES (${values.join(', ')})
RETURNING merge_action`;
  return {
    sql,
    params: (file, scopeValue, syncedAt, runId) =>
      usesScope ? [file, scopeValue, syncedAt, runId] : [file, syncedAt, runId],
  };
}

const SEEN_SQL = `INSERT INTO _evsync.seen SELECT $1, $2, $3, unnest(CAST($4 AS BIGINT[]))`;

export async function loadPage(deps: LoadDeps, input: LoadPageInput): Promise<LoadResult> {
  const { db, staging } = deps;
  const { stream, scope, runId } = input;
  const upsert = input.upsert ?? true;
  const rejected: Rejected[] = [...input.rejected];
  if (scope.value !== null && !Number.isSafeInteger(scope.value)) {
    throw new Error(`loadPage ${stream.name}: scope value ${scope.value} is not an integer id`);
  }

  let file: string | null = null;
  let plan: MergePlan | null = null;
  let changes: SchemaChange[] = [];
  let rows: NormalizedRow[] = [];
  if (upsert && input.rows.length > 0) {
    const table = await deps.columns(stream);
    rows = dedupeByKey(input.rows, stream.key, table.has('updated_at'), rejected);
    const pageColumns = new Set<string>();
    for (const row of rows) for (const k in row) pageColumns.add(k);
    for (const k of stream.key) pageColumns.add(k);
    if (scope.column) pageColumns.add(scope.column);
    const evolution = planEvolution(stream, table, rows, pageColumns, input.newColumns ?? {});
    changes = evolution.changes;
    const columns: { name: string; type: ScalarType }[] = [];
    for (const [name, type] of evolution.types) {
      if (type === null || !pageColumns.has(name) || name.startsWith('_')) continue;
      columns.push({ name, type });
    }
    if (rows.length > 0) {
      plan = mergePlan(
        stream,
        columns,
        scope.column !== null && evolution.types.has(scope.column) ? scope.column : null,
      );
      file = await staging.write(JSON.stringify(rows));
    }
  }

  try {
    return await db.transaction(async () => {
      if (changes.length) {
        for (const change of changes) {
          await applySchemaChange(db, change);
          await recordSchemaChange(db, runId, change);
        }
        deps.forget(stream.name);
      }
      await recordRejected(db, runId, stream.name, scope.key, rejected);
      let inserted = 0;
      let updated = 0;
      if (plan && file) {
        const actions = await db.firstColumnPrepared(plan.sql, plan.params(file, scope.value, utcNow(), runId));
        for (const a of actions) {
          if (a === 'INSERT') inserted++;
          else if (a === 'UPDATE') updated++;
        }
      }
      if (input.seen && input.seen.ids.length > 0) {
        await db.runPrepared(SEEN_SQL, [stream.name, scope.key, input.seen.walkId, JSON.stringify(input.seen.ids)]);
      }
      if (input.cursor) await db.runPrepared(SAVE_CURSOR_SQL, cursorParams(input.cursor));
      return { inserted, updated, rejected: rejected.length, unchanged: rows.length - inserted - updated };
    });
  } catch (err) {
    // The ALTERs rolled back with the rest: the cached columns must not claim them.
    if (changes.length) deps.forget(stream.name);
    throw err;
  } finally {
    if (file) await staging.remove(file);
  }
}
