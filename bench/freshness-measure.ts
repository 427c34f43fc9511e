/**
 * What the freshness benchmark measures once a scenario is over: for each change the simulator journaled (its
 * `sim.webhooks` ground truth), when its row reached the warehouse; and whether the warehouse equals the source.
 *
 * Freshness of a change is the row's `_synced_at` (when evsync wrote it) minus the change's time at the service.
 * A row keeps only its last write, so only the last change of each record is measured (a record changed twice
 * shows when its newest version landed); a row found only by the final reconciliation counts with that time.
 */
import { getStream } from '../connectors/index.js';
import { createNormalizer } from '../normalizer/normalize.js';
import { physicalColumns } from '../schemas/columns.js';
import type { Simulator, WebhookChange } from '../src/simulator/index.js';
import type { Warehouse } from '../src/warehouse/index.js';
import { canon, resolvedFromTruth } from './compare.js';

export interface Freshness {
  /** Changes in the window (of the measured streams, with a trigger object). */
  changes: number;
  /** Records whose last change was measured. */
  measured: number;
  /** Last changes whose row never showed them (should be 0 after the final reconcile). */
  missing: number;
  p50: number;
  p95: number;
  max: number;
  /** Share of measured changes that landed within 5 s. */
  within5s: number;
}

/** The q-quantile of ascending values (nearest rank), NaN when there are none. */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i]!;
}

const round2 = (n: number) => Math.round(n * 100) / 100;

export async function freshness(
  warehouse: Warehouse,
  changes: readonly WebhookChange[],
  streams: readonly string[],
): Promise<Freshness> {
  const last = new Map<string, WebhookChange>();
  const inScope = changes.filter((c) => c.object !== null && c.id !== null && streams.includes(c.stream));
  for (const c of inScope) last.set(`${c.stream}|${c.id}`, c);
  const seconds: number[] = [];
  let missing = 0;
  for (const stream of streams) {
    const mine = [...last.values()].filter((c) => c.stream === stream);
    if (mine.length === 0) continue;
    const hasUpdated = 'updated_at' in getStream(stream).fields;
    const ids = mine.map((c) => c.id as number);
    const r = await warehouse.query(
      `SELECT id, strftime(_synced_at, '%Y-%m-%d %H:%M:%S.%g') AS synced, _deleted_at IS NOT NULL AS deleted,
              ${hasUpdated ? `strftime(CAST(updated_at AS TIMESTAMP), '%Y-%m-%d %H:%M:%S')` : 'NULL'} AS updated
         FROM "${stream}" WHERE id = ANY(CAST(? AS BIGINT[]))`,
      [JSON.stringify(ids)],
    );
    const rows = new Map(r.rows.map((row) => [Number(row.id), row]));
    for (const c of mine) {
      const row = rows.get(c.id as number);
      const shows =
        row !== undefined &&
        (c.action === 'delete'
          ? row.deleted === true || row.deleted === 'true'
          : row.deleted !== true && row.deleted !== 'true' && (!hasUpdated || String(row.updated) >= c.datetime));
      if (!shows) {
        missing += 1;
        continue;
      }
      const synced = Date.parse(`${String(row!.synced).replace(' ', 'T')}Z`);
      seconds.push(Math.max(0, (synced - Date.parse(c.at)) / 1000));
    }
  }
  seconds.sort((a, b) => a - b);
  return {
    changes: inScope.length,
    measured: seconds.length,
    missing,
    p50: round2(quantile(seconds, 0.5)),
    p95: round2(quantile(seconds, 0.95)),
    max: round2(seconds[seconds.length - 1] ?? Number.NaN),
    within5s: round2(seconds.filter((s) => s <= 5).length / Math.max(1, seconds.length)),
  };
}

/** Rows that differ from the source (missing, extra or with another value), per stream; empty when equal. */
export async function differences(
  sim: Simulator,
  warehouse: Warehouse,
  streams: readonly string[],
): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const [name, d] of Object.entries(await differenceCounts(sim, warehouse, streams))) {
    out[name] = d.missing + d.extra + d.changed;
  }
  return out;
}

export interface DifferenceCount {
  /** At the source, not in the warehouse (or deleted there). */
  missing: number;
  /** In the warehouse, not (or no longer) at the source. */
  extra: number;
  /** In both, with another value in some column. */
  changed: number;
  /** Up to 5 keys of each kind, for a reader checking them. */
  keys: { missing: string[]; extra: string[]; changed: string[] };
}

/** Rows that differ from the source by kind, per stream; only the streams that differ. */
export async function differenceCounts(
  sim: Simulator,
  warehouse: Warehouse,
  streams: readonly string[],
): Promise<Record<string, DifferenceCount>> {
  const out: Record<string, DifferenceCount> = {};
  for (const name of streams) {
    const stream = resolvedFromTruth(sim, name);
    const normalizer = createNormalizer(stream);
    const columns = physicalColumns(stream).map((c) => c.name);
    const source = new Map<string, Record<string, unknown>>();
    for (const raw of sim.truth(name).records) {
      const r = normalizer.normalize(raw);
      if (r.ok) source.set(String(r.row.id), r.row);
    }
    const { rows } = await warehouse.query(`SELECT * FROM "${name}" WHERE _deleted_at IS NULL`);
    const d: DifferenceCount = { missing: 0, extra: 0, changed: 0, keys: { missing: [], extra: [], changed: [] } };
    const note = (kind: 'missing' | 'extra' | 'changed', key: string) => {
      d[kind] += 1;
      if (d.keys[kind].length < 5) d.keys[kind].push(key);
    };
    const seen = new Set<string>();
    for (const row of rows) {
      const key = String(row.id);
      seen.add(key);
      const want = source.get(key);
      if (!want) {
        note('extra', key);
        continue;
      }
      const changed = columns.some((c) => {
        if (!(c in want) || (want[c] === null && c === 'event_id') || (!(c in row) && c.startsWith('c_'))) return false;
        return canon(want[c]) !== canon(row[c]);
      });
      if (changed) note('changed', key);
    }
    for (const key of source.keys()) if (!seen.has(key)) note('missing', key);
    if (d.missing + d.extra + d.changed > 0) out[name] = d;
  }
  return out;
}
