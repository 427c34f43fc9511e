/**
 * The AWS SDK is loaded only when an s3:// target is used: the library entry and the CLI's other paths stay as
 * fast as before (each case in a fresh Node process, since a module once loaded stays loaded).
 */
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');

function sdkModulesAfter(which: 'lib' | 'cli' | 'lake'): number {
  const out = execFileSync(process.execPath, ['--import', 'tsx', 'test/lake/fixtures/loaded-sdk.ts', which], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '' },
  });
  return Number(out.trim());
}

describe('the AWS SDK loads lazily', () => {
  it('not by the library entry, nor by the CLI answering --help; only by a lake store', () => {
    expect(sdkModulesAfter('lib')).toBe(0);
    expect(sdkModulesAfter('cli')).toBe(0);
    expect(sdkModulesAfter('lake')).toBeGreaterThan(5);
  }, 60_000);
});
