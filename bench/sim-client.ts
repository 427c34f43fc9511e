/**
 * An `ApiClient` for one of a simulator's accounts, as the benches and the tests build it: the simulator's base URL
 * and that account's credentials, plus whatever else the caller sets (a rate limit, a clock, retries).
 */
import { customFieldsFromDefinitions, getStream, resolveStream } from '../connectors/index.js';
import type { ResolvedStream } from '../connectors/types.js';
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

/** A simulator's records of `stream` as its control endpoint states them (the truth, for a simulator in any process). */
export async function simulatorTruth(baseUrl: string, stream: string): Promise<Record<string, unknown>[]> {
  const control = baseUrl.replace(/\/v1$/, '/_control');
  return ((await (await fetch(`${control}/truth?stream=${stream}`)).json()) as { records: Record<string, unknown>[] })
    .records;
}

/**
 * Registrants resolved as a sync of that simulator would resolve them (with the custom fields its questions define),
 * and those questions (each event asks for its own).
 */
export async function simulatorRegistrants(
  baseUrl: string,
): Promise<{ stream: ResolvedStream; questions: Record<string, unknown>[] }> {
  const questions = await simulatorTruth(baseUrl, 'event_questions');
  const stream = resolveStream(getStream('registrants'), { customFields: customFieldsFromDefinitions(questions) });
  return { stream, questions };
}
