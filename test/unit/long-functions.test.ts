/**
 * No function in the product code is longer than 80 lines (issue 28): scripts/long-functions.mjs measures every
 * function, method and arrow in src/ (the simulator aside), connectors/, schemas/ and normalizer/ from the compiler's
 * own syntax tree, and this runs it the way a developer would.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, runScript } from '../helpers/run-script.js';

function run(limit?: number) {
  return runScript('long-functions.mjs', 'LONG_FUNCTION_LIMIT', limit === undefined ? undefined : String(limit));
}

describe('long functions', () => {
  it('no function in src/ (simulator aside), connectors/, schemas/ or normalizer/ is over 80 lines', async () => {
    const { code, stdout } = await run();
    expect(stdout).toContain('no function over 80 lines');
    expect(code).toBe(0);
  });

  it('the script finds long functions where they are: with a lower limit it names each, and exits 1', async () => {
    const { code, stdout, stderr } = await run(30);
    expect(code).toBe(1);
    const rows = stdout.trim().split('\n');
    expect(rows.length).toBeGreaterThan(0);
    expect(stderr).toContain(`${rows.length} function(s) over 30 lines`);
    for (const row of rows) {
      const [, file, line, name, lines] = /^(\S+):(\d+) (\S+) (\d+) lines$/.exec(row) ?? [];
      expect(file, row).toBeDefined();
      expect(file!.startsWith('src/simulator/'), row).toBe(false);
      expect(Number(lines)).toBeGreaterThan(30);
      // The named function starts on the line the script gives.
      const source = readFileSync(join(ROOT, file!), 'utf8').split('\n');
      if (name !== '(anonymous)' && name !== 'constructor') expect(source[Number(line) - 1], row).toContain(name);
    }
  });
});
