/**
 * Runs one of the project's scripts (scripts/*.mjs) the way a developer would, with one environment variable set or
 * left out (never inherited from the shell running the tests), and reads how it ended.
 */
import { execFile } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

export interface ScriptRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `scripts/<name>` from the project's root with `variable` set to `value`, or unset when it is undefined. */
export async function runScript(name: string, variable: string, value?: string): Promise<ScriptRun> {
  const { [variable]: _inherited, ...inherited } = process.env;
  const env = value === undefined ? inherited : { ...inherited, [variable]: value };
  try {
    const script = join(ROOT, 'scripts', name);
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [script], { cwd: ROOT, env });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as ScriptRun;
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}
