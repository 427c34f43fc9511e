import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BufferStream } from '../../src/cli/output/io.js';
import { main } from '../../src/cli/program.js';

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  env?: Record<string, string | undefined>;
  cwd?: string;
  stop?: AbortSignal;
  tty?: boolean;
  /** Given the live output streams as the command starts, so a test can wait for what it prints. */
  onStart?: (out: { stdout: BufferStream; stderr: BufferStream }) => void;
}

/** Runs the CLI in-process with captured output and only the given environment (never the developer's EVSYNC_*). */
export async function run(argv: string[], opts: RunOptions = {}): Promise<RunResult> {
  const stdout = new BufferStream(false);
  const stderr = new BufferStream(opts.tty === true);
  opts.onStart?.({ stdout, stderr });
  const code = await main(argv, {
    stdout,
    stderr,
    env: { NO_COLOR: '1', ...opts.env },
    cwd: opts.cwd ?? process.cwd(),
    ...(opts.stop ? { stop: opts.stop } : {}),
    handleSignals: false,
  });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

export function tempDir(prefix = 'evsync-cli-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export function writeConfig(dir: string, config: unknown, name = 'evsync.config.json'): string {
  const file = join(dir, name);
  writeFileSync(file, typeof config === 'string' ? config : JSON.stringify(config, null, 2));
  return file;
}

/**
 * Resolves once `read()` matches `pattern`, polling: a test waits for what the program says, never for a fixed time.
 * The limit only ends a test that would otherwise hang; no assertion depends on how fast the program got there.
 */
export async function waitForText(read: () => string, pattern: RegExp, limitMs = 120_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!pattern.test(read())) {
    if (Date.now() > deadline) throw new Error(`never printed ${pattern}; got:\n${read().slice(-2000)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
