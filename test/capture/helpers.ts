/**
 * What the capture tests start from: the simulator with real webhook deliveries to a real receiver (`startCapture` on
 * 127.0.0.1:0), a warehouse backfilled with the streams webhooks cover, and the webhooks installed the way
 * `evsync webhooks install` installs them. Every API call a test adds is counted from the simulator's counters.
 * The tests of `evsync serve` as a command start instead from `useServeEnv`: a simulator and a folder to run it in.
 */

import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import type { ClientOptions } from '../../src/api/index.js';
import { type FaultSpec, type Simulator, type SimulatorOptions, startSimulator } from '../../src/simulator/index.js';
import { installWebhooks, type WebhookSetup } from '../../src/sync/capture/install.js';
import { capturedObjects } from '../../src/sync/capture/objects.js';
import { type RunningCapture, startCapture } from '../../src/sync/capture/server.js';
import { type EventFilters, runSync } from '../../src/sync/index.js';
import type { JournaledDelivery } from '../../src/warehouse/index.js';
import { tempDir } from '../cli/helpers.js';
import { compareStream, type Harness, startHarness } from '../helpers/harness.js';
import type { ProxyRules } from '../helpers/proxy.js';

/** The streams whose trigger objects the service pushes (the catalogue's `webhook` fields). */
export const CAPTURED = capturedObjects().map((c) => c.stream.name);
export const OBJECTS = capturedObjects().map((c) => c.object);

export const SECRET = 'capture-test-secret-0123456789abcdef';
export const HEADER = 'X-Evsync-Secret';

/**
 * Deliveries naming the record only (no other field), each posted to `url` and answered 200: the applier must
 * re-read every one (a list call per batch of an event).
 */
export async function deliverBare(url: string, records: readonly Record<string, unknown>[]): Promise<void> {
  for (const r of records) {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [HEADER]: SECRET },
      body: JSON.stringify({ action: 'update', object: 'registrant', registrant: { id: r.id, event_id: r.event_id } }),
    });
    expect(res.status).toBe(200);
  }
}

export function setupFor(url: string, format: 'json' | 'post' = 'json'): WebhookSetup {
  return {
    format,
    url,
    secret: SECRET,
    secretHeader: HEADER,
    groupName: 'evsync',
    objects: OBJECTS,
    paths: { webhooks: '/webhooks', groups: '/webhook-groups' },
  };
}

export interface CaptureHarness extends Harness {
  capture: RunningCapture;
  streams: string[];
  /** The proxy's base URL when the harness was started with `proxy`. */
  proxyUrl: string | null;
  /** The simulator's list calls so far (10 credits each). */
  listCalls(): number;
  /** Waits until every delivery the simulator made is final and every journaled one applied. */
  settle(): Promise<void>;
  /** Streams whose current rows differ from the source (with the first differences). */
  differences(): Promise<Record<string, unknown>>;
  stop(): Promise<void>;
}

export async function startCaptureHarness(
  o: {
    sim?: SimulatorOptions;
    faults?: FaultSpec;
    streams?: string[];
    onJournaled?: (d: JournaledDelivery) => void;
    install?: boolean;
    format?: 'json' | 'post';
    filters?: EventFilters;
    /** Options of the client the applier re-reads with. */
    client?: Partial<ClientOptions>;
    /** The backfill and the applier's re-reads go through a loopback proxy with these rules (`proxyUrl`). */
    proxy?: ProxyRules;
    log?: (level: 'debug' | 'info' | 'warn', message: string) => void;
  } = {},
): Promise<CaptureHarness> {
  const h = await startHarness({
    rateLimit: { credits: 1_000_000, windowSeconds: 600 },
    webhookDelivery: { retryBaseMs: 20, timeoutMs: 5000 },
    ...o.sim,
  });
  // Through the proxy, the backfill and the applier see one base URL (a warehouse holds one account's data).
  const proxy = o.proxy ? (await h.proxied(o.proxy)).proxy : null;
  const base = proxy ? { baseUrl: proxy.baseUrl } : {};
  const client = h.client(base);
  const streams = o.streams ?? CAPTURED;
  const backfill = await runSync(client, h.warehouse, { mode: 'backfill', streams: streams.join(',') });
  if (backfill.status !== 'done') throw new Error(`backfill: ${backfill.status} ${backfill.errors.join('; ')}`);
  const capture = await startCapture({
    warehouse: h.warehouse,
    client: o.client ? h.client({ ...base, ...o.client }) : client,
    secret: SECRET,
    streams,
    listen: '127.0.0.1:0',
    ...(o.filters ? { filters: o.filters } : {}),
    ...(o.onJournaled ? { onJournaled: o.onJournaled } : {}),
    ...(o.log ? { log: o.log } : {}),
  });
  if (o.install !== false) await installWebhooks(client, setupFor(capture.url, o.format));
  if (o.faults) h.sim.setFaults(o.faults);
  const start = h.sim.counters().listCalls;
  const harness: CaptureHarness = {
    ...h,
    capture,
    streams,
    proxyUrl: proxy?.baseUrl ?? null,
    listCalls: () => h.sim.counters().listCalls - start,
    async settle() {
      await h.sim.webhooks.idle();
      await harness.capture.applier.idle();
    },
    async differences() {
      const out: Record<string, unknown> = {};
      for (const s of streams) {
        const d = await compareStream(h.sim, h.warehouse, s);
        if (d.missing.length || d.extra.length || d.changed.length) {
          out[s] = { missing: d.missing.slice(0, 5), extra: d.extra.slice(0, 5), changed: d.changed.slice(0, 5) };
        }
      }
      return out;
    },
    async stop() {
      await harness.capture.close().catch(() => undefined);
      await h.close();
    },
  };
  return harness;
}

/**
 * `rounds` rounds of one change to each captured stream, the simulated clock one second on after each: two changes
 * of a record within one second could not be ordered by their timestamps (and would be re-read).
 */
export function mutateEach(sim: Simulator, rounds: number): void {
  for (let i = 0; i < rounds; i++) {
    for (const stream of CAPTURED) {
      sim.mutate(1, { streams: [stream] });
      sim.advanceClock(1);
    }
  }
}

/** What a test of `evsync serve` as a command runs against (see `useServeEnv`). */
export interface ServeEnv {
  sim: Simulator;
  /** A temporary folder, the cwd of the CLI runs. */
  dir: string;
  /** The simulator's URL and first account, EVSYNC_DB (`db` in `dir`) and EVSYNC_WEBHOOK_SECRET. */
  env: Record<string, string>;
}

/**
 * Before the calling file's tests: a simulator (tiny data set, a generous rate limit, quick delivery retries: these
 * tests are about serve, not about waiting), a temporary folder and the environment `evsync serve` needs, handed to
 * `set`; after them, the simulator closed and the folder removed.
 */
export function useServeEnv(
  o: { seed: number; db: string; secret: string; deliveryTimeoutMs?: number },
  set: (e: ServeEnv) => void,
): void {
  let close: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    const sim = await startSimulator({
      size: 'tiny',
      seed: o.seed,
      rateLimit: { credits: 1_000_000, windowSeconds: 600 },
      webhookDelivery: { retryBaseMs: 20, ...(o.deliveryTimeoutMs ? { timeoutMs: o.deliveryTimeoutMs } : {}) },
    });
    const { dir, cleanup } = tempDir();
    close = async () => {
      await sim.close();
      cleanup();
    };
    const a = sim.accounts[0]!;
    set({
      sim,
      dir,
      env: {
        EVSYNC_BASE_URL: sim.baseUrl,
        EVSYNC_CLIENT_ID: a.clientId,
        EVSYNC_CLIENT_SECRET: a.clientSecret,
        EVSYNC_DB: join(dir, o.db),
        EVSYNC_WEBHOOK_SECRET: o.secret,
      },
    });
  });
  afterAll(async () => {
    await close?.();
  });
}
