/**
 * `evsync plan`'s human output: the per-stream table, then what the totals mean in time at the rate limit, what the
 * plan spent, and how the figures were reached (an estimate's basis and range, or why they are a lower bound).
 */
import { LIST_CALL_CREDITS } from '../../../connectors/service.js';
import type { PlanEstimate, PlanReport, RateLimitView } from '../../sync/index.js';
import { formatDuration, formatNumber, formatTable } from './format.js';

const n = formatNumber;
const duration = (seconds: number) => formatDuration(seconds * 1000);

function table(report: PlanReport): string {
  const rows = Object.entries(report.streams).map(([stream, s]) => ({ stream, ...s }));
  if (rows.length === 0) return '(nothing to do)\n';
  const columns = report.estimate
    ? ['stream', 'items', 'counted', 'extrapolated', 'calls', 'credits']
    : ['stream', 'items', 'calls', 'credits'];
  return formatTable(columns, rows);
}

/** The limit the time is priced at, and where its figures come from. */
function limitText(r: RateLimitView): string {
  const window = `${n(r.limit)} credits per ${duration(r.windowSeconds)}`;
  if (r.limitSource === 'configured') return `the configured limit (${window}; no answer reported one yet)`;
  const reset = r.resetInSeconds === null ? '' : `, the window resets in ${duration(r.resetInSeconds)}`;
  return `the reported limit (${window}: ${n(r.remaining)} left${reset}; the window's length is the configured one)`;
}

function timeLine(report: PlanReport): string {
  const e = report.estimate;
  const range = e && e.lowSeconds !== e.highSeconds ? ` (${duration(e.lowSeconds)} to ${duration(e.highSeconds)})` : '';
  const windows = `${report.windows} rate-limit window${report.windows === 1 ? '' : 's'}`;
  return `at ${limitText(report.rateLimit)}: ${windows}, about ${duration(report.estimatedSeconds)}${range}`;
}

function spentLine(report: PlanReport): string {
  const kind = report.mode === 'backfill' ? 'backfill' : 'sync';
  if (report.estimate) {
    const whole = report.spentCredits + report.totalCredits;
    const token = report.spentCredits - report.spentListCalls * LIST_CALL_CREDITS;
    const calls = `${n(report.spentListCalls)} list calls${token > 0 ? ` and ${n(token)} for the token` : ''}`;
    return `estimating spent ${n(report.spentCredits)} credits (${calls}): the pages it read are kept, and the next \`evsync ${kind}\` resumes from them and spends the figure above (about ${n(whole)} credits in all)`;
  }
  if (report.counted) {
    return `counting spent ${n(report.spentCredits)} credits (page 1 of each item): those pages are kept, and the next \`evsync ${kind}\` resumes from them and spends the figure above`;
  }
  return 'spent nothing (priced from earlier runs; --estimate prices from a sample of the events, --count from page 1 of each item)';
}

function sampledText(e: PlanEstimate): string {
  const read = e.events - e.unread;
  if (e.unread === 0)
    return `all ${n(e.events)} events were read before: priced from their history, nothing extrapolated`;
  const history = read > 0 ? `; the ${n(read)} events read before are priced from their history` : '';
  const picked = `${e.sampled.length} of the ${n(e.unread)} events never read (${e.sampled.join(', ') || 'none'})`;
  const rest = e.unread - e.sampled.length;
  if (rest === 0) return `page 1 of every per-event stream on ${picked}: nothing extrapolated${history}`;
  const how =
    e.by === 'status'
      ? 'the mean of the counted events of the same status (of all counted events for a status none has): the events carry no target_attendance or capacity to scale by'
      : `their ${e.by}, at the rows per unit of it the counted events show`;
  const order = e.by === 'status' ? 'spread over their statuses' : `spread over their ${e.by}, largest first`;
  return `page 1 of every per-event stream on ${picked}, ${order}; the other ${n(rest)} extrapolated by ${how}${history}`;
}

/** How an estimate's figures were reached, how far they may be off, and why they may be a lower bound. */
function estimateLines(report: PlanReport, e: PlanEstimate): string[] {
  const kind = report.mode === 'backfill' ? 'backfill' : 'sync';
  const lines = [
    `basis: the events list read whole and the account streams counted (exact, or priced from their history); ${sampledText(e)}`,
  ];
  lines.push(
    e.extrapolatedCredits === 0
      ? `nothing extrapolated: records added or changed before the ${kind} are all that can move the figure`
      : `range: ${n(e.lowCredits)} to ${n(e.highCredits)} credits: the ${n(e.extrapolatedCredits)} extrapolated priced at the smallest and largest rate the counted events show (the other ${n(e.exactCredits)} are counted or from history); records added or changed before the ${kind} are not foreseen`,
  );
  const extrapolated = Object.values(e.streams).filter((s) => s.extrapolated > 0).length;
  if (e.spreadUnknown.length > 0 && e.spreadUnknown.length === extrapolated)
    lines.push(
      'the range rests on a single counted event with rows to scale by: it cannot show how events differ (a larger --sample can)',
    );
  else if (e.spreadUnknown.length > 0)
    lines.push(
      `for ${e.spreadUnknown.join(', ')} the range rests on a single counted event with rows to scale by: it cannot show how events differ`,
    );
  for (const reason of e.lowerBound) lines.push(`lower bound: ${reason}`);
  return lines;
}

function lowerBoundLines(report: PlanReport, u: NonNullable<PlanReport['unpriced']>): string[] {
  const flag = report.mode === 'backfill' ? ' --backfill' : '';
  const kind = report.mode === 'backfill' ? 'backfill' : 'sync';
  return [
    `lower bound only: no events are known yet, so the ${u.perEventStreams} streams listed per event are not priced (at least ${n(u.countCreditsPerEvent)} credits per event, more for long lists; a real account's backfill can cost many times the figure above)`,
    `\`evsync plan${flag} --estimate\` estimates everything for ${n(u.estimateCredits)} credits (page 1 of the events list and of each account stream, and of the per-event streams on 3 events; 10 more per further 1,000 events, fewer with fewer than 3 events), and says how sure it is`,
    `\`evsync plan${flag} --count\` prices everything exactly: it spends ${n(u.countCreditsNow)} credits now plus ${n(u.countCreditsPerEvent)} per event (page 1 of every item), and the pages it reads are kept: the ${kind} resumes from them and does not buy them again (so are --estimate's)`,
  ];
}

export function renderPlan(report: PlanReport): string {
  const atLeast = report.complete ? '' : 'at least ';
  const about = report.estimate && report.complete ? 'about ' : atLeast;
  const events = report.unpriced ? 'unknown' : n(report.events);
  const lines = [
    `${report.mode}: ${about}${n(report.totalCalls)} list calls, ${about}${n(report.totalCredits)} credits, ${events} events in scope`,
    timeLine(report),
    spentLine(report),
  ];
  if (report.estimate) lines.push(...estimateLines(report, report.estimate));
  if (report.unpriced) lines.push(...lowerBoundLines(report, report.unpriced));
  for (const u of report.unavailable) {
    lines.push(`${u.stream} is unavailable (${u.detail ?? u.status}): not priced; ${u.hint ?? ''}`.trimEnd());
  }
  return `${table(report)}${lines.join('\n')}\n`;
}
