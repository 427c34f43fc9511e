/**
 * Two processes on one database: while a sync runs in a child process, a second `evsync sync` on the same file
 * fails clearly (DatabaseInUseError naming the holder's PID, exit 1 or 2) without touching it, and the first run
 * finishes unharmed: done, and equal to the source.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { DatabaseInUseError, Warehouse } from '../../src/warehouse/index.js';
import { run } from '../cli/helpers.js';
import { expectFileEqualToSource, spawnSyncChild } from '../helpers/reliability.js';

const STREAMS = ['registrants', 'sessions', 'contacts'];

let sim: Simulator;
let dir: string;

beforeAll(async () => {
  // Latency keeps the first sync busy long enough for the second to try.
  sim = await startSimulator({ size: 'tiny', seed: 7, control: true, faults: { latencyMs: 150 } });
  dir = mkdtempSync(join(tmpdir(), 'evsync-two-'));
});

afterAll(async () => {
  await sim?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('two processes on one database', () => {
  it('the second fails clearly naming the first one’s PID; the first is unharmed', async () => {
    const db = join(dir, 'shared.duckdb');
    const a = sim.accounts[0]!;
    const first = spawnSyncChild({
      baseUrl: sim.baseUrl,
      clientId: a.clientId,
      clientSecret: a.clientSecret,
      db,
      streams: STREAMS.join(','),
    });
    const pid = first.child.pid!;
    await first.pages(1);

    const second = await run(['--db', db, 'sync'], {
      cwd: dir,
      env: { EVSYNC_BASE_URL: sim.baseUrl, EVSYNC_CLIENT_ID: a.clientId, EVSYNC_CLIENT_SECRET: a.clientSecret },
    });
    expect([1, 2]).toContain(second.code);
    expect(second.stderr).toMatch(/in use/i);
    expect(second.stderr).toContain(String(pid));
    expect(second.stderr).not.toMatch(/\n\s+at /); // a message, not a stack trace

    // The library says the same, with the PID as a field.
    const error = await Warehouse.open(db).then(
      async (w) => {
        await w.close();
        return null;
      },
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(DatabaseInUseError);
    expect((error as DatabaseInUseError).pid).toBe(pid);

    const end = await first.done;
    expect(end.code).toBe(0);
    expect(end.result?.status).toBe('done');
    expect(end.result?.errors).toEqual([]);
    await expectFileEqualToSource(sim, db, STREAMS);
  }, 120_000);
});
