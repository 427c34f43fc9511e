/**
 * An `ApiClient` for one of a simulator's accounts, as the benches and the tests build it: the simulator's base URL
 * and that account's credentials, plus whatever else the caller sets (a rate limit, a clock, retries).
 */
import { ApiClient, type ClientOptions } from '../src/api/index.js';

/** What a simulator (in this process, or a child's) says of itself that a client needs. */
interface SimulatorAddress {
  baseUrl: string;
  accounts: readonly { clientId: string; clientSecret: string }[];
}

/** A client of `sim`'s account `account` (its first by default); `options` may also set another base URL (a proxy). */
export function simulatorClient(sim: SimulatorAddress, options: Partial<ClientOptions> = {}, account = 0): ApiClient {
  const a = sim.accounts[account];
  if (!a) throw new Error(`the simulator has no account ${account}`);
  return new ApiClient({
    baseUrl: sim.baseUrl,
    credentials: { clientId: a.clientId, clientSecret: a.clientSecret },
    ...options,
  });
}
