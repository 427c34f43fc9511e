/**
 * Outputs that cannot collide: `--snapshot` inside a local `--parquet-out`, or on a file of the warehouse's own
 * layout, and a `--parquet-out` (or `export --out`) that holds the warehouse, are refused at start by every command
 * taking them (exit 2, both paths named), through a symbolic link too, before a credit is spent or a byte written.
 * (Before, `serve` took a snapshot inside a table folder of its --parquet-out and then failed every publish.)
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { run, simulatedCli } from './helpers.js';

const cli = simulatedCli({ seed: 19, db: 'evsync.duckdb', prefix: 'evsync-collide-' });
const SECRET = 'collisions-webhook-secret-0a1b2c3d4e';

/** Every path under `root` with its bytes' hash (links and folders as such, never followed): "nothing written". */
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

const env = () => ({ ...cli.env, EVSYNC_WEBHOOK_SECRET: SECRET });
const db = () => cli.env.EVSYNC_DB!;
const parquet = () => join(cli.dir, 'parquet');

beforeAll(async () => {
  // A warehouse with data and a Parquet folder evsync wrote, as a user has them before adding --snapshot.
  const r = await run(['backfill', '--streams', 'events,registrants', '--parquet-out', parquet()], {
    cwd: cli.dir,
    env: env(),
  });
  expect(r.code, r.stderr).toBe(0);
  mkdirSync(join(cli.dir, 'elsewhere'));
  symlinkSync(parquet(), join(cli.dir, 'elsewhere', 'linked-parquet'));
  symlinkSync(cli.dir, join(cli.dir, 'elsewhere', 'linked-home'));
  symlinkSync(db(), join(cli.dir, 'alias.duckdb'));
});

/** Runs `argv`, expects exit 2 with every text of `says`, and that nothing was spent or written. */
async function refused(argv: string[], says: string[]): Promise<string> {
  const before = state(cli.dir);
  const credits = cli.sim.counters();
  const r = await run(argv, { cwd: cli.dir, env: env() });
  expect(r.code, r.stderr).toBe(2);
  for (const text of says) expect(r.stderr).toContain(text);
  expect(r.stderr).not.toMatch(/listening on|answered here|polled on the schedule/);
  expect(cli.sim.counters()).toEqual(credits);
  expect(state(cli.dir)).toEqual(before);
  return r.stderr;
}

const DAEMONS = {
  serve: ['serve', '--listen', '127.0.0.1:0', '--admin-listen', 'off', '--no-catch-up'],
  schedule: ['schedule', '--cron', '*/15 * * * *', '--admin-listen', 'off'],
};

describe('--snapshot inside --parquet-out', () => {
  it.each([['sync'], ['backfill'], ['serve'], ['schedule']])(
    '%s refuses it, in a table folder or the folder itself',
    async (cmd) => {
      const argv = cmd === 'serve' || cmd === 'schedule' ? DAEMONS[cmd] : [cmd, '--streams', 'events'];
      for (const snapshot of [join(parquet(), 'registrants', 'snap.duckdb'), join(parquet(), 'snap.duckdb')]) {
        const message = await refused(
          [...argv, '--parquet-out', parquet(), '--snapshot', snapshot],
          [`--snapshot ${snapshot} lies inside --parquet-out ${parquet()}`, 'e.g. '],
        );
        expect(message).toContain(join(cli.dir, 'snap.duckdb'));
      }
    },
  );

  it('through a symbolic link to the folder, for sync and serve', async () => {
    const linked = join(cli.dir, 'elsewhere', 'linked-parquet', 'registrants', 'snap.duckdb');
    for (const argv of [['sync', '--streams', 'events'], DAEMONS.serve]) {
      await refused(
        [...argv, '--parquet-out', parquet(), '--snapshot', linked],
        [
          `--snapshot ${linked} (${join(parquet(), 'registrants', 'snap.duckdb')}, through a symbolic link) lies inside --parquet-out ${parquet()}`,
        ],
      );
    }
    // And the other way round: the folder named through the link, the snapshot by its own path.
    const viaLink = join(cli.dir, 'elsewhere', 'linked-parquet');
    await refused(
      [...DAEMONS.serve, '--parquet-out', viaLink, '--snapshot', join(parquet(), 'events', 'snap.duckdb')],
      [`lies inside --parquet-out ${viaLink}`],
    );
  });
});

describe('--snapshot on a file of the warehouse', () => {
  it('is refused for the warehouse, its WAL, the daemon’s socket and query copy, and the staging folder', async () => {
    for (const [target, what] of [
      [join(cli.dir, 'alias.duckdb'), 'is the warehouse itself'],
      [`${db()}.wal`, `is the write-ahead log of the warehouse ${db()}`],
      [`${db()}.sock`, `is the daemon's socket of the warehouse ${db()}`],
      [`${db()}.query-copy`, `is the daemon's query copy of the warehouse ${db()}`],
      [`${db()}.query-copy.tmp-0a1b2c`, "is a temporary file of the daemon's query copy"],
      [join(`${db()}.stage`, 'snap.duckdb'), `lies inside the staging folder of the warehouse ${db()}`],
      [join(cli.dir, 'elsewhere', 'linked-home', 'evsync.duckdb.wal'), 'through a symbolic link'],
    ] as const) {
      for (const argv of [['sync', '--streams', 'events'], DAEMONS.serve]) {
        await refused([...argv, '--snapshot', target], [`--snapshot ${target}`, what]);
      }
    }
  });
});

describe('a --parquet-out that holds the warehouse', () => {
  it('is refused for sync, serve, schedule and export --out, through a symbolic link too', async () => {
    const linked = join(cli.dir, 'elsewhere', 'linked-home');
    for (const folder of [cli.dir, linked]) {
      for (const argv of [['sync', '--streams', 'events'], ['backfill'], DAEMONS.serve, DAEMONS.schedule]) {
        await refused([...argv, '--parquet-out', folder], [`--parquet-out ${folder}`, `holds the warehouse ${db()}`]);
      }
      await refused(['export', '--out', folder], [`--out ${folder}`, `holds the warehouse ${db()}`]);
    }
    // Its staging folder is no Parquet folder either.
    await refused(
      ['export', '--out', join(`${db()}.stage`, 'pq')],
      ['lies inside the staging folder of the warehouse'],
    );
  });
});
