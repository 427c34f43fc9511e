/**
 * One stream's pages over the events an estimate did not count, from the events it counted: rows scale with the
 * events' size figure (rows per unit of it on the sample), or, without one, are the counted events' mean (of the
 * same status when one was counted). Each event then costs `max(1, ceil(rows / page size))` calls, the page size
 * being the one the service granted on the sample. The low and high figures price the same events at the smallest
 * and largest rate seen on the sample: the spread the sample itself shows, not a statistical interval.
 */
import type { EventSample } from './plan-sample.js';

/** One counted event of a stream: its rows (from `_meta.totalCount`) and the page size granted. */
export interface StreamObservation {
  eventId: number;
  rows: number;
  /** False when the answer gave no totalCount: `rows` is then the least its page count allows. */
  rowsExact: boolean;
  perPage: number;
}

interface ExtrapolationInput {
  sample: EventSample;
  /** The stream's counted items on the sample's events. */
  observed: readonly StreamObservation[];
  /** The events to price. */
  targets: readonly number[];
  /** The page size asked for, used when no answer said what is granted. */
  maxPerPage: number;
}

export interface Extrapolation {
  calls: number;
  low: number;
  high: number;
  /** Rows per unit of the size figure (or per event) on the sample, smallest and largest; null with nothing counted. */
  rate: { min: number; max: number } | null;
  /** Fewer than two counted events inform the figures: the range says nothing. */
  spreadUnknown: boolean;
  /** Some counted rows were only a lower bound (an answer without totalCount). */
  lowerBound: boolean;
}

type RowsOf = (eventId: number) => { est: number; low: number; high: number };

function pagesOf(rows: number, perPage: number): number {
  return Math.max(1, Math.ceil(rows / perPage));
}

/** Rows scale with the size figure: the sample's rows over its figures (events with a figure above 0). */
function bySize(input: ExtrapolationInput): { rowsOf: RowsOf; rate: Extrapolation['rate']; informed: number } | null {
  const size = (id: number) => Number(input.sample.keys.get(id) ?? 0);
  const usable = input.observed.filter((o) => size(o.eventId) > 0);
  const total = usable.reduce((n, o) => n + size(o.eventId), 0);
  if (input.sample.by === 'status' || total === 0) return null;
  const ratio = usable.reduce((n, o) => n + o.rows, 0) / total;
  const rates = usable.map((o) => o.rows / size(o.eventId));
  const rate = { min: Math.min(...rates), max: Math.max(...rates) };
  const rowsOf: RowsOf = (id) => ({ est: ratio * size(id), low: rate.min * size(id), high: rate.max * size(id) });
  return { rowsOf, rate, informed: usable.length };
}

/** Rows are the mean of the counted events of the same status, or of all counted events when none shares it. */
function byMean(input: ExtrapolationInput): { rowsOf: RowsOf; rate: Extrapolation['rate']; informed: number } {
  const { observed, sample } = input;
  const all = observed.map((o) => o.rows);
  const rowsOf: RowsOf = (id) => {
    const same = observed.filter((o) => sample.keys.get(o.eventId) === sample.keys.get(id)).map((o) => o.rows);
    const rows = same.length > 0 && sample.by === 'status' ? same : all;
    return { est: rows.reduce((a, b) => a + b, 0) / rows.length, low: Math.min(...rows), high: Math.max(...rows) };
  };
  return { rowsOf, rate: { min: Math.min(...all), max: Math.max(...all) }, informed: all.length };
}

export function extrapolate(input: ExtrapolationInput): Extrapolation {
  const { observed, targets } = input;
  const lowerBound = observed.some((o) => !o.rowsExact);
  if (observed.length === 0) {
    // Nothing counted for the stream: one call per event, the least any of them costs.
    return {
      calls: targets.length,
      low: targets.length,
      high: targets.length,
      rate: null,
      spreadUnknown: true,
      lowerBound: true,
    };
  }
  const perPage = Math.max(1, Math.min(...observed.map((o) => o.perPage)) || input.maxPerPage);
  const model = bySize(input) ?? byMean(input);
  let calls = 0;
  let low = 0;
  let high = 0;
  for (const id of targets) {
    const rows = model.rowsOf(id);
    calls += pagesOf(rows.est, perPage);
    low += pagesOf(rows.low, perPage);
    high += pagesOf(rows.high, perPage);
  }
  return { calls, low, high, rate: model.rate, spreadUnknown: model.informed < 2, lowerBound };
}
