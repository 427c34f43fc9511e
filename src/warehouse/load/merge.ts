/**
 * Merging page files into a stream's table, in batches: the one place rows enter or change in a stream table.
 * Call inside a transaction; the caller commits the batch with its bookkeeping.
 *
 * Stream tables have no PRIMARY KEY. In DuckDB 1.5 a key's ART index is not buffer-managed (memory_limit does not
 * bound it) and every checkpoint rewrites it whole, so a keyed table got slower and fatter as it filled. Uniqueness is this module's job instead, per batch:
 *
 * 0. Pages of a single integer key carry their keys (staged.ts): when none repeats and none is in the table (a
 *    semi join that reads only the table's key column), the rows go straight from the files into the table in one
 *    INSERT, with no batch held in memory. A backfill's pages all go this way; the steps below are for the rest.
 * 1. batch: the pages' rows read by one `read_json` over all their files with declared types (JSON text cast, which
 *    validates it) into a temp table, deduplicated by key: a later page's row wins, as if the pages had been merged
 *    one by one.
 * 2. hits: the table's rows whose key the batch carries (a semi join: only the key columns of the table are read).
 *    None: one plain INSERT.
 * 3. old: of the hits, the stored rows that differ from the batch's (or are marked deleted), with the values of the
 *    table columns the pages do not carry (an expansion not selected this run, custom fields of other events), so a
 *    rewritten row keeps them. Identical rows are left alone (their `_synced_at` and `_run_id` stay).
 * 4. DELETE the changed rows by rowid and INSERT the new and changed ones: DuckDB rewrites a whole row when a LIST
 *    column is updated, so delete + insert is the cheaper update, and readers never see two rows of one key because
 *    both happen in one transaction. The changed rows are first kept as versions (history/versions.ts).
 *
 * Written rows get the time of the merge as `_synced_at` and their page's run as `_run_id`. Pages whose files have
 * different columns (two events with different custom fields), or of different runs, are batched apart; if two such
 * batches share a key (rare: a key would have to come back in pages of another shape before a merge), the pages are
 * merged in runs of consecutive pages of one shape instead, which gives exactly the page-by-page result.
 */
import { duckdbType } from '../../../schemas/columns.js';
import type { Db } from '../db/connection.js';
import { ident, literal } from '../db/sql.js';
import { keepVersions } from '../history/versions.js';
import type { TableColumns } from './ddl.js';
import type { PageColumn, PageFile } from './staged.js';

export interface MergeCounts {
  inserted: number;
  updated: number;
  unchanged: number;
}

/** Counts per run (the `_run_id` the rows were staged with). */
export type CountsByRun = Map<string, MergeCounts>;

function addCounts(into: CountsByRun, from: CountsByRun): void {
  for (const [run, c] of from) {
    const sum = into.get(run) ?? { inserted: 0, updated: 0, unchanged: 0 };
    sum.inserted += c.inserted;
    sum.updated += c.updated;
    sum.unchanged += c.unchanged;
    into.set(run, sum);
  }
}

interface MergeTarget {
  table: string;
  /** The table's columns now (after any schema change of the pages being merged). */
  columns: TableColumns;
  /** Absolute path of a staged file. */
  pathOf(file: string): string;
  /** Adds elapsed milliseconds to a named step (loadTimings). */
  time(step: string, since: number): number;
  /** The rows' `_synced_at` (UTC text): the time the caller logs the merge with (archive/op-log.ts). */
  at: string;
}

const PAGES = 'temp."_evsync_pages"';
const HITS = 'temp."_evsync_hits"';
const OLD = 'temp."_evsync_old"';
// Internal columns: data columns never start with an underscore (ddl.isEvolvableName), so no clash.
const RID = '"_evsync_rid"';
const CHANGED = '"_evsync_changed"';
const FILE = '_evsync_file';

/** The i-th batch's temp table, as created (`"..."`) and as referred to (`temp."..."`). */
function batchTable(i: number): string {
  return `"_evsync_batch_${i}"`;
}
function batchName(i: number): string {
  return `temp.${batchTable(i)}`;
}

/**
 * The columns the batch reads from the files: those some page of the batch has a value in. A file without one of
 * them (its page had it null in every row) reads as NULL there, which is what that page carried.
 */
function fileColumns(pages: readonly PageFile[]): PageColumn[] {
  const first = pages[0] as PageFile;
  return first.columns.filter((c) => pages.some((p) => !p.nulls.includes(c.name)));
}

/**
 * A file column as the table holds it: JSON text cast to JSON (which validates it), and a column widened since the
 * page was staged (schema evolution) cast to its type now, which holds every value of the old one (widen.ts).
 */
function selectColumn(c: PageColumn, target: Pick<MergeTarget, 'columns'>): string {
  const name = ident(c.name);
  const now = target.columns.get(c.name);
  if (c.type === 'json') return `CAST(${name} AS JSON) AS ${name}`;
  if (now && now !== c.type) return `CAST(${name} AS ${duckdbType(now)}) AS ${name}`;
  return name;
}

/** Pages batch together when their files have the same columns and their rows get the same `_run_id`. */
function signature(p: PageFile): string {
  return JSON.stringify([p.columns, p.key, p.runId]);
}

async function count(db: Db, sql: string): Promise<number> {
  const r = await db.query(sql);
  return Number(r.rows[0]?.n ?? 0);
}

/**
 * Step 1: the rows of `pages` (one shape) as a temp table, deduplicated by key. On registrant batches a window over
 * all their columns (QUALIFY row_number() ...) cost more than reading the files, so the batch is read as it
 * is and only keys repeated across pages (rare: a key must come back before a merge) are removed, by a window over
 * the key and the page order alone.
 */
async function buildBatch(db: Db, i: number, pages: readonly PageFile[], target: MergeTarget): Promise<void> {
  const first = pages[0] as PageFile;
  const spec = fileColumns(pages)
    .map((c) => `${literal(c.name)}: ${literal(c.type === 'json' ? 'VARCHAR' : duckdbType(c.type))}`)
    .join(', ');
  const select = fileColumns(pages)
    .map((c) => selectColumn(c, target))
    .join(', ');
  const files = pages.map((p) => literal(target.pathOf(p.file))).join(', ');
  await db.run(
    `CREATE OR REPLACE TEMP TABLE ${batchTable(i)} AS
       SELECT ${select}${pages.length > 1 ? `, ${FILE}` : ''}
         FROM read_json([${files}], format = 'array', columns = {${spec}}${pages.length > 1 ? `, filename = '${FILE}'` : ''})`,
  );
  if (pages.length === 1) return;
  const keys = first.key.map(ident).join(', ');
  const repeated = await count(db, `SELECT count(*) - count(DISTINCT (${keys})) AS n FROM ${batchName(i)}`);
  if (repeated > 0) {
    const values = pages.map((p) => `(${literal(target.pathOf(p.file))}, ${Math.trunc(p.seq)})`).join(', ');
    await db.run(`CREATE OR REPLACE TEMP TABLE "_evsync_pages" AS SELECT * FROM (VALUES ${values}) v(file, seq)`);
    // A later page's row wins, as if the pages had been merged one by one.
    await db.run(
      `DELETE FROM ${batchName(i)} WHERE rowid IN (
         SELECT rid FROM (
           SELECT b.rowid AS rid, row_number() OVER (PARTITION BY ${first.key.map((k) => `b.${ident(k)}`).join(', ')}
                                                    ORDER BY p.seq DESC) AS rn
             FROM ${batchName(i)} b JOIN ${PAGES} p ON p.file = b.${FILE})
          WHERE rn > 1)`,
    );
  }
}

/** Steps 2-4 for one batch; returns counts per run. */
async function applyBatch(
  db: Db,
  batch: string,
  pages: readonly PageFile[],
  target: MergeTarget,
  synced: string,
): Promise<MergeCounts> {
  const first = pages[0] as PageFile;
  const table = ident(target.table);
  const key = first.key;
  const pageNames = new Set(first.columns.map((c) => c.name));
  const read = fileColumns(pages);
  const readNames = new Set(read.map((c) => c.name));
  const data: PageColumn[] = read.filter((c) => !key.includes(c.name));
  // Carried by the pages but null throughout: not in the batch; written as NULL by leaving them out of the INSERT.
  const nullOnly = first.columns.filter((c) => !readNames.has(c.name)).map((c) => c.name);
  const carried = [...target.columns.keys()].filter((c) => !c.startsWith('_') && !pageNames.has(c));
  const keysMatch = (a: string, b: string) => key.map((k) => `${a}.${ident(k)} = ${b}.${ident(k)}`).join(' AND ');
  const names = read.map((c) => ident(c.name));
  let since = performance.now();

  await db.run(
    `CREATE OR REPLACE TEMP TABLE "_evsync_hits" AS
       SELECT t.rowid AS ${RID}, ${key.map((k) => `t.${ident(k)}`).join(', ')} FROM ${table} t SEMI JOIN ${batch} b ON ${keysMatch('t', 'b')}`,
  );
  const hits = await count(db, `SELECT count(*) AS n FROM ${HITS}`);
  since = target.time('probe', since);
  // The rows get the time of the merge (when they are written) and the run that staged them.
  const system = `CAST(${literal(synced)} AS TIMESTAMP), ${literal(first.runId)}, NULL`;

  if (hits === 0) {
    const inserted = await db.run(
      `INSERT INTO ${table} (${names.join(', ')}, "_synced_at", "_run_id", "_deleted_at")
         SELECT ${names.join(', ')}, ${system} FROM ${batch}`,
    );
    target.time('insert', since);
    return { inserted, updated: 0, unchanged: 0 };
  }

  const changed = [
    't."_deleted_at" IS NOT NULL',
    ...data.map((c) => `t.${ident(c.name)} IS DISTINCT FROM b.${ident(c.name)}`),
    ...nullOnly.map((c) => `t.${ident(c)} IS NOT NULL`),
  ].join(' OR ');
  await db.run(
    `CREATE OR REPLACE TEMP TABLE "_evsync_old" AS
       SELECT h.${RID}, ${key.map((k) => `h.${ident(k)}`).join(', ')}${carried.map((c) => `, t.${ident(c)}`).join('')},
              (${changed}) AS ${CHANGED}
         FROM ${table} t JOIN ${HITS} h ON t.rowid = h.${RID} JOIN ${batch} b ON ${keysMatch('h', 'b')}`,
  );
  since = target.time('compare', since);
  // The rows about to be replaced are versions the history keeps (history/versions.ts); a batch that changes none
  // (a page of rows as stored) keeps nothing and asks nothing more.
  if ((await count(db, `SELECT count(*) AS n FROM ${OLD} WHERE ${CHANGED}`)) > 0) {
    await keepVersions(db, target.table, `rowid IN (SELECT ${RID} FROM ${OLD} WHERE ${CHANGED})`, [], target.columns);
  }
  since = target.time('history', since);
  const updated = await db.run(`DELETE FROM ${table} WHERE rowid IN (SELECT ${RID} FROM ${OLD} WHERE ${CHANGED})`);
  since = target.time('delete', since);
  const insertNames = [...names, ...carried.map(ident)].join(', ');
  const insertValues = [...names.map((n) => `b.${n}`), ...carried.map((c) => `o.${ident(c)}`)].join(', ');
  const written = await db.run(
    `INSERT INTO ${table} (${insertNames}, "_synced_at", "_run_id", "_deleted_at")
       SELECT ${insertValues}, ${system} FROM ${batch} b LEFT JOIN ${OLD} o ON ${keysMatch('o', 'b')}
        WHERE o.${RID} IS NULL OR o.${CHANGED}`,
  );
  target.time('insert', since);
  return { inserted: written - updated, updated, unchanged: hits - updated };
}

/**
 * The rows of page files of one shape as the table takes them: the columns read (`names`), their values (`select`,
 * JSON text cast to JSON, widened columns cast) and the read itself (`from`).
 */
export function pageRows(
  pages: readonly PageFile[],
  target: Pick<MergeTarget, 'columns' | 'pathOf'>,
): { names: string[]; select: string; from: string } {
  const read = fileColumns(pages);
  const spec = read.map((c) => `${literal(c.name)}: ${literal(c.type === 'json' ? 'VARCHAR' : duckdbType(c.type))}`);
  const files = pages.map((p) => literal(target.pathOf(p.file))).join(', ');
  return {
    names: read.map((c) => c.name),
    select: read.map((c) => selectColumn(c, target)).join(', '),
    from: `read_json([${files}], format = 'array', columns = {${spec.join(', ')}})`,
  };
}

/** Whether two batches (of different shapes) hold a common key. */
async function overlap(db: Db, batches: number, key: readonly string[]): Promise<boolean> {
  const k = key.map(ident).join(', ');
  const union = Array.from({ length: batches }, (_, i) => `SELECT ${k}, ${i} AS g FROM ${batchName(i)}`).join(
    ' UNION ALL ',
  );
  return (
    (await count(
      db,
      `SELECT count(*) AS n FROM (SELECT 1 FROM (${union}) GROUP BY ${k} HAVING count(DISTINCT g) > 1 LIMIT 1)`,
    )) > 0
  );
}

async function dropTemps(db: Db, batches: number): Promise<void> {
  for (const name of [PAGES, HITS, OLD, ...Array.from({ length: batches }, (_, i) => batchName(i))]) {
    await db.run(`DROP TABLE IF EXISTS ${name}`);
  }
}

/** Groups pages by shape, each group in merge order, groups in the order of their first page. */
function groupByShape(pages: readonly PageFile[]): PageFile[][] {
  const groups = new Map<string, PageFile[]>();
  for (const p of [...pages].sort((a, b) => a.seq - b.seq)) {
    const sig = signature(p);
    const list = groups.get(sig) ?? [];
    list.push(p);
    groups.set(sig, list);
  }
  return [...groups.values()];
}

/** Runs of consecutive pages (in merge order) of one shape. */
function consecutiveRuns(pages: readonly PageFile[]): PageFile[][] {
  const runs: PageFile[][] = [];
  for (const p of [...pages].sort((a, b) => a.seq - b.seq)) {
    const last = runs[runs.length - 1];
    if (last && signature(last[0] as PageFile) === signature(p)) last.push(p);
    else runs.push([p]);
  }
  return runs;
}

/**
 * Pages whose keys are all new (not in the table, none repeated): INSERT straight from the files, with no batch
 * held in memory. A backfill's pages are all such; a merge of 100k+ rows then also skips the WAL (DuckDB writes row
 * groups of a large insert to the database file directly). Returns null when the pages need the full merge.
 */
async function insertIfNew(
  db: Db,
  pages: readonly PageFile[],
  target: MergeTarget,
  synced: string,
): Promise<MergeCounts | null> {
  const first = pages[0] as PageFile;
  const keys = pages.flatMap((p) => p.keys ?? []);
  if (new Set(keys).size !== keys.length) return null;
  let since = performance.now();
  const t = ident(target.table);
  const k = ident(first.key[0] as string);
  // The keys' range first: a scan skips every row group whose min/max of the key lies outside it, so when no stored
  // key is in the range (a backfill's new ids mostly are past every stored one) the list of keys is never sent.
  let low = keys[0] ?? 0;
  let high = low;
  for (const key of keys) {
    if (key < low) low = key;
    else if (key > high) high = key;
  }
  const inRange = await db.query(`SELECT count(*) AS n FROM ${t} WHERE ${k} BETWEEN ${low} AND ${high}`);
  const hits =
    Number(inRange.rows[0]?.n ?? 0) === 0
      ? inRange
      : await db.query(`SELECT count(*) AS n FROM ${t} WHERE ${k} IN (SELECT unnest(CAST(? AS BIGINT[])))`, [
          JSON.stringify(keys),
        ]);
  since = target.time('probe', since);
  if (Number(hits.rows[0]?.n ?? 0) > 0) return null;
  const rows = pageRows(pages, target);
  const inserted = await db.run(
    `INSERT INTO ${t} (${rows.names.map(ident).join(', ')}, "_synced_at", "_run_id", "_deleted_at")
       SELECT ${rows.select}, CAST(${literal(synced)} AS TIMESTAMP), ${literal(first.runId)}, NULL FROM ${rows.from}`,
  );
  target.time('insert', since);
  return { inserted, updated: 0, unchanged: 0 };
}

/** Whether a key is in more than one of the groups (each group's keys known). */
function keysOverlap(groups: readonly PageFile[][]): boolean {
  const owner = new Map<number, number>();
  for (let g = 0; g < groups.length; g++) {
    for (const p of groups[g] as PageFile[]) {
      for (const k of p.keys ?? []) {
        const o = owner.get(k);
        if (o !== undefined && o !== g) return true;
        owner.set(k, g);
      }
    }
  }
  return false;
}

/** Merges the pages (all of one stream) into the table; returns counts per run. */
export async function mergePages(db: Db, pages: readonly PageFile[], target: MergeTarget): Promise<CountsByRun> {
  const out: CountsByRun = new Map();
  if (pages.length === 0) return out;
  const synced = target.at;
  const add = (run: PageFile[], c: MergeCounts) => addCounts(out, new Map([[(run[0] as PageFile).runId, c]]));
  const groups = groupByShape(pages);
  let built = 0;
  let failed = true;
  try {
    if (pages.every((p) => p.keys !== null)) {
      // Keys known without reading the files: groups that share none merge independently, one batch at a time.
      if (groups.length > 1 && keysOverlap(groups)) {
        for (const run of consecutiveRuns(pages)) {
          built = 1;
          await buildBatch(db, 0, run, target);
          add(run, await applyBatch(db, batchName(0), run, target, synced));
        }
      } else {
        for (const group of groups) {
          const inserted = await insertIfNew(db, group, target, synced);
          if (inserted) {
            add(group, inserted);
            continue;
          }
          built = 1;
          const since = performance.now();
          await buildBatch(db, 0, group, target);
          target.time('read', since);
          add(group, await applyBatch(db, batchName(0), group, target, synced));
        }
      }
    } else {
      built = groups.length;
      const since = performance.now();
      for (let i = 0; i < groups.length; i++) await buildBatch(db, i, groups[i] as PageFile[], target);
      target.time('read', since);
      const key = (groups[0] as PageFile[])[0]?.key ?? [];
      if (groups.length > 1 && (await overlap(db, groups.length, key))) {
        for (const run of consecutiveRuns(pages)) {
          await buildBatch(db, 0, run, target);
          add(run, await applyBatch(db, batchName(0), run, target, synced));
        }
      } else {
        for (let i = 0; i < groups.length; i++) {
          const group = groups[i] as PageFile[];
          add(group, await applyBatch(db, batchName(i), group, target, synced));
        }
      }
    }
    failed = false;
    return out;
  } finally {
    // Temp tables hold a batch in memory until dropped. After a failed statement the transaction is aborted and
    // its rollback discards them: dropping then would only raise a second error over the first.
    if (!failed && built > 0) await dropTemps(db, built);
  }
}
