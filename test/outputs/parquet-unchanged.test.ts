/**
 * A partition of a Parquet output whose rows did not change since the output last wrote it is not written again,
 * whoever says it was touched (issue 35): a backfill that reads every row again touches every partition, and the
 * folder (and the lake) is left byte for byte as it was; one registrant changed replaces the files of its event
 * only, and the folder still reads as the warehouse's rows. An event whose rows are all deleted loses its files
 * once; a manifest written before sources is read, its partitions written once more.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { inTempDir, run, simulatedCli, writeConfig } from '../cli/helpers.js';
import { BUCKET, duck, lakeConfig, s3Env, useTestLake } from '../lake/helpers.js';
import { accountScope, eventScope, events, openTemp, page, registrants } from '../warehouse/helpers.js';

const cli = simulatedCli({ seed: 7, db: 'unchanged.duckdb' });
const testLake = useTestLake('evsync-parquet-unchanged-');

/** Every file under `dir` (relative path) with what a rewrite or a replacement would change: inode, mtime, size. */
function filesOf(dir: string, prefix = ''): Map<string, string> {
  const out = new Map<string, string>();
  for (const entry of readdirSync(join(dir, prefix), { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) {
      for (const [p, s] of filesOf(dir, rel)) out.set(p, s);
      continue;
    }
    const st = statSync(join(dir, rel), { bigint: true });
    out.set(rel, `${st.ino}:${st.mtimeNs}:${st.size}`);
  }
  return out;
}

/** The `export: {...}` report `--verbose` prints after the `parquet: ...` line. */
function exportReport(stderr: string): { bytesWritten: number; exportId: string } {
  const line = stderr.split('\n').find((l) => l.includes('export: {'));
  if (!line) throw new Error(`no export report in:\n${stderr}`);
  return JSON.parse(line.slice(line.indexOf('{'))) as { bytesWritten: number; exportId: string };
}

/** Rows of `registrants` in the warehouse (live ones) that the folder lacks, and the other way round. */
async function differences(db: string, out: string): Promise<number> {
  const [cols] = await duck<{ names: string }>(
    `ATTACH '${db}' AS w (READ_ONLY);
     SELECT string_agg('CAST("' || column_name || '" AS VARCHAR)', ', ' ORDER BY column_index) AS names
       FROM duckdb_columns() WHERE database_name = 'w' AND schema_name = 'main' AND table_name = 'registrants'`,
  );
  const names = cols?.names ?? '';
  expect(names).toContain('"email"');
  const files = `read_parquet('${out}/registrants/**/*.parquet', hive_partitioning = true)`;
  const [r] = await duck<{ n: string }>(
    `ATTACH '${db}' AS w (READ_ONLY);
     SELECT count(*) AS n FROM (
       (SELECT ${names} FROM w.registrants WHERE "_deleted_at" IS NULL EXCEPT ALL SELECT ${names} FROM ${files})
       UNION ALL
       (SELECT ${names} FROM ${files} EXCEPT ALL SELECT ${names} FROM w.registrants WHERE "_deleted_at" IS NULL))`,
  );
  return Number(r?.n);
}

describe('Parquet outputs leave unchanged partitions alone', () => {
  it('a folder: a run that re-reads every row writes no byte; one registrant changed replaces its event only', async () => {
    await inTempDir(async (sub) => {
      const db = join(sub, 'w.duckdb');
      const env = { ...cli.env, EVSYNC_DB: db };
      const out = join(sub, 'out');
      const streams = ['--streams', 'events,registrants', '--parquet-out', out];
      const first = await run(['sync', ...streams], { cwd: sub, env });
      expect(first.code, first.stderr).toBe(0);
      const before = filesOf(out);
      expect([...before.keys()].filter((p) => p.startsWith('registrants/event_id=')).length).toBeGreaterThan(1);

      // An incremental run: it reads some rows again (event_questions' pages), all identical; nothing written.
      const sync = await run(['sync', ...streams, '--verbose'], { cwd: sub, env });
      expect(sync.code, sync.stderr).toBe(0);
      expect(sync.stderr).toMatch(
        /parquet: .* left as it is: the rows of the [1-9]\d* partition\(s\) the run read did not change/,
      );
      expect(exportReport(sync.stderr).bytesWritten).toBe(0);
      expect(filesOf(out)).toEqual(before);

      // Every row read again, none changed: every table touched (the run exported them), nothing written.
      const again = await run(['backfill', ...streams, '--verbose'], { cwd: sub, env });
      expect(again.code, again.stderr).toBe(0);
      expect(again.stderr).toContain(`parquet: ${out} left as it is`);
      expect(exportReport(again.stderr).bytesWritten).toBe(0);
      expect(filesOf(out)).toEqual(before);

      // One registrant changed in the service: its event's files are replaced, every other file stays as it was.
      const earlier = new Map(cli.sim.truth('registrants').records.map((r) => [r.id, JSON.stringify(r)]));
      const summary = cli.sim.mutate(1, { streams: ['registrants'] });
      expect(summary.deleted).toEqual({});
      const changed = cli.sim
        .truth('registrants')
        .records.filter((r) => earlier.get(r.id) !== JSON.stringify(r))
        .map((r) => Number(r.event_id));
      expect(changed.length).toBe(1);
      const partition = `registrants/event_id=${changed[0]}/`;
      // Read whole again: every partition touched, one changed.
      const next = await run(['backfill', ...streams, '--verbose'], { cwd: sub, env });
      expect(next.code, next.stderr).toBe(0);
      expect(exportReport(next.stderr).bytesWritten).toBeGreaterThan(0);
      const after = filesOf(out);
      // The registrant's history (history/registrants/, the same event's partition) changed with it, and only there.
      const changedHere = (p: string) =>
        [partition, 'registrants/_evsync/'].some((prefix) => p.startsWith(prefix) || p.startsWith(`history/${prefix}`));
      const outside = (files: Map<string, string>) => [...files].filter(([p]) => !changedHere(p));
      expect(outside(after)).toEqual(outside(before));
      for (const at of [partition, `history/${partition}`]) {
        const inside = (files: Map<string, string>) => [...files.keys()].filter((p) => p.startsWith(at));
        expect(inside(after).length).toBeGreaterThan(0);
        for (const p of inside(before)) expect(after.has(p)).toBe(false);
      }
      expect(await differences(db, out)).toBe(0);
    });
  }, 120_000);

  it('an event whose rows are all deleted loses its files once, then costs nothing; so does a whole export', async () => {
    const t = await openTemp();
    try {
      const w = t.w;
      const out = join(t.dir, 'parquet');
      await page(w, events, accountScope, [
        { id: 10, name: 'Conf A', start_date: '2024-05-01' },
        { id: 20, name: 'Conf B', start_date: '2024-06-01' },
      ]);
      await page(w, registrants, eventScope(10), [{ id: 1, email: 'a' }]);
      await page(w, registrants, eventScope(20), [{ id: 2, email: 'b' }]);
      expect((await w.exportParquet({ out })).bytesWritten).toBeGreaterThan(0);
      const written = filesOf(out);
      // An explicit export of every table, nothing changed: nothing written.
      expect((await w.exportParquet({ out })).bytesWritten).toBe(0);
      expect(filesOf(out)).toEqual(written);

      // Event 20's registrant deleted at the source: its files go (as before), event 10's stay.
      await page(w, registrants, eventScope(20), [], { upsert: false, seen: { walkId: 'z', ids: [] } });
      await w.markMissing({ stream: registrants, scope: eventScope(20), walkId: 'z', runId: 'r', at: '2024-05-01' });
      await w.exportParquet({ out, partitions: { registrants: [20] } });
      const gone = filesOf(out);
      expect([...gone.keys()].some((p) => p.startsWith('registrants/event_id=20'))).toBe(false);
      const kept = [...written].filter(([p]) => p.startsWith('registrants/event_id=10/'));
      expect(kept.length).toBeGreaterThan(0);
      for (const [p, st] of kept) expect(gone.get(p)).toBe(st);
      // Said touched again, or the whole table asked for: an event with no live row has no file to write.
      await w.exportParquet({ out, partitions: { registrants: [20] } });
      await w.exportParquet({ out });
      expect(filesOf(out)).toEqual(gone);
    } finally {
      await t.cleanup();
    }
  });

  it('rows without an event are their own partition (event_id=NULL): read back, then left alone when unchanged', async () => {
    const t = await openTemp();
    try {
      const w = t.w;
      const out = join(t.dir, 'parquet');
      await page(w, registrants, eventScope(10), [{ id: 1, email: 'a' }]);
      await page(w, registrants, { key: 'account', column: null, value: null }, [
        { id: 2, email: 'b', event_id: null },
      ]);
      expect((await w.exportParquet({ out })).bytesWritten).toBeGreaterThan(0);
      const written = filesOf(out);
      expect([...written.keys()].some((p) => p.startsWith('registrants/event_id=NULL/'))).toBe(true);
      const [row] = await duck<{ n: string }>(
        `SELECT count(*) AS n FROM read_parquet('${out}/registrants/**/*.parquet', hive_partitioning = true)
          WHERE event_id IS NULL AND id = 2`,
      );
      expect(Number(row?.n)).toBe(1);
      // Nothing changed: neither the whole table nor that partition is written again.
      expect((await w.exportParquet({ out })).bytesWritten).toBe(0);
      expect(filesOf(out)).toEqual(written);
    } finally {
      await t.cleanup();
    }
  });

  it('a manifest from before sources is still read: its partitions are written once more, then left alone', async () => {
    const t = await openTemp();
    try {
      const w = t.w;
      const out = join(t.dir, 'parquet');
      await page(w, registrants, eventScope(10), [{ id: 1, email: 'a' }]);
      await page(w, registrants, eventScope(20), [{ id: 2, email: 'b' }]);
      await w.exportParquet({ out });
      // What an evsync before sources wrote: the same manifest (version 1) without them.
      const path = join(out, 'registrants', '_evsync', 'manifest.json');
      const manifest = JSON.parse(readFileSync(path, 'utf8')) as { version: number; files: { source?: string }[] };
      expect(manifest.version).toBe(1);
      expect(manifest.files.every((f) => typeof f.source === 'string')).toBe(true);
      for (const f of manifest.files) delete f.source;
      writeFileSync(path, JSON.stringify(manifest));

      const once = await w.exportParquet({ out, partitions: { registrants: [10] } });
      expect(once.bytesWritten).toBeGreaterThan(0);
      const written = filesOf(out);
      expect((await w.exportParquet({ out, partitions: { registrants: [10] } })).bytesWritten).toBe(0);
      expect(filesOf(out)).toEqual(written);
      // Event 20, not asked for, kept its old file until it is: then written once more too.
      expect((await w.exportParquet({ out })).bytesWritten).toBeGreaterThan(0);
      const all = filesOf(out);
      expect((await w.exportParquet({ out })).bytesWritten).toBe(0);
      expect(filesOf(out)).toEqual(all);
    } finally {
      await t.cleanup();
    }
  });

  it('the lake: a run that re-reads every row uploads nothing and leaves every object as it was', async () => {
    const db = join(testLake.dir, 'lake.duckdb');
    const config = writeConfig(testLake.dir, lakeConfig(testLake.s3.endpoint, { account: 'northwind' }), 'lake.json');
    const env = { ...cli.env, EVSYNC_DB: db, ...s3Env() };
    const args = ['--streams', 'events,registrants', '--parquet-out', `s3://${BUCKET}/unchanged`, '--config', config];
    const objects = async () => {
      const r = await testLake.client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'unchanged/' }));
      return (r.Contents ?? [])
        .filter((o) => !o.Key?.includes('lease'))
        .map((o) => `${o.Key} ${o.ETag} ${o.Size} ${o.LastModified?.toISOString()}`)
        .sort();
    };
    const first = await run(['backfill', ...args], { cwd: testLake.dir, env });
    expect(first.code, first.stderr).toBe(0);
    const before = await objects();
    expect(before.filter((o) => o.startsWith('unchanged/registrants/')).length).toBeGreaterThan(2);

    const again = await run(['backfill', ...args], { cwd: testLake.dir, env });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/parquet: exported 3 table\(s\) to .*: 0 file\(s\) uploaded \(0\.0 MiB\), 0 replaced/);
    expect(await objects()).toEqual(before);
  }, 120_000);
});
