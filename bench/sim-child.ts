/**
 * The simulator for the bench, in a process of its own: what `evsync simulator --json --control` does, for every
 * size the library has (the CLI offers the sizes a user needs; the bench also needs `xlarge`, 5M+ registrants).
 * Prints one JSON line {baseUrl, accounts}, then serves until SIGTERM.
 *
 *   node dist/bench/sim-child.js --size large --seed 1 [--rate-limit 10000000/600] [--faults <spec>]
 */
import { parseArgs } from 'node:util';
import { parseFaults, parseRateLimit, type SimulatorSize, startSimulator } from '../src/simulator/index.js';

const SIZES: readonly SimulatorSize[] = ['tiny', 'small', 'medium', 'large', 'xlarge', 'bigevent'];

const { values } = parseArgs({
  options: {
    size: { type: 'string', default: 'small' },
    seed: { type: 'string', default: '1' },
    'rate-limit': { type: 'string', default: '2000/600' },
    faults: { type: 'string' },
  },
});
const size = SIZES.find((s) => s === values.size);
if (!size) throw new Error(`--size must be one of ${SIZES.join(', ')}`);
const sim = await startSimulator({
  size,
  seed: Number(values.seed),
  rateLimit: parseRateLimit(values['rate-limit']),
  ...(values.faults ? { faults: parseFaults(values.faults) } : {}),
  control: true,
});
const accounts = sim.accounts.map(({ clientId, clientSecret, encoded }) => ({ clientId, clientSecret, encoded }));
process.stdout.write(`${JSON.stringify({ baseUrl: sim.baseUrl, accounts })}\n`);
const stop = () => {
  sim.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
