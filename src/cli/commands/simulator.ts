import { type Command, InvalidArgumentError, Option } from 'commander';
import type { FaultSpec, Simulator, SimulatorOptions, SimulatorSize } from '../../simulator/index.js';

/**
 * The simulator's default port. A warehouse belongs to one base URL (port included), so a fixed default keeps a
 * warehouse usable across simulator restarts; the accounts are the same for the same seed.
 */
const SIMULATOR_PORT = 8780;

/** Single-quoted for a POSIX shell: the simulator's secrets hold `+`, `/` and `=`. */
function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

/** The lines a user pastes into another shell to point evsync at this simulator's first account. */
function exportLines(baseUrl: string, account: { clientId: string; clientSecret: string }): string[] {
  return [
    `export EVSYNC_BASE_URL=${baseUrl}`,
    `export EVSYNC_CLIENT_ID=${shellQuote(account.clientId)} EVSYNC_CLIENT_SECRET=${shellQuote(account.clientSecret)}`,
  ];
}

const HELP = `
Serves the embedded simulator of the event-management API: seeded data for two accounts, the spec's
authentication, credits and rate-limit headers, list semantics, faults and mutations.

Examples:
  $ evsync simulator                                   # small data set on 127.0.0.1:${SIMULATOR_PORT} (same port every start)
  $ evsync simulator --port 0 --size tiny --json       # a free port; one JSON line with baseUrl and credentials
  $ evsync simulator --size history                    # an account's whole history (custom fields at scale)
  $ evsync simulator --rate-limit 50/2 --token-ttl 60  # compressed window and short tokens for tests
  $ evsync simulator --mutate 5 --control              # 5 changes/s per account; /_control/* endpoints
  $ evsync simulator --faults errors=0.05,latency=20,resets=0.01,malformed=0.01,slow=0.01:5000,storm429=0.02,no-reset-header
  $ evsync simulator --record-tz America/New_York      # record timestamps in New York wall time
  $ evsync simulator --control --webhook-retry-base 50 --faults hook-drop=0.05,hook-dup=0.05

Fault spec (comma-separated):
  errors=<rate>      answer 500/502/503 to that fraction of data requests
  latency=<ms>       add this delay to every response
  resets=<rate>      send headers and part of the body, then drop the connection
  malformed=<rate>   answer 200 with a truncated JSON body
  slow=<rate>:<ms>   hold that fraction for <ms> before any header (trips client timeouts)
  storm429=<rate>    answer 429 although credits are left
  no-reset-header    leave out X-Rate-Limit-Reset
  ascii-json         write every non-ASCII character of an answer as a \\u escape (as Python's json.dumps does)
  hook-drop=<rate>   webhook deliveries silently never sent
  hook-dup=<rate>    webhook deliveries sent twice
  hook-reorder=<rate>  webhook deliveries held back and sent after the next one to the same webhook
  hook-delay=<rate>:<ms>  webhook deliveries held <ms> before their first try

Webhooks: managed at /v1/webhooks and /v1/webhook-groups (POST, GET, PUT and DELETE .../{id}); none is configured
to be called by default (the seeded ones point at hooks.example.com). Deliveries go to loopback receivers only,
unless --webhook-hosts allows more; a failed try is retried after the base delay, doubling, up to the attempts.

Control endpoints (--control, loopback only): GET /_control/counters?account=0, POST /_control/counters/reset,
POST /_control/mutate {"n":10}, GET /_control/truth?stream=registrants&account=0, POST /_control/clock
{"advance":3600}, POST /_control/faults {<FaultSpec>}, GET /_control/webhooks/changes|deliveries|notifications
?since=<n>, GET /_control/webhooks/stats, GET /_control/webhooks/idle?timeout=<ms> (answers once no delivery is
pending).
Approve/deny (Apply to Attend): POST /v1/registrants/{id}/approve and POST /v1/registrants/{id}/deny.
`;

function integer(name: string, min: number) {
  return (text: string): number => {
    const n = Number(text);
    if (!/^\d+$/.test(text.trim()) || n < min) throw new InvalidArgumentError(`${name} must be an integer >= ${min}`);
    return n;
  };
}

function nonNegative(text: string): number {
  const n = Number(text);
  if (!Number.isFinite(n) || n < 0) throw new InvalidArgumentError('must be a number >= 0');
  return n;
}

interface SimulatorFlags {
  port: number;
  host: string;
  seed: number;
  size: SimulatorSize;
  rateLimit: string;
  tokenTtl: number;
  mutate: number;
  faults?: string;
  recordTz: string;
  control?: boolean;
  json?: boolean;
  webhookHosts?: string;
  webhookRetryBase: number;
  webhookAttempts: number;
  webhookTimeout: number;
  webhookConcurrency: number;
  webhookQueue: number;
}

function addSimulatorOptions(command: Command): Command {
  return command
    .option(
      '--port <n>',
      'port to listen on; the same one every start keeps a warehouse usable; 0 picks a free port',
      integer('port', 0),
      SIMULATOR_PORT,
    )
    .option('--host <address>', 'address to bind (control endpoints need loopback)', '127.0.0.1')
    .option('--seed <n>', 'data seed: the same seed gives the same data', integer('seed', 0), 1)
    .addOption(
      new Option(
        '--size <size>',
        'data set size: tiny (tests), small (demo), medium, large (1M+ registrants), history (600 events over years, 20-40 questions each, ~60k registrants)',
      )
        .choices(['tiny', 'small', 'medium', 'large', 'history'])
        .default('small'),
    )
    .option('--rate-limit <credits/seconds>', 'credits per window per credential, e.g. 50/2', '2000/600')
    .option('--token-ttl <seconds>', 'access token lifetime', integer('token-ttl', 1), 1800)
    .option('--mutate <per-second>', 'background changes per second per account', nonNegative, 0)
    .option('--faults <spec>', 'inject faults, e.g. errors=0.05,latency=20 (see below)')
    .option('--record-tz <zone>', 'IANA zone record timestamps are written in (expires_at stays UTC)', 'UTC')
    .option('--control', 'expose /_control/* endpoints (loopback only)')
    .option('--json', 'print one JSON line {baseUrl, accounts} instead of the human summary');
}

function addWebhookOptions(command: Command): Command {
  return command
    .option('--webhook-hosts <hosts>', 'comma-separated hosts besides loopback that webhooks may call (* for any)')
    .option(
      '--webhook-retry-base <ms>',
      'wait before the 2nd try of a failed delivery; doubles each time',
      nonNegative,
      2000,
    )
    .option(
      '--webhook-attempts <n>',
      'tries per webhook delivery, the first included',
      integer('webhook-attempts', 1),
      5,
    )
    .option(
      '--webhook-timeout <ms>',
      'a delivery try without a complete answer by then fails',
      integer('webhook-timeout', 1),
      10000,
    )
    .option('--webhook-concurrency <n>', 'webhook deliveries in flight at once', integer('webhook-concurrency', 1), 32)
    .option(
      '--webhook-queue <n>',
      'pending webhook deliveries at most; more are recorded as overflow',
      integer('webhook-queue', 1),
      10000,
    );
}

/** The simulator's options from the flags; a bad --faults or --rate-limit is a usage error (exit 2). */
async function simulatorOptions(flags: SimulatorFlags, command: Command): Promise<SimulatorOptions> {
  const { parseFaults, parseRateLimit } = await import('../../simulator/index.js');
  let faults: FaultSpec | undefined;
  let rateLimit: SimulatorOptions['rateLimit'];
  try {
    faults = flags.faults ? parseFaults(flags.faults) : undefined;
    rateLimit = parseRateLimit(flags.rateLimit);
  } catch (err) {
    command.error(`error: ${(err as Error).message}`, { exitCode: 2 });
  }
  return {
    port: flags.port,
    host: flags.host,
    seed: flags.seed,
    size: flags.size,
    rateLimit,
    tokenTtlSeconds: flags.tokenTtl,
    mutationsPerSecond: flags.mutate,
    faults,
    recordTimezone: flags.recordTz,
    control: flags.control === true,
    webhookHosts: (flags.webhookHosts ?? '')
      .split(',')
      .map((host) => host.trim())
      .filter(Boolean),
    webhookDelivery: {
      retryBaseMs: flags.webhookRetryBase,
      attempts: flags.webhookAttempts,
      timeoutMs: flags.webhookTimeout,
      concurrency: flags.webhookConcurrency,
      queueLimit: flags.webhookQueue,
    },
  };
}

/** Starts it; a port in use gets its own message (a simulator already running is the usual cause). */
async function startOrExplain(options: SimulatorOptions, flags: SimulatorFlags, command: Command): Promise<Simulator> {
  const { startSimulator } = await import('../../simulator/index.js');
  return startSimulator(options).catch((e: Error) => {
    if ((e as { code?: unknown }).code === 'EADDRINUSE') {
      command.error(
        `error: port ${flags.port} on ${flags.host} is in use (a simulator already running?): stop it, or pass --port <n> (0 picks a free port; a warehouse belongs to one base URL, so keep the port you synced with)`,
        { exitCode: 1, code: 'simulator.port-in-use' },
      );
    }
    return command.error(`error: ${e.message}`, {
      exitCode: e instanceof RangeError ? 2 : 1,
      code: 'simulator.start',
    });
  });
}

/** Where it listens and the accounts' credentials: one JSON line, or lines for a person. */
function printSimulator(sim: Simulator, flags: SimulatorFlags, command: Command): void {
  // The program also has a global --json, which commander may have taken for itself.
  if (flags.json || command.optsWithGlobals<{ json?: boolean }>().json) {
    const accounts = sim.accounts.map(({ clientId, clientSecret, encoded }) => ({
      clientId,
      clientSecret,
      encoded,
    }));
    process.stdout.write(`${JSON.stringify({ baseUrl: sim.baseUrl, accounts })}\n`);
    return;
  }
  const lines = [`evsync simulator listening on ${sim.baseUrl} (size ${flags.size}, seed ${flags.seed})`];
  sim.accounts.forEach((account, i) => {
    lines.push(
      `account ${i}: ${account.name}`,
      `  client id:     ${account.clientId}`,
      `  client secret: ${account.clientSecret}`,
    );
    lines.push(`  encoded:       ${account.encoded}`);
  });
  if (flags.control) lines.push(`control: ${sim.baseUrl.replace(/\/v1$/, '')}/_control/counters`);
  const first = sim.accounts[0];
  if (first) lines.push('To use account 0, paste into another shell:', ...exportLines(sim.baseUrl, first));
  lines.push('Press Ctrl+C to stop.');
  process.stdout.write(`${lines.join('\n')}\n`);
}

/** Serves until SIGINT or SIGTERM, then closes the simulator. */
function untilStopped(sim: Simulator): Promise<void> {
  return new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      sim.close().then(resolve, resolve);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

export function registerSimulatorCommand(program: Command): void {
  const cmd = program
    .command('simulator')
    .description('serve the embedded simulator of the API (no credentials or network needed)');
  addSimulatorOptions(cmd);
  addWebhookOptions(cmd)
    .addHelpText('after', HELP)
    .action(async (flags: SimulatorFlags, command: Command) => {
      const sim = await startOrExplain(await simulatorOptions(flags, command), flags, command);
      printSimulator(sim, flags, command);
      await untilStopped(sim);
    });
}
