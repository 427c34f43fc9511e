/**
 * `evsync serve` as a user runs it: backfill, serve, `webhooks install`, changes at the service arriving by webhook,
 * and `status` and `query` from "another shell" while serve holds the database (answered through its socket, query
 * still read-only and sandboxed). No output, file or table holds the secret.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.js';
import { Warehouse } from '../../src/warehouse/index.js';
import { type RunResult, run, waitForText } from '../cli/helpers.js';
import { compareStream } from '../helpers/harness.js';
import { CAPTURED, mutateEach, useServeEnv } from './helpers.js';

const SECRET = 'serve-test-secret-6f1c2d9a0b7e4c3f';
const STREAMS = CAPTURED.join(',');

let sim: Simulator;
let dir: string;
let env: Record<string, string>;
useServeEnv({ seed: 7, db: 'serve.duckdb', secret: SECRET }, (e) => {
  ({ sim, dir, env } = e);
});
const outputs: RunResult[] = [];

async function cli(argv: string[]): Promise<RunResult> {
  const r = await run(argv, { cwd: dir, env });
  outputs.push(r);
  return r;
}

/** `evsync query <sql>` with its rows as JSON on stdout. */
function queryJson(sql: string): Promise<RunResult> {
  return cli(['query', sql, '--format', 'json']);
}

/** Counters of /metrics as numbers, by their full name with labels. */
async function metrics(origin: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${origin}/metrics`)).text();
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const m = /^([a-z_]+(?:\{[^}]*\})?) ([0-9.e+-]+)$/.exec(line);
    if (m) out[m[1]!] = Number(m[2]);
  }
  return out;
}

describe('evsync serve', () => {
  it('refuses to start without a usable secret', async () => {
    const r = await run(['serve', '--listen', '127.0.0.1:0'], {
      cwd: dir,
      env: { ...env, EVSYNC_WEBHOOK_SECRET: 'q7Zx9' },
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('EVSYNC_WEBHOOK_SECRET is too short (at least 16 characters)');
    expect(r.stderr).not.toContain('q7Zx9');
  });

  it('takes deliveries, and answers status and query while it holds the database', async () => {
    expect((await cli(['backfill', '--streams', STREAMS])).code).toBe(0);
    const stop = new AbortController();
    let stderr = { text: '' };
    const serve = ['serve', '--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0', '--streams', STREAMS];
    const serving = run([...serve, '--no-catch-up', '-v'], {
      cwd: dir,
      env,
      stop: stop.signal,
      onStart: (o) => {
        stderr = o.stderr;
      },
    });
    await waitForText(() => stderr.text, /listening on (http:\/\/\S+\/webhooks)/);
    const url = /listening on (http:\/\/\S+\/webhooks)/.exec(stderr.text)![1]!;
    const origin = new URL(url).origin;
    expect((await fetch(`${origin}/healthz`)).status).toBe(200);
    // /metrics (and the status page) are on the admin address, apart from the receiver's.
    await waitForText(() => stderr.text, /status page on (http:\/\/\S+)\//);
    const admin = /status page on (http:\/\/\S+)\//.exec(stderr.text)![1]!;
    expect(admin).not.toBe(origin);
    expect((await fetch(`${origin}/metrics`)).status).toBe(404);

    const before = sim.counters();
    const install = await cli(['webhooks', 'install', '--url', url, '--streams', STREAMS]);
    expect(install.code, install.stderr).toBe(0);
    expect(install.stdout).toMatch(/webhook group "evsync" \(id \d+\): created/);
    const again = await cli(['webhooks', 'install', '--url', url, '--streams', STREAMS]);
    expect(again.stdout).toContain(': unchanged');
    expect(again.stdout).not.toContain('created');
    const check = await cli(['webhooks', 'status', '--url', url, '--streams', STREAMS]);
    expect(check.code, check.stdout).toBe(0);
    expect(check.stdout).toContain('secret header matches EVSYNC_WEBHOOK_SECRET');
    // Three installs' worth of calls: 2 lists each (20 credits), 1 group and 8 webhooks created once.
    const spent = sim.counters();
    expect(spent.listCalls - before.listCalls).toBe(6);
    expect(spent.otherCalls - before.otherCalls).toBe(1 + CAPTURED.length);

    const since = sim.webhooks.deliveries().at(-1)?.id ?? 0;
    mutateEach(sim, 10);
    expect(await sim.webhooks.idle()).toBe(true);
    const delivered = sim.webhooks.deliveries(since).filter((d) => d.status === 'delivered').length;
    // Applied once /metrics says every journaled delivery is settled.
    let m = await metrics(admin);
    while (m.evsync_webhook_pending !== 0 || m['evsync_webhook_deliveries_total{outcome="journaled"}'] !== delivered) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      m = await metrics(admin);
    }

    const status = await cli(['status', '--json']);
    expect(status.code, status.stderr).toBe(0);
    const report = JSON.parse(status.stdout);
    expect(report.servedBy).toMatch(/^evsync serve \(PID \d+\)$/);
    const registrants = report.capture.find((c: { stream: string }) => c.stream === 'registrants');
    expect(registrants.applied).toBeGreaterThan(0);
    expect(registrants.lastDeliveryAt).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    const text = await cli(['status']);
    expect(text.stdout).toContain('Change capture (answered by evsync serve');

    const q = await queryJson('select count(*) as n from registrants where _deleted_at is null');
    expect(q.code, q.stderr).toBe(0);
    expect(JSON.parse(q.stdout)[0].n).toBe(sim.truth('registrants').records.length);
    const write = await cli(['query', "copy registrants to '/tmp/evsync-serve-test.csv'"]);
    expect(write.code).toBe(1);
    expect(write.stderr).toMatch(/COPY is refused|file system operations are disabled/);
    expect(existsSync('/tmp/evsync-serve-test.csv')).toBe(false);
    const insert = await cli(['query', 'insert into _evsync.meta values (1, 2)']);
    expect(insert.code).toBe(1);
    expect(insert.stderr).toContain('INSERT is refused');
    const file = await cli(['query', "select * from read_csv('/etc/hostname')"]);
    expect(file.code).toBe(1);
    expect(file.stderr).toMatch(/disabled|Permission/i);

    stop.abort();
    const served = await serving;
    outputs.push(served);
    expect(served.code, served.stderr).toBe(0);
    expect(served.stderr).toContain('serve stopped');

    // The warehouse equals the source: every change arrived by webhook, no poll since the backfill.
    const w = await Warehouse.open(env.EVSYNC_DB!, { readOnly: true });
    try {
      for (const s of CAPTURED) {
        const d = await compareStream(sim, w, s);
        expect({ s, ...d }).toEqual({ s, missing: [], extra: [], changed: [] });
      }
    } finally {
      await w.close();
    }
  });

  it('keeps the secret out of the warehouse when the webhook tables are synced', async () => {
    const r = await cli(['sync', '--streams', 'webhook_groups,webhooks']);
    expect(r.code, r.stderr).toBe(0);
    const q = await queryJson('select headers from webhook_groups union all select headers from webhooks');
    expect(q.code, q.stderr).toBe(0);
    const headers = JSON.parse(q.stdout).flatMap(
      (row: { headers: { key: string; value: string }[] | null }) => row.headers ?? [],
    );
    expect(headers).toContainEqual({ key: 'X-Evsync-Secret', value: '[redacted]' });
    const w = await Warehouse.open(env.EVSYNC_DB!, { readOnly: true });
    try {
      // Every table of every schema, every column as text.
      const tables = (await w.query(`SELECT schema_name AS s, table_name AS t FROM duckdb_tables()`)).rows;
      expect(tables.length).toBeGreaterThan(10);
      for (const { s, t } of tables) {
        const name = `"${String(s)}"."${String(t)}"`;
        const hit = await w.query(`SELECT count(*) AS n FROM ${name} x WHERE CAST(x AS VARCHAR) LIKE ?`, [
          `%${SECRET}%`,
        ]);
        expect(Number(hit.rows[0]!.n), name).toBe(0);
      }
    } finally {
      await w.close();
    }
  });

  it('removes the webhooks, after which status says what is missing (exit 1)', async () => {
    const before = sim.counters();
    const removed = await cli(['webhooks', 'remove', '--streams', STREAMS]);
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stdout).toMatch(new RegExp(`removed webhook group \\d+ and its ${CAPTURED.length} webhook\\(s\\)`));
    const after = sim.counters();
    // One list of groups and one of webhooks, then one delete per webhook and the group.
    expect(after.listCalls - before.listCalls).toBe(2);
    expect(after.otherCalls - before.otherCalls).toBe(CAPTURED.length + 1);
    const check = await cli(['webhooks', 'status', '--streams', STREAMS, '--json']);
    expect(check.code).toBe(1);
    expect(JSON.parse(check.stdout)).toMatchObject({ ok: false, group: null });
  });

  it('keeps the secret out of every output and file', () => {
    for (const r of outputs) {
      expect(r.stdout).not.toContain(SECRET);
      expect(r.stderr).not.toContain(SECRET);
    }
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isFile()) expect(readFileSync(path).includes(SECRET), name).toBe(false);
    }
  });
});
