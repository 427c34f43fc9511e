import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DatabaseInUseError, Warehouse } from '../../src/warehouse/index.js';
import { eventScope, page, registrants } from './helpers.js';

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'evsync-open-test-'));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function mode(path: string): number {
  return statSync(path).mode & 0o777;
}

describe('Warehouse.open', () => {
  it('creates the file and its WAL owner-only (0600), with the _evsync and analytics schemas', async () => {
    const path = join(tempDir(), 'w.duckdb');
    const w = await Warehouse.open(path);
    try {
      await w.ensureTable(registrants);
      await page(w, registrants, eventScope(1), [{ id: 1, email: 'a@example.com' }]);
      expect(existsSync(path)).toBe(true);
      expect(mode(path)).toBe(0o600);
      // Pages commit to the WAL (checkpoints are rare while loading), so it exists now.
      expect(existsSync(`${path}.wal`)).toBe(true);
      expect(mode(`${path}.wal`)).toBe(0o600);
      const schemas = await w.query(
        `SELECT schema_name FROM duckdb_schemas() WHERE schema_name IN ('_evsync', 'analytics') ORDER BY 1`,
      );
      expect(schemas.rows.map((r) => r.schema_name)).toEqual(['_evsync', 'analytics']);
      const tables = await w.query(
        `SELECT table_name FROM duckdb_tables() WHERE schema_name = '_evsync' ORDER BY table_name`,
      );
      expect(tables.rows.map((r) => r.table_name)).toEqual([
        'archive_ops',
        'capture_streams',
        'credits',
        'cursors',
        'custom_field_types',
        'custom_fields',
        'deliveries',
        'meta',
        'publish_pending',
        'rejected',
        'runs',
        'schema_changes',
        'seen',
        'staged',
        'unavailable',
      ]);
    } finally {
      await w.close();
    }
    expect(mode(path)).toBe(0o600);
  });

  it('tightens an existing file to 0600 when opening it for writing', async () => {
    const path = join(tempDir(), 'w.duckdb');
    await (await Warehouse.open(path)).close();
    const { chmodSync } = await import('node:fs');
    chmodSync(path, 0o644);
    const w = await Warehouse.open(path);
    expect(mode(path)).toBe(0o600);
    await w.close();
  });

  it('shares one instance between warehouses of one process on one file', async () => {
    const path = join(tempDir(), 'w.duckdb');
    const a = await Warehouse.open(path);
    const b = await Warehouse.open(path);
    await a.ensureTable(registrants);
    await page(a, registrants, eventScope(1), [{ id: 1, email: 'a@example.com' }]);
    expect(await b.tableCounts()).toEqual({ registrants: 1 });
    await a.close();
    expect(await b.tableCounts()).toEqual({ registrants: 1 });
    await b.close();
  });

  it('opens read-only without creating anything', async () => {
    const path = join(tempDir(), 'w.duckdb');
    const w = await Warehouse.open(path);
    await w.ensureTable(registrants);
    await w.close();
    const r = await Warehouse.open(path, { readOnly: true });
    expect(await r.tableCounts()).toEqual({ registrants: 0 });
    await expect(r.ensureTable({ ...registrants, name: 'other' })).rejects.toThrow(/read-only/i);
    await r.close();
  });

  describe('a second process holding the file', () => {
    let child: ChildProcess | null = null;
    afterEach(() => {
      if (child?.pid && child.exitCode === null) child.kill('SIGTERM');
      child = null;
    });

    it('gives DatabaseInUseError naming the holder, for writing and for reading', async () => {
      const path = join(tempDir(), 'held.duckdb');
      const script = `import { DuckDBInstance } from '@duckdb/node-api';
        const instance = await DuckDBInstance.create(${JSON.stringify(path)});
        const connection = await instance.connect();
        await connection.run('CREATE TABLE t (a INTEGER)');
        process.stdout.write('ready\\n');
        setInterval(() => { globalThis.held = [instance, connection]; }, 1000);`;
      // The holder keeps its instance reachable: a module-level binding no closure uses can be collected once the
      // module has run, and DuckDB releases the file's lock when its instance is collected (CI saw the open succeed).
      // Run from the repository so the child resolves @duckdb/node-api like the tests do.
      child = spawn(process.execPath, ['--input-type=module', '-e', script], {
        cwd: process.cwd(),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const proc = child;
      await new Promise<void>((resolve, reject) => {
        let err = '';
        proc.stdout?.on('data', (d: Buffer) => {
          if (d.toString().includes('ready')) resolve();
        });
        proc.stderr?.on('data', (d: Buffer) => {
          err += d.toString();
        });
        proc.on('exit', (code) => reject(new Error(`holder exited with ${code}: ${err}`)));
      });

      const attempt = Warehouse.open(path);
      await expect(attempt).rejects.toBeInstanceOf(DatabaseInUseError);
      // The holder named by its command line (from /proc), and the way out for readers.
      await expect(attempt).rejects.toThrow(
        `database ${path} is in use by another process: node --input-type=module -e`,
      );
      await expect(attempt).rejects.toThrow(`(PID ${proc.pid})`);
      await expect(attempt).rejects.toThrow('--snapshot <file>');
      const error = await attempt.catch((e: unknown) => e);
      expect((error as DatabaseInUseError).pid).toBe(proc.pid);
      expect((error as DatabaseInUseError).holder).toMatch(/^node --input-type=module -e import \{ DuckDBInstance \}/);
      expect((error as DatabaseInUseError).holder?.length).toBeLessThanOrEqual(120);
      // No stack trace of DuckDB's in the message, only the sentence.
      expect((error as Error).message).not.toMatch(/IO Error|Conflicting lock/);
      await expect(Warehouse.open(path, { readOnly: true })).rejects.toThrow(`(PID ${proc.pid})`);
    });
  });
});
