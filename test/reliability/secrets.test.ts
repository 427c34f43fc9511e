/**
 * Secrets: after CLI runs with --verbose (backfill, sync with the pre-encoded credential, export, status, and a run
 * with a wrong secret), no client secret (raw, URL-encoded, or its longer fragments), no Basic string and no access
 * token the client actually sent is found in stdout, stderr, the database file's bytes (and WAL), any value of any
 * table (cursors and runs included), or the exported Parquet files (bytes and contents).
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { urlencodeRfc1738 } from '../../src/api/index.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { Warehouse } from '../../src/warehouse/index.js';
import { type RunResult, run, tempDir } from '../cli/helpers.js';

let sim: Simulator;
let dir: string;
let cleanup: () => void;
const sentAuthorizations = new Set<string>();

/** Every Authorization header undici writes to a socket in this process (the CLI runs in-process). */
function onHeaders(message: unknown): void {
  const headers = (message as { headers?: unknown }).headers;
  const text = Array.isArray(headers) ? headers.join('\r\n') : String(headers ?? '');
  for (const m of text.matchAll(/authorization:\s*(Bearer|Basic)\s+(\S+)/gi)) sentAuthorizations.add(m[2]!);
}

beforeAll(async () => {
  sim = await startSimulator({ size: 'tiny', seed: 9, rateLimit: { credits: 100_000, windowSeconds: 600 } });
  ({ dir, cleanup } = tempDir('evsync-secrets-'));
  subscribe('undici:client:sendHeaders', onHeaders);
});

afterAll(async () => {
  unsubscribe('undici:client:sendHeaders', onHeaders);
  await sim?.close();
  cleanup?.();
});

/** The strings that must never be written anywhere. */
function forbidden(): string[] {
  const out = new Set<string>();
  for (const a of sim.accounts) {
    out.add(a.clientSecret);
    out.add(urlencodeRfc1738(a.clientSecret));
    out.add(encodeURIComponent(a.clientSecret));
    out.add(a.encoded);
    // A secret split on its punctuation (a log that mangled `+` or `/`) must not leak in pieces either.
    for (const piece of a.clientSecret.split(/[^A-Za-z0-9]+/)) if (piece.length >= 8) out.add(piece);
  }
  for (const s of sentAuthorizations) out.add(s);
  return [...out];
}

function leaks(where: string, text: string): string[] {
  return forbidden()
    .filter((s) => text.includes(s))
    .map((s) => `${where} contains ${s.slice(0, 4)}…(${s.length} chars)`);
}

function filesUnder(root: string): string[] {
  if (!existsSync(root)) return [];
  return readdirSync(root).flatMap((name) => {
    const p = join(root, name);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

describe('secrets', () => {
  it('appear nowhere after verbose runs: output, database bytes, tables, Parquet', async () => {
    const db = join(dir, 'secrets.duckdb');
    const out = join(dir, 'parquet');
    const a = sim.accounts[0]!;
    const env = { EVSYNC_BASE_URL: sim.baseUrl, EVSYNC_CLIENT_ID: a.clientId, EVSYNC_CLIENT_SECRET: a.clientSecret };
    const encodedEnv = { EVSYNC_BASE_URL: sim.baseUrl, EVSYNC_CREDENTIALS: a.encoded };
    const runs: [string, RunResult][] = [];
    runs.push(['backfill', await run(['--verbose', '--db', db, 'backfill', '--streams', 'core'], { cwd: dir, env })]);
    sim.mutate(20);
    sim.advanceClock(2);
    runs.push([
      'sync --json',
      await run(['--verbose', '--json', '--db', db, 'sync', '--deletes'], { cwd: dir, env: encodedEnv }),
    ]);
    runs.push(['export', await run(['--verbose', '--db', db, 'export', '--out', out], { cwd: dir, env })]);
    runs.push(['status', await run(['--verbose', '--json', '--db', db, 'status'], { cwd: dir, env })]);
    const wrong = { ...env, EVSYNC_CLIENT_SECRET: `${a.clientSecret}x` };
    const rejected = await run(['--verbose', '--db', db, 'sync'], { cwd: dir, env: wrong });
    runs.push(['sync with a wrong secret', rejected]);

    for (const [name, r] of runs.slice(0, 4)) expect(r.code, `${name}: ${r.stderr.slice(-500)}`).toBe(0);
    expect(rejected.code).toBe(1);
    // The runs did talk to the service and did log.
    expect(sentAuthorizations.size).toBeGreaterThan(2);
    expect(runs[0]![1].stderr.length).toBeGreaterThan(0);

    const found: string[] = [];
    for (const [name, r] of runs)
      found.push(...leaks(`${name} stdout`, r.stdout), ...leaks(`${name} stderr`, r.stderr));
    // The wrong secret itself must not be echoed either.
    found.push(
      ...[rejected.stdout, rejected.stderr]
        .filter((t) => t.includes(wrong.EVSYNC_CLIENT_SECRET))
        .map(() => 'wrong secret echoed'),
    );

    for (const file of [db, `${db}.wal`].filter(existsSync)) {
      found.push(...leaks(`bytes of ${file}`, readFileSync(file).toString('latin1')));
    }
    const parquet = filesUnder(out).filter((f) => f.endsWith('.parquet'));
    expect(parquet.length).toBeGreaterThan(0);
    for (const file of parquet) found.push(...leaks(`bytes of ${file}`, readFileSync(file).toString('latin1')));

    // Column values are compressed on disk: read every table (bookkeeping included) and every Parquet file back.
    const warehouse = await Warehouse.open(db, { readOnly: true });
    try {
      const tables = await warehouse.query(
        `SELECT table_schema AS s, table_name AS t FROM information_schema.tables WHERE table_type = 'BASE TABLE'`,
      );
      expect(tables.rows.map((r) => `${r.s}.${r.t}`)).toEqual(
        expect.arrayContaining(['_evsync.cursors', '_evsync.runs']),
      );
      for (const { s, t } of tables.rows) {
        const rows = await warehouse.query(
          `SELECT CAST(to_json(x) AS VARCHAR) AS j FROM "${String(s)}"."${String(t)}" x`,
        );
        found.push(...leaks(`table ${String(s)}.${String(t)}`, rows.rows.map((r) => String(r.j)).join('\n')));
      }
      for (const file of parquet) {
        const rows = await warehouse.query(`SELECT CAST(to_json(x) AS VARCHAR) AS j FROM read_parquet(?) x`, [file]);
        found.push(...leaks(`contents of ${file}`, rows.rows.map((r) => String(r.j)).join('\n')));
      }
    } finally {
      await warehouse.close();
    }
    expect(found).toEqual([]);
  }, 180_000);
});
