/**
 * What a schedule may spend against what the service allows: runs per hour of a cron schedule, the credits they
 * need at most, and the limit to judge them against. The scheduler warns at start when the schedule cannot fit.
 */
import { DEFAULT_RATE_LIMIT, LIST_CALL_CREDITS } from '../../connectors/service.js';

/**
 * Runs per hour of a cron expression, from its next firing times: intervals over the time they span (exact for
 * regular schedules, including 6-field ones with seconds; an average for irregular ones). Counting the times over
 * the span from now would add one run: 200 times every 3 s span 597 s, which read as 1,205.9 runs/hour, not 1,200.
 */
export function runsPerHour(nextTimes: readonly number[]): number {
  if (nextTimes.length < 2) return 0;
  const first = nextTimes[0] ?? 0;
  const last = nextTimes[nextTimes.length - 1] ?? first;
  if (last <= first) return 0;
  return ((nextTimes.length - 1) * 3_600_000) / (last - first);
}

interface BudgetFit {
  perRun: number;
  perHour: number;
  capacityPerHour: number;
  fits: boolean;
}

/**
 * Upper bound of what the schedule spends: every event-scoped stream polled once per event in scope, every other
 * stream once, a list call's credits (LIST_CALL_CREDITS) each, every run. Real incremental runs poll past events less often.
 */
export function budgetFit(opts: {
  events: number;
  eventStreams: number;
  otherStreams: number;
  runsPerHour: number;
  limit: number;
  windowSeconds: number;
}): BudgetFit {
  const perRun = (opts.events * opts.eventStreams + opts.otherStreams) * LIST_CALL_CREDITS;
  const perHour = perRun * opts.runsPerHour;
  const capacityPerHour = opts.limit * (3600 / opts.windowSeconds);
  return { perRun, perHour, capacityPerHour, fits: perHour <= capacityPerHour };
}

export interface RateLimit {
  credits: number;
  windowSeconds: number;
  /** Where the numbers come from, for the budget message. */
  source: string;
}

/**
 * The limit to plan with: what the service reported (its headers, as the last run's ledger recorded them), else
 * the configured `rateLimit`, else the spec's 2000 per 600 s. The window length is never in the headers.
 */
export function rateLimitFor(
  learnedLimit: number | null,
  configured: { credits: number; windowSeconds: number } | undefined,
): RateLimit {
  const windowSeconds = configured?.windowSeconds ?? DEFAULT_RATE_LIMIT.windowSeconds;
  if (learnedLimit !== null) {
    return { credits: learnedLimit, windowSeconds, source: 'the limit the service reported' };
  }
  if (configured) return { ...configured, source: 'rateLimit in the config' };
  return { ...DEFAULT_RATE_LIMIT, source: "the service's documented default" };
}

/** A count as a person reads it: 1,200. */
export function formatCount(n: number): string {
  return n.toLocaleString('en-US');
}

/** How often a schedule runs, in the unit that reads best: a yearly one is "1 run/year", not "0 runs/hour". */
export function frequency(perHour: number): string {
  const say = (n: number, unit: string) => {
    const text = formatCount(Math.round(n * 10) / 10);
    return `${text} ${text === '1' ? 'run' : 'runs'}/${unit}`;
  };
  if (perHour >= 0.5) return say(perHour, 'hour');
  if (perHour * 24 >= 0.5) return say(perHour * 24, 'day');
  return say(perHour * 24 * 365, 'year');
}
