/**
 * No dead export (issue 34): scripts/dead-exports.mjs lists every export of src/ (the simulator aside), connectors/,
 * schemas/ and normalizer/ that no other file of src, bench, test, connectors, schemas, normalizer or scripts imports
 * (the library's entry, src/index.ts, and the bin count as using all they export), from the compiler's own syntax
 * trees, and this runs it the way a developer would. A name used only in its own file is not exported.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, runScript } from '../helpers/run-script.js';

function run(importers?: string) {
  return runScript('dead-exports.mjs', 'DEAD_EXPORTS_IMPORTERS', importers);
}

describe('dead exports', () => {
  it('every export of src/ (simulator aside), connectors/, schemas/ and normalizer/ is imported by another file', async () => {
    const { code, stdout } = await run();
    expect(stdout).toContain('no dead export');
    expect(code).toBe(0);
  });

  it('the script finds exports nobody imports: counting only src/ as importers, it names those only tests use', async () => {
    const { code, stdout, stderr } = await run('src');
    expect(code).toBe(1);
    const rows = stdout.trim().split('\n');
    expect(rows.length).toBeGreaterThan(0);
    expect(stderr).toContain(`${rows.length} export(s) no other file imports`);
    for (const row of rows) {
      const [, file, line, name] = /^(\S+):(\d+) (\S+)/.exec(row) ?? [];
      expect(file, row).toBeDefined();
      expect(file!.startsWith('src/simulator/'), row).toBe(false);
      // The named export is declared on the line the script gives.
      const source = readFileSync(join(ROOT, file!), 'utf8').split('\n');
      expect(source[Number(line) - 1], row).toMatch(/\bexport\b/);
      expect(source[Number(line) - 1], row).toContain(name);
    }
  });
});
