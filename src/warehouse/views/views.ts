/**
 * Ready views in schema `analytics`, over current rows only (`_deleted_at IS NULL`), and the `history` schema's
 * views of every version (history/history-views.ts). A view is created when the
 * tables it needs exist (optional ones, such as `events` for the event name, are joined when present, else the
 * column is NULL) and dropped otherwise, so no view is left pointing at a missing table.
 *
 * Definitions used throughout:
 * - expected attendee: a registrant whose registration_status is not cancelled, denied or pending;
 * - checked in: `checked_in_at` set or registration_status 'attended';
 * - a session selection: the session's id in a registrant's `session_ids` (registrant not cancelled or denied);
 * - session attendance: a `session_attendance` row with `check_in_date` set (distinct registrants);
 * - settled transaction: status not pending, failed, declined, void(ed), cancel(l)ed or error; refunds are the
 *   negative amounts, so net revenue is the plain sum; a transaction counts for its registrant's type, package and
 *   discount code (names joined by id, or code, within the registrant's event).
 * Rates are DOUBLE rounded to 4 places, NULL when the denominator is 0 or unknown; money sums are DECIMAL.
 *
 * Plus the custom-field views generated from the field definitions: `<stream>_event_<eventId>` (one event's rows
 * with its questions as labelled, typed columns), `<stream>_labeled` (account-wide fields) and the long
 * `custom_field_values` (custom-field-views.ts).
 *
 * Each view is created by its own statement, outside any shared transaction: a view that cannot be built (a label
 * DuckDB refuses, a table of an unexpected shape) costs that view alone, and is reported in the result's warnings
 * (once all views were built in one transaction, and one bad label removed every view).
 */
import { createHash } from 'node:crypto';
import type { Db } from '../db/connection.js';
import { ident, literal } from '../db/sql.js';
import { createHistoryViews } from '../history/history-views.js';
import { listStreamTables } from '../load/ddl.js';
import { customFieldViews, PER_EVENT_VIEW } from './custom-field-views.js';

/** What createAnalyticsViews did: views created (names in schema analytics), and one warning per view that failed. */
export interface AnalyticsViewsReport {
  readonly created: string[];
  readonly warnings: string[];
  /** Views and macros made in schema `history` (history/history-views.ts). */
  readonly history: string[];
}

interface ViewContext {
  has(table: string): boolean;
  /** `name` of the event joined as `ev` (when the events table exists) or NULL. */
  eventName: string;
  /** LEFT JOIN of events as `ev` on `<col>`, or nothing. */
  eventJoin(column: string): string;
}

interface ViewDef {
  name: string;
  requires: string[];
  sql(ctx: ViewContext): string;
}

const NOT_EXPECTED = `('cancelled', 'denied', 'pending')`;
const NOT_SELECTING = `('cancelled', 'denied')`;
const UNSETTLED = `('pending', 'failed', 'declined', 'void', 'voided', 'cancelled', 'canceled', 'error')`;
const STATUSES = ['confirmed', 'pending', 'approved', 'denied', 'cancelled', 'attended', 'no_show'];

const settledTransactions = `SELECT t.registrant_id, t.amount FROM main.transactions t
    WHERE t._deleted_at IS NULL AND t.amount IS NOT NULL
      AND lower(coalesce(t.status, '')) NOT IN ${UNSETTLED}`;

function revenueBy(
  dimension: string,
  select: (ctx: ViewContext) => string,
  join: (ctx: ViewContext) => string,
): (ctx: ViewContext) => string {
  return (ctx) => `WITH tx AS (${settledTransactions})
SELECT r.event_id, ${ctx.eventName} AS event_name, ${select(ctx)},
       count(DISTINCT r.id) AS registrants,
       count(*) AS transactions,
       coalesce(sum(tx.amount) FILTER (WHERE tx.amount > 0), 0) AS payments,
       coalesce(-sum(tx.amount) FILTER (WHERE tx.amount < 0), 0) AS refunds,
       coalesce(sum(tx.amount), 0) AS net_revenue
  FROM tx JOIN main.registrants r ON r.id = tx.registrant_id AND r._deleted_at IS NULL
  ${join(ctx)}
  ${ctx.eventJoin('r.event_id')}
 GROUP BY ALL
 ORDER BY r.event_id, ${dimension}`;
}

/** The live sessions with their selection and attendance counts (the CTEs of `sessionStats`), one row each. */
function sessionsWithStats(ctx: ViewContext): string {
  return `  FROM main.sessions se
  LEFT JOIN selections sel ON sel.session_id = se.id
  LEFT JOIN selected_attended sa ON sa.session_id = se.id
  LEFT JOIN attendance a ON a.session_id = se.id
  ${ctx.eventJoin('se.event_id')}
 WHERE se._deleted_at IS NULL
 ORDER BY se.event_id, se.id`;
}

/** A revenue view by a registrant field, named from a lookup table when that stream is synced (NULL when not). */
function revenueByLookup(o: {
  dimension: string;
  table: string;
  alias: string;
  on: string;
  column: string;
  as: string;
  nullType: 'VARCHAR' | 'BIGINT';
}): (ctx: ViewContext) => string {
  return revenueBy(
    o.dimension,
    (ctx) => `${o.dimension}, ${ctx.has(o.table) ? o.column : `CAST(NULL AS ${o.nullType})`} AS ${o.as}`,
    (ctx) =>
      ctx.has(o.table)
        ? `LEFT JOIN main.${o.table} ${o.alias}
             ON ${o.on} AND ${o.alias}.event_id = r.event_id AND ${o.alias}._deleted_at IS NULL`
        : '',
  );
}

const sessionStats = `selections AS (
    SELECT sel.session_id, count(DISTINCT sel.registrant_id) AS selections
      FROM (SELECT unnest(session_ids) AS session_id, id AS registrant_id FROM main.registrants
             WHERE _deleted_at IS NULL AND coalesce(registration_status, '') NOT IN ${NOT_SELECTING}) sel
     GROUP BY sel.session_id),
  attended AS (
    SELECT DISTINCT session_id, registrant_id FROM main.session_attendance
     WHERE _deleted_at IS NULL AND check_in_date IS NOT NULL),
  attendance AS (SELECT session_id, count(*) AS attendees FROM attended GROUP BY session_id),
  selected_attended AS (
    SELECT a.session_id, count(*) AS checked_in
      FROM attended a
      JOIN (SELECT unnest(session_ids) AS session_id, id AS registrant_id FROM main.registrants
             WHERE _deleted_at IS NULL AND coalesce(registration_status, '') NOT IN ${NOT_SELECTING}) s
        ON s.session_id = a.session_id AND s.registrant_id = a.registrant_id
     GROUP BY a.session_id)`;

export const VIEWS: ViewDef[] = [
  {
    name: 'registrations_daily',
    requires: ['registrants'],
    sql: (ctx) => `SELECT r.event_id, ${ctx.eventName} AS event_name,
       CAST(coalesce(r.registered_at, r.created_at) AS DATE) AS day,
       r.registration_status AS status,
       count(*) AS registrations
  FROM main.registrants r ${ctx.eventJoin('r.event_id')}
 WHERE r._deleted_at IS NULL
 GROUP BY 1, 2, 3, 4
 ORDER BY r.event_id, day, status`,
  },
  {
    name: 'registration_status_by_event',
    requires: ['registrants'],
    sql: (ctx) => `SELECT r.event_id, ${ctx.eventName} AS event_name, count(*) AS registrants,
       ${STATUSES.map((s) => `count(*) FILTER (WHERE r.registration_status = ${literal(s)}) AS ${ident(s)}`).join(',\n       ')},
       count(*) FILTER (WHERE r.registration_status IS NULL
                          OR r.registration_status NOT IN (${STATUSES.map(literal).join(', ')})) AS other
  FROM main.registrants r ${ctx.eventJoin('r.event_id')}
 WHERE r._deleted_at IS NULL
 GROUP BY 1, 2
 ORDER BY r.event_id`,
  },
  {
    // Registrants leave 'pending' for 'approved' or 'denied'; the current statuses give the outcome so far.
    name: 'approval_conversion',
    requires: ['registrants'],
    sql: (ctx) => `SELECT r.event_id, ${ctx.eventName} AS event_name,
       count(*) FILTER (WHERE r.registration_status = 'pending') AS pending,
       count(*) FILTER (WHERE r.registration_status = 'approved') AS approved,
       count(*) FILTER (WHERE r.registration_status = 'denied') AS denied,
       approved + denied AS decided,
       pending + decided AS requests,
       round(approved / nullif(decided, 0), 4) AS approval_rate,
       round(denied / nullif(decided, 0), 4) AS denial_rate,
       round(decided / nullif(requests, 0), 4) AS decision_rate
  FROM main.registrants r ${ctx.eventJoin('r.event_id')}
 WHERE r._deleted_at IS NULL
 GROUP BY 1, 2
HAVING requests > 0
 ORDER BY r.event_id`,
  },
  {
    name: 'checkin_by_event',
    requires: ['registrants'],
    sql: (ctx) => `SELECT r.event_id, ${ctx.eventName} AS event_name,
       count(*) FILTER (WHERE r.is_expected) AS expected,
       count(*) FILTER (WHERE r.is_expected AND r.is_checked_in) AS checked_in,
       round(checked_in / nullif(expected, 0), 4) AS checkin_rate
  FROM (SELECT event_id,
               coalesce(registration_status, '') NOT IN ${NOT_EXPECTED} AS is_expected,
               checked_in_at IS NOT NULL OR registration_status = 'attended' AS is_checked_in
          FROM main.registrants WHERE _deleted_at IS NULL) r
  ${ctx.eventJoin('r.event_id')}
 GROUP BY 1, 2
 ORDER BY r.event_id`,
  },
  {
    // Of the registrants who selected a session, how many checked in to it.
    name: 'checkin_by_session',
    requires: ['sessions', 'registrants', 'session_attendance'],
    sql: (ctx) => `WITH ${sessionStats}
SELECT se.event_id, ${ctx.eventName} AS event_name, se.id AS session_id, se.name AS session_name,
       coalesce(sel.selections, 0) AS selections,
       coalesce(sa.checked_in, 0) AS checked_in,
       round(coalesce(sa.checked_in, 0) / nullif(coalesce(sel.selections, 0), 0), 4) AS checkin_rate,
       coalesce(a.attendees, 0) AS attendees
${sessionsWithStats(ctx)}`,
  },
  {
    name: 'session_fill',
    requires: ['sessions', 'registrants', 'session_attendance'],
    sql: (ctx) => `WITH ${sessionStats}
SELECT se.event_id, ${ctx.eventName} AS event_name, se.id AS session_id, se.name AS session_name, se.capacity,
       coalesce(sel.selections, 0) AS selections,
       coalesce(a.attendees, 0) AS attendees,
       round(coalesce(sel.selections, 0) / nullif(se.capacity, 0), 4) AS selection_fill_rate,
       round(coalesce(a.attendees, 0) / nullif(se.capacity, 0), 4) AS attendance_fill_rate,
       se.capacity - coalesce(sel.selections, 0) AS seats_left
${sessionsWithStats(ctx)}`,
  },
  {
    name: 'revenue_by_event',
    requires: ['transactions', 'registrants'],
    sql: revenueBy(
      'r.event_id',
      () => `count(DISTINCT r.id) FILTER (WHERE tx.amount > 0) AS paying_registrants`,
      () => '',
    ),
  },
  {
    name: 'revenue_by_registrant_type',
    requires: ['transactions', 'registrants'],
    sql: revenueByLookup({
      dimension: 'r.reg_type_id',
      table: 'registrant_types',
      alias: 'rt',
      on: 'rt.id = r.reg_type_id',
      column: 'rt.name',
      as: 'reg_type_name',
      nullType: 'VARCHAR',
    }),
  },
  {
    name: 'revenue_by_package',
    requires: ['transactions', 'registrants'],
    sql: revenueByLookup({
      dimension: 'r.package_id',
      table: 'packages',
      alias: 'p',
      on: 'p.id = r.package_id',
      column: 'p.name',
      as: 'package_name',
      nullType: 'VARCHAR',
    }),
  },
  {
    name: 'revenue_by_discount_code',
    requires: ['transactions', 'registrants'],
    sql: revenueByLookup({
      dimension: 'r.discount_code',
      table: 'discount_codes',
      alias: 'dc',
      on: 'dc.code = r.discount_code',
      column: 'dc.id',
      as: 'discount_code_id',
      nullType: 'BIGINT',
    }),
  },
  {
    // Counts are NULL (not 0) when that stream has not been synced at all.
    name: 'event_speakers_sponsors',
    requires: [],
    sql: (ctx) => {
      const parts: string[] = [];
      const ids: string[] = [];
      if (ctx.has('speakers')) {
        parts.push(
          `sp AS (SELECT event_id, count(*) AS speakers FROM main.speakers WHERE _deleted_at IS NULL GROUP BY event_id)`,
        );
        ids.push('SELECT event_id FROM sp');
      }
      if (ctx.has('sponsors')) {
        parts.push(
          `so AS (SELECT event_id, count(*) AS sponsors FROM main.sponsors WHERE _deleted_at IS NULL GROUP BY event_id)`,
        );
        ids.push('SELECT event_id FROM so');
      }
      const base = ctx.has('events')
        ? `SELECT id AS event_id, name AS event_name FROM main.events WHERE _deleted_at IS NULL`
        : `SELECT event_id, CAST(NULL AS VARCHAR) AS event_name FROM (${ids.join(' UNION ')})`;
      parts.push(`base AS (${base})`);
      const count = (alias: string, column: string) =>
        ctx.has(alias === 'sp' ? 'speakers' : 'sponsors')
          ? `coalesce(${alias}.${column}, 0) AS ${column}`
          : `CAST(NULL AS BIGINT) AS ${column}`;
      return `WITH ${parts.join(',\n     ')}
SELECT base.event_id, base.event_name, ${count('sp', 'speakers')}, ${count('so', 'sponsors')}
  FROM base
  ${ctx.has('speakers') ? 'LEFT JOIN sp ON sp.event_id = base.event_id' : ''}
  ${ctx.has('sponsors') ? 'LEFT JOIN so ON so.event_id = base.event_id' : ''}
 ORDER BY base.event_id`;
    },
  },
];

/** Whether a definition can be created with the tables present (speaker/sponsor counts need one of the two). */
function available(def: ViewDef, has: (t: string) => boolean): boolean {
  if (def.name === 'event_speakers_sponsors') return has('speakers') || has('sponsors');
  return def.requires.every(has);
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Creates one view by its own statement. On failure the view is dropped (a stale definition could show renamed or
 * missing columns under old names) and the failure becomes a warning.
 */
async function createView(db: Db, view: string, select: string, report: AnalyticsViewsReport): Promise<boolean> {
  try {
    await db.run(`CREATE OR REPLACE VIEW analytics.${ident(view)} AS\n${select}`);
    report.created.push(view);
    return true;
  } catch (err) {
    const dropped = await db.run(`DROP VIEW IF EXISTS analytics.${ident(view)}`).then(
      () => 'dropped',
      (dropErr: unknown) => `and could not be dropped: ${errorText(dropErr)}`,
    );
    report.warnings.push(`analytics view ${view} not created (${dropped}): ${errorText(err)}`);
    return false;
  }
}

/** Drops a view whose tables are gone; a failure is a warning (the view is left as it was). */
async function dropView(db: Db, view: string, report: AnalyticsViewsReport): Promise<void> {
  await db.run(`DROP VIEW IF EXISTS analytics.${ident(view)}`).catch((err: unknown) => {
    report.warnings.push(`analytics view ${view} could not be dropped: ${errorText(err)}`);
  });
}

/**
 * The custom-field views (custom-field-views.ts), then drops the custom-field views of an earlier call that are no
 * longer called for (an event whose questions are gone, `registrants_labeled` of the column-per-field shape).
 */
async function fieldViews(db: Db, present: ReadonlySet<string>, report: AnalyticsViewsReport): Promise<void> {
  const wanted = await customFieldViews(db, present);
  const r = await db.query(
    // This database's views only: a snapshot builds its views while the live file is attached beside it.
    `SELECT view_name, comment FROM duckdb_views()
     WHERE database_name = current_database() AND schema_name = 'analytics' AND NOT internal`,
  );
  const marks = new Map(r.rows.map((row) => [String(row.view_name), row.comment]));
  for (const view of wanted) {
    // A view whose SQL is unchanged (its mark, a hash of the SQL, is its comment) is kept: an account's history
    // has hundreds of per-event views, and re-creating each after every sync cost seconds. CREATE OR REPLACE
    // clears the comment, so a view changed by anything else is rebuilt.
    const mark = `evsync:${createHash('sha256').update(view.sql).digest('hex').slice(0, 16)}`;
    if (marks.get(view.name) === mark) {
      report.created.push(view.name);
      continue;
    }
    if (await createView(db, view.name, view.sql, report)) {
      await db.run(`COMMENT ON VIEW analytics.${ident(view.name)} IS ${literal(mark)}`);
    }
  }
  const names = new Set(wanted.map((v) => v.name));
  for (const row of r.rows) {
    const name = String(row.view_name);
    const generated = PER_EVENT_VIEW.test(name) || name.endsWith('_labeled') || name === 'custom_field_values';
    if (generated && !names.has(name)) await dropView(db, name, report);
  }
}

/**
 * (Re)creates the views whose tables exist, drops the others. Never throws for one view: see the module comment.
 * The caller shows `warnings` to the user (they mean a view is missing).
 */
export async function createAnalyticsViews(db: Db): Promise<AnalyticsViewsReport> {
  const tables = await listStreamTables(db, { views: true });
  const present = new Set(tables);
  const has = (t: string) => present.has(t);
  const ctx: ViewContext = {
    has,
    eventName: has('events') ? 'ev.name' : 'CAST(NULL AS VARCHAR)',
    eventJoin: (column) =>
      has('events') ? `LEFT JOIN main.events ev ON ev.id = ${column} AND ev._deleted_at IS NULL` : '',
  };
  const report: AnalyticsViewsReport = { created: [], warnings: [], history: [] };
  for (const def of VIEWS) {
    if (available(def, has)) await createView(db, def.name, def.sql(ctx), report);
    else await dropView(db, def.name, report);
  }
  await fieldViews(db, present, report);
  const history = await createHistoryViews(db, tables);
  report.history.push(...history.created);
  report.warnings.push(...history.warnings);
  return report;
}

/**
 * The failure of `Warehouse.createAnalyticsViews` when some view could not be built (the others were). Callers of
 * that older signature report a thrown error as a warning; `buildAnalyticsViews` gives the report instead.
 */
export class AnalyticsViewsError extends Error {
  constructor(readonly report: AnalyticsViewsReport) {
    super(report.warnings.join('; '));
    this.name = 'AnalyticsViewsError';
  }
}
