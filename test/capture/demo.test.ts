/** `evsync demo --webhooks`: after the backfill, a check-in at the service reaches the warehouse by webhook. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run, tempDir } from '../cli/helpers.js';

let dir: string;
let cleanup: () => void;
beforeAll(() => {
  ({ dir, cleanup } = tempDir('evsync-demo-hooks-'));
});
afterAll(() => cleanup());

describe('evsync demo --webhooks', () => {
  it('shows a change arriving by webhook, for no credit', async () => {
    const r = await run(['demo', '--webhooks', '--json'], { cwd: dir });
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
