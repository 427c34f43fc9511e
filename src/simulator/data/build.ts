/**
 * The simulator's data folder: each account's seeded world (accounts, events, people, registrants and the rest),
 * generated deterministically from the seed and the size; this file builds an account's streams from its plan.
 */
import type { RecordZone } from '../core/time.js';
import type { SimulatorSize } from '../types.js';
import { buildAccount } from './gen-account.js';
import { buildEventStreams } from './gen-event.js';
import { buildRegistrantStreams } from './gen-registrants.js';
import { accountPlans } from './sizes.js';
import { World } from './world.js';

/**
 * The anchor every base timestamp is placed before: the start of the current UTC day, fixed when this module loads.
 * So the same seed gives identical data within a process and on the same UTC day, and base data always lies in the
 * past of the simulated clock while upcoming events still start in the future. `anchorDay` (`YYYY-MM-DD`, a past
 * day) places it at the start of that day instead: the same data on any day (a fixture made from it stays true).
 */
const ANCHOR = Math.floor(Date.now() / 86_400_000) * 86_400;

export function buildWorld(seed: number, size: SimulatorSize, zone: RecordZone, anchorDay?: string): World {
  const world = new World(seed, zone, anchorDay === undefined ? ANCHOR : Date.parse(`${anchorDay}T00:00:00Z`) / 1000);
  accountPlans(size).forEach((plan, index) => {
    const { info, defs } = buildAccount(world, index, plan);
    world.accounts.push(info);
    for (const event of info.events) buildEventStreams(world, info, event, defs);
    for (const event of info.events) world.models.set(event.id, buildRegistrantStreams(world, info, event));
  });
  return world;
}
