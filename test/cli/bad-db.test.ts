/**
 * A `--db` that cannot be the warehouse is explained as `check` explains it, by every command that opens the
 * warehouse, with exit 2 and no credit spent: never DuckDB's "IO Error".
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { run, simulatedCli } from './helpers.js';

const cli = simulatedCli({ seed: 26, prefix: 'evsync-bad-db-' });

/** Every command that opens the warehouse, with what it needs besides the database. */
const COMMANDS: Record<string, string[]> = {
  sync: ['sync'],
  backfill: ['backfill'],
  status: ['status'],
  export: ['export', '--out', 'parquet-out'],
  query: ['query', 'select 1'],
  plan: ['plan'],
  'plan --count': ['plan', '--count'],
  schedule: ['schedule', '--cron', '*/15 * * * *'],
  serve: ['serve', '--listen', '127.0.0.1:0'],
};

const WRITERS = ['sync', 'backfill', 'plan --count', 'schedule', 'serve', 'demo'];
/** The demo's own database is only ever --db: it is refused before the simulator starts. */
const DEMO = ['demo'];

async function runWith(db: string, args: string[]) {
  return run(['--db', db, ...args], {
    cwd: cli.dir,
    env: { ...cli.env, EVSYNC_WEBHOOK_SECRET: 'a-webhook-secret-of-32-characters' },
  });
}

describe('a bad --db, whatever the command', () => {
  it('a folder: "is a folder, not a database file", exit 2, no credit spent', async () => {
    const folder = join(cli.dir, 'a-folder');
    mkdirSync(folder);
    cli.sim.resetCounters();
    for (const [name, args] of [...Object.entries(COMMANDS), ['demo', DEMO] as const]) {
      const r = await runWith(folder, args);
      expect(r.code, `${name}: ${r.stderr}`).toBe(2);
      expect(r.stderr, name).toContain(
        `error: ${folder} is a folder, not a database file (point --db / EVSYNC_DB elsewhere)`,
      );
      expect(r.stderr, name).not.toMatch(/IO Error|Is a directory|--verbose/);
    }
    expect(cli.sim.counters().credits).toBe(0);
  });

  it('a folder that does not exist: said for every command that would create the file, exit 2', async () => {
    const db = join(cli.dir, 'no-such-folder', 'evsync.duckdb');
    for (const name of WRITERS) {
      const r = await runWith(db, COMMANDS[name] ?? DEMO);
      expect(r.code, `${name}: ${r.stderr}`).toBe(2);
      expect(r.stderr, name).toContain(
        `error: ${db} cannot be created: folder ${join(cli.dir, 'no-such-folder')} does not exist (create it, or point --db / EVSYNC_DB elsewhere)`,
      );
      expect(r.stderr, name).not.toMatch(/IO Error|No such file or directory/);
    }
    expect(cli.sim.counters().credits).toBe(0);
  });

  it('a file that is not a DuckDB database: said so, exit 2, the file left as it was', async () => {
    const notes = join(cli.dir, 'notes.txt');
    writeFileSync(notes, 'my notes\n');
    for (const [name, args] of Object.entries(COMMANDS)) {
      const r = await runWith(notes, args);
      expect(r.code, `${name}: ${r.stderr}`).toBe(2);
      expect(r.stderr, name).toContain(`error: ${notes} is not a DuckDB database (an evsync warehouse is one)`);
      expect(r.stderr, name).not.toMatch(/IO Error|my notes/);
    }
    expect(readFileSync(notes, 'utf8')).toBe('my notes\n');
    expect(cli.sim.counters().credits).toBe(0);
  });

  it('check says the same about a folder', async () => {
    const folder = join(cli.dir, 'a-folder-for-check');
    mkdirSync(folder);
    const r = await runWith(folder, ['check']);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`✗ database: ${folder} is a folder, not a database file`);
  });
});

describe('serve: a bad address or path is a usage error', () => {
  it('--listen with a port past 65535 exits 2, saying what is expected', async () => {
    const r = await runWith(join(cli.dir, 'serve.duckdb'), ['serve', '--listen', '0.0.0.0:99999']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(
      'error: --listen 0.0.0.0:99999: expected host:port, e.g. 127.0.0.1:8787 (the port from 0 to 65535)',
    );
  });

  it('--path without its leading slash exits 2, showing the path meant', async () => {
    const r = await runWith(join(cli.dir, 'serve.duckdb'), ['serve', '--listen', '127.0.0.1:0', '--path', 'webhooks']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('error: --path webhooks: must start with /, e.g. /webhooks');
  });
});
