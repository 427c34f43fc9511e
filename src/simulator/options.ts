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

/**
 * Parses the `--faults` spec:
 * `errors=0.05,latency=20,resets=0.01,malformed=0.01,slow=0.01:5000,storm429=0.02,no-reset-header`, and for webhook
 * deliveries `hook-drop=0.05,hook-dup=0.05,hook-reorder=0.05,hook-delay=0.05:2000`.
 */
export function parseFaults(text: string): FaultSpec {
  const spec: FaultSpec = {};
  for (const item of text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const [key, value] = item.split('=', 2) as [string, string | undefined];
    switch (key) {
      case 'errors':
        spec.errorRate = fraction(key, value);
        break;
      case 'latency': {
        const ms = Number(value);
        if (!Number.isFinite(ms) || ms < 0) throw new RangeError('fault "latency" needs milliseconds');
        spec.latencyMs = ms;
        break;
      }
      case 'resets':
        spec.resetRate = fraction(key, value);
        break;
      case 'malformed':
        spec.malformedRate = fraction(key, value);
        break;
      case 'slow': {
        const [rate, ms] = (value ?? '').split(':');
        spec.slowRate = fraction(key, rate);
        spec.slowMs = ms === undefined ? 5000 : Number(ms);
        if (!Number.isFinite(spec.slowMs) || spec.slowMs < 0) throw new RangeError('fault "slow" needs <rate>:<ms>');
        break;
      }
      case 'storm429':
        spec.storm429Rate = fraction(key, value);
        break;
      case 'hook-drop':
        spec.webhookDropRate = fraction(key, value);
        break;
      case 'hook-dup':
        spec.webhookDuplicateRate = fraction(key, value);
        break;
      case 'hook-reorder':
        spec.webhookReorderRate = fraction(key, value);
        break;
      case 'hook-delay': {
        const [rate, ms] = (value ?? '').split(':');
        spec.webhookDelayRate = fraction(key, rate);
        spec.webhookDelayMs = ms === undefined ? 2000 : Number(ms);
        if (!Number.isFinite(spec.webhookDelayMs) || spec.webhookDelayMs < 0) {
          throw new RangeError('fault "hook-delay" needs <rate>:<ms>');
        }
        break;
      }
      case 'no-reset-header':
        spec.omitResetHeader = true;
        break;
      default:
        throw new RangeError(`unknown fault "${key}"`);
    }
  }
  return spec;
}
