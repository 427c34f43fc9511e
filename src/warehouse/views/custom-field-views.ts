/**
 * `src/warehouse/views/`: ready views in schema `analytics` (views.ts), the custom-field views generated from the
 * field definitions, and their column labels (labels.ts).
 *
 * Views over the custom-fields column, generated from the field definitions the warehouse holds (`event_questions`,
 * `session_fields`, `sponsor_fields`, `contact_fields`), in schema `analytics`:
 *
 * - `<stream>_event_<eventId>`, for streams whose fields are defined per event (registrants: event questions): that
 *   event's current rows, every column of the table but `custom_fields`, then one column per question of the event,
 *   named by its label and cast by its type;
 * - `<stream>_labeled`, for streams whose fields are account-wide (sessions, sponsors, contacts): the same over all
 *   current rows with the account's fields;
 * - `custom_field_values`: one row per answer across streams and events: `stream, event_id, record_id, field_id,
 *   label, value` (text: a choice's values joined by ", ") and `value_json` (as the service sent it). Its row count is
 *   the number of non-empty custom values (the column holds no empty ones, see normalizer/custom-values.ts).
 *
 * Types (the definition's `type`, case-insensitive): checkbox/multi* -> VARCHAR[] of the chosen values;
 * dropdown/radio/select/choice -> VARCHAR (the chosen value); date -> DATE, datetime/timestamp -> TIMESTAMP,
 * number/numeric/decimal/integer -> DOUBLE (TRY_CAST: an answer that is not one is NULL); others -> VARCHAR.
 * A field with a type set by the user (`streams.<name>.customFieldTypes`, recorded in `_evsync.custom_field_types`
 * by the sync that stored its answers) has that type instead: VARCHAR for `text`, else TRY_CAST to the type's
 * DuckDB type (BIGINT, DOUBLE, BOOLEAN, ...).
 * Labels become safe, distinct column names (labels.ts). Views name nothing outside the database file.
 */
import { catalogue } from '../../../connectors/index.js';
import { isCustomFieldType } from '../../../connectors/types.js';
import { CUSTOM_FIELDS_COLUMN, duckdbType } from '../../../schemas/columns.js';
import type { Db } from '../db/connection.js';
import { ident, literal } from '../db/sql.js';
import { readTableColumns } from '../load/ddl.js';
import { readCustomFieldTypes } from '../state/custom-field-types.js';
import { labelAliases } from './labels.js';

/** A view to create: its name in `analytics` and its SELECT. */
interface CustomFieldView {
  readonly name: string;
  readonly sql: string;
}

interface FieldDefinition {
  readonly id: number;
  readonly label: string;
  readonly type: string;
  readonly eventId: number | null;
}

/** A stream table that holds custom fields, with where its definitions are. */
interface CustomStream {
  readonly table: string;
  readonly columns: readonly string[];
  readonly eventScoped: boolean;
  readonly definitions: string;
  /** Whether definitions are per event (they carry `event_id`). */
  readonly perEvent: boolean;
  /** The definitions, or null when their table is not in the warehouse. */
  readonly fields: readonly FieldDefinition[] | null;
  /** Types the user set, by member name `c_<id>` (they win over the definition's type). */
  readonly types: ReadonlyMap<string, string>;
}

/** Pattern of the per-event view names (stale ones are dropped by it). */
export const PER_EVENT_VIEW = /^[a-z][a-z0-9_]*_event_\d+$/;

const CUSTOM = ident(CUSTOM_FIELDS_COLUMN);

/**
 * The SQL expression of one field's value, typed by the type the user set (`override`) or else by its definition
 * (see the module comment).
 */
function fieldExpression(table: string, id: number, type: string, override: string | undefined): string {
  const cf = `${table}.${CUSTOM}`;
  const path = (suffix = '') => literal(`$.c_${id}${suffix}`);
  // Checked again here: the type is read back from the database, and it becomes SQL text.
  if (override !== undefined && isCustomFieldType(override)) {
    const answer = `json_extract_string(${cf}, ${path()})`;
    return override === 'text' ? answer : `TRY_CAST(${answer} AS ${duckdbType(override)})`;
  }
  const t = type.toLowerCase();
  if (/^(checkbox|multi)/.test(t)) {
    return `CASE WHEN json_type(${cf}, ${path()}) = 'ARRAY' THEN json_extract_string(${cf}, ${path('[*].value')}) END`;
  }
  if (/^(dropdown|radio|select|choice)/.test(t)) {
    return `CASE json_type(${cf}, ${path()}) WHEN 'ARRAY' THEN json_extract_string(${cf}, ${path('[0].value')})
      WHEN 'OBJECT' THEN json_extract_string(${cf}, ${path('.value')}) ELSE json_extract_string(${cf}, ${path()}) END`;
  }
  const text = `json_extract_string(${cf}, ${path()})`;
  if (t === 'date') return `TRY_CAST(${text} AS DATE)`;
  if (t === 'datetime' || t === 'timestamp') return `TRY_CAST(${text} AS TIMESTAMP)`;
  if (/^(number|numeric|decimal|integer)/.test(t)) return `TRY_CAST(${text} AS DOUBLE)`;
  return text;
}

async function readDefinitions(db: Db, table: string): Promise<FieldDefinition[] | null> {
  const columns = await readTableColumns(db, table);
  if (!columns?.has('id') || !columns.has('name')) return null;
  const type = columns.has('type') ? 'CAST("type" AS VARCHAR)' : 'NULL';
  const event = columns.has('event_id') ? '"event_id"' : 'NULL';
  const r = await db.query(
    `SELECT "id", CAST("name" AS VARCHAR) AS name, ${type} AS type, ${event} AS event_id
       FROM main.${ident(table)} WHERE "_deleted_at" IS NULL AND "id" IS NOT NULL AND "id" >= 0 ORDER BY "id"`,
  );
  return r.rows.map((row) => ({
    id: Number(row.id),
    label: row.name === null ? `c_${Number(row.id)}` : String(row.name),
    type: row.type === null ? 'text' : String(row.type),
    eventId: row.event_id === null ? null : Number(row.event_id),
  }));
}

/** The stream tables with a custom-fields column, and their definitions. */
async function customStreams(db: Db, present: ReadonlySet<string>): Promise<CustomStream[]> {
  const out: CustomStream[] = [];
  const types = await readCustomFieldTypes(db);
  for (const def of catalogue) {
    if (!def.customFields || !present.has(def.name)) continue;
    const columns = await readTableColumns(db, def.name);
    if (!columns?.has(CUSTOM_FIELDS_COLUMN) || !columns.has('id')) continue;
    const definitions = def.customFields.definitions;
    const definitionDef = catalogue.find((d) => d.name === definitions);
    out.push({
      table: def.name,
      columns: [...columns.keys()],
      eventScoped: def.scope === 'event' && columns.has('event_id'),
      definitions,
      perEvent: definitionDef?.scope === 'event',
      fields: present.has(definitions) ? await readDefinitions(db, definitions) : null,
      types: types.get(def.name) ?? new Map(),
    });
  }
  return out;
}

/** `SELECT` of a table's current rows with the given fields as labelled, typed columns. */
function labelledSelect(s: CustomStream, fields: readonly FieldDefinition[], where: string): string {
  const base = s.columns.filter((c) => c !== CUSTOM_FIELDS_COLUMN);
  const key = (f: FieldDefinition) => `c_${f.id}`;
  const aliases = labelAliases([...base, ...fields.map(key)], new Map(fields.map((f) => [key(f), f.label])));
  const select = [
    ...base.map((c) => `t.${ident(c)}`),
    ...fields.map(
      (f) => `${fieldExpression('t', f.id, f.type, s.types.get(key(f)))} AS ${ident(aliases.get(key(f)) ?? key(f))}`,
    ),
  ];
  return `SELECT ${select.join(',\n       ')}\n  FROM main.${ident(s.table)} t\n WHERE t."_deleted_at" IS NULL${where}`;
}

/** The text of a JSON answer: a string as itself, a list of choices as their values joined, else its JSON text. */
const VALUE_TEXT = `CASE WHEN json_type(j.value) = 'ARRAY'
            THEN coalesce(nullif(array_to_string(json_extract_string(j.value, '$[*].value'), ', '), ''), CAST(j.value AS VARCHAR))
            ELSE json_extract_string(j.value, '$') END`;

function longSelect(s: CustomStream): string {
  const eventId = s.eventScoped ? 't."event_id"' : 'CAST(NULL AS BIGINT)';
  const answers = `SELECT ${eventId} AS event_id, t."id" AS record_id, TRY_CAST(substr(j.key, 3) AS BIGINT) AS field_id,
              ${VALUE_TEXT} AS value, CAST(j.value AS JSON) AS value_json
         FROM main.${ident(s.table)} t, json_each(t.${CUSTOM}) j
        WHERE t."_deleted_at" IS NULL`;
  if (s.fields === null) {
    return `SELECT ${literal(s.table)} AS stream, a.event_id, a.record_id, a.field_id, CAST(NULL AS VARCHAR) AS label,
       a.value, a.value_json FROM (${answers}) a`;
  }
  const sameEvent = s.perEvent && s.eventScoped ? ' AND d."event_id" = a.event_id' : '';
  return `SELECT ${literal(s.table)} AS stream, a.event_id, a.record_id, a.field_id, CAST(d."name" AS VARCHAR) AS label,
       a.value, a.value_json
  FROM (${answers}) a
  LEFT JOIN main.${ident(s.definitions)} d ON d."id" = a.field_id${sameEvent} AND d."_deleted_at" IS NULL`;
}

/** The custom-field views the warehouse's tables and definitions call for (see the module comment). */
export async function customFieldViews(db: Db, present: ReadonlySet<string>): Promise<CustomFieldView[]> {
  const views: CustomFieldView[] = [];
  const streams = await customStreams(db, present);
  for (const s of streams) {
    if (s.fields === null || s.fields.length === 0) continue;
    if (s.perEvent && s.eventScoped) {
      const byEvent = new Map<number, FieldDefinition[]>();
      for (const f of s.fields) {
        if (f.eventId === null) continue;
        const list = byEvent.get(f.eventId) ?? [];
        list.push(f);
        byEvent.set(f.eventId, list);
      }
      for (const [eventId, fields] of byEvent) {
        const where = ` AND t."event_id" = ${eventId}`;
        views.push({ name: `${s.table}_event_${eventId}`, sql: labelledSelect(s, fields, where) });
      }
    } else {
      views.push({ name: `${s.table}_labeled`, sql: labelledSelect(s, s.fields, '') });
    }
  }
  if (streams.length > 0) {
    views.push({ name: 'custom_field_values', sql: streams.map(longSelect).join('\nUNION ALL\n') });
  }
  return views;
}
