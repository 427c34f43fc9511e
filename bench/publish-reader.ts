/**
 * `node publish-reader.js --snapshot <file> --parquet <dir> [--every 1000]`: an analyst's tool polling what the
 * daemon publishes, from a process of its own. Every `--every` ms it opens the snapshot read-only and, in a fresh
 * in-memory DuckDB, the registrants' Parquet (each opened anew, as a reader run now and then would), and reads the
 * registrants' `id` and `updated_at`. One JSON line per read on stdout:
 *   {"src": "snapshot" | "parquet", "t": <wall ms when the read began>, "ms": <read time>, "rows": [[id, updated_at]...]}
 * where `rows` are those whose `updated_at` differs from the previous read of that source (the first read gives
 * `"baseline": <rows>` instead: after it, only rows at or after its newest `updated_at` are read), or
 * {"src", "t", "error"} when a read failed. It stops at the end of its stdin.
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { DuckDBInstance } from '@duckdb/node-api';

type Source = 'snapshot' | 'parquet';

const { values } = parseArgs({
  options: { snapshot: { type: 'string' }, parquet: { type: 'string' }, every: { type: 'string', default: '1000' } },
});
if (!values.snapshot || !values.parquet) throw new Error('publish-reader: --snapshot and --parquet are required');
const every = Number(values.every);
const FROM: Record<Source, string> = {
  snapshot: 'main.registrants',
  parquet: `read_parquet('${join(values.parquet, 'registrants').replaceAll("'", "''")}/**/*.parquet', hive_partitioning = true)`,
};
const say = (v: unknown) => process.stdout.write(`${JSON.stringify(v)}\n`);

/** Per source: what the last read saw (id -> updated_at), and the lower bound of later reads. */
const seen: Record<Source, Map<string, string> | null> = { snapshot: null, parquet: null };
const since: Record<Source, string> = { snapshot: '1900-01-01 00:00:00', parquet: '1900-01-01 00:00:00' };

async function read(src: Source): Promise<void> {
  const t = Date.now();
  let instance: DuckDBInstance | null = null;
  try {
    instance = await DuckDBInstance.create(
      src === 'snapshot' ? values.snapshot : ':memory:',
      src === 'snapshot' ? { access_mode: 'READ_ONLY' } : {},
    );
    const connection = await instance.connect();
    const reader = await connection.runAndReadAll(
      `SELECT CAST(id AS VARCHAR) AS id, strftime(CAST(updated_at AS TIMESTAMP), '%Y-%m-%d %H:%M:%S') AS u
         FROM ${FROM[src]}
        WHERE _deleted_at IS NULL AND CAST(updated_at AS TIMESTAMP) >= TIMESTAMP '${since[src]}'`,
    );
    const rows = reader.getRowObjectsJson().map((r) => [String(r.id), String(r.u)] as const);
    connection.closeSync();
    const ms = Date.now() - t;
    const before = seen[src];
    const now = new Map(before ?? []);
    const changed: (readonly [string, string])[] = [];
    for (const [id, u] of rows) {
      if (before && before.get(id) !== u) changed.push([id, u]);
      now.set(id, u);
    }
    seen[src] = now;
    if (before === null) {
      since[src] = rows.reduce((m, [, u]) => (u > m ? u : m), since[src]);
      say({ src, t, ms, baseline: rows.length });
    } else say({ src, t, ms, rows: changed });
  } catch (err) {
    say({ src, t, error: err instanceof Error ? err.message : String(err) });
  } finally {
    instance?.closeSync();
  }
}

let stopped = false;
process.stdin.on('end', () => {
  stopped = true;
});
process.stdin.resume();
while (!stopped) {
  const next = Date.now() + every;
  await read('snapshot');
  await read('parquet');
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, next - Date.now())));
}
