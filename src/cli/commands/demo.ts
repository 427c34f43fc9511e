/**
 * `evsync demo`: the whole job on the embedded simulator, no credentials needed. Starts the seeded `small` service
 * on a free loopback port, backfills the core streams into ./evsync-demo.duckdb (replaced each time) or the
 * `--db` file, then shows what landed, the credits spent against the 2000-credit window, and three answers from
 * the analytics views.
 *
 * The demo replaces its database, so it must never be the user's warehouse: EVSYNC_DB and the config file's `db`
 * are ignored, and a `--db` file that exists is replaced only if an earlier demo made it (`_evsync.meta` key
 * `demo`).
 */
import { existsSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { SyncResult } from '../../sync/index.js';
import type { Warehouse } from '../../warehouse/index.js';
import { type App, action, type Ctx, checkWarehousePath } from '../context.js';
import { CliError, errorMessage, UsageError } from '../errors.js';
import { columnNames, formatDuration, formatNumber, formatTable, type Row, toJson } from '../output/format.js';
import { attachProgress, exitCodeOf, explain, summaryTable } from '../run-report.js';

const DEMO_DB = 'evsync-demo.duckdb';
/** `_evsync.meta` key marking a database the demo built (and may replace). */
const DEMO_MARK = 'demo';

/** Whether `db` is a database an earlier demo built. */
async function isDemoDatabase(db: string): Promise<boolean> {
  const { Warehouse, DatabaseInUseError } = await import('../../warehouse/index.js');
  let w: Warehouse | null = null;
  try {
    w = await Warehouse.open(db, { readOnly: true });
    return (await w.marks.get(DEMO_MARK)) !== null;
  } catch (err) {
    if (err instanceof DatabaseInUseError) throw new CliError(`--db ${db}: ${errorMessage(err)}`);
    // Not a DuckDB file at all: certainly not one the demo made.
    return false;
  } finally {
    await w?.close();
  }
}

/** The demo's database: ./evsync-demo.duckdb, or `--db` (refused if it exists and no demo made it). */
async function demoDatabase(ctx: Ctx): Promise<string> {
  if (ctx.config.dbSource !== 'flag') return resolve(ctx.io.cwd, DEMO_DB);
  const db = ctx.config.db;
  checkWarehousePath(ctx);
  if (existsSync(db) && !(await isDemoDatabase(db))) {
    throw new UsageError(
      `--db ${db}: the file exists and no earlier demo made it; the demo rebuilds its database from scratch, so it will not touch this one (choose another --db, or remove the file yourself)`,
    );
  }
  return db;
}

/** Questions the analytics views answer; each is plain SQL a user can copy into `evsync query`. */
const DEMO_QUESTIONS: readonly { title: string; sql: string }[] = [
  {
    title: 'Registrants per event, by status (analytics.registration_status_by_event)',
    sql: `SELECT event_id, event_name, registrants, confirmed, attended, pending, cancelled
  FROM analytics.registration_status_by_event ORDER BY registrants DESC`,
  },
  {
    title: 'Net revenue per event (analytics.revenue_by_event)',
    sql: `SELECT event_id, event_name, paying_registrants, payments, refunds, net_revenue
  FROM analytics.revenue_by_event ORDER BY net_revenue DESC`,
  },
  {
    title: 'Check-in rate of events that have started (analytics.checkin_by_event)',
    sql: `SELECT event_id, event_name, expected, checked_in, checkin_rate
  FROM analytics.checkin_by_event WHERE checked_in > 0 ORDER BY checkin_rate DESC`,
  },
];

interface DemoReport {
  baseUrl: string;
  db: string;
  result: SyncResult;
  tables: Record<string, number>;
  creditLimit: number;
  answers: { title: string; sql: string; columns: string[]; rows: Row[] }[];
  /** `--webhooks`: a change arriving by webhook. */
  webhooks?: import('../demo-webhooks.js').WebhookDemo | undefined;
}

type WebhookDemoModule = typeof import('../demo-webhooks.js');

/** The seeded simulator on a free loopback port, and a client of its first account (its secrets scrubbed). */
async function startDemoService(ctx: Ctx) {
  ctx.log.info('starting the embedded simulator (seeded "small" dataset) on a free loopback port…');
  const { startSimulator } = await import('../../simulator/index.js');
  const sim = await startSimulator({ size: 'small', port: 0, host: '127.0.0.1' });
  const { ApiClient } = await import('../../api/index.js');
  const account = sim.accounts[0];
  if (!account) throw new Error('the simulator has no account');
  const client = new ApiClient({
    baseUrl: sim.baseUrl,
    credentials: { clientId: account.clientId, clientSecret: account.clientSecret },
    now: ctx.now,
  });
  ctx.out.addSecrets([account.clientSecret, account.encoded]);
  ctx.err.addSecrets([account.clientSecret, account.encoded]);
  return { sim, account, client };
}

/** The demo's questions against the views; one that fails is named, the others are still answered. */
async function answerQuestions(ctx: Ctx, warehouse: Warehouse): Promise<DemoReport['answers']> {
  const answers: DemoReport['answers'] = [];
  for (const question of DEMO_QUESTIONS) {
    try {
      const answer = await warehouse.query(question.sql);
      answers.push({ ...question, columns: columnNames(answer.columns), rows: answer.rows as Row[] });
    } catch (err) {
      ctx.log.warn(`${question.title}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return answers;
}

/** The report for a person: what landed, the sync, the credits, the answers, and what to run next. */
function printDemo(
  ctx: Ctx,
  report: DemoReport,
  views: string[],
  history: string[],
  hooks: WebhookDemoModule | null,
  started: number,
): void {
  const { db, result, tables, webhooks } = report;
  const style = ctx.outStyle;
  const out = (text: string) => ctx.out.write(text);
  out(`\n${style.bold('What landed')} (${db})\n`);
  out(
    formatTable(
      ['table', 'rows'],
      Object.entries(tables).map(([table, rows]) => ({ table, rows })),
    ),
  );
  out(`\n${style.bold('Sync')}\n${summaryTable(result)}`);
  const credits = result.credits;
  out(
    `\n${style.bold('Credits')}: ${formatNumber(credits.total)} spent of the ${formatNumber(report.creditLimit)}-credit window (${formatNumber(credits.list / 10)} list calls x 10 + ${formatNumber(credits.token + credits.other)} for tokens and other calls), ${formatNumber(result.requests)} requests, ${formatDuration(result.durationMs)}\n`,
  );
  for (const answer of report.answers) {
    out(`\n${style.bold(answer.title)}\n${formatTable(answer.columns, answer.rows)}`);
  }
  if (hooks && webhooks) out(`\n${style.bold('Change capture')}\n${hooks.describeWebhookDemo(webhooks)}`);
  out(
    `\nDone in ${formatDuration(ctx.now() - started)}. Explore: evsync query --db ${ctx.config.dbSource === 'flag' ? db : DEMO_DB} "select * from analytics.${views[0] ?? '<view>'}"\n${views.length ? `Views: ${views.map((view) => (view.includes('.') ? view : `analytics.${view}`)).join(', ')}\n` : ''}`,
  );
  // The history begins with this backfill: each record's row is its first version (README: The history of every record).
  const kept = history.filter((name) => !name.endsWith('_as_of') && !name.endsWith('_transitions'));
  if (kept.length) out(`History (every version from now on): ${kept.map((name) => `history.${name}`).join(', ')}\n`);
}

async function demo(ctx: Ctx, flags: { webhooks?: boolean } = {}): Promise<number> {
  const started = ctx.now();
  // The demo deletes its database first, so it must never be the user's warehouse (see demoDatabase).
  const db = await demoDatabase(ctx);
  for (const file of [db, `${db}.wal`]) rmSync(file, { force: true });

  const { sim, account, client } = await startDemoService(ctx);
  const { Warehouse } = await import('../../warehouse/index.js');
  let warehouse: Warehouse | null = null;
  const progress = attachProgress(ctx, client);
  try {
    warehouse = await Warehouse.open(db, { now: ctx.now });
    // Marked before the backfill, so that even an interrupted demo's database can be replaced by the next demo.
    await warehouse.marks.set(DEMO_MARK, new Date(ctx.now()).toISOString());
    const { runSync } = await import('../../sync/index.js');
    progress.log.info(`${sim.baseUrl} (account "${account.name}"): backfill of the core streams into ${db}`);
    const result = await runSync(client, warehouse, { mode: 'backfill', streams: 'core' });
    progress.dispose();
    // The engine creates them at the end of a run too; again here so the answers below never miss one. Each view
    // is built on its own: one that fails is named, the others stand.
    const built = await warehouse.buildAnalyticsViews();
    for (const warning of built.warnings) ctx.log.warn(`analytics views: ${warning}`);
    const tables = await warehouse.tableCounts();
    const creditLimit = client.ledger.snapshot().limit;
    const answers = await answerQuestions(ctx, warehouse);
    const hooks = flags.webhooks ? await import('../demo-webhooks.js') : null;
    const webhooks = hooks ? await hooks.demoWebhooks(ctx, sim, warehouse, client, 'core') : undefined;
    const report: DemoReport = { baseUrl: sim.baseUrl, db, result, tables, creditLimit, answers, webhooks };
    if (ctx.json) ctx.out.write(`${toJson(report, 2)}\n`);
    else printDemo(ctx, report, built.created, built.history, hooks, started);
    explain(ctx.log, result, 'evsync demo');
    return exitCodeOf(result);
  } finally {
    progress.dispose();
    await warehouse?.close();
    await client.close();
    await sim.close();
  }
}

export function registerDemoCommand(program: Command, app: App): void {
  program
    .command('demo')
    .description('run the whole job on the embedded simulator: backfill, rows per table, credits, analytics')
    .option('--webhooks', 'then show a change at the service arriving by webhook within seconds (evsync serve)')
    .addHelpText(
      'after',
      `
Needs no credentials and no network: the simulator runs in-process on 127.0.0.1. The warehouse is
./${DEMO_DB} in the current directory (deleted and rebuilt each time), or --db <file>: a file that exists is
replaced only if an earlier demo made it. EVSYNC_DB and the config file's "db" are ignored (never your warehouse).

Examples:
  $ evsync demo
  $ evsync demo --json | jq .tables
  $ evsync demo --db /tmp/try.duckdb
  $ evsync demo --webhooks
  $ evsync query --db ${DEMO_DB} "select * from registrants limit 5"`,
    )
    .action(action<{ webhooks?: boolean }>(app, demo));
}
