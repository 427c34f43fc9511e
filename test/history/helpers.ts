/**
 * What the history tests compare against: the simulator's own state of a stream at given moments (its truth,
 * snapshotted as the test goes), turned into the versions a history should hold, and the history itself read back
 * from a warehouse the same way.
 */
import { expect } from 'vitest';
import type { Simulator } from '../../src/simulator/index.js';
import { runSync } from '../../src/sync/index.js';
import type { Warehouse } from '../../src/warehouse/index.js';
import type { Harness } from '../helpers/harness.js';

/** One record's state as the tests compare it: its version time, a status and whether it is deleted. */
export interface State {
  updatedAt: string;
  status: string;
  deleted: boolean;
}

/** The simulator's registrants at one moment: by id, and the moment (UTC text, to the millisecond). */
export interface Snapshot {
  at: string;
  byId: Map<number, State>;
  /** Each record's event (for event-scoped streams). */
  eventOf: Map<number, number>;
}

export function utcText(ms: number): string {
  return new Date(ms).toISOString().replace('T', ' ').replace('Z', '');
}

export function snapshot(sim: Simulator, stream = 'registrants', status = 'registration_status'): Snapshot {
  const byId = new Map<number, State>();
  const eventOf = new Map<number, number>();
  for (const r of sim.truth(stream).records) {
    byId.set(Number(r.id), { updatedAt: String(r.updated_at), status: String(r[status]), deleted: false });
    if (r.event_id !== undefined && r.event_id !== null) eventOf.set(Number(r.id), Number(r.event_id));
  }
  return { at: utcText(sim.now().getTime()), byId, eventOf };
}

/**
 * The versions a history that saw every snapshot (and nothing between them) holds per record: each state that
 * differs from the one before (a new `updated_at`), and a deletion once a record is gone. Records absent from the
 * first snapshot start when they appear.
 */
export function expectedVersions(snapshots: readonly Snapshot[]): Map<number, State[]> {
  const out = new Map<number, State[]>();
  const ids = new Set<number>();
  for (const s of snapshots) for (const id of s.byId.keys()) ids.add(id);
  for (const id of ids) {
    const versions: State[] = [];
    for (const s of snapshots) {
      const state = s.byId.get(id);
      const last = versions[versions.length - 1];
      if (state) {
        if (!last || last.deleted || last.updatedAt !== state.updatedAt) versions.push(state);
      } else if (last && !last.deleted) {
        versions.push({ ...last, deleted: true });
      }
    }
    out.set(id, versions);
  }
  return out;
}

/** The history of a stream as the tests compare it: per id, its versions in order. */
export async function historyVersions(
  w: Warehouse,
  stream = 'registrants',
  status = 'registration_status',
): Promise<Map<number, State[]>> {
  const r = await w.query(
    `SELECT id, strftime(CAST(updated_at AS TIMESTAMP), '%Y-%m-%d %H:%M:%S') AS u, ${status} AS s, _is_deleted AS d
       FROM history.${stream} ORDER BY id, _valid_from, _recorded_at`,
  );
  const out = new Map<number, State[]>();
  for (const row of r.rows) {
    const id = Number(row.id);
    const list = out.get(id) ?? [];
    list.push({ updatedAt: String(row.u), status: String(row.s), deleted: row.d === true });
    out.set(id, list);
  }
  return out;
}

/** Per key, whether the intervals follow each other: each `_valid_to` the next `_valid_from`, one open version. */
export async function intervalProblems(w: Warehouse, stream = 'registrants'): Promise<Record<string, unknown>[]> {
  const r = await w.query(
    `WITH v AS (
       SELECT id, _valid_from, _valid_to, lead(_valid_from) OVER (PARTITION BY id ORDER BY _valid_from, _recorded_at) AS nxt,
              count(*) FILTER (WHERE _valid_to IS NULL) OVER (PARTITION BY id) AS open
         FROM history.${stream})
     SELECT id, CAST(_valid_from AS VARCHAR) AS f, CAST(_valid_to AS VARCHAR) AS t, open FROM v
      WHERE open <> 1 OR _valid_to IS DISTINCT FROM nxt OR (_valid_to IS NOT NULL AND _valid_to <= _valid_from)
      LIMIT 10`,
  );
  return r.rows;
}

/** The rows historyChecksum sums, as text, in order. */
export async function historyRows(w: Warehouse, stream = 'registrants'): Promise<string[]> {
  const r = await w.query(
    `SELECT CAST(to_json(x) AS VARCHAR) AS t FROM (SELECT * EXCLUDE (_recorded_at, _run_id) FROM history.${stream}) x
      ORDER BY t`,
  );
  return r.rows.map((row) => String(row.t));
}

/**
 * A checksum over a history: every version's values, validity, deletion, observer and continuity. Left out: when
 * evsync recorded it and the run (two warehouses fed the same changes at other moments differ only there).
 */
export async function historyChecksum(w: Warehouse, stream = 'registrants'): Promise<{ rows: number; sum: string }> {
  const r = await w.query(
    `SELECT count(*) AS n, md5(string_agg(t, '|' ORDER BY t)) AS sum FROM (
       SELECT CAST(to_json(x) AS VARCHAR) AS t
         FROM (SELECT * EXCLUDE (_recorded_at, _run_id) FROM history.${stream}) x)`,
  );
  return { rows: Number(r.rows[0]?.n), sum: String(r.rows[0]?.sum) };
}

/**
 * An incremental sync of events and registrants that sees every change since the last: no lag, every event (past
 * ones too), sweeping for deletes.
 */
export async function pollChanges(h: Harness): Promise<void> {
  const r = await runSync(h.client(), h.warehouse, {
    mode: 'incremental',
    streams: 'events,registrants',
    lagSeconds: 0,
    sweepEveryHours: 0,
    snapshotEveryHours: 0,
    pastEventPollHours: 0,
  });
  expect(r.status).toBe('done');
}
