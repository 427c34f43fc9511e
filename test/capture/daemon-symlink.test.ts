/**
 * A daemon holds the warehouse by its real path; `status` and `query` given another path to the same file (a
 * symbolic link to it, a link to its folder) reach the daemon instead of being refused as "in use".
 */
import { symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { run } from '../cli/helpers.js';
import { useDaemons } from './daemon-process.js';
import { useServeEnv } from './helpers.js';

let dir: string;
let env: Record<string, string>;
useServeEnv({ seed: 17, db: 'daemon.duckdb', secret: 'daemon-symlink-secret-0123456789' }, (e) => {
  ({ dir, env } = e);
});

const daemons = useDaemons();

describe('a daemon reached through another path to its warehouse', () => {
  it('answers status and query given a link to the file or to its folder', async () => {
    const d = await daemons.start(['schedule', '--cron', '0 3 * * *', '--streams', 'events'], env);
    const db = env.EVSYNC_DB!;
    const link = join(dir, 'link.duckdb');
    symlinkSync(db, link);
    const alias = join(dir, 'alias');
    symlinkSync(dirname(db), alias);

    for (const path of [link, join(alias, 'daemon.duckdb')]) {
      const status = await run(['status', '--json', '--db', path], { cwd: dir, env });
      expect(status.code, status.stderr).toBe(0);
      expect(JSON.parse(status.stdout).servedBy).toBe(`evsync schedule (PID ${d.pid})`);
      const query = await run(['query', 'select 42 as n', '--format', 'json', '--db', path], { cwd: dir, env });
      expect(query.code, query.stderr).toBe(0);
      expect(JSON.parse(query.stdout)).toEqual([{ n: 42 }]);
    }
    expect(await d.stop()).toEqual({ code: 0, signal: null });
  });
});
