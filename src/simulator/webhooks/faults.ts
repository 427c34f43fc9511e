import { hash4, Rng, tag } from '../core/random.js';
import type { FaultSpec } from '../types.js';

/**
 * Injected delivery faults, decided once per delivery when it is created. Seeded and separate from the API's fault
 * stream, so turning a webhook fault on changes no API answer and the same run gives the same pattern. Every decision
 * draws all four numbers whatever the rates, so enabling one knob leaves the others' choices where they were.
 */
export interface DeliveryFaults {
  drop: boolean;
  duplicate: boolean;
  delayMs: number;
  reorder: boolean;
}

const NONE: DeliveryFaults = { drop: false, duplicate: false, delayMs: 0, reorder: false };

function rate(v: number | undefined): number {
  return typeof v === 'number' && Number.isFinite(v) ? Math.min(1, Math.max(0, v)) : 0;
}

export class DeliveryFaultDecider {
  private readonly rng: Rng;

  constructor(
    seed: number,
    private readonly spec: () => FaultSpec,
  ) {
    this.rng = new Rng(hash4(seed, tag('webhook-faults')));
  }

  decide(): DeliveryFaults {
    const s = this.spec();
    if (!s.webhookDropRate && !s.webhookDuplicateRate && !s.webhookDelayRate && !s.webhookReorderRate) return NONE;
    const [drop, duplicate, delay, reorder] = [this.rng.next(), this.rng.next(), this.rng.next(), this.rng.next()];
    return {
      drop: drop < rate(s.webhookDropRate),
      duplicate: duplicate < rate(s.webhookDuplicateRate),
      delayMs: delay < rate(s.webhookDelayRate) ? Math.max(0, s.webhookDelayMs ?? 2000) : 0,
      reorder: reorder < rate(s.webhookReorderRate),
    };
  }
}
