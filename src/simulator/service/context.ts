import type { SimClock } from '../core/time.js';
import type { World } from '../data/world.js';
import type { Auth } from './auth.js';
import type { Credits } from './credits.js';
import type { Faults } from './faults.js';
import type { Mutator } from './mutations.js';

/** Everything a request handler may touch. */
export interface ServiceContext {
  world: World;
  clock: SimClock;
  auth: Auth;
  credits: Credits;
  faults: Faults;
  mutator: Mutator;
  tokenTtlSeconds: number;
  /** http://host:port/v1, for `_links`. */
  baseUrl: string;
}

/** The simulated now as record text (wall clock of the record zone). */
export function nowText(ctx: ServiceContext): string {
  return ctx.world.ts(ctx.clock.nowMs() / 1000);
}
