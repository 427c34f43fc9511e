import type { SimClock } from '../core/time.js';
import type { World } from '../data/world.js';
import type { ChangeAction } from '../webhooks/types.js';
import type { Auth } from './auth.js';
import type { ChangeSink } from './changes.js';
import type { Credits } from './credits.js';
import type { Faults } from './faults.js';
import type { Found } from './lookup.js';
import type { Mutator } from './mutations.js';

/** Everything a request handler may touch. */
export interface ServiceContext {
  world: World;
  clock: SimClock;
  auth: Auth;
  credits: Credits;
  faults: Faults;
  mutator: Mutator;
  /** Every write is reported here (the webhook service). */
  changes: ChangeSink;
  tokenTtlSeconds: number;
  /** http://host:port/v1, for `_links`. */
  baseUrl: string;
}

/** The simulated now as record text (wall clock of the record zone). */
export function nowText(ctx: ServiceContext): string {
  return ctx.world.ts(ctx.clock.nowMs() / 1000);
}

/** Reports a change made through the API (the spec's operations, webhook management): initiated by `api_call`. */
export function apiChange(ctx: ServiceContext, stream: string, action: ChangeAction, found: Found): void {
  ctx.changes.record({ stream, action, part: found.part, rec: found.rec, initiatedBy: 'api_call' });
}
