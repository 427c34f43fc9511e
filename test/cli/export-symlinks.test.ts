/**
 * `export` never follows a symbolic link out of --out, --force or not: a linked folder inside a table folder is
 * refused before anything is written or removed (even when an edited manifest lists a file through it as obsolete),
 * and a manifest that is a link is refused without quoting what it points at.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Manifest } from '../../src/warehouse/copies/export-manifest.js';
import { accountScope, eventScope, events, page, registrants } from '../warehouse/helpers.js';
import { cliWarehouse, run } from './helpers.js';

const cli = cliWarehouse('evsync-export-links-', async (w) => {
  await page(w, events, accountScope, [{ id: 10, name: 'Conf A', start_date: '2024-05-01' }]);
  await page(w, registrants, eventScope(10), [{ id: 1, email: 'a@example.com' }]);
});
const here = () => ({ cwd: cli.dir, env: cli.env });

let n = 0;
function outDir(): string {
  n += 1;
  return join(cli.dir, `o${n}`);
}

function manifestFile(tableDir: string): string {
  return join(tableDir, '_evsync', 'manifest.json');
}

/** A file outside every --out, standing for the user's own data. */
function victim(): string {
  const dir = join(cli.dir, `outside-${n}`);
  mkdirSync(dir);
  const file = join(dir, 'precious.txt');
  writeFileSync(file, 'the user keeps this\n');
  return file;
}

describe('export and symbolic links', () => {
  for (const force of [false, true]) {
    it(`a manifest listing a file through a linked folder as obsolete deletes nothing${force ? ' (--force)' : ''}: exit 2`, async () => {
      const out = outDir();
      const first = await run(['export', '--out', out, '--tables', 'events'], here());
      expect(first.code, first.stderr).toBe(0);
      const tableDir = join(out, 'events');
      const target = victim();
      symlinkSync(join(target, '..'), join(tableDir, 'escape'));
      const m = JSON.parse(readFileSync(manifestFile(tableDir), 'utf8')) as Manifest;
      writeFileSync(manifestFile(tableDir), JSON.stringify({ ...m, obsolete: ['escape/precious.txt'] }));
      const r = await run(['export', '--out', out, '--tables', 'events', ...(force ? ['--force'] : [])], here());
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(
        `error: export: ${join(tableDir, 'escape')} is a symbolic link to a folder; evsync never writes or removes through one (it could lead outside --out), --force or not: move it away`,
      );
      expect(readFileSync(target, 'utf8')).toBe('the user keeps this\n');
    });
  }

  it('a linked partition folder is never written through, --force or not (exit 2)', async () => {
    const out = outDir();
    const first = await run(['export', '--out', out, '--tables', 'registrants'], here());
    expect(first.code, first.stderr).toBe(0);
    const tableDir = join(out, 'registrants');
    const elsewhere = join(cli.dir, `elsewhere-${n}`);
    mkdirSync(elsewhere);
    symlinkSync(elsewhere, join(tableDir, 'event_id=99'));
    const r = await run(['export', '--out', out, '--tables', 'registrants', '--force'], here());
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${join(tableDir, 'event_id=99')} is a symbolic link to a folder`);
  });

  it('a manifest that is a symbolic link is refused without printing what it points at (exit 2)', async () => {
    const out = outDir();
    const first = await run(['export', '--out', out, '--tables', 'events'], here());
    expect(first.code, first.stderr).toBe(0);
    const tableDir = join(out, 'events');
    const target = victim();
    const manifest = manifestFile(tableDir);
    rmSync(manifest);
    symlinkSync(target, manifest);
    for (const force of [[], ['--force']]) {
      const r = await run(['export', '--out', out, '--tables', 'events', ...force], here());
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`error: export: ${manifest} is not a regular file (a symbolic link?)`);
      expect(r.stderr).not.toContain('user keeps');
    }
    expect(readFileSync(target, 'utf8')).toBe('the user keeps this\n');
    expect(existsSync(target)).toBe(true);
  });

  it('a manifest that is not JSON is refused without quoting it (exit 2)', async () => {
    const out = outDir();
    const first = await run(['export', '--out', out, '--tables', 'events'], here());
    expect(first.code, first.stderr).toBe(0);
    const manifest = manifestFile(join(out, 'events'));
    writeFileSync(manifest, 'secret-looking text, not json');
    const r = await run(['export', '--out', out, '--tables', 'events'], here());
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('is not an evsync export manifest for events (not valid JSON)');
    expect(r.stderr).not.toContain('secret-looking');
  });
});
