import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canon, resolvedFromTruth } from '../../bench/compare.js';
import { getStream } from '../../connectors/index.js';
import type { NormalizedRow } from '../../connectors/types.js';
import { createNormalizer } from '../../normalizer/normalize.js';
import { physicalColumns } from '../../schemas/columns.js';
import { ApiClient, type ClientOptions } from '../../src/api/index.js';
import { type Simulator, type SimulatorOptions, startSimulator } from '../../src/simulator/index.js';
import { Warehouse } from '../../src/warehouse/index.js';
import { type LoopbackProxy, type ProxyRules, startProxy } from './proxy.js';

export { canon, resolvedFromTruth };

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

function keyOf(row: Record<string, unknown>, key: readonly string[]): string {
  return key.map((k) => canon(row[k])).join('|');
}

export interface Difference {
  missing: string[];
  extra: string[];
  changed: { key: string; column: string; source: string | null; warehouse: string | null }[];
}

/**
 * The current rows of a stream's table against the source's current records, column by column. Empty lists mean
 * the warehouse equals the source exactly.
 */
export async function compareStream(sim: Simulator, warehouse: Warehouse, name: string): Promise<Difference> {
  const stream = resolvedFromTruth(sim, name);
  const normalizer = createNormalizer(stream);
  const source = new Map<string, NormalizedRow>();
  for (const raw of sim.truth(name).records) {
    const r = normalizer.normalize(raw);
    if (!r.ok) throw new Error(`source record of ${name} does not normalize: ${r.reason}`);
    source.set(keyOf(r.row, stream.key), r.row);
  }
  const columns = physicalColumns(stream).map((c) => c.name);
  const { rows } = await warehouse.query(`SELECT * FROM "${name}" WHERE _deleted_at IS NULL`);
  const stored = new Map(rows.map((row) => [keyOf(row, stream.key), row]));
  // A run without custom fields (customFields: false) stores none: its custom-fields column is null throughout.
  const noCustomFields = rows.every((row) => row.custom_fields === null || row.custom_fields === undefined);
  const diff: Difference = { missing: [], extra: [], changed: [] };
  for (const [key, row] of source) {
    const got = stored.get(key);
    if (!got) {
      diff.missing.push(key);
      continue;
    }
    for (const column of columns) {
      // The scope column is filled from the scope when the endpoint does not return it.
      if (!(column in row) || (row[column] === null && column === 'event_id')) continue;
      if (column === 'custom_fields' && noCustomFields) continue;
      const a = canon(row[column]);
      const b = canon(got[column]);
      if (a !== b) diff.changed.push({ key, column, source: a, warehouse: b });
    }
  }
  for (const key of stored.keys()) if (!source.has(key)) diff.extra.push(key);
  return diff;
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
