import { hash4, Rng, tag } from '../core/random.js';
import type { FaultSpec } from '../types.js';

export type FaultKind = 'none' | 'storm429' | 'error' | 'reset' | 'malformed';

export interface FaultDecision {
  kind: FaultKind;
  /** 500, 502 or 503 for `error`. */
  status: number;
  /** Delay before headers (slow responses). */
  slowMs: number;
}

function rate(value: number | undefined): number {
  return typeof value === 'number' && Number.isFinite(value) ? Math.min(1, Math.max(0, value)) : 0;
}

/** Decides, per data request, whether and how to misbehave. Seeded, so a run's fault pattern is repeatable. */
export class Faults {
  private spec: FaultSpec = {};
  private readonly rng: Rng;

  constructor(seed: number, spec: FaultSpec = {}) {
    this.rng = new Rng(hash4(seed, tag('faults')));
    this.set(spec);
  }

  set(spec: FaultSpec): void {
    this.spec = { ...spec };
  }

  /** The faults in force (webhook delivery faults read theirs from here). */
  get current(): FaultSpec {
    return this.spec;
  }

  get latencyMs(): number {
    return Math.max(0, this.spec.latencyMs ?? 0);
  }

  get omitResetHeader(): boolean {
    return this.spec.omitResetHeader === true;
  }

  get asciiJson(): boolean {
    return this.spec.asciiJson === true;
  }

  decide(): FaultDecision {
    const s = this.spec;
    const slowMs = rate(s.slowRate) > 0 && this.rng.next() < rate(s.slowRate) ? Math.max(0, s.slowMs ?? 5000) : 0;
    let r = this.rng.next();
    const pick = (p: number | undefined) => {
      const v = rate(p);
      if (r < v) return true;
      r -= v;
      return false;
    };
    let kind: FaultKind = 'none';
    let status = 200;
    if (pick(s.storm429Rate)) kind = 'storm429';
    else if (pick(s.errorRate)) {
      kind = 'error';
      status = this.rng.pick([500, 502, 503]);
    } else if (pick(s.resetRate)) kind = 'reset';
    else if (pick(s.malformedRate)) kind = 'malformed';
    return { kind, status, slowMs };
  }
}
