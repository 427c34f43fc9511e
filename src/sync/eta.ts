/**
 * When a run should end, reckoned from what it still has to spend (its remaining work, priced in credits as the
 * planner prices it) against the credit window as the service last reported it: the credits left in this window,
 * then the reported limit per window. Within a window the run spends at the pace it has kept while not waiting. An
 * estimate for the work planned so far: a backfill plans each phase once the one before is stored.
 */
import type { LimitReading } from '../api/index.js';

export interface Eta {
  /** When the work planned so far should be done (UTC ISO). */
  at: string;
  /** Seconds from now. */
  seconds: number;
  /** Window resets still to wait for (0: what is left fits the credits left now). */
  windows: number;
  /** How it was reckoned, in words. */
  basis: string;
}

interface EtaInputs {
  /** Credits still to spend. */
  needed: number;
  /** The window as the service last reported it (null before any answer). */
  reading: LimitReading | null;
  /** The client's limit and window length (the service never says how long a window is). */
  limit: number;
  windowMs: number;
  now: number;
  /** What the run spent while not waiting, and for how long: its pace within a window. */
  pace: { spent: number; activeMs: number };
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const clock = (ms: number) => `${new Date(ms).toISOString().slice(11, 16)} UTC`;

export function estimateEnd(i: EtaInputs): Eta {
  const limit = i.reading?.limit ?? i.limit;
  let left = i.reading?.remaining ?? limit;
  let resetAt = i.reading?.resetAt?.getTime() ?? null;
  // The reported window has reset since: a whole one is there, ending a window after the next call at the latest.
  if (resetAt !== null && resetAt <= i.now) {
    left = limit;
    resetAt = null;
  }
  const perMs = i.pace.activeMs > 0 && i.pace.spent > 0 ? i.pace.spent / i.pace.activeMs : null;
  const spendMs = (credits: number) => (perMs === null ? 0 : credits / perMs);
  const needed = Math.max(0, i.needed);
  const planned = `${fmt(needed)} credits still to spend on the work planned so far`;
  if (needed <= left) {
    const at = i.now + spendMs(needed);
    return { ...timing(at, i.now), windows: 0, basis: `${planned}, within the ${fmt(left)} left in this window` };
  }
  const windows = Math.ceil((needed - left) / limit);
  const firstReset = resetAt ?? i.now + i.windowMs;
  const lastShare = needed - left - (windows - 1) * limit;
  const at = firstReset + (windows - 1) * i.windowMs + spendMs(lastShare);
  const minutes = Math.round(i.windowMs / 60_000);
  return {
    ...timing(at, i.now),
    windows,
    basis: `${planned}: ${fmt(left)} left in this window (it resets at ${clock(firstReset)}), then ${fmt(limit)} per ${minutes} min window`,
  };
}

function timing(at: number, now: number): { at: string; seconds: number } {
  return { at: new Date(at).toISOString(), seconds: Math.max(0, Math.round((at - now) / 1000)) };
}
