/**
 * `evsync export --out s3://...` against a real S3 API (s3rver on 127.0.0.1, started here): what is written is read
 * back independently (own S3 client, DuckDB's read_parquet on the downloaded objects) and compared with the
 * warehouse; replacement, incremental partitions, multipart, accounts, the lease and secrecy of the credentials.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { beforeAll, describe, expect, it } from 'vitest';
import { exportToLake } from '../../src/outputs/lake/export-lake.js';
import { leaseKey } from '../../src/outputs/lake/layout.js';
import { Lease } from '../../src/outputs/lake/lease.js';
import { stagingDirFor } from '../../src/outputs/lake-output.js';
import { Warehouse } from '../../src/warehouse/index.js';
import { run, writeConfig } from '../cli/helpers.js';
import { eventScope, page, registrants } from '../warehouse/helpers.js';
import {
  BUCKET,
  buildWarehouse,
  download,
  duck,
  getObject,
  lakeConfig,
  listKeys,
  manifestAt,
  openTestStore,
  putObject,
  SECRET,
  s3Env,
  useTestLake,
  warehouseRows,
} from './helpers.js';

const testLake = useTestLake('evsync-lake-');
let db: string;
let config: string;
let env: Record<string, string>;

beforeAll(async () => {
  db = join(testLake.dir, 'evsync.duckdb');
  await buildWarehouse(db, { events: 6, perEvent: 5 });
  config = writeConfig(testLake.dir, lakeConfig(testLake.s3.endpoint));
  env = { EVSYNC_DB: db, ...s3Env() };
});

let n = 0;
function prefix(): string {
  n += 1;
  return `t${n}/evsync`;
}

const exportTo = (p: string, args: string[] = [], e = env) =>
  run(['export', '--out', `s3://${BUCKET}/${p}`, '--config', config, ...args], { cwd: testLake.dir, env: e });

/** Reads every Parquet object back and checks it against its manifest entry: bytes, hash, magic, row count. */
async function verifyAgainstManifests(p: string, tables: string[], account = 'default') {
  const { dir: local } = await download(testLake.client, `${p}/`);
  try {
    for (const table of tables) {
      const root = `${p}/${table}/account=${account}/`;
      const m = await manifestAt(testLake.client, `${root}_evsync/manifest.json`);
      expect(m).toMatchObject({ table, pending: [], obsolete: [] });
      const listed = new Set(m.files.map((f) => `${root}${f.path}`));
      const objects = (await listKeys(testLake.client, root)).filter((k) => !k.endsWith('_evsync/manifest.json'));
      // Exactly the manifest's files are there: nothing half-written, nothing left over.
      expect(objects).toEqual([...listed].sort());
      for (const f of m.files) {
        const bytes = readFileSync(join(local, root, f.path));
        expect(bytes.length).toBe(f.bytes);
        expect(createHash('sha256').update(bytes).digest('hex')).toBe(f.sha256);
        expect([bytes.subarray(0, 4).toString(), bytes.subarray(-4).toString()]).toEqual(['PAR1', 'PAR1']);
        const [c] = await duck<{ n: string }>(`SELECT count(*) AS n FROM read_parquet('${join(local, root, f.path)}')`);
        expect(Number(c?.n)).toBe(f.rows);
      }
    }
    return local;
  } catch (err) {
    rmSync(local, { recursive: true, force: true });
    throw err;
  }
}

describe('export --out s3://', () => {
  it('writes Hive-partitioned Parquet that an independent reader finds equal to the warehouse', async () => {
    const p = prefix();
    const r = await exportTo(p, ['--json']);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report).toMatchObject({
      out: `s3://${BUCKET}/${p}`,
      account: 'default',
      rows: { events: 6, registrants: 30 },
    });

    const local = await verifyAgainstManifests(p, ['events', 'registrants']);
    try {
      const m = await manifestAt(testLake.client, `${p}/registrants/account=default/_evsync/manifest.json`);
      expect(m.partitionBy).toEqual(['event_id']);
      // Custom fields travel as one JSON column, read with JSON functions: no column per field.
      const answers = await duck<{ id: string; answer: string; type: string }>(
        `SELECT id::VARCHAR AS id, json_extract_string(custom_fields, '$.c_' || event_id) AS answer,
                typeof(custom_fields) AS type
           FROM read_parquet('${local}/${p}/registrants/*/*/*.parquet', hive_partitioning = true) t
          ORDER BY t.id LIMIT 2`,
      );
      expect(answers).toEqual([
        { id: '2', answer: 'answer 2', type: 'JSON' },
        { id: '3', answer: 'answer 3', type: 'JSON' },
      ]);
      expect(m.files.every((f) => /^event_id=\d+\/[\w-]+_[0-9a-f-]+\.parquet$/.test(f.path))).toBe(true);
      // Partition columns come from the path, as declared: account, then event_id.
      const lake = await duck<{ id: string; event_id: string; account: string }>(
        `SELECT id::VARCHAR AS id, event_id::VARCHAR AS event_id, account FROM read_parquet('${local}/${p}/registrants/*/*/*.parquet', hive_partitioning = true) ORDER BY id`,
      );
      const warehouse = await warehouseRows<{ id: string; event_id: string }>(
        db,
        `SELECT id::VARCHAR AS id, event_id::VARCHAR AS event_id FROM registrants WHERE _deleted_at IS NULL ORDER BY id`,
      );
      expect(lake.map((x) => [x.id, x.event_id])).toEqual(warehouse.map((x) => [x.id, x.event_id]));
      expect(new Set(lake.map((x) => x.account))).toEqual(new Set(['default']));
      const ev = await duck<{ id: string; account: string }>(
        `SELECT id::VARCHAR AS id, account FROM read_parquet('${local}/${p}/events/*/*.parquet', hive_partitioning = true) ORDER BY id`,
      );
      expect(ev.map((x) => x.id)).toEqual(['10', '11', '12', '13', '14', '15']);
    } finally {
      rmSync(local, { recursive: true, force: true });
    }
    // The lease is given back and the staging folder is gone.
    expect(await getObject(testLake.client, `${p}/_evsync/leases/account=default.json`)).toBeNull();
    expect(existsSync(stagingDirFor(db))).toBe(false);
  });

  it('a second export replaces every changed partition by new objects and leaves none of the old', async () => {
    const p = prefix();
    // A warehouse of its own: every event of it changes below.
    const changing = join(testLake.dir, 'changing.duckdb');
    await buildWarehouse(changing, { events: 6, perEvent: 5 });
    const e = { ...env, EVSYNC_DB: changing };
    const initial = await exportTo(p, [], e);
    expect(initial.code, initial.stderr).toBe(0);
    const before = await listKeys(testLake.client, `${p}/registrants/`);
    // Nothing changed: nothing is written again (issue 35).
    const same = await exportTo(p, ['--tables', 'registrants'], e);
    expect(same.code, same.stderr).toBe(0);
    expect(await listKeys(testLake.client, `${p}/registrants/`)).toEqual(before);
    // Every event gains a registrant: every partition is written again.
    const w = await Warehouse.open(changing);
    for (let event = 10; event < 16; event++) {
      await page(w, registrants, eventScope(event), [{ id: 9000 + event, email: `n${event}@example.com` }]);
    }
    await w.close();
    const r = await exportTo(p, ['--tables', 'registrants'], e);
    expect(r.code, r.stderr).toBe(0);
    const after = await listKeys(testLake.client, `${p}/registrants/`);
    const parquet = (keys: string[]) => keys.filter((k) => k.endsWith('.parquet'));
    expect(parquet(after)).toHaveLength(6);
    expect(parquet(after).filter((k) => before.includes(k))).toEqual([]);
    rmSync(await verifyAgainstManifests(p, ['registrants']), { recursive: true, force: true });
  });

  it('re-exports only the touched partitions; the others keep their objects', async () => {
    const p = prefix();
    const initial = await exportTo(p);
    expect(initial.code, initial.stderr).toBe(0);
    const root = `${p}/registrants/account=default/`;
    const before = await manifestAt(testLake.client, `${root}_evsync/manifest.json`);
    // A run that changed event 11: one row added there.
    const w = await Warehouse.open(db);
    await page(w, registrants, eventScope(11), [{ id: 9001, email: 'new@example.com' }]);
    const store = await openTestStore(testLake.s3.endpoint, 2);
    try {
      const result = await exportToLake(w, {
        store,
        prefix: p,
        account: 'default',
        stagingDir: stagingDirFor(db),
        partitions: [{ table: 'registrants', eventIds: [11] }],
        runId: 'run-incremental',
        leaseTtlMs: 60_000,
        command: 'test',
        uploadConcurrency: 2,
      });
      // The partition: one object, one replaced. A new registrant is a first version, which its row in the
      // partition is: the history output (the versions of records that changed) has nothing to upload.
      expect(result.uploaded.files).toBe(1);
      expect(result.removed).toBe(1);
      expect(result.rows.registrants).toBe(31);
      expect(result.history.rows['history/registrants'] ?? 0).toBe(0);
    } finally {
      store.close();
      await w.close();
    }
    const after = await manifestAt(testLake.client, `${root}_evsync/manifest.json`);
    expect(after.runId).toBe('run-incremental');
    const byPartition = (m: typeof before) => new Map(m.files.map((f) => [f.partition.event_id, f.path]));
    const [b, a] = [byPartition(before), byPartition(after)];
    for (const [event, path] of a) {
      if (event === '11') expect(path).not.toBe(b.get(event));
      else expect(path).toBe(b.get(event));
    }
    expect(after.files.find((f) => f.partition.event_id === '11')?.rows).toBe(6);
    rmSync(await verifyAgainstManifests(p, ['registrants']), { recursive: true, force: true });
  });

  it('refuses a prefix holding objects it did not write (exit 2), and --force writes beside them without removing them', async () => {
    const p = prefix();
    await putObject(testLake.client, `${p}/events/account=default/theirs.parquet`, 'not ours');
    const refused = await exportTo(p, ['--tables', 'events']);
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toContain('theirs.parquet');
    expect(await listKeys(testLake.client, `${p}/`)).toEqual([`${p}/events/account=default/theirs.parquet`]);
    const forced = await exportTo(p, ['--tables', 'events', '--force']);
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stderr).toContain('1 object(s) evsync did not write were left as they are');
    expect((await getObject(testLake.client, `${p}/events/account=default/theirs.parquet`))?.toString()).toBe(
      'not ours',
    );
  });
});

describe('multipart', () => {
  it('uploads a partition larger than the part size in parts, and it reads back whole', async () => {
    const bigDb = join(testLake.dir, 'big.duckdb');
    const inst = await DuckDBInstance.create(bigDb);
    const con = await inst.connect();
    // Hex digests hardly compress: ~14 MiB of Parquet in one partition, three parts of 5 MiB.
    await con.run(`CREATE TABLE notes AS SELECT i AS id, 1::BIGINT AS event_id,
      md5(i::VARCHAR) || md5((i * 7)::VARCHAR) || md5((i * 13)::VARCHAR) AS note,
      NULL::TIMESTAMP AS _deleted_at FROM range(150000) t(i)`);
    con.closeSync();
    inst.closeSync();
    const cfg = writeConfig(testLake.dir, lakeConfig(testLake.s3.endpoint, { partSizeMiB: 5 }), 'multipart.json');
    const p = prefix();
    const r = await run(['export', '--out', `s3://${BUCKET}/${p}`, '--config', cfg, '-v', '--json'], {
      cwd: testLake.dir,
      env: { ...env, EVSYNC_DB: bigDb },
    });
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.uploaded.files).toBe(1);
    expect(report.uploaded.parts).toBeGreaterThan(1);
    expect(report.uploaded.bytes).toBeGreaterThan(5 * 1024 * 1024);
    expect(r.stderr).toMatch(/uploaded 1: .*event_id=1\/.*\.parquet \(\d+ bytes, \d+ parts\)/);
    rmSync(await verifyAgainstManifests(p, ['notes']), { recursive: true, force: true });
  });
});

describe('many accounts, one lake', () => {
  it('each account writes its own partition from its own database; one query reads them all', async () => {
    const nw = join(testLake.dir, 'accounts', 'northwind.duckdb');
    const co = join(testLake.dir, 'accounts', 'contoso.duckdb');
    await buildWarehouse(nw, { events: 3, perEvent: 4, firstEvent: 100, firstId: 1000 });
    await buildWarehouse(co, { events: 2, perEvent: 7, firstEvent: 200, firstId: 5000 });
    const cfg = writeConfig(
      testLake.dir,
      {
        ...lakeConfig(testLake.s3.endpoint),
        accounts: { northwind: { db: 'accounts/northwind.duckdb' }, contoso: { db: 'accounts/contoso.duckdb' } },
      },
      'accounts.json',
    );
    const p = prefix();
    // EVSYNC_DB belongs to no account: each uses its own database.
    const e = { ...s3Env(), EVSYNC_DB: db };
    for (const account of ['northwind', 'contoso']) {
      const r = await run(['export', '--out', `s3://${BUCKET}/${p}`, '--config', cfg, '--account', account], {
        cwd: testLake.dir,
        env: e,
      });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain(`account=${account}`);
    }
    const none = await run(['export', '--out', `s3://${BUCKET}/${p}`, '--config', cfg], { cwd: testLake.dir, env: e });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('choose one with --account <id> or EVSYNC_ACCOUNT');

    const local = await verifyAgainstManifests(p, ['registrants'], 'northwind');
    rmSync(local, { recursive: true, force: true });
    const { dir: all } = await download(testLake.client, `${p}/`);
    try {
      const counts = await duck<{ account: string; n: string; events: string }>(
        `SELECT account, count(*) AS n, count(DISTINCT event_id) AS events
           FROM read_parquet('${all}/${p}/registrants/*/*/*.parquet', hive_partitioning = true)
          GROUP BY account ORDER BY account`,
      );
      expect(counts).toEqual([
        { account: 'contoso', n: '14', events: '2' },
        { account: 'northwind', n: '12', events: '3' },
      ]);
    } finally {
      rmSync(all, { recursive: true, force: true });
    }
  });
});

describe('the lease', () => {
  it('refuses a second writer of the same account (exit 1, names the holder) and writes nothing', async () => {
    const p = prefix();
    const initial = await exportTo(p);
    expect(initial.code, initial.stderr).toBe(0);
    const before = await listKeys(testLake.client, `${p}/`);
    const store = await openTestStore(testLake.s3.endpoint, 1);
    const key = leaseKey({ prefix: p, account: 'default' });
    const held = await Lease.acquire(store, key, { account: 'default', ttlMs: 600_000, command: 'the other writer' });
    try {
      const r = await exportTo(p);
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toContain('is held by the other writer on');
      expect(r.stderr).toContain(`PID ${process.pid}`);
      expect((await listKeys(testLake.client, `${p}/`)).filter((k) => k !== key)).toEqual(before);
      // Another account is not held up by it.
      const cfg = writeConfig(testLake.dir, lakeConfig(testLake.s3.endpoint, { account: 'other' }), 'other.json');
      const other = await run(['export', '--out', `s3://${BUCKET}/${p}`, '--config', cfg], { cwd: testLake.dir, env });
      expect(other.code, other.stderr).toBe(0);
    } finally {
      await held.release();
      store.close();
    }
    const again = await exportTo(p);
    expect(again.code, again.stderr).toBe(0);
  });
});

describe('credentials', () => {
  it('never appear in output, objects or files, on success with --verbose or on a refusal', async () => {
    const p = prefix();
    const ok = await exportTo(p, ['-v']);
    expect(ok.code, ok.stderr).toBe(0);
    // A key the store does not know: refused (exit 2) with the service's reason, not the request.
    const wrongKey = await exportTo(p, ['-v'], { ...env, AWS_ACCESS_KEY_ID: 'AKIAEVSYNCWRONGKEY01' });
    expect(wrongKey.code).toBe(2);
    expect(wrongKey.stderr).toContain('InvalidAccessKeyId');
    const noBucket = await run(['export', '--out', `s3://no-such-bucket/${p}`, '--config', config, '-v'], {
      cwd: testLake.dir,
      env,
    });
    expect(noBucket.code).toBe(2);
    expect(noBucket.stderr).toContain('NoSuchBucket');
    for (const r of [ok, wrongKey, noBucket]) {
      expect(r.stdout + r.stderr).not.toContain(SECRET);
      expect(r.stdout + r.stderr).not.toContain('AKIAEVSYNCWRONGKEY01');
    }
    const { dir: local } = await download(testLake.client, `${p}/`);
    try {
      for (const key of await listKeys(testLake.client, `${p}/`)) {
        expect(readFileSync(join(local, key)).includes(SECRET)).toBe(false);
      }
    } finally {
      rmSync(local, { recursive: true, force: true });
    }
    expect(readFileSync(db).includes(SECRET)).toBe(false);
  });
});
