/**
 * The credit recorder: the window as the service reported it lands in `_evsync.credits` as answers come, at most one
 * row per cadence, the last answer of each window always (its lowest Remaining: the page's chart counts every
 * credit a long run spent, window by window), each row with what was spent since the one before; a run's end
 * writes its last reading under its id, and a daemon's spending between runs goes under `daemon`. The ledger's
 * clock and the recorder's are one fixed clock moved by hand: nothing waits for a timer.
 */
import { describe, expect, it } from 'vitest';
import { CreditLedger } from '../../src/api/index.js';
import { CreditRecorder, DAEMON_CREDIT_LABEL } from '../../src/sync/index.js';
import type { Warehouse } from '../../src/warehouse/index.js';
import { rows, tempWarehouseEach } from '../warehouse/helpers.js';

let w: Warehouse;
tempWarehouseEach((t) => {
  w = t.w;
});

const call = { method: 'GET', path: '/registrants' };
const T0 = Date.UTC(2030, 0, 1, 12, 0, 0);

function setup(idleLabel: string | null = null) {
  const clock = { t: T0 };
  const now = () => clock.t;
  const ledger = new CreditLedger({ limit: 100, windowMs: 600_000, now });
  // A cadence no test reaches: rows come from the window rule, a run's end and close only.
  const recorder = new CreditRecorder({ ledger, warehouse: w, now, idleLabel, everyMs: 3_600_000 });
  /** One list call answered with the service's Remaining and seconds to its reset. */
  const answer = async (remaining: number, resetSeconds: number) => {
    const r = await ledger.acquire('list', call);
    clock.t += 1000;
    ledger.settle(r, { limit: 100, remaining, resetSeconds }, clock.t);
  };
  return { clock, ledger, recorder, answer };
}

const utc = (ms: number) => new Date(ms).toISOString().slice(0, 19).replace('T', ' ');

describe('CreditRecorder', () => {
  it('writes the first reading at once, the last of each window before the next one, and one at the run end', async () => {
    const { clock, ledger, recorder, answer } = setup();
    recorder.runStarted('run-1');
    await answer(90, 600); // written at once (nothing written yet)
    await answer(80, 599); // held: the cadence
    await answer(70, 598); // held, replacing the one before
    clock.t += 600_000; // the window resets; the ledger rolls over
    await answer(90, 600); // a new window: the last of the old one (70) is written first
    await answer(80, 599);
    await recorder.runEnded();
    const written = await rows(
      w,
      `SELECT run_id, remaining, spent, CAST(recorded_at AS VARCHAR) AS at FROM _evsync.credits ORDER BY recorded_at`,
    );
    expect(written).toEqual([
      { run_id: 'run-1', remaining: '90', spent: '10', at: utc(T0 + 1000) },
      { run_id: 'run-1', remaining: '70', spent: '20', at: utc(T0 + 3000) },
      // The run's end: its newest reading, with what it spent since the row before.
      { run_id: 'run-1', remaining: '80', spent: '20', at: utc(clock.t) },
    ]);
    const h = await w.statusHistory(utc(T0 - 60_000), utc(clock.t));
    // Both windows, each with what the service counted used in it and evsync's share: every credit spent.
    expect(h.windows.map((x) => ({ used: x.used, spentByRuns: x.spentByRuns }))).toEqual([
      { used: 30, spentByRuns: 30 },
      { used: 20, spentByRuns: 20 },
    ]);
    expect(ledger.spentSinceCreated).toBe(50);
    expect(await w.runs.lastLedger()).toMatchObject({ runId: 'run-1', remaining: 80, recordedAt: utc(clock.t) });
    await recorder.close();
  });

  it('holds readings until a run has an id, and files a daemon’s spending between runs under its own label', async () => {
    const oneShot = setup(null);
    await oneShot.answer(99, 600); // the token call's answer, before the run is recorded
    expect(await rows(w, 'SELECT count(*) AS n FROM _evsync.credits')).toEqual([{ n: '0' }]);
    oneShot.recorder.runStarted('run-2');
    await oneShot.recorder.runEnded();
    expect(await rows(w, 'SELECT run_id, remaining, spent FROM _evsync.credits')).toEqual([
      { run_id: 'run-2', remaining: '99', spent: '10' },
    ]);
    await oneShot.recorder.close();

    const daemon = setup(DAEMON_CREDIT_LABEL);
    await daemon.answer(90, 600); // a webhook re-read between runs
    daemon.recorder.runStarted('run-3');
    await daemon.answer(80, 599);
    await daemon.recorder.runEnded();
    await daemon.answer(70, 598); // after the run: the daemon's again
    await daemon.recorder.close();
    expect(
      await rows(
        w,
        `SELECT run_id, remaining, spent FROM _evsync.credits WHERE run_id <> 'run-2' ORDER BY recorded_at`,
      ),
    ).toEqual([
      { run_id: DAEMON_CREDIT_LABEL, remaining: '90', spent: '10' },
      { run_id: 'run-3', remaining: '80', spent: '10' },
      { run_id: DAEMON_CREDIT_LABEL, remaining: '70', spent: '10' },
    ]);
  });
});
