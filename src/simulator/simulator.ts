import type { AddressInfo } from 'node:net';
import { RecordZone, SimClock } from './core/time.js';
import { buildWorld } from './data/build.js';
import type { World } from './data/world.js';
import { ApiServer } from './http/server.js';
import { fullProjection, project } from './query/project.js';
import { STREAMS, streamSpec } from './schema/streams.js';
import { Auth, makeAccounts } from './service/auth.js';
import type { ServiceContext } from './service/context.js';
import { controlHandler, isLoopbackHost } from './service/control.js';
import { Credits } from './service/credits.js';
import { Faults } from './service/faults.js';
import { customDefs } from './service/lookup.js';
import { type MutateOptions, Mutator } from './service/mutations.js';
import { buildRouter } from './service/routes.js';
import type {
  CallCounters,
  FaultSpec,
  MutationSummary,
  Simulator,
  SimulatorAccount,
  SimulatorOptions,
} from './types.js';
import { WebhookService } from './webhooks/service.js';
import type { SimulatorWebhooks } from './webhooks/types.js';

/** Record-level ground truth: every live record of a stream and account, fully projected. */
function truthOf(world: World, stream: string, account: number) {
  const spec = streamSpec(stream);
  if (!world.accounts[account]) throw new RangeError(`no account ${account}`);
  const records: Record<string, unknown>[] = [];
  const deletedIds: number[] = [];
  for (const part of world.table(stream).accountPartitions(account)) {
    const proj = fullProjection(spec, customDefs(world, spec, part));
    for (const pos of part.positions()) records.push(project(part.record(pos), proj));
    deletedIds.push(...part.deletedIds());
  }
  // Sorted by id (inserted rows of an early scope would otherwise precede a later scope's base rows); the audit log,
  // which has no id, stays chronological per event.
  if (spec.hasId) records.sort((a, b) => (a.id as number) - (b.id as number));
  return { records, deletedIds: deletedIds.sort((a, b) => a - b) };
}

class RunningSimulator implements Simulator {
  readonly baseUrl: string;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly ctx: ServiceContext,
    private readonly api: ApiServer,
    private readonly hooks: WebhookService,
    readonly accounts: SimulatorAccount[],
    mutationsPerSecond: number,
  ) {
    this.baseUrl = ctx.baseUrl;
    if (mutationsPerSecond > 0) this.startBackground(mutationsPerSecond);
  }

  /** Background changes: `rate` per second for each account, applied in 100 ms ticks. */
  private startBackground(rate: number): void {
    let owed = 0;
    this.timer = setInterval(() => {
      owed += rate / 10;
      const n = Math.floor(owed);
      if (n === 0) return;
      owed -= n;
      for (let a = 0; a < this.accounts.length; a++) this.ctx.mutator.mutate(n, { account: a });
    }, 100);
    this.timer.unref();
  }

  counters(account = 0): CallCounters {
    return this.ctx.credits.counters(account);
  }

  resetCounters(): void {
    this.ctx.credits.resetCounters();
  }

  get webhooks(): SimulatorWebhooks {
    return this.hooks;
  }

  mutate(n: number, opts?: MutateOptions): MutationSummary {
    return this.ctx.mutator.mutate(n, opts);
  }

  truth(stream: string, account = 0) {
    return truthOf(this.ctx.world, stream, account);
  }

  streams(): string[] {
    return STREAMS.map((s) => s.name);
  }

  setFaults(faults: FaultSpec): void {
    this.ctx.faults.set(faults);
  }

  advanceClock(seconds: number): void {
    this.ctx.clock.advance(seconds);
  }

  now(): Date {
    return new Date(this.ctx.clock.nowMs());
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.hooks.close();
    const server = this.api.server;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }
}

function checkOptions(o: SimulatorOptions): void {
  const positive = (v: number | undefined, name: string) => {
    if (v !== undefined && !(Number.isFinite(v) && v > 0)) throw new RangeError(`${name} must be a positive number`);
  };
  positive(o.rateLimit?.credits, 'rateLimit.credits');
  positive(o.rateLimit?.windowSeconds, 'rateLimit.windowSeconds');
  positive(o.tokenTtlSeconds, 'tokenTtlSeconds');
  if (o.mutationsPerSecond !== undefined && !(o.mutationsPerSecond >= 0)) {
    throw new RangeError('mutationsPerSecond must be >= 0');
  }
  if (o.size !== undefined && !['tiny', 'small', 'medium', 'large', 'xlarge', 'history', 'bigevent'].includes(o.size)) {
    throw new RangeError(`unknown size: ${String(o.size)}`);
  }
  if (o.anchorDay !== undefined) {
    const ms = /^\d{4}-\d{2}-\d{2}$/.test(o.anchorDay) ? Date.parse(`${o.anchorDay}T00:00:00Z`) : Number.NaN;
    if (!Number.isFinite(ms) || ms > Date.now()) throw new RangeError('anchorDay must be a past day, YYYY-MM-DD');
  }
  const d = o.webhookDelivery ?? {};
  positive(d.timeoutMs, 'webhookDelivery.timeoutMs');
  for (const [name, v] of [
    ['attempts', d.attempts],
    ['concurrency', d.concurrency],
    ['queueLimit', d.queueLimit],
    ['journalLimit', d.journalLimit],
  ] as const) {
    if (v !== undefined && !(Number.isInteger(v) && v >= 1))
      throw new RangeError(`webhookDelivery.${name} must be >= 1`);
  }
  if (d.retryBaseMs !== undefined && !(Number.isFinite(d.retryBaseMs) && d.retryBaseMs >= 0)) {
    throw new RangeError('webhookDelivery.retryBaseMs must be >= 0');
  }
}

/** Starts the simulated service and resolves once it listens. */
export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  checkOptions(options);
  const seed = options.seed ?? 1;
  const host = options.host ?? '127.0.0.1';
  if (options.control && !isLoopbackHost(host)) {
    throw new Error(`control endpoints are loopback-only; refusing to expose them on ${host}`);
  }
  const zone = new RecordZone(options.recordTimezone ?? 'UTC');
  const world = buildWorld(seed, options.size ?? 'small', zone, options.anchorDay);
  const accounts = makeAccounts(
    seed,
    world.accounts.map((a) => a.plan.name),
  );
  const clock = new SimClock();
  const rate = options.rateLimit ?? { credits: 2000, windowSeconds: 600 };
  const faults = new Faults(seed, options.faults);
  const hooks = new WebhookService(
    world,
    clock,
    () => faults.current,
    options.webhookHosts ?? [],
    options.webhookDelivery ?? {},
  );
  const ctx: ServiceContext = {
    world,
    clock,
    auth: new Auth(accounts),
    credits: new Credits(
      rate.credits,
      rate.windowSeconds,
      accounts.length,
      rate.clock === 'simulated' ? () => clock.nowMs() : Date.now,
    ),
    faults,
    mutator: new Mutator(world, clock, hooks),
    changes: hooks,
    tokenTtlSeconds: options.tokenTtlSeconds ?? 1800,
    baseUrl: '',
  };
  let sim: Simulator | null = null;
  const api = new ApiServer(ctx, buildRouter(ctx), options.control ? controlHandler(() => sim!) : null);
  await new Promise<void>((resolve, reject) => {
    api.server.once('error', reject);
    api.server.listen(options.port ?? 0, host, () => {
      api.server.off('error', reject);
      resolve();
    });
  });
  const address = api.server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  ctx.baseUrl = `http://${shownHost}:${address.port}/v1`;
  sim = new RunningSimulator(ctx, api, hooks, accounts, options.mutationsPerSecond ?? 0);
  return sim;
}
