/**
 * Every command and subcommand's `--help` ends with examples (walked from the program itself, so a new command
 * cannot be added without them), and exits 0.
 */
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { BufferStream } from '../../src/cli/output/io.js';
import { buildProgram, createApp } from '../../src/cli/program.js';
import { run } from './helpers.js';

/** The argv paths of every command below the program: `['webhooks']`, `['webhooks', 'status']`, ... */
function commandPaths(cmd: Command, prefix: string[] = []): string[][] {
  return cmd.commands.flatMap((c) => [[...prefix, c.name()], ...commandPaths(c, [...prefix, c.name()])]);
}

describe('--help', () => {
  const program = buildProgram(
    createApp({ stdout: new BufferStream(), stderr: new BufferStream(), env: {}, cwd: process.cwd() }),
  );
  const paths = commandPaths(program);

  it('walks every command, subcommands included', () => {
    expect(paths.map((p) => p.join(' '))).toEqual(
      expect.arrayContaining([
        'sync',
        'backfill',
        'schedule',
        'serve',
        'webhooks',
        'webhooks status',
        'webhooks remove',
      ]),
    );
  });

  for (const path of [[], ...paths]) {
    it(`evsync ${path.join(' ')} --help shows examples of that command`.replace(/\s+/g, ' '), async () => {
      const r = await run([...path, '--help']);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('Examples:');
      const examples = r.stdout.slice(r.stdout.indexOf('Examples:'));
      expect(examples).toContain(`$ evsync ${path.join(' ')}`.trimEnd());
    });
  }
});
