/** A steady stream of changes at the simulator, as the freshness scenarios make it. */
import type { Simulator } from '../src/simulator/index.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * `rate` changes per second to `streams` for `seconds`, a tenth of a second apart (what is owed carries over);
 * resolves with the number of changes made.
 */
export async function changeSteadily(
  sim: Simulator,
  rate: number,
  seconds: number,
  streams: readonly string[],
): Promise<number> {
  const end = Date.now() + seconds * 1000;
  let owed = 0;
  let made = 0;
  let last = Date.now();
  while (Date.now() < end) {
    await sleep(100);
    owed += ((Date.now() - last) / 1000) * rate;
    last = Date.now();
    const n = Math.floor(owed);
    if (n > 0) {
      sim.mutate(n, { streams: [...streams] });
      owed -= n;
      made += n;
    }
  }
  return made;
}
