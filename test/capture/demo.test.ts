/** `evsync demo --webhooks`: after the backfill, a check-in at the service reaches the warehouse by webhook. */
import { describe, expect, it } from 'vitest';
import { inTempDir, run } from '../cli/helpers.js';

describe('evsync demo --webhooks', () => {
  it('shows a change arriving by webhook, for no credit', async () => {
    const r = await inTempDir((dir) => run(['demo', '--webhooks', '--json'], { cwd: dir }));
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.result.status).toBe('done');
    const w = report.webhooks;
    expect(w.registrant).toBeGreaterThan(0);
    expect(w.after > w.before).toBe(true);
    expect(w.credits).toBe(0);
    expect(w.delivery).toMatch(/^1 payload, 0 reread$/);
  }, 120_000);
});
