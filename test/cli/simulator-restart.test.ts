/**
 * The README's "try it against a local simulator": the simulator prints `export` lines a shell takes as they are,
 * and restarting it on the same port (the fixed default) leaves the warehouse synced against it usable.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { inTempDir, run } from './helpers.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

function startCli(args: string[]): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'src/cli/main.ts'), ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Everything the simulator prints up to "Press Ctrl+C", or why it exited first. */
async function banner(child: ChildProcess): Promise<string> {
  const lines: string[] = [];
  const exited = once(child, 'exit');
  for await (const line of createInterface({ input: child.stdout! })) {
    lines.push(line);
    if (line.startsWith('Press Ctrl+C')) return lines.join('\n');
  }
  await exited;
  throw new Error(`the simulator exited before it was ready: ${lines.join('\n')}`);
}

async function stop(child: ChildProcess): Promise<void> {
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
}

/** A listening loopback server on a free port: it holds the port until closed. */
async function holdPort(): Promise<Server> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return server;
}

function portOf(server: Server): number {
  return (server.address() as { port: number }).port;
}

/** What a POSIX shell makes of the pasted lines. */
function pasted(lines: string): Record<string, string> {
  const out = execFileSync(
    'sh',
    ['-c', `${lines}\nprintf '%s\\n' "$EVSYNC_BASE_URL" "$EVSYNC_CLIENT_ID" "$EVSYNC_CLIENT_SECRET"`],
    {
      encoding: 'utf8',
      env: { PATH: process.env.PATH },
    },
  );
  const [base, id, secret] = out.split('\n');
  return { EVSYNC_BASE_URL: base!, EVSYNC_CLIENT_ID: id!, EVSYNC_CLIENT_SECRET: secret! };
}

describe('evsync simulator, restarted', () => {
  it('listens on a fixed default port, said in --help', async () => {
    const r = await run(['simulator', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('(default: 8780)');
    expect(r.stdout).toContain('127.0.0.1:8780 (same port every start)');
  });

  it('prints export lines a shell takes as they are, and a restart on the same port keeps the warehouse usable', async () => {
    // The port the default would give, chosen free for this test so it never meets another simulator.
    const holder = await holdPort();
    const port = portOf(holder);
    await new Promise((done) => holder.close(done));
    await inTempDir(async (dir) => {
      const env = { EVSYNC_DB: join(dir, 'w.duckdb') };
      let sim = startCli(['simulator', '--size', 'tiny', '--port', String(port)]);
      let text: string;
      try {
        text = await banner(sim);
        expect(text).toContain('To use account 0, paste into another shell:');
        const exports = text.split('\n').filter((l) => l.startsWith('export '));
        expect(exports).toHaveLength(2);
        const creds = pasted(exports.join('\n'));
        expect(creds.EVSYNC_BASE_URL).toBe(`http://127.0.0.1:${port}/v1`);
        expect(text).toContain(`client secret: ${creds.EVSYNC_CLIENT_SECRET}`);
        const first = await run(['sync', '--streams', 'events'], { cwd: dir, env: { ...env, ...creds } });
        expect(first.code, first.stderr).toBe(0);
        await stop(sim);
        sim = startCli(['simulator', '--size', 'tiny', '--port', String(port)]);
        const again = await banner(sim);
        expect(again.split('\n').filter((l) => l.startsWith('export '))).toEqual(exports);
        const second = await run(['sync', '--streams', 'events'], { cwd: dir, env: { ...env, ...creds } });
        expect(second.code, second.stderr).toBe(0);
        expect(second.stderr).not.toContain('holds the data of');
      } finally {
        await stop(sim);
      }
    });
  });

  it('a port in use is said plainly, with what to do (exit 1)', async () => {
    const holder = await holdPort();
    try {
      const sim = startCli(['simulator', '--size', 'tiny', '--port', String(portOf(holder))]);
      let stderr = '';
      sim.stderr!.on('data', (b: Buffer) => {
        stderr += b.toString();
      });
      const [code] = await once(sim, 'exit');
      expect(code).toBe(1);
      expect(stderr).toContain(`port ${portOf(holder)} on 127.0.0.1 is in use`);
      expect(stderr).toContain('pass --port <n>');
    } finally {
      await new Promise((done) => holder.close(done));
    }
  });
});
