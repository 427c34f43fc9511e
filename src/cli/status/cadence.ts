/**
 * `src/cli/status/`: the status document (document.ts) that `status`, `status --json`, the page and a running daemon
 * share, and its text.
 *
 * The schedule freshness is judged against (see status-page/state.ts): a running daemon knows its own; at its start
 * it also leaves it in `_evsync.meta`, so that `status` read from the file (the daemon stopped) still judges the
 * streams against the schedule that kept them fresh, and says that nothing polls them now.
 */
import { parseJsonObject } from '../../../schemas/json-object.js';
import type { Warehouse } from '../../warehouse/index.js';
import type { Cadence } from '../status-page/state.js';

/** `_evsync.meta` key: the cadence the last daemon here started with (JSON). */
const DAEMON_CADENCE_MARK = 'daemon_cadence';

/** What is kept: the cadence without who keeps it now. */
interface RecordedCadence {
  command: string;
  startedAt: string;
  pollSeconds: number | null;
  reconcileSeconds: number | null;
  polled: string[];
  reconciled: string[];
}

export function recordCadence(w: Warehouse, cadence: RecordedCadence): Promise<void> {
  return w.marks.setQuietly(DAEMON_CADENCE_MARK, JSON.stringify(cadence));
}

const seconds = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : null);
const names = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

/** The recorded cadence, read defensively (a mark is text anyone with the file could have changed). */
export function parseCadence(text: string | null): RecordedCadence | null {
  if (!text) return null;
  const r = parseJsonObject(text);
  if (r === null) return null;
  return {
    command: typeof r.command === 'string' ? r.command : 'evsync serve',
    startedAt: typeof r.startedAt === 'string' ? r.startedAt : '',
    pollSeconds: seconds(r.pollSeconds),
    reconcileSeconds: seconds(r.reconcileSeconds),
    polled: names(r.polled),
    reconciled: names(r.reconciled),
  };
}

/** The last daemon's cadence as the status document states it: not running (nothing polls now). */
export async function lastCadence(w: Warehouse): Promise<Cadence | null> {
  const recorded = parseCadence(await w.marks.get(DAEMON_CADENCE_MARK));
  if (!recorded) return null;
  const { command, startedAt, ...cadence } = recorded;
  const since = startedAt ? ` started ${startedAt.slice(0, 16).replace('T', ' ')} UTC` : '';
  return { ...cadence, source: `the last ${command}${since}`, running: false };
}
