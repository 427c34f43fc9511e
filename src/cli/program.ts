/**
 * The `evsync` program: global options, every command, and `main`, which maps every way out to an exit code
 * (0 done, 3 partial, 1 failure, 2 usage) without ever calling process.exit, so tests can call it in-process.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError, Option } from 'commander';
import { secretsOf } from '../api/credentials.js';
import { registerArchiveCommand } from './commands/archive.js';
import { registerCheckCommand } from './commands/check.js';
import { registerDemoCommand } from './commands/demo.js';
import { registerExportCommand } from './commands/export.js';
import { registerPlanCommand } from './commands/plan.js';
import { registerQueryCommand } from './commands/query.js';
import { registerRebuildCommand } from './commands/rebuild.js';
import { registerScheduleCommand } from './commands/schedule.js';
import { registerServeCommand } from './commands/serve.js';
import { registerSimulatorCommand } from './commands/simulator.js';
import { registerStatusCommand } from './commands/status.js';
import { registerStreamsCommand } from './commands/streams.js';
import { registerSyncCommands } from './commands/sync.js';
import { registerWebhooksCommand } from './commands/webhooks.js';
import type { App } from './context.js';
import { CliError, ExitCode, UsageError } from './errors.js';
import { applyMemoryPolicy } from './memory-policy.js';
import { type CliIo, processIo, ScrubbedStream } from './output/io.js';
import { type OwnWords, ownWords } from './output/own-words.js';
import { colorWanted, createStyle, type Style } from './output/style.js';
import { OwnWordsUsageError, secretsToScrub } from './secret-env.js';

/** The package version, found by walking up from this file (works from src/ under tsx and from dist/). */
export function packageVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'evsync' && pkg.version) return pkg.version;
    }
    dir = dirname(dir);
  }
  return '0.0.0';
}

export function createApp(io: CliIo, argv: readonly string[] = []): App {
  const app: App = {
    io,
    argv,
    stdout: new ScrubbedStream(io.stdout),
    stderr: new ScrubbedStream(io.stderr),
    exitCode: ExitCode.Done,
    verbosity: 'normal',
  };
  // Secrets in the environment are scrubbed from all output from the first byte, whatever the command (but a value
  // refused as too short, which is never used: see secret-env.ts).
  const env = io.env;
  const secrets = secretsToScrub(env);
  if (env.EVSYNC_CLIENT_ID && env.EVSYNC_CLIENT_SECRET) {
    secrets.push(...secretsOf({ clientId: env.EVSYNC_CLIENT_ID, clientSecret: env.EVSYNC_CLIENT_SECRET }));
  }
  app.stdout.addSecrets(secrets);
  app.stderr.addSecrets(secrets);
  return app;
}

const ROOT_HELP = `
Examples:
  $ evsync demo                                   # the whole job against the embedded simulator
  $ export EVSYNC_BASE_URL=https://api.swoogo.com/api/v1 EVSYNC_CLIENT_ID=... EVSYNC_CLIENT_SECRET=...
  $ evsync check && evsync plan && evsync sync
  $ evsync query "select count(*) from registrants"

Configuration: flags > environment (EVSYNC_BASE_URL, EVSYNC_CLIENT_ID, EVSYNC_CLIENT_SECRET or EVSYNC_CREDENTIALS,
EVSYNC_DB) > evsync.config.json (in the current directory, or --config <path>).
Exit codes: 0 done, 3 partial (state saved; run the same command again), 1 failure, 2 usage or configuration error.`;

export function buildProgram(app: App = createApp(processIo())): Command {
  const program = new Command('evsync');
  program
    .description('Sync an event-management REST API into DuckDB and Parquet within its credit budget')
    .version(packageVersion(), '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help')
    .addOption(new Option('--config <path>', 'configuration file (default: ./evsync.config.json if present)'))
    .addOption(new Option('--db <path>', 'DuckDB warehouse file (env EVSYNC_DB, default ./evsync.duckdb)'))
    .addOption(new Option('--account <id>', 'one of the config\'s "accounts" (env EVSYNC_ACCOUNT)'))
    .option('--json', 'machine-readable output on stdout')
    .option('-q, --quiet', 'only warnings and errors on stderr')
    .option('-v, --verbose', 'debug logs on stderr (secrets are never printed)')
    .option('--no-color', 'no colours (NO_COLOR is respected too)')
    .showHelpAfterError('(run with --help for usage)')
    .configureHelp({ showGlobalOptions: true, sortSubcommands: false })
    .exitOverride()
    .configureOutput({
      writeOut: (s) => app.stdout.write(s),
      writeErr: (s) => app.stderr.write(s),
      outputError: (s, write) => {
        const style = createStyle(colorWanted(app.stderr, app.io.env, undefined));
        write(style.red(s));
      },
    })
    .addHelpText('after', ROOT_HELP);

  registerSyncCommands(program, app);
  registerPlanCommand(program, app);
  registerCheckCommand(program, app);
  registerStatusCommand(program, app);
  registerScheduleCommand(program, app);
  registerServeCommand(program, app);
  registerWebhooksCommand(program, app);
  registerExportCommand(program, app);
  registerRebuildCommand(program, app);
  registerArchiveCommand(program, app);
  registerQueryCommand(program, app);
  registerStreamsCommand(program);
  registerSimulatorCommand(program);
  registerDemoCommand(program, app);
  return program;
}

/** `error:` (red where colour is on) as evsync's own words: a secret equal to it is no reason to blank it. */
function errorLabel(style: Style): (string | OwnWords)[] {
  const [open = '', close = ''] = style.red('\u0000').split('\u0000');
  return [open, ownWords`error:`, close];
}

function reportError(app: App, err: unknown): number {
  const style = createStyle(colorWanted(app.stderr, app.io.env, undefined));
  const print = (message: string | OwnWords) => app.stderr.writeParts([...errorLabel(style), ' ', message, '\n']);
  if (err instanceof CommanderError) {
    // Commander already printed its message (or the help / version) through configureOutput.
    if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version') return ExitCode.Done;
    if (err.code === 'commander.help') return err.exitCode === 0 ? ExitCode.Done : ExitCode.Usage;
    // Commander's own parse errors are usage errors; commands that call this.error() choose their exit code.
    if (err.code.startsWith('commander.')) return ExitCode.Usage;
    return err.exitCode;
  }
  if (err instanceof OwnWordsUsageError) {
    print(err.words);
    return ExitCode.Usage;
  }
  if (err instanceof UsageError) {
    print(err.message);
    return ExitCode.Usage;
  }
  if (err instanceof CliError) {
    print(err.message);
    return err.exitCode;
  }
  const name = err instanceof Error ? err.name : '';
  const message = err instanceof Error ? err.message : String(err);
  if (name === 'CredentialsRejectedError') {
    // Said once: the client's generic hint gives way to the variables a CLI user sets.
    const what = message.replace(/; check the client id and secret or the pre-encoded credentials$/, '');
    print(`${what}: check EVSYNC_CLIENT_ID and EVSYNC_CLIENT_SECRET (or EVSYNC_CREDENTIALS) for this base URL`);
    return ExitCode.Failure;
  }
  // Bad values that only the client or the engine could judge (a base URL shape, a time zone) are usage errors.
  // So is a warehouse of a newer layout than this program's: nothing was attempted, upgrading evsync is the fix.
  if (name === 'WarehouseLayoutError') {
    print(message);
    return ExitCode.Usage;
  }
  if (name === 'ApiUsageError' || name === 'SyncUsageError' || name === 'AccountMismatchError') {
    print(message);
    return ExitCode.Usage;
  }
  // An output refused (another owner, a bad destination) is the user's to fix; one held or failing fails the command.
  if (name === 'OutputError') {
    print(message);
    return (err as Error & { verdict?: unknown }).verdict === 'refused' ? ExitCode.Usage : ExitCode.Failure;
  }
  print(message);
  if (app.verbosity === 'verbose' && err instanceof Error && err.stack) app.stderr.write(`${err.stack}\n`);
  else if (!(err instanceof Error) || !name.endsWith('Error') || name === 'Error' || name === 'TypeError') {
    app.stderr.write('(run again with --verbose for details)\n');
  }
  return ExitCode.Failure;
}

/**
 * Runs the CLI with `argv` (the user's arguments, without node and the script) and returns the exit code.
 * `io` defaults to the real process; tests pass captured streams, their own env and cwd, and a stop signal.
 */
export async function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  applyMemoryPolicy();
  const app = createApp(io, argv);
  let program: Command;
  try {
    program = buildProgram(app);
  } catch (err) {
    return reportError(app, err);
  }
  try {
    await program.parseAsync(argv, { from: 'user' });
    return app.exitCode;
  } catch (err) {
    return reportError(app, err);
  }
}
