/**
 * Webhook delivery figures of the simulator (not a test: machine-dependent numbers, run by hand).
 *
 *   npx tsx bench/webhooks.ts            # full: 400 changes x 50 webhooks; 20 s of API calls per setting
 *   npx tsx bench/webhooks.ts --quick    # smaller
 *
 * 1. Deliveries per second: 50 webhooks (json and post) on contacts, a burst of contact changes
 *    (POST /_control/mutate), timed until GET /_control/webhooks/idle answers; with the simulator's CPU time per
 *    delivery (Linux /proc). The receiver lives in this process, the simulator in a child process of its own
 *    (`evsync simulator` under tsx), so they do not share an event loop.
 * 2. API answer latency under `--mutate 50`: API calls at a steady 20 per second (check-ins, each a registrant
 *    change, alternating with single GETs), with no webhook, with 50 webhooks spread over the 8 trigger objects, and
 *    with 50 webhooks all on registrants (the most frequent object, and the one the check-ins fire), each followed by
 *    a run with none again (the machine is shared: a baseline next to each figure).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { TRIGGER_OBJECTS } from '../src/simulator/webhooks/types.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const quick = process.argv.includes('--quick');
const log = (m: string) => process.stderr.write(`${m}\n`);

interface Sim {
  pid: number;
  baseUrl: string;
  control: string;
  token: string;
  pool: Pool;
  stop(): Promise<void>;
}

async function startSim(args: string[]): Promise<Sim> {
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', join(ROOT, 'src/cli/main.ts'), 'simulator', '--json', '--port', '0', '--control', ...args],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const kill = () => child.kill('SIGKILL');
  process.once('exit', kill);
  const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
  const info = JSON.parse(line) as { baseUrl: string; accounts: { encoded: string }[] };
  const origin = new URL(info.baseUrl).origin;
  const pool = new Pool(origin, { connections: 4 });
  const res = await pool.request({
    method: 'POST',
    path: '/v1/oauth2/token',
    headers: {
      authorization: `Basic ${info.accounts[0]!.encoded}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: 'grant_type=client_credentials',
  });
  const token = ((await res.body.json()) as { access_token: string }).access_token;
  return {
    pid: child.pid ?? -1,
    baseUrl: info.baseUrl,
    control: `${origin}/_control`,
    token,
    pool,
    async stop() {
      await pool.close();
      child.kill('SIGTERM');
      await once(child, 'exit');
      process.off('exit', kill);
    },
  };
}

async function api(sim: Sim, method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown }> {
  const res = await sim.pool.request({
    method: method as 'GET',
    path: `/v1${path}`,
    headers: {
      authorization: `Bearer ${sim.token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.body.text();
  return { status: res.statusCode, json: text ? (JSON.parse(text) as unknown) : null };
}

async function control(sim: Sim, method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${sim.control}/${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return res.json();
}

/** A receiver answering 200 at once, counting what it got. */
async function startReceiver() {
  let received = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    get received() {
      return received;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** CPU seconds (user + system) a process has used, or null off Linux. */
function cpuSeconds(pid: number): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    // utime and stime are fields 14 and 15 of stat, 12 and 13 after the command name.
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

const round = (v: number, d = 2) => Math.round(v * 10 ** d) / 10 ** d;

async function addHooks(sim: Sim, n: number, object: string | null, url: (i: number) => string): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < n; i++) {
    const res = await api(sim, 'POST', '/webhooks', {
      name: `bench ${i}`,
      url: url(i),
      trigger_object: object ?? TRIGGER_OBJECTS[i % TRIGGER_OBJECTS.length],
      content_type: i % 2 ? 'post' : 'json',
    });
    if (res.status !== 201) throw new Error(`webhook create: ${res.status} ${JSON.stringify(res.json)}`);
    ids.push((res.json as { id: number }).id);
  }
  return ids;
}

async function throughput(rx: Awaited<ReturnType<typeof startReceiver>>) {
  const changes = quick ? 100 : 400;
  const sim = await startSim(['--size', 'tiny', '--rate-limit', '1000000/600', '--webhook-queue', '100000']);
  try {
    await addHooks(sim, 50, 'contact', (i) => rx.url(`/t/${i}`));
    const before = rx.received;
    const cpu0 = cpuSeconds(sim.pid);
    const t0 = performance.now();
    await control(sim, 'POST', 'mutate', { n: changes, streams: ['contacts'] });
    const idle = (await control(sim, 'GET', 'webhooks/idle?timeout=600000')) as {
      idle: boolean;
      stats: { byStatus: Record<string, number>; attempts: number };
    };
    const seconds = (performance.now() - t0) / 1000;
    const cpu1 = cpuSeconds(sim.pid);
    const delivered = rx.received - before;
    return {
      simulatorCpuMsPerDelivery: cpu0 === null || cpu1 === null ? null : round(((cpu1 - cpu0) * 1000) / delivered, 3),
      changes,
      webhooks: 50,
      delivered,
      seconds: round(seconds),
      deliveriesPerSecond: Math.round(delivered / seconds),
      idle: idle.idle,
      byStatus: idle.stats.byStatus,
    };
  } finally {
    await sim.stop();
  }
}

/** `calls` API calls at `perSecond`, after 20 warm-up calls; each call's answer time. */
async function latency(sim: Sim, registrants: number[], calls: number, perSecond: number) {
  const times: number[] = [];
  const statuses: Record<string, number> = {};
  const start = performance.now();
  for (let i = 0; i < calls + 20; i++) {
    const due = start + (i * 1000) / perSecond;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const id = registrants[i % registrants.length]!;
    const t0 = performance.now();
    const res =
      i % 2 === 0
        ? await sim.pool.request({
            method: 'POST',
            path: '/v1/registrants/checkin',
            headers: { authorization: `Bearer ${sim.token}`, 'content-type': 'application/x-www-form-urlencoded' },
            body: `id=${id}&status=${i % 4 === 0 ? 'attended' : 'confirmed'}`,
          })
        : await sim.pool.request({
            method: 'GET',
            path: `/v1/registrants/${id}`,
            headers: { authorization: `Bearer ${sim.token}` },
          });
    await res.body.dump();
    const ms = performance.now() - t0;
    if (i >= 20) {
      times.push(ms);
      statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
    }
  }
  times.sort((a, b) => a - b);
  return {
    calls,
    p50ms: round(percentile(times, 50)),
    p95ms: round(percentile(times, 95)),
    p99ms: round(percentile(times, 99)),
    meanMs: round(times.reduce((a, b) => a + b, 0) / times.length),
    statuses,
  };
}

async function underMutations(rx: Awaited<ReturnType<typeof startReceiver>>) {
  const perSecond = 20;
  const calls = (quick ? 8 : 20) * perSecond;
  const sim = await startSim(['--size', 'small', '--mutate', '50', '--rate-limit', '1000000/600']);
  try {
    const events = (await api(sim, 'GET', '/events?fields=id,status')).json as {
      items: { id: number; status: string }[];
    };
    const live = events.items.find((e) => e.status === 'live')!.id;
    const regs = (await api(sim, 'GET', `/registrants?event_id=${live}&fields=id&per-page=300`)).json as {
      items: { id: number }[];
    };
    const ids = regs.items.map((r) => r.id);
    const stats = async () =>
      (await control(sim, 'GET', 'webhooks/stats')) as { pending: number; byStatus: Record<string, number> };
    const row = async (label: string) => {
      const before = rx.received;
      const t0 = performance.now();
      const l = await latency(sim, ids, calls, perSecond);
      const rate = (rx.received - before) / ((performance.now() - t0) / 1000);
      const { pending } = await stats();
      log(`${label}: ${JSON.stringify(l)}, ${Math.round(rate)} deliveries/s received, ${pending} pending after`);
      return { label, ...l, deliveriesPerSecond: Math.round(rate), pendingAfter: pending };
    };
    const rows = [await row('0 webhooks')];
    for (const [label, object] of [
      ['50 webhooks over the 8 objects', null],
      ['50 webhooks on registrants', 'registrant'],
    ] as const) {
      const hooks = await addHooks(sim, 50, object, (i) => rx.url(`/l/${i}`));
      rows.push(await row(label));
      for (const id of hooks) await api(sim, 'DELETE', `/webhooks/${id}`);
      await control(sim, 'GET', 'webhooks/idle?timeout=120000');
      rows.push(await row('0 webhooks again'));
    }
    return { mutatePerSecond: 50, size: 'small', callsPerSecond: perSecond, rows };
  } finally {
    await sim.stop();
  }
}

const rx = await startReceiver();
try {
  log('deliveries per second ...');
  const t = await throughput(rx);
  log(JSON.stringify(t));
  log('API latency under --mutate 50 ...');
  const l = await underMutations(rx);
  const result = { when: new Date().toISOString(), quick, throughput: t, latency: l };
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  if (!quick) writeFileSync(join(ROOT, 'bench/results/webhooks.json'), `${JSON.stringify(result, null, 2)}\n`);
} finally {
  await rx.close();
}
