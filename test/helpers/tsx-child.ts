/** A TypeScript fixture run to its end in a process of its own (`node --import tsx`), from the repository root. */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');

export interface ChildEnd {
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
}

/** `env`, when given, is the child's whole environment (nothing of the developer's shell leaks in). */
export function runTsxChild(script: string, args: readonly string[], env?: NodeJS.ProcessEnv): Promise<ChildEnd> {
  return new Promise((done, fail) => {
    const c = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(env ? { env } : {}),
    });
    let stdout = '';
    let stderr = '';
    c.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    c.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    c.on('error', fail);
    c.on('close', (code, signal) => done({ code, signal, stdout, stderr }));
  });
}
