/**
 * `serve` killed between journal and apply loses nothing: a daemon kills itself right after its nth delivery is
 * committed (before answering or applying it); the restarted `evsync serve` applies what was journaled, the
 * simulator's retries of what the dead process never answered arrive as duplicates or new deliveries, and the
 * warehouse ends equal to the source with no poll.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installWebhooks } from '../../src/sync/capture/install.js';
import { rebuild, runSync } from '../../src/sync/index.js';
import { Warehouse } from '../../src/warehouse/index.js';
import { run, waitForText } from '../cli/helpers.js';
import { compareStream, type Harness, startHarness } from '../helpers/harness.js';
import { CAPTURED, mutateEach, SECRET, setupFor } from './helpers.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, '..', '..');
const KILL_AFTER = 12;

let h: Harness;
beforeAll(async () => {
  // Retries 1, 2, 4, 8, 16 s apart: the restarted daemon is up long before the last one.
  h = await startHarness({
    rateLimit: { credits: 1_000_000, windowSeconds: 600 },
    webhookDelivery: { retryBaseMs: 1000, attempts: 6 },
  });
  const r = await runSync(h.client(), h.warehouse, { mode: 'backfill', streams: CAPTURED.join(',') });
  expect(r.status).toBe('done');
  await h.warehouse.close();
});
afterAll(async () => {
  await h?.close();
});

async function journal(): Promise<{ seq: number; status: string; outcome: string | null; sha: string }[]> {
  const w = await Warehouse.open(h.dbPath, { readOnly: true });
  try {
    const r = await w.query(`SELECT seq, status, outcome, body_sha256 AS sha FROM _evsync.deliveries ORDER BY seq`);
    return r.rows.map((row) => ({
      seq: Number(row.seq),
      status: String(row.status),
      outcome: row.outcome === null ? null : String(row.outcome),
      sha: String(row.sha),
    }));
  } finally {
    await w.close();
  }
}

describe('a kill between journal and apply', () => {
  it('loses nothing: the restart applies what was journaled', async () => {
    const account = h.sim.accounts[0]!;
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        join(HERE, 'fixtures', 'serve-child.ts'),
        JSON.stringify({
          db: h.dbPath,
          baseUrl: h.sim.baseUrl,
          clientId: account.clientId,
          clientSecret: account.clientSecret,
          secret: SECRET,
          streams: CAPTURED,
          killAfter: KILL_AFTER,
        }),
      ],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const exited = once(child, 'exit');
    const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
    const url = (JSON.parse(line) as { url: string }).url;
    const installer = h.client();
    await installWebhooks(installer, setupFor(url));
    const calls = h.sim.counters().listCalls;
    mutateEach(h.sim, 5);
    const [, signal] = (await exited) as [number | null, string | null];
    expect(signal).toBe('SIGKILL');

    // The nth delivery is on disk and was never applied (deliveries committed in the same group commit too).
    const before = await journal();
    expect(before.length).toBeGreaterThanOrEqual(KILL_AFTER);
    expect(before[KILL_AFTER - 1]!.status).toBe('pending');

    // The same address (the webhooks point at it), a real `evsync serve`, no poll at start.
    const port = new URL(url).port;
    const stop = new AbortController();
    let stderr = { text: '' };
    const a = h.sim.accounts[0]!;
    const serving = run(
      [
        'serve',
        '--listen',
        `127.0.0.1:${port}`,
        '--admin-listen',
        '127.0.0.1:0',
        '--streams',
        CAPTURED.join(','),
        '--no-catch-up',
        '--cron',
        '0 * * * *',
      ],
      {
        env: {
          EVSYNC_BASE_URL: h.sim.baseUrl,
          EVSYNC_CLIENT_ID: a.clientId,
          EVSYNC_CLIENT_SECRET: a.clientSecret,
          EVSYNC_DB: h.dbPath,
          EVSYNC_WEBHOOK_SECRET: SECRET,
        },
        cwd: h.dir,
        stop: stop.signal,
        onStart: (o) => {
          stderr = o.stderr;
        },
      },
    );
    await waitForText(() => stderr.text, /status page on (http:\/\/\S+)\//);
    const admin = /status page on (http:\/\/\S+)\//.exec(stderr.text)![1]!;
    expect(await h.sim.webhooks.idle()).toBe(true);
    const delivered = h.sim.webhooks.deliveries().filter((d) => d.status === 'delivered').length;
    const metrics = async () => (await (await fetch(`${admin}/metrics`)).text()).split('\n');
    // Settled once the journal holds every delivered delivery (plus the one answered by no one) and none is pending.
    while (
      !(await metrics()).includes('evsync_webhook_pending 0') ||
      (await journal().catch(() => [])).length < delivered
    ) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    stop.abort();
    const served = await serving;
    expect(served.code, served.stderr).toBe(0);

    const after = await journal();
    expect(after.filter((e) => e.status === 'pending')).toEqual([]);
    // Every delivery answered 2xx is journaled; those committed but never answered came again (the retries).
    expect(after.length).toBeGreaterThanOrEqual(delivered);
    // The delivery killed before its answer came again (the service's retry) and changed nothing the second time.
    const killed = after[KILL_AFTER - 1]!;
    const copies = after.filter((e) => e.sha === killed.sha);
    expect(copies.length).toBeGreaterThanOrEqual(2);
    expect(copies.some((e) => e.outcome === 'duplicate')).toBe(true);
    // JSON payloads carry whole records: neither daemon made a call.
    expect(h.sim.counters().listCalls - calls).toBe(0);
    // No delivery was given up on: everything reached the warehouse.
    expect(h.sim.webhooks.deliveries().filter((d) => d.status === 'failed')).toEqual([]);
    const w = await Warehouse.open(h.dbPath, { readOnly: true });
    try {
      for (const s of CAPTURED) {
        const d = await compareStream(h.sim, w, s);
        expect({ s, ...d }).toEqual({ s, missing: [], extra: [], changed: [] });
      }
    } finally {
      await w.close();
    }
    // The daemon killed mid-delivery lost nothing of the archive either: a rebuild from it changes nothing.
    const live = await Warehouse.open(h.dbPath);
    try {
      const { changes } = await rebuild({ live, streams: null, dryRun: true });
      for (const c of changes) expect(c).toMatchObject({ added: 0, changed: 0, removed: 0 });
      expect((await live.archiveStatus())?.deliveries).toBeGreaterThanOrEqual(delivered);
    } finally {
      await live.close();
    }
  });
});
