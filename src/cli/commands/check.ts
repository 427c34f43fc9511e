/**
 * `src/cli/commands/`: one file per command: its flags, the library call, what it prints; no command imports another.
 *
 * `evsync check`: can a sync run? The service (does the base URL answer as the event API?), credentials and token,
 * the rate-limit state from the headers, the clock, the record time zone, and the database (does it open, and can
 * a sync write it?), and memory (the container's or machine's limit, and what the bin chose: memory-policy.ts).
 * Spends 1 credit (token) + 10 (one list call). Exit 0 only when a sync can run.
 */
import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { LIST_CALL_CREDITS } from '../../../connectors/service.js';
import type { ApiClient, ListPage } from '../../api/index.js';
import { formatTimestamp, parseTimestampUtc } from '../../sync/clock.js';
import type { Connection } from '../config.js';
import { type App, action, type Ctx, connection, createClient, openWarehouse } from '../context.js';
import { ExitCode, errorMessage } from '../errors.js';
import { describeMemory } from '../memory-policy.js';
import { formatDuration, formatNumber, toJson } from '../output/format.js';
import { warehouseWritable } from '../warehouse-path.js';

/** `info`: worth saying, neither good nor bad (something that could not be judged); never a ✓. */
type Status = 'ok' | 'warn' | 'fail' | 'info';

interface CheckItem {
  name: string;
  status: Status;
  message: string;
}

interface CheckReport {
  ok: boolean;
  baseUrl: string;
  who: string;
  checks: CheckItem[];
  tokenExpiresAt: string | null;
  rateLimit: { limit: number; remaining: number; resetAt: string | null } | null;
  clockOffsetMs: number | null;
  newestUpdatedAt: string | null;
  recordSkewSeconds: number | null;
  creditsSpent: number;
}

const HOUR = 3_600_000;

/**
 * How a record's `updated_at` sits against the server's time, in the configured record zone. A record in the
 * future, or one that is a near-exact whole number of hours old, suggests the service writes another zone.
 */
export function judgeRecordTime(
  newest: string,
  serverNow: Date,
  zone: string,
): { status: Status; message: string; skewSeconds: number } {
  const server = formatTimestamp(serverNow, zone);
  const skewMs = parseTimestampUtc(server).getTime() - parseTimestampUtc(newest.slice(0, 19)).getTime();
  const skewSeconds = Math.round(skewMs / 1000);
  const hours = Math.round(skewMs / HOUR);
  const nearWholeHour = hours !== 0 && Math.abs(skewMs - hours * HOUR) <= 5 * 60_000;
  const hint = `set "recordTimezone" in evsync.config.json to the zone the service writes (now ${zone})`;
  if (skewMs < -120_000) {
    return {
      status: 'warn',
      skewSeconds,
      message: `newest updated_at (${newest}) is ${formatDuration(-skewMs)} ahead of the server's time in ${zone}: record timestamps look like another time zone (about UTC${hours <= 0 ? '+' : '-'}${Math.abs(hours)}); ${hint}`,
    };
  }
  if (nearWholeHour && Math.abs(hours) <= 14) {
    return {
      status: 'warn',
      skewSeconds,
      message: `newest updated_at (${newest}) is almost exactly ${Math.abs(hours)}h behind the server's time in ${zone}: if a record changed just now, timestamps are in another zone; ${hint}`,
    };
  }
  if (skewMs < HOUR) {
    return {
      status: 'ok',
      skewSeconds,
      message: `newest updated_at (${newest}) is ${formatDuration(skewMs)} before server time: record timestamps match ${zone}`,
    };
  }
  return {
    status: 'info',
    skewSeconds,
    message: `newest updated_at (${newest}) is ${formatDuration(skewMs)} old: too old to calibrate the record time zone (change a record and run check again)`,
  };
}

/**
 * The token call failed: was it the service (nothing answered, or not as the event API) rather than the
 * credentials? Then the base URL is what to check, and the credentials were not judged at all.
 */
function serviceProblem(err: unknown, baseUrl: string): string | null {
  const name = err instanceof Error ? err.name : '';
  const message = errorMessage(err);
  const hint =
    'check EVSYNC_BASE_URL (or "baseUrl" in evsync.config.json): the API root ending in /v1, e.g. https://api.swoogo.com/api/v1';
  if (name === 'NetworkError' || name === 'TimeoutError') {
    return `${baseUrl} does not answer (${message}): ${hint}, and the network`;
  }
  if (name === 'MalformedResponseError') return `${baseUrl} answered, but not as the event API (${message}): ${hint}`;
  const status = (err as { status?: unknown } | null)?.status;
  if (name !== 'CredentialsRejectedError' && typeof status === 'number') {
    if (status >= 500) return `${baseUrl} failed on the token call (${message}): the service may be down; or ${hint}`;
    if (status !== 401 && status !== 403) return `${baseUrl} answered, but not as the event API (${message}): ${hint}`;
  }
  return null;
}

/** The list call was not made because the window's credits are spent: how long until the next, and what is usable. */
function budgetSpent(err: unknown, nowMs: number): { ms: number; usable: number } | null {
  if (!(err instanceof Error) || err.name !== 'BudgetExhaustedError') return null;
  const e = err as Error & { reason?: unknown; resetAt?: unknown; remaining?: unknown };
  if (e.reason !== 'max-wait' || !(e.resetAt instanceof Date)) return null;
  return {
    ms: Math.max(0, e.resetAt.getTime() - nowMs),
    usable: typeof e.remaining === 'number' ? e.remaining : 0,
  };
}

async function newestEvent(client: ApiClient): Promise<ListPage> {
  // The cheapest call that says something about record time: one record, newest first. Still 10 credits.
  return client.list('/events', { sort: '-updated_at', perPage: 1, page: 1, fields: ['id', 'updated_at'] });
}

/** Records one check's outcome (and prints it, unless the report is printed as JSON at the end). */
type AddCheck = (name: string, status: Status, message: string) => void;

function checkRecorder(ctx: Ctx, checks: CheckItem[]): AddCheck {
  const marks: Record<Status, string> = {
    ok: ctx.outStyle.green('✓'),
    warn: ctx.outStyle.yellow('!'),
    fail: ctx.outStyle.red('✗'),
    info: ctx.outStyle.dim('·'),
  };
  return (name, status, message) => {
    checks.push({ name, status, message });
    if (!ctx.json) ctx.out.write(`${marks[status]} ${name}: ${message}\n`);
  };
}

/** The token call: judges the service and the credentials; true when a token was obtained. */
async function checkToken(client: ApiClient, conn: Connection, add: AddCheck, report: CheckReport): Promise<boolean> {
  try {
    await client.ensureToken();
  } catch (err) {
    const problem = serviceProblem(err, conn.baseUrl);
    if (problem) {
      add('service', 'fail', problem);
      add('credentials', 'info', `not checked (${conn.who}): the service did not answer as the event API`);
    } else {
      add('service', 'ok', `${conn.baseUrl} answers (as ${conn.who})`);
      add('credentials', 'fail', errorMessage(err));
    }
    return false;
  }
  add('service', 'ok', `${conn.baseUrl} answers as the event API (as ${conn.who})`);
  const expires = client.tokenExpiresAt;
  report.tokenExpiresAt = expires?.toISOString() ?? null;
  add('credentials', 'ok', `token obtained${expires ? `, valid until ${expires.toISOString()}` : ''}`);
  return true;
}

/** The local clock against the server's Date header (evsync uses the server's time either way). */
function checkClock(client: ApiClient, add: AddCheck, report: CheckReport): void {
  const offset = client.clockOffsetMs;
  report.clockOffsetMs = Math.round(offset);
  if (Math.abs(offset) > 60_000) {
    add(
      'clock',
      'warn',
      `local clock is ${formatDuration(Math.abs(offset))} ${offset > 0 ? 'behind' : 'ahead of'} the server's Date header; evsync uses the server's time, but check NTP`,
    );
  } else add('clock', 'ok', `local clock within ${formatDuration(Math.abs(offset))} of the server's Date header`);
}

/** What the list call told: answered (then clock and record zone judged), or not made until the window resets. */
interface ListOutcome {
  answered: boolean;
  /** Set when the window's credits are spent: a state to wait out, not a failure. */
  waitMs: number | null;
}

/** The newest record's `updated_at` against the server's time in the configured record zone. */
function checkRecordZone(ctx: Ctx, client: ApiClient, page: ListPage, add: AddCheck, report: CheckReport): void {
  const newest = page.items[0]?.updated_at;
  if (typeof newest === 'string' && newest !== '') {
    report.newestUpdatedAt = newest;
    const zone = ctx.config.values.recordTimezone ?? 'UTC';
    const judged = judgeRecordTime(newest, client.serverNow(), zone);
    report.recordSkewSeconds = judged.skewSeconds;
    add('record time zone', judged.status, judged.message);
  } else add('record time zone', 'warn', 'no event with updated_at to calibrate against');
}

/** The list call (10 credits): does listing work, and what do the clock and the newest record's time say? */
async function checkListCall(ctx: Ctx, client: ApiClient, add: AddCheck, report: CheckReport): Promise<ListOutcome> {
  let answered = false;
  try {
    const page = await newestEvent(client);
    answered = true;
    add(
      'list call',
      'ok',
      `GET /events answered (${page.meta.totalCount === null ? 'no total count given' : `${formatNumber(page.meta.totalCount)} events`}; this call cost ${LIST_CALL_CREDITS} credits)`,
    );
    checkClock(client, add, report);
    checkRecordZone(ctx, client, page, add, report);
    return { answered, waitMs: null };
  } catch (err) {
    const wait = budgetSpent(err, ctx.now());
    if (!wait) {
      add('list call', 'fail', errorMessage(err));
      return { answered, waitMs: null };
    }
    add(
      'list call',
      'info',
      `not made: ${wait.usable} credits usable in this window, 10 needed; the next window starts in ${formatDuration(wait.ms)} (nothing to fix: the budget is spent for now)`,
    );
    return { answered, waitMs: wait.ms };
  }
}

/** The rate-limit state as the list call's headers (or the spent budget) reported it, and the credits spent. */
function checkRateLimit(ctx: Ctx, client: ApiClient, list: ListOutcome, add: AddCheck, report: CheckReport): void {
  const ledger = client.ledger.snapshot();
  const credits = `${formatNumber(ledger.remaining)} of ${formatNumber(ledger.limit)} credits left`;
  if (list.answered) {
    report.rateLimit = {
      limit: ledger.limit,
      remaining: ledger.remaining,
      resetAt: ledger.resetAt?.toISOString() ?? null,
    };
    const reset = ledger.resetAt ? `, window resets in ${formatDuration(ledger.resetAt.getTime() - ctx.now())}` : '';
    add(
      'rate limit',
      ledger.remaining < 10 ? 'warn' : 'ok',
      `${credits}${reset}${ledger.remaining < 10 ? ' (a sync will wait for the reset)' : ''}`,
    );
  } else if (list.waitMs !== null) {
    report.rateLimit = {
      limit: ledger.limit,
      remaining: ledger.remaining,
      resetAt: new Date(ctx.now() + list.waitMs).toISOString(),
    };
    add(
      'rate limit',
      'info',
      `budget spent: ${credits}, the window resets in ${formatDuration(list.waitMs)} (a sync waits for it, up to --max-wait)`,
    );
  } else {
    // Before a list call answers, the ledger holds only its assumptions (DEFAULT_RATE_LIMIT): nothing to report as known.
    add('rate limit', 'info', 'not known: no list call answered');
  }
  report.creditsSpent = ledger.spent.list + ledger.spent.other + ledger.spent.token;
}

/** Does the database open, and can a sync write it (or create it)? */
async function checkDatabase(ctx: Ctx, add: AddCheck): Promise<void> {
  const db = ctx.config.db;
  const unwritable = warehouseWritable(db);
  if (unwritable) add('database', 'fail', unwritable);
  else if (existsSync(db)) {
    try {
      const warehouse = await openWarehouse(ctx, { readOnly: true });
      await warehouse.close();
      add('database', 'ok', `${db} opens and can be written`);
    } catch (err) {
      add('database', 'fail', errorMessage(err));
    }
  } else add('database', 'ok', `${db} does not exist yet; its folder can be written (the first sync creates it)`);
}

/** The report as JSON, or the one-line verdict under the printed checks. */
function writeVerdict(ctx: Ctx, report: CheckReport, waitMs: number | null): void {
  const verdict = !report.ok
    ? 'a sync cannot run: fix the failures above'
    : waitMs !== null
      ? `a sync can run once the rate-limit window resets in ${formatDuration(waitMs)}`
      : 'a sync can run';
  if (ctx.json) ctx.out.write(`${toJson(report, 2)}\n`);
  else
    ctx.out.write(
      `${verdict} (this check spent ${report.creditsSpent} credit${report.creditsSpent === 1 ? '' : 's'})\n`,
    );
}

async function check(ctx: Ctx): Promise<number> {
  const conn = connection(ctx);
  // Never wait for a window here: a check answers now.
  const client = await createClient(ctx, conn, { maxWait: 0 });
  const checks: CheckItem[] = [];
  const add = checkRecorder(ctx, checks);
  const report: CheckReport = {
    ok: false,
    baseUrl: conn.baseUrl,
    who: conn.who,
    checks,
    tokenExpiresAt: null,
    rateLimit: null,
    clockOffsetMs: null,
    newestUpdatedAt: null,
    recordSkewSeconds: null,
    creditsSpent: 0,
  };
  let list: ListOutcome = { answered: false, waitMs: null };
  try {
    if (await checkToken(client, conn, add, report)) list = await checkListCall(ctx, client, add, report);
    checkRateLimit(ctx, client, list, add, report);
    await checkDatabase(ctx, add);
    const memory = describeMemory();
    add('memory', memory.fits ? 'ok' : 'warn', memory.message);
  } finally {
    await client.close();
  }
  report.ok = checks.every((item) => item.status !== 'fail');
  writeVerdict(ctx, report, list.waitMs);
  return report.ok ? ExitCode.Done : ExitCode.Failure;
}

export function registerCheckCommand(program: Command, app: App): void {
  program
    .command('check')
    .description(
      'check the service, credentials, rate limit, clocks, database (can it be written?) and memory: can a sync run?',
    )
    .addHelpText(
      'after',
      `
Spends 11 credits: the token call (1) and one list call (10) for the newest event.
A base URL that refuses connections or does not answer as the event API fails "service" (check EVSYNC_BASE_URL).
The database passes only if a sync could write it: the file is opened for writing and a file is created and
removed in its folder (permission bits are not trusted: root ignores them). Marks: ✓ ok, ! warning, ✗ failure,
· not judged.

Examples:
  $ evsync check
  $ evsync check --json | jq .rateLimit

Exit 0 when a sync can run, 1 when something fails (e.g. credentials rejected), 2 when configuration is missing.`,
    )
    .action(action(app, check));
}
