/**
 * A local Parquet folder belongs to one warehouse and one account, as a lake prefix does. Before, two warehouses of
 * two accounts given one `--parquet-out` replaced each other's partitions and manifest (account 1's events replaced
 * account 0's). Now the first export records the owner (`<out>/_evsync/owner.json`: warehouse, base URL, client
 * id, never a secret) and every other writer is refused at start, exit 2, with nothing written; a folder written by
 * an evsync from before the record is adopted by the warehouse its manifests match; a daemon holds the folder's
 * lease for its life.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { eventually, useDaemons } from '../capture/daemon-process.js';
import { run, simulatedCli } from './helpers.js';

const cli = simulatedCli({ seed: 23, prefix: 'evsync-owner-' });
const SECRET = 'owner-webhook-secret-9e8d7c6b5a4f';
const daemons = useDaemons();

/** Every path under `root` with its bytes' hash (links and folders as such): "nothing written". */
function state(root: string, prefix = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of readdirSync(join(root, prefix), { withFileTypes: true })) {
    const rel = join(prefix, entry.name);
    if (entry.isSymbolicLink()) out[rel] = 'link';
    else if (entry.isDirectory()) Object.assign(out, { [rel]: 'dir' }, state(root, rel));
    else
      out[rel] = createHash('sha256')
        .update(readFileSync(join(root, rel)))
        .digest('hex');
  }
  return out;
}

const sha = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

/** The environment of account `n` of the simulator on the warehouse `db` (in the fixture's folder). */
function account(n: number, db: string): Record<string, string> {
  const a = cli.sim.accounts[n]!;
  return {
    ...cli.env,
    EVSYNC_CLIENT_ID: a.clientId,
    EVSYNC_CLIENT_SECRET: a.clientSecret,
    EVSYNC_DB: join(cli.dir, db),
    EVSYNC_WEBHOOK_SECRET: SECRET,
  };
}

const cmd = (argv: string[], env: Record<string, string>) => run(argv, { cwd: cli.dir, env });

async function eventIds(out: string): Promise<number[]> {
  const db = await DuckDBInstance.create(':memory:');
  const con = await db.connect();
  try {
    const r = await con.runAndReadAll(`SELECT id FROM read_parquet('${join(out, 'events')}/*.parquet') ORDER BY id`);
    return r.getRowObjectsJson().map((row) => Number(row.id));
  } finally {
    con.closeSync();
    db.closeSync();
  }
}

function ownerOf(out: string): Record<string, unknown> {
  return JSON.parse(readFileSync(join(out, '_evsync', 'owner.json'), 'utf8')) as Record<string, unknown>;
}

const STREAMS = ['--streams', 'events,registrants'];

describe('two warehouses of two accounts on one --parquet-out', () => {
  it('the second is refused (exit 2, naming the owner and what to do), the first one’s files byte for byte the same', async () => {
    const out = join(cli.dir, 'shared');
    const a = account(0, 'a.duckdb');
    const b = account(1, 'b.duckdb');
    const first = await cmd(['backfill', ...STREAMS, '--parquet-out', out], a);
    expect(first.code, first.stderr).toBe(0);
    const owner = ownerOf(out);
    expect(owner).toMatchObject({
      format: 'evsync-parquet-owner',
      warehouse: join(cli.dir, 'a.duckdb'),
      account: { baseUrl: cli.sim.baseUrl, clientId: cli.sim.accounts[0]!.clientId },
      claimedBy: expect.stringContaining('evsync backfill'),
      adopted: false,
    });
    const ownerText = readFileSync(join(out, '_evsync', 'owner.json'), 'utf8');
    expect(ownerText).not.toContain(cli.sim.accounts[0]!.clientSecret);
    expect(ownerText).not.toContain(cli.sim.accounts[0]!.encoded);
    const accountZero = cli.sim.truth('events', 0).records.map((r) => Number(r.id));
    expect(await eventIds(out)).toEqual(accountZero);

    // Account 1's warehouse exists (synced elsewhere), then is pointed at account 0's folder.
    expect((await cmd(['backfill', ...STREAMS], b)).code).toBe(0);
    const before = state(out);
    const warehouseB = sha(join(cli.dir, 'b.duckdb'));
    const credits = cli.sim.counters(1);
    for (const argv of [
      ['sync', ...STREAMS, '--parquet-out', out],
      ['backfill', ...STREAMS, '--parquet-out', out],
      ['export', '--out', out],
      ['serve', '--listen', '127.0.0.1:0', '--admin-listen', 'off', '--no-catch-up', '--parquet-out', out],
      ['schedule', '--cron', '*/15 * * * *', '--admin-listen', 'off', '--parquet-out', out],
    ]) {
      const r = await cmd(argv, b);
      expect(r.code, `${argv[0]}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toContain(`belongs to the warehouse ${join(cli.dir, 'a.duckdb')}`);
      expect(r.stderr).toContain(`client id ${cli.sim.accounts[0]!.clientId}`);
      expect(r.stderr).toContain(`this is ${join(cli.dir, 'b.duckdb')}`);
      expect(r.stderr).toContain(`client id ${cli.sim.accounts[1]!.clientId}`);
      expect(r.stderr).toMatch(/Choose another folder for this warehouse; to hand this one over, remove .*owner\.json/);
      expect(r.stderr).not.toMatch(/listening on|answered here/);
      expect(r.stderr + r.stdout).not.toContain(cli.sim.accounts[1]!.clientSecret);
      expect(state(out)).toEqual(before);
    }
    expect(cli.sim.counters(1)).toEqual(credits);
    expect(sha(join(cli.dir, 'b.duckdb'))).toBe(warehouseB);
    expect(await eventIds(out)).toEqual(accountZero);
  }, 120_000);
});

describe('a folder an earlier evsync wrote (manifests, no owner record)', () => {
  it('is adopted by the warehouse its manifests match, refused to any other', async () => {
    const out = join(cli.dir, 'earlier');
    const a = account(0, 'a2.duckdb');
    expect((await cmd(['backfill', ...STREAMS, '--parquet-out', out], a)).code).toBe(0);
    expect((await cmd(['export', '--out', out, '--tables', 'events'], a)).code).toBe(0);
    // What an earlier release left: the table folders and their manifests, no owner record.
    rmSync(join(out, '_evsync'), { recursive: true });

    // Another account's warehouse: its manifests name runs and events that warehouse never held.
    const b = account(1, 'b2.duckdb');
    expect((await cmd(['sync', ...STREAMS], b)).code).toBe(0);
    const before = state(out);
    for (const argv of [
      ['export', '--out', out],
      ['sync', ...STREAMS, '--parquet-out', out],
    ]) {
      const r = await cmd(argv, b);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(`${out} holds an export of another warehouse`);
      expect(r.stderr).toMatch(/name run\(s\) \S+ and event\(s\) 101, 102, 103 that .*b2\.duckdb never held/);
      expect(state(out)).toEqual(before);
    }

    // Its own warehouse adopts it, says so, and goes on writing it.
    const adopted = await cmd(['sync', ...STREAMS, '--parquet-out', out, '--deletes'], a);
    expect(adopted.code, adopted.stderr).toBe(0);
    expect(adopted.stderr).toContain(
      `--parquet-out ${out}: written by an earlier evsync, whose manifests match this warehouse; adopted`,
    );
    expect(ownerOf(out)).toMatchObject({ warehouse: join(cli.dir, 'a2.duckdb'), adopted: true });
  }, 120_000);

  it('the documented hand-over: a copy of the warehouse takes the folder once the owner record is removed', async () => {
    const out = join(cli.dir, 'moved');
    const a = account(0, 'a3.duckdb');
    expect((await cmd(['backfill', ...STREAMS, '--parquet-out', out], a)).code).toBe(0);
    copyFileSync(join(cli.dir, 'a3.duckdb'), join(cli.dir, 'a3-moved.duckdb'));
    const moved = account(0, 'a3-moved.duckdb');
    const refused = await cmd(['export', '--out', out], moved);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`belongs to the warehouse ${join(cli.dir, 'a3.duckdb')}`);
    rmSync(join(out, '_evsync', 'owner.json'));
    const taken = await cmd(['export', '--out', out], moved);
    expect(taken.code, taken.stderr).toBe(0);
    expect(ownerOf(out)).toMatchObject({ warehouse: join(cli.dir, 'a3-moved.duckdb'), adopted: true });
  }, 120_000);
});

describe('the folder lease', () => {
  it('a daemon holds it for its life; beside it the same warehouse is locked and another one refused', async () => {
    const out = join(cli.dir, 'daemon-out');
    const a = account(0, 'a4.duckdb');
    expect((await cmd(['backfill', ...STREAMS], a)).code).toBe(0);
    // A copy made before the daemon starts: its runs and events are the folder's, so only the lease keeps it out.
    copyFileSync(join(cli.dir, 'a4.duckdb'), join(cli.dir, 'a4-copy.duckdb'));
    const d = await daemons.start(
      [
        'serve',
        '--listen',
        '127.0.0.1:0',
        '--admin-listen',
        'off',
        '--no-catch-up',
        '--streams',
        'events,registrants',
        '--parquet-out',
        out,
      ],
      a,
    );
    // Every table is new to the folder: published at start, and the owner recorded once it is.
    await eventually(() => existsSync(join(out, '_evsync', 'owner.json')));
    const lease = JSON.parse(readFileSync(join(out, '_evsync', 'lease.json'), 'utf8'));
    expect(lease).toMatchObject({ command: 'evsync serve', holder: { host: hostname(), pid: d.pid } });

    // The same warehouse from another shell: already impossible, the daemon holds the warehouse itself.
    const same = await cmd(['export', '--out', out], a);
    expect(same.code).toBe(1);
    expect(same.stderr).toContain(`is in use by another process`);
    expect(same.stderr).toContain(`PID ${d.pid}`);
    // Another warehouse: refused by the owner record. A copy of this one, the record removed (a hand-over while the
    // daemon runs): refused by the lease, exit 1, naming the daemon.
    const b = account(1, 'b4.duckdb');
    expect((await cmd(['sync', '--streams', 'events'], b)).code).toBe(0);
    expect((await cmd(['export', '--out', out], b)).code).toBe(2);
    const copy = account(0, 'a4-copy.duckdb');
    expect((await cmd(['export', '--out', out], copy)).code).toBe(2);
    rmSync(join(out, '_evsync', 'owner.json'));
    const before = state(out);
    const held = await cmd(['export', '--out', out], copy);
    expect(held.code).toBe(1);
    expect(held.stderr).toContain(`the folder lease ${join(out, '_evsync', 'lease.json')} is held by evsync serve`);
    expect(held.stderr).toContain(`(PID ${d.pid})`);
    expect(state(out)).toEqual(before);

    expect(await d.stop()).toEqual({ code: 0, signal: null });
    // Given back on a clean stop.
    expect(existsSync(join(out, '_evsync', 'lease.json'))).toBe(false);
  }, 180_000);

  it('a stale lease (its process gone on this host) is taken over, and said', async () => {
    const out = join(cli.dir, 'stale-out');
    const a = account(0, 'a5.duckdb');
    expect((await cmd(['backfill', '--streams', 'events', '--parquet-out', out], a)).code).toBe(0);
    const gone = spawn(process.execPath, ['-e', '']);
    const pid = gone.pid!;
    await new Promise((resolve) => gone.on('exit', resolve));
    const stale = {
      format: 'evsync-lake-lease',
      version: 1,
      account: cli.sim.accounts[0]!.clientId,
      holder: { host: hostname(), pid, token: 'f'.repeat(24) },
      command: 'evsync serve',
      acquiredAt: '2024-01-01T00:00:00.000Z',
      renewedAt: '2024-01-01T00:00:00.000Z',
      // Far ahead: only the dead process frees it.
      expiresAt: '2999-01-01T00:00:00.000Z',
    };
    writeFileSync(join(out, '_evsync', 'lease.json'), JSON.stringify(stale), { mode: 0o600 });
    const r = await cmd(['export', '--out', out], a);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(
      `took over the folder lease of evsync serve on ${hostname()} (PID ${pid}), which has exited`,
    );
    expect(existsSync(join(out, '_evsync', 'lease.json'))).toBe(false);
  }, 120_000);
});
