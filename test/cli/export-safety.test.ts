/**
 * `evsync export` and `sync --parquet-out` write only what evsync owns: real folders in a temp dir, the CLI run
 * in-process, the files on disk inspected after each command.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { startSimulator } from '../../src/simulator/index.js';
import type { Manifest as ExportManifest } from '../../src/warehouse/copies/export-manifest.js';
import { Warehouse } from '../../src/warehouse/index.js';
import { accountScope, eventScope, events, page, registrants } from '../warehouse/helpers.js';
import { cliWarehouse, run } from './helpers.js';
import { canMountReadOnly, runOnReadOnlyMount } from './readonly-mount.js';

const cli = cliWarehouse('evsync-export-', async (w) => {
  await page(w, events, accountScope, [
    { id: 10, name: 'Conf A', start_date: '2024-05-01' },
    { id: 20, name: 'Conf B', start_date: '2024-06-01' },
  ]);
  await page(w, registrants, eventScope(10), [
    { id: 1, email: 'a@example.com' },
    { id: 2, email: 'b@example.com' },
  ]);
  await page(w, registrants, eventScope(20), [{ id: 3, email: 'c@example.com' }]);
});
/** A CLI run's options: in the fixture's folder, on its warehouse. */
const here = () => ({ cwd: cli.dir, env: cli.env });

/** A fresh output folder per test. */
let n = 0;
function outDir(): string {
  n += 1;
  return join(cli.dir, `out${n}`);
}

function manifestOf(tableDir: string): ExportManifest {
  return JSON.parse(readFileSync(join(tableDir, '_evsync', 'manifest.json'), 'utf8')) as ExportManifest;
}

/** Every path under `root` (relative), recursively. */
function tree(root: string): string[] {
  return (readdirSync(root, { recursive: true }) as string[]).map(String).sort();
}

async function parquetRows(glob: string): Promise<{ id: string; event_id?: string }[]> {
  const db = await DuckDBInstance.create(':memory:');
  const con = await db.connect();
  try {
    const r = await con.runAndReadAll(`SELECT * FROM read_parquet('${glob}', hive_partitioning = true) ORDER BY id`);
    return r.getRowObjectsJson() as { id: string; event_id?: string }[];
  } finally {
    con.closeSync();
    db.closeSync();
  }
}

describe('evsync export: only what it owns', () => {
  it('refuses a table folder it did not create (exit 2, names folder and file) and leaves it untouched', async () => {
    const out = outDir();
    mkdirSync(join(out, 'events'), { recursive: true });
    writeFileSync(join(out, 'events', 'plan.docx'), 'notes');
    const r = await run(['export', '--out', out, '--tables', 'events'], here());
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(join(out, 'events'));
    expect(r.stderr).toContain('plan.docx');
    expect(r.stderr).toContain('--force');
    expect(readFileSync(join(out, 'events', 'plan.docx'), 'utf8')).toBe('notes');
    expect(tree(out)).toEqual(['events', join('events', 'plan.docx')]);
  });

  it('refuses before writing anything: one foreign folder stops the whole export', async () => {
    const out = outDir();
    mkdirSync(join(out, 'registrants'), { recursive: true });
    writeFileSync(join(out, 'registrants', 'mine.csv'), 'x');
    const r = await run(['export', '--out', out], here());
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('mine.csv');
    expect(existsSync(join(out, 'events'))).toBe(false);
  });

  it('--force writes beside foreign files and never removes them; later exports refuse again until they are gone', async () => {
    const out = outDir();
    mkdirSync(join(out, 'events'), { recursive: true });
    writeFileSync(join(out, 'events', 'plan.docx'), 'notes');
    const forced = await run(['export', '--out', out, '--tables', 'events', '--force'], here());
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stderr).toContain('1 file(s) evsync did not write were left as they are');
    expect(readFileSync(join(out, 'events', 'plan.docx'), 'utf8')).toBe('notes');
    expect(manifestOf(join(out, 'events')).files).toHaveLength(1);

    const again = await run(['export', '--out', out, '--tables', 'events'], here());
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('plan.docx');
    const forcedAgain = await run(['export', '--out', out, '--tables', 'events', '--force'], here());
    expect(forcedAgain.code, forcedAgain.stderr).toBe(0);
    expect(readFileSync(join(out, 'events', 'plan.docx'), 'utf8')).toBe('notes');
  });

  it('refuses a file a user dropped inside a folder evsync made, and keeps it with --force', async () => {
    const out = outDir();
    expect((await run(['export', '--out', out, '--tables', 'registrants'], here())).code).toBe(0);
    const partition = join(out, 'registrants', 'event_id=10');
    writeFileSync(join(partition, 'extra.parquet'), 'not ours');
    const r = await run(['export', '--out', out, '--tables', 'registrants'], here());
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('event_id=10/extra.parquet');
    const forced = await run(['export', '--out', out, '--tables', 'registrants', '--force'], here());
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stderr).toContain('readers of registrants/**/*.parquet will read them too');
    expect(readFileSync(join(partition, 'extra.parquet'), 'utf8')).toBe('not ours');
  });

  it('an empty --out is a usage error and writes nothing in the current folder', async () => {
    const cwd = outDir();
    mkdirSync(cwd);
    const r = await run(['export', '--out', ''], { cwd, env: cli.env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--out');
    expect(readdirSync(cwd)).toEqual([]);
  });

  it('replaces files by writing new ones, then removing only the old ones it listed; row counts stay exact', async () => {
    const out = outDir();
    const first = await run(['export', '--out', out, '--json'], here());
    expect(first.code, first.stderr).toBe(0);
    const one = JSON.parse(first.stdout);
    expect(one.rows).toEqual({ events: 2, registrants: 3 });
    const before = manifestOf(join(out, 'registrants'));

    // Nothing changed: nothing is written again, the files stay as they are (issue 35).
    const same = JSON.parse((await run(['export', '--out', out, '--json'], here())).stdout);
    expect(same.bytesWritten).toBe(0);
    expect(manifestOf(join(out, 'registrants'))).toEqual(before);
    // Every registrant written again (changed, then back as it was): every partition is replaced.
    const w = await Warehouse.open(cli.env.EVSYNC_DB ?? '');
    for (const email of ['changed@example.com', null]) {
      await page(w, registrants, eventScope(10), [
        { id: 1, email: email ?? 'a@example.com' },
        { id: 2, email: email ?? 'b@example.com' },
      ]);
      await page(w, registrants, eventScope(20), [{ id: 3, email: email ?? 'c@example.com' }]);
    }
    await w.close();

    const second = JSON.parse((await run(['export', '--out', out, '--json'], here())).stdout);
    expect(second.exportId).not.toBe(one.exportId);
    const after = manifestOf(join(out, 'registrants'));
    // New names only: nothing from the first export survives, nothing is doubled.
    const oldNames = new Set(before.files.map((f) => f.path));
    expect(after.files.every((f) => !oldNames.has(f.path) && f.exportId === second.exportId)).toBe(true);
    for (const f of before.files) expect(existsSync(join(out, 'registrants', f.path))).toBe(false);
    expect((await parquetRows(`${out}/registrants/**/*.parquet`)).map((r) => [r.id, r.event_id])).toEqual([
      ['1', '10'],
      ['2', '10'],
      ['3', '20'],
    ]);
    expect(tree(out).filter((p) => p.endsWith('.partial') || p.includes('.tmp'))).toEqual([]);
  });

  it('writes a documented manifest: files with row counts, sizes and hashes that match the disk', async () => {
    const out = outDir();
    const r = JSON.parse((await run(['export', '--out', out, '--json'], here())).stdout);
    const m = manifestOf(join(out, 'registrants'));
    expect(m).toMatchObject({
      format: 'evsync-parquet-export',
      version: 1,
      table: 'registrants',
      exportId: r.exportId,
      runId: null,
      partitionBy: ['event_id'],
      compression: 'zstd',
      includeDeleted: false,
      rows: 3,
      folders: ['event_id=10', 'event_id=20'],
      pending: [],
      obsolete: [],
    });
    expect(m.files.map((f) => [f.partition, f.rows])).toEqual([
      [{ event_id: '10' }, 2],
      [{ event_id: '20' }, 1],
    ]);
    for (const f of m.files) {
      const bytes = readFileSync(join(out, 'registrants', f.path));
      expect(f.path).toMatch(new RegExp(`^event_id=\\d+/${r.exportId}_[0-9a-f-]+\\.parquet$`));
      expect(f.bytes).toBe(bytes.length);
      expect(f.sha256).toBe(createHash('sha256').update(bytes).digest('hex'));
    }
    expect(manifestOf(join(out, 'events'))).toMatchObject({ partitionBy: [], rows: 2, folders: [] });
  });

  it('every file is 0600 and every folder 0700, the output folder included', async () => {
    const out = join(outDir(), 'nested', 'deeper');
    expect((await run(['export', '--out', out], here())).code).toBe(0);
    const root = join(out, '..', '..');
    for (const rel of ['', ...tree(root)]) {
      const st = statSync(join(root, rel));
      expect([rel, st.mode & 0o777]).toEqual([rel, st.isDirectory() ? 0o700 : 0o600]);
    }
  });

  it('finishes an interrupted export: its pending and replaced files are evsync’s, not foreign', async () => {
    const out = outDir();
    expect((await run(['export', '--out', out, '--tables', 'registrants'], here())).code).toBe(0);
    const tableDir = join(out, 'registrants');
    const m = manifestOf(tableDir);
    // What a process killed mid-export leaves: a half-written file of a pending export, a replaced file not removed.
    const pendingId = '20240101T000000Z-deadbeef';
    writeFileSync(join(tableDir, 'event_id=10', `${pendingId}_0b1c.partial`), 'half');
    writeFileSync(join(tableDir, 'event_id=20', 'old_file.parquet'), 'replaced');
    writeFileSync(
      join(tableDir, '_evsync', 'manifest.json'),
      JSON.stringify({ ...m, pending: [pendingId], obsolete: ['event_id=20/old_file.parquet'] }),
    );
    const r = await run(['export', '--out', out, '--tables', 'registrants'], here());
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(join(tableDir, 'event_id=10', `${pendingId}_0b1c.partial`))).toBe(false);
    expect(existsSync(join(tableDir, 'event_id=20', 'old_file.parquet'))).toBe(false);
    expect(manifestOf(tableDir)).toMatchObject({ pending: [], obsolete: [], rows: 3 });
  });

  it('a manifest that is not evsync’s is never overwritten, --force or not', async () => {
    const out = outDir();
    mkdirSync(join(out, 'events', '_evsync'), { recursive: true });
    writeFileSync(join(out, 'events', '_evsync', 'manifest.json'), '{"mine": true}');
    const r = await run(['export', '--out', out, '--tables', 'events', '--force'], here());
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('is not an evsync export manifest');
    expect(readFileSync(join(out, 'events', '_evsync', 'manifest.json'), 'utf8')).toBe('{"mine": true}');
  });
});

describe('evsync export: places no folder can be made', () => {
  it.skipIf(process.platform !== 'linux')('--out /proc/pq fails at once with a clear error (no spin)', async () => {
    const started = Date.now();
    const r = await run(['export', '--out', '/proc/evsync-test-pq'], here());
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('cannot create folder /proc/evsync-test-pq');
    expect(r.stderr).toContain('does not allow a new folder there (ENOENT)');
    // A spin never returns; this bound only documents that the answer is immediate.
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it.skipIf(!canMountReadOnly)(
    '--out on a read-only file system says so (EROFS, exit 2), not ENOENT',
    async () => {
      const ro = join(cli.dir, 'ro-out');
      mkdirSync(ro);
      const r = await runOnReadOnlyMount(ro, ['export', '--out', join(ro, 'pq')], cli.env, cli.dir);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(
        `export: cannot create folder ${join(ro, 'pq')}: the file system is read-only (EROFS)`,
      );
      expect(readdirSync(ro)).toEqual([]);
    },
    60_000,
  );

  it('--out under a regular file says which part is a file (exit 2)', async () => {
    const file = join(cli.dir, 'a-file');
    writeFileSync(file, 'x');
    const r = await run(['export', '--out', join(file, 'pq')], here());
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${file} is a file, not a folder`);
  });
});

describe('sync --parquet-out uses the same rules', () => {
  it('refuses a foreign folder (the sync itself is kept) and writes owner-only files into its own', async () => {
    const sim = await startSimulator({
      size: 'tiny',
      seed: 5,
      port: 0,
      rateLimit: { credits: 100_000, windowSeconds: 600 },
    });
    try {
      const a = sim.accounts[0]!;
      const e = {
        EVSYNC_BASE_URL: sim.baseUrl,
        EVSYNC_CLIENT_ID: a.clientId,
        EVSYNC_CLIENT_SECRET: a.clientSecret,
        EVSYNC_DB: join(cli.dir, 'sync.duckdb'),
      };
      const out = outDir();
      mkdirSync(join(out, 'registrants'), { recursive: true });
      writeFileSync(join(out, 'registrants', 'plan.docx'), 'notes');
      const refused = await run(['sync', '--streams', 'events,registrants', '--parquet-out', out], {
        cwd: cli.dir,
        env: e,
      });
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toContain('plan.docx');
      expect(readFileSync(join(out, 'registrants', 'plan.docx'), 'utf8')).toBe('notes');

      const clean = outDir();
      const r = await run(['backfill', '--streams', 'events,registrants', '--parquet-out', clean], {
        cwd: cli.dir,
        env: e,
      });
      expect(r.code, r.stderr).toBe(0);
      const m = manifestOf(join(clean, 'registrants'));
      expect(m.rows).toBe(sim.truth('registrants').records.length);
      for (const rel of tree(clean)) {
        const st = statSync(join(clean, rel));
        expect([rel, st.mode & 0o777]).toEqual([rel, st.isDirectory() ? 0o700 : 0o600]);
      }
    } finally {
      await sim.close();
    }
  }, 60_000);
});
