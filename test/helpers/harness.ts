import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canon, compareStream, type Difference, resolvedFromTruth } from '../../bench/compare.js';
import { getStream } from '../../connectors/index.js';
import { ApiClient, type ClientOptions } from '../../src/api/index.js';
import { type Simulator, type SimulatorOptions, startSimulator } from '../../src/simulator/index.js';
import { Warehouse } from '../../src/warehouse/index.js';
import { type LoopbackProxy, type ProxyRules, startProxy } from './proxy.js';

export { canon, compareStream, type Difference, resolvedFromTruth };

/** A simulator, a client of its first account and a fresh warehouse file: what every engine test starts from. */
export interface Harness {
  sim: Simulator;
  dir: string;
  dbPath: string;
  warehouse: Warehouse;
  client(options?: Partial<ClientOptions>): ApiClient;
  /**
   * A real proxy on loopback in front of the simulator (see `startProxy`), and a client of the first account that
   * goes through it with short retries (3 attempts, 1 to 5 ms apart, unless `options` say otherwise).
   */
  proxied(rules: ProxyRules, options?: Partial<ClientOptions>): Promise<{ proxy: LoopbackProxy; client: ApiClient }>;
  /** Closes every client, proxy, the warehouse and the simulator, and removes the folder. */
  close(): Promise<void>;
}

export async function startHarness(options: SimulatorOptions = {}): Promise<Harness> {
  const sim = await startSimulator({ size: 'tiny', seed: 7, ...options });
  const dir = mkdtempSync(join(tmpdir(), 'evsync-test-'));
  const dbPath = join(dir, 'test.duckdb');
  const warehouse = await Warehouse.open(dbPath);
  const clients: ApiClient[] = [];
  const proxies: LoopbackProxy[] = [];
  const account = sim.accounts[0]!;
  const newClient = (baseUrl: string, options: Partial<ClientOptions>) => {
    const c = new ApiClient({
      baseUrl,
      credentials: { clientId: account.clientId, clientSecret: account.clientSecret },
      ...options,
    });
    clients.push(c);
    return c;
  };
  return {
    sim,
    dir,
    dbPath,
    warehouse,
    client(extra = {}) {
      return newClient(sim.baseUrl, { retry: { attempts: 6, baseDelayMs: 5, maxDelayMs: 50 }, ...extra });
    },
    async proxied(rules, options = {}) {
      const proxy = await startProxy(sim.baseUrl, rules);
      proxies.push(proxy);
      const client = newClient(proxy.baseUrl, { retry: { attempts: 3, baseDelayMs: 1, maxDelayMs: 5 }, ...options });
      return { proxy, client };
    },
    async close() {
      for (const c of clients) await c.close().catch(() => undefined);
      for (const p of proxies) await p.close();
      await warehouse.close().catch(() => undefined);
      await sim.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Sum over scopes of 10 * max(1, ceil(rows / cap)): the fewest credits a full read of a stream can cost. */
export function lowerBoundCredits(sim: Simulator, name: string, eventIds: readonly number[]): number {
  const def = getStream(name);
  const records = sim.truth(name).records;
  const cap = def.maxPerPage;
  const pages = (n: number) => Math.max(1, Math.ceil(n / cap));
  if (def.scope === 'account') return 10 * pages(records.length);
  if (def.scope === 'event') {
    // Some event-scoped records (transactions, line items) do not carry event_id: their registrant does.
    const registrantEvent = new Map(sim.truth('registrants').records.map((r) => [Number(r.id), Number(r.event_id)]));
    const perEvent = new Map<number, number>();
    for (const r of records) {
      const eventId = r.event_id != null ? Number(r.event_id) : registrantEvent.get(Number(r.registrant_id));
      if (eventId !== undefined) perEvent.set(eventId, (perEvent.get(eventId) ?? 0) + 1);
    }
    return eventIds.reduce((sum, id) => sum + 10 * pages(perEvent.get(id) ?? 0), 0);
  }
  throw new Error(`lower bound of parent-scoped ${name} is not computed here`);
}

/**
 * The list calls sent to a stream's path (the client's 'request' events), by what they are: polls, delete checks
 * (`sort=-id`), sweep pages (ids only).
 */
export function classifyListCalls(
  paths: readonly string[],
  path = '/registrants',
): { polls: string[]; checks: string[]; sweeps: string[] } {
  const mine = paths.map(decodeURIComponent).filter((p) => p.startsWith(`${path}?`));
  const checks = mine.filter((p) => p.includes('sort=-id'));
  const sweeps = mine.filter((p) => !p.includes('sort=-id') && /[?&]fields=id(&|$)/.test(p));
  const polls = mine.filter((p) => !checks.includes(p) && !sweeps.includes(p));
  return { polls, checks, sweeps };
}
