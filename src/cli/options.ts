/**
 * Flag definitions shared by several commands, with parsers that reject bad values before any work starts
 * (commander reports an InvalidArgumentError; `main` turns it into exit 2).
 */
import { type Command, InvalidArgumentError, Option } from 'commander';
import { selectStreams } from '../../connectors/index.js';
import { isTimeZone, parseDuration } from '../../schemas/config.js';

export function positiveInt(what = 'a positive integer'): (value: string) => number {
  return wholeNumberFrom(1, what);
}

export function nonNegativeInt(what = 'a whole number >= 0'): (value: string) => number {
  return wholeNumberFrom(0, what);
}

function wholeNumberFrom(least: number, what: string): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < least) {
      throw new InvalidArgumentError(`expected ${what}`);
    }
    return n;
  };
}

function parseDurationFlag(value: string): number {
  const ms = parseDuration(value);
  if (ms === null) throw new InvalidArgumentError('expected a duration such as 90s, 15m, 1h, 1h30m or 0');
  return ms;
}

export function parseStreamsFlag(value: string): string {
  try {
    selectStreams(value);
  } catch (err) {
    throw new InvalidArgumentError(err instanceof Error ? err.message : String(err));
  }
  return value;
}

function parseEventIds(value: string): number[] {
  const parts = value.split(',').map((p) => p.trim());
  const ids = parts.map(Number);
  if (parts.some((p) => !/^\d+$/.test(p)) || ids.some((n) => !Number.isSafeInteger(n) || n < 1)) {
    throw new InvalidArgumentError('expected a comma list of event ids, e.g. 101,102');
  }
  return [...new Set(ids)];
}

function parseWordList(what: string): (value: string) => string[] {
  return (value) => {
    const parts = value
      .split(',')
      .map((p) => p.trim())
      .filter((p) => p !== '');
    if (parts.length === 0 || parts.some((p) => !/^[A-Za-z0-9_-]+$/.test(p))) {
      throw new InvalidArgumentError(`expected a comma list of ${what}`);
    }
    return [...new Set(parts)];
  };
}

function parseDate(value: string): string {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(Date.parse(`${value}T00:00:00Z`))) {
    throw new InvalidArgumentError('expected a date as YYYY-MM-DD');
  }
  return value;
}

export function parseTimeZoneFlag(value: string): string {
  if (!isTimeZone(value)) throw new InvalidArgumentError('expected an IANA time zone such as UTC or Europe/Paris');
  return value;
}

/** Options of commands that choose what to sync. */
export interface SelectionFlags {
  streams?: string;
  events?: number[];
  eventStatus?: string[];
  eventsFrom?: string;
  eventsTo?: string;
}

/** Options of commands that spend credits. */
export interface BudgetFlags {
  budget?: number;
  maxWait?: number;
  concurrency?: number;
}

export function addSelectionOptions(cmd: Command): Command {
  return cmd
    .addOption(
      new Option('--streams <list>', 'streams: core (default), all, or a comma list of names (see `evsync streams`)')
        .argParser(parseStreamsFlag)
        .default(undefined, 'core'),
    )
    .option('--events <ids>', 'only these event ids (comma list)', parseEventIds)
    .option('--event-status <list>', 'only events with these statuses, e.g. live,draft', parseWordList('statuses'))
    .option('--events-from <date>', 'only events starting on or after this date (YYYY-MM-DD)', parseDate)
    .option('--events-to <date>', 'only events starting on or before this date (YYYY-MM-DD)', parseDate);
}

export function addBudgetOptions(cmd: Command): Command {
  return cmd
    .option('--budget <credits>', 'spend at most this many credits in this run, then stop (exit 3)', positiveInt())
    .option(
      '--max-wait <duration>',
      'longest wait for the rate-limit window before stopping (exit 3), e.g. 90s, 15m, 1h, 0',
      parseDurationFlag,
    )
    .option('--concurrency <n>', 'work items in flight at once (default 2)', positiveInt());
}

export function parseFormat(value: string): 'table' | 'csv' | 'json' {
  if (value === 'table' || value === 'csv' || value === 'json') return value;
  throw new InvalidArgumentError('expected one of: table, csv, json');
}

export function parseTableList(value: string): string[] {
  const parts = value
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
  if (parts.length === 0 || parts.some((p) => !/^[A-Za-z_][A-Za-z0-9_]*$/.test(p))) {
    throw new InvalidArgumentError('expected a comma list of table names, e.g. registrants,sessions');
  }
  return [...new Set(parts)];
}
