import type { FaultSpec } from './types.js';

/** `2000/600` -> { credits: 2000, windowSeconds: 600 }. */
export function parseRateLimit(text: string): { credits: number; windowSeconds: number } {
  const m = /^\s*(\d+)\s*\/\s*(\d+(?:\.\d+)?)\s*$/.exec(text);
  if (!m || Number(m[1]) <= 0 || Number(m[2]) <= 0) {
    throw new RangeError(`invalid rate limit "${text}": expected <credits>/<seconds>, e.g. 2000/600`);
  }
  return { credits: Number(m[1]), windowSeconds: Number(m[2]) };
}

function fraction(key: string, value: string | undefined): number {
  const n = Number(value);
  if (value === undefined || value === '' || !Number.isFinite(n) || n < 0 || n > 1) {
    throw new RangeError(`fault "${key}" needs a fraction between 0 and 1`);
  }
  return n;
}

/** The `FaultSpec` keys that hold a number. */
type NumericFault = { [K in keyof FaultSpec]-?: FaultSpec[K] extends number | undefined ? K : never }[keyof FaultSpec];

/** Faults written `<name>=<fraction>`. */
const RATES = new Map<string, NumericFault>([
  ['errors', 'errorRate'],
  ['resets', 'resetRate'],
  ['malformed', 'malformedRate'],
  ['storm429', 'storm429Rate'],
  ['hook-drop', 'webhookDropRate'],
  ['hook-dup', 'webhookDuplicateRate'],
  ['hook-reorder', 'webhookReorderRate'],
]);

/** Faults written `<name>=<fraction>:<ms>`, the milliseconds optional. */
const DELAYS = new Map<string, { rate: NumericFault; ms: NumericFault; defaultMs: number }>([
  ['slow', { rate: 'slowRate', ms: 'slowMs', defaultMs: 5000 }],
  ['hook-delay', { rate: 'webhookDelayRate', ms: 'webhookDelayMs', defaultMs: 2000 }],
]);

/**
 * Parses the `--faults` spec:
 * `errors=0.05,latency=20,resets=0.01,malformed=0.01,slow=0.01:5000,storm429=0.02,no-reset-header,ascii-json`,
 * and for webhook deliveries `hook-drop=0.05,hook-dup=0.05,hook-reorder=0.05,hook-delay=0.05:2000`.
 */
export function parseFaults(text: string): FaultSpec {
  const spec: FaultSpec = {};
  for (const item of text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const [key, value] = item.split('=', 2) as [string, string | undefined];
    const rate = RATES.get(key);
    const delay = DELAYS.get(key);
    if (rate) {
      spec[rate] = fraction(key, value);
    } else if (delay) {
      const [fractionText, msText] = (value ?? '').split(':');
      spec[delay.rate] = fraction(key, fractionText);
      const ms = msText === undefined ? delay.defaultMs : Number(msText);
      spec[delay.ms] = ms;
      if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`fault "${key}" needs <rate>:<ms>`);
    } else if (key === 'latency') {
      const ms = Number(value);
      if (!Number.isFinite(ms) || ms < 0) throw new RangeError('fault "latency" needs milliseconds');
      spec.latencyMs = ms;
    } else if (key === 'no-reset-header') {
      spec.omitResetHeader = true;
    } else if (key === 'ascii-json') {
      spec.asciiJson = true;
    } else {
      throw new RangeError(`unknown fault "${key}"`);
    }
  }
  return spec;
}
