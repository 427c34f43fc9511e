/**
 * Layout 1 to 2. Layout 1 (773f596 and before) kept a column per custom field (`c_<id>`) and had no
 * `_evsync.publish_pending`; layout 2 keeps the answers in one JSON column. The step creates the table, merges the
 * pages a killed process staged (in the old shape: they land first), then rebuilds each stream table with its
 * `c_<id>` columns folded into `custom_fields`, in one transaction per table. Rows, their system columns and every
 * bookkeeping table (cursors, runs, ledger) are kept as they are; no API call is made. A table already folded (a
 * warehouse of layout 2 stamped `'1'` by a release before versioning, or a step killed half-way) has no `c_<id>`
 * column left and is skipped.
 *
 * The folded object follows the normalizer's rules (normalizer/custom-values.ts): only non-empty answers (not null,
 * `""`, `[]`, `{}`), ordered by field id, values as stored (text as a JSON string, JSON columns as their JSON), so
 * the next sync finds the rows unchanged. A row with every `c_<id>` null gets NULL (its fields were not read), one
 * with values all empty `{}`. The table is rebuilt rather than altered column by column: hundreds of DROP COLUMNs
 * each rewrite the table, and tables of earlier versions may carry a PRIMARY KEY, which blocks DROP COLUMN.
 */
import { catalogue } from '../../../connectors/index.js';
import { isCustomFieldName } from '../../../connectors/types.js';
import { byFieldId } from '../../../normalizer/custom-values.js';
import { CUSTOM_FIELDS_COLUMN } from '../../../schemas/columns.js';
import type { Db } from '../db/connection.js';
import { ident, literal } from '../db/sql.js';
import { readTableColumns, recordSchemaChange, type TableColumns } from '../load/ddl.js';
import type { MigrationContext } from './context.js';

/** What layout 2 has that layout 1 may lack (frozen: the tables as layout 2 declared them). */
const DDL = [
  `CREATE TABLE IF NOT EXISTS _evsync.publish_pending (
     table_name VARCHAR NOT NULL, event_id BIGINT, recorded_at TIMESTAMP NOT NULL)`,
  `ALTER TABLE _evsync.runs ADD COLUMN IF NOT EXISTS resumable BOOLEAN`,
];

/** One `"c_<id>": value` member of the folded JSON text, or NULL when the column holds no answer in the row. */
function member(name: string, type: string | null): string {
  const c = ident(name);
  const key = literal(`${JSON.stringify(name)}:`);
  if (type === 'json') {
    const text = `CAST(${c} AS VARCHAR)`;
    return `CASE WHEN ${c} IS NOT NULL AND trim(${text}) NOT IN ('null', '""', '[]', '{}') THEN ${key} || ${text} END`;
  }
  // Text (and any type a column was widened to): its JSON form, an empty string left out.
  return `CASE WHEN ${c} IS NOT NULL AND CAST(${c} AS VARCHAR) <> '' THEN ${key} || CAST(to_json(${c}) AS VARCHAR) END`;
}

/** The SQL expression of a row's custom-fields value from its `c_<id>` columns (and an existing column, if any). */
function foldedExpression(columns: TableColumns, customs: readonly string[]): string {
  const members = customs.map((name) => member(name, columns.get(name) ?? null));
  const anySet = customs.map((name) => `${ident(name)} IS NOT NULL`).join(' OR ');
  const folded = `CASE WHEN ${anySet} THEN CAST('{' || concat_ws(',', ${members.join(', ')}) || '}' AS JSON) END`;
  return columns.has(CUSTOM_FIELDS_COLUMN) ? `coalesce(${ident(CUSTOM_FIELDS_COLUMN)}, ${folded})` : folded;
}

async function migrateTable(db: Db, table: string, columns: TableColumns, customs: string[]): Promise<void> {
  customs.sort(byFieldId);
  const folded = foldedExpression(columns, customs);
  const select: string[] = [];
  let placed = false;
  for (const name of columns.keys()) {
    if (name === CUSTOM_FIELDS_COLUMN || isCustomFieldName(name)) {
      // The new column takes the place of the first custom one (before schema-evolution extras, as new tables).
      if (!placed) select.push(`${folded} AS ${ident(CUSTOM_FIELDS_COLUMN)}`);
      placed = true;
      continue;
    }
    select.push(ident(name));
  }
  const temp = `${table}__evsync_migrate`;
  await db.transaction(async () => {
    await db.run(`CREATE TABLE main.${ident(temp)} AS SELECT ${select.join(', ')} FROM main.${ident(table)}`);
    await db.run(`DROP TABLE main.${ident(table)}`);
    await db.run(`ALTER TABLE main.${ident(temp)} RENAME TO ${ident(table)}`);
    await recordSchemaChange(db, null, {
      table,
      column: CUSTOM_FIELDS_COLUMN,
      change: 'add_column',
      origin: 'definition',
      from: null,
      to: 'json',
      reason: `${customs.length} c_<id> columns folded into ${CUSTOM_FIELDS_COLUMN} (one column per custom field before)`,
    });
  });
}

/** Folds the `c_<id>` columns of every stream table with custom fields. */
async function foldCustomFieldColumns(db: Db): Promise<void> {
  for (const def of catalogue) {
    if (!def.customFields) continue;
    const columns = await readTableColumns(db, def.name);
    if (!columns) continue;
    const customs = [...columns.keys()].filter(isCustomFieldName);
    if (customs.length === 0) continue;
    await migrateTable(db, def.name, columns, customs);
  }
}

export async function migrate1To2(ctx: MigrationContext): Promise<void> {
  await ctx.db.transaction(async () => {
    for (const sql of DDL) await ctx.db.run(sql);
  });
  await ctx.mergeStaged();
  await foldCustomFieldColumns(ctx.db);
}
