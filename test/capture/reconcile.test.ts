/**
 * Polling as the safety net: which streams each scheduled run of `serve` polls, and `status` reporting per stream
 * what reconciliation found that webhooks had missed (here: deliveries the simulator dropped).
 */
import { describe, expect, it } from 'vitest';
import { ReconcilePolicy } from '../../src/daemon/reconcile-policy.js';
import type { Simulator } from '../../src/simulator/index.js';
import { run, waitForText } from '../cli/helpers.js';
import { useServeEnv } from './helpers.js';

describe('the reconciliation policy', () => {
  it('polls streams without webhooks every run, webhook-fed ones at start, when due and while unhealthy', () => {
    let now = 0;
    const p = new ReconcilePolicy({ streams: 'registrants,transactions', everyHours: 6, now: () => now });
    expect(p.captured).toEqual(['registrants']);
    expect(p.polled).toEqual(['transactions']);
    expect(p.next(false)).toEqual(['transactions', 'registrants']);
    p.reconciled(now);
    now = 5 * 3_600_000;
    expect(p.next(false)).toEqual(['transactions']);
    expect(p.next(true)).toEqual(['transactions', 'registrants']);
    now = 6 * 3_600_000;
    expect(p.next(false)).toEqual(['transactions', 'registrants']);
  });

  it('skips a run with nothing to poll (no credit for nothing)', () => {
    const p = new ReconcilePolicy({ streams: 'registrants,contacts', everyHours: 6, catchUp: false, now: () => 0 });
    expect(p.next(false)).toBeNull();
    expect(p.next(true)).toEqual(['registrants', 'contacts']);
  });
});

let sim: Simulator;
let dir: string;
let env: Record<string, string>;
useServeEnv({ seed: 5, db: 'reconcile.duckdb', secret: 'reconcile-test-secret-00112233' }, (e) => {
  ({ sim, dir, env } = e);
});

describe('evsync serve reconciling', () => {
  it('reports per stream the rows reconciliation found that webhooks had missed', async () => {
    expect((await run(['backfill', '--streams', 'registrants'], { cwd: dir, env })).code).toBe(0);
    const stop = new AbortController();
    let stderr = { text: '' };
    // Every second, every stream: the schedule is not what is tested, the report is.
    const serving = run(
      [
        'serve',
        '--listen',
        '127.0.0.1:0',
        '--admin-listen',
        'off',
        '--streams',
        'registrants',
        '--cron',
        '* * * * * *',
        '--reconcile-every',
        '0',
      ],
      { cwd: dir, env, stop: stop.signal, onStart: (o) => (stderr = o.stderr) },
    );
    await waitForText(() => stderr.text, /reconcile #1: /);
    const url = /listening on (http:\/\/\S+\/webhooks)/.exec(stderr.text)![1]!;
    expect((await run(['webhooks', 'install', '--url', url, '--streams', 'registrants'], { cwd: dir, env })).code).toBe(
      0,
    );
    sim.setFaults({ webhookDropRate: 0.5 });
    for (let i = 0; i < 30; i++) {
      sim.mutate(1, { streams: ['registrants'] });
      sim.advanceClock(1);
    }
    expect(await sim.webhooks.idle()).toBe(true);
    expect(sim.webhooks.deliveries().some((d) => d.status === 'dropped')).toBe(true);
    // The window ends 5 s before the service's now: past it, the next run sees every change.
    sim.advanceClock(10);
    const found = async () => {
      const r = await run(['status', '--json'], { cwd: dir, env });
      const s = JSON.parse(r.stdout) as { capture: { stream: string; reconciledRows: number }[] };
      return s.capture.find((c) => c.stream === 'registrants')?.reconciledRows ?? 0;
    };
    while ((await found()) === 0) await new Promise((resolve) => setTimeout(resolve, 100));
    const text = await run(['status'], { cwd: dir, env });
    expect(text.stdout).toMatch(/found by reconciliation/);
    stop.abort();
    // A run every second: the stop may cut one short (exit 3, its state saved) or fall between two (exit 0).
    const served = await serving;
    expect(served.code === 0 || (served.code === 3 && served.stderr.includes('was cut short')), served.stderr).toBe(
      true,
    );
  });
});
