/**
 * Change capture as one running piece: the receiver, the applier and a small HTTP surface, `POST <path>` for
 * deliveries and `GET /healthz` (200 once the journal can be written). `/metrics` is on the admin address, apart
 * (src/cli/admin-server.ts). Plain HTTP on the address given (loopback by default): TLS belongs to a reverse proxy
 * in front of it (see the README).
 *
 * `startCapture` is the library form of `evsync serve` without its scheduled reconciliation; `createReceiver` and
 * `Applier` can also be mounted in a server of one's own.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { StreamOverride } from '../../../connectors/index.js';
import { DAEMON_DEFAULTS } from '../../../schemas/daemon-settings.js';
import type { ApiClient } from '../../api/index.js';
import type { JournaledDelivery, Partition, Warehouse } from '../../warehouse/index.js';
import type { EventFilters } from '../event-scope.js';
import { Applier } from './applier.js';
import { describeWait } from './credit-wait.js';
import { CaptureMetrics } from './metrics.js';
import { createReceiver, type Receiver } from './receiver.js';
import { secretHashHex } from './secret.js';
import { utcMs } from './time.js';

export interface CaptureOptions {
  warehouse: Warehouse;
  client: ApiClient;
  /** The shared secret deliveries carry (EVSYNC_WEBHOOK_SECRET). */
  secret: string;
  /** Streams the sync covers. */
  streams: readonly string[];
  filters?: EventFilters;
  overrides?: Readonly<Record<string, StreamOverride>>;
  customFields?: boolean;
  recordTimezone?: string;
  /** `host:port`. Default `127.0.0.1:8787`; port 0 picks a free one. */
  listen?: string;
  /** Delivery path. Default `/webhooks`. */
  path?: string;
  secretHeader?: string;
  maxBodyBytes?: number;
  /** Start applying at once (default), or later with `applier.start()` (after a first reconciliation). */
  applyNow?: boolean;
  log?: (level: 'debug' | 'info' | 'warn', message: string) => void;
  /** Called once a delivery is committed to the journal, before it is answered or applied. */
  onJournaled?: (delivery: JournaledDelivery) => void;
  /** Told of each partition (stream, event or null) the applier wrote, once committed. */
  onTouched?: (partition: Partition) => void;
}

export interface RunningCapture {
  /** `http://host:port` the server listens on. */
  readonly origin: string;
  /** The delivery URL (`origin` + path). */
  readonly url: string;
  readonly applier: Applier;
  readonly receiver: Receiver;
  readonly metrics: CaptureMetrics;
  readonly server: Server;
  /** Stops taking deliveries (503), finishes the batch in flight, closes the server. */
  close(): Promise<void>;
}

export const DEFAULT_LISTEN = DAEMON_DEFAULTS.webhooks.listen;
export const DEFAULT_PATH = DAEMON_DEFAULTS.webhooks.path;

/** `host:port`, `[::1]:port` or `:port` (all interfaces are never implied: the host is loopback unless given). */
export function parseListen(text: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(text.trim());
  const port = m ? Number(m[3]) : Number.NaN;
  if (!m || !(port >= 0 && port <= 65_535))
    throw new Error(`--listen ${text}: expected host:port, e.g. 127.0.0.1:8787`);
  return { host: m[1] ?? (m[2] || '127.0.0.1'), port };
}

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

type CaptureLog = NonNullable<CaptureOptions['log']>;

function createApplier(o: CaptureOptions, metrics: CaptureMetrics, log: CaptureLog): Applier {
  return new Applier({
    warehouse: o.warehouse,
    client: o.client,
    streams: o.streams,
    ...(o.filters ? { filters: o.filters } : {}),
    ...(o.overrides ? { overrides: o.overrides } : {}),
    ...(o.customFields !== undefined ? { customFields: o.customFields } : {}),
    ...(o.recordTimezone ? { recordTimezone: o.recordTimezone } : {}),
    metrics,
    log,
    ...(o.onTouched ? { onTouched: o.onTouched } : {}),
  });
}

/** The receiver wired to the applier: each journaled delivery counts as pending and wakes the applier at once. */
function createWiredReceiver(o: CaptureOptions, metrics: CaptureMetrics, log: CaptureLog, applier: Applier): Receiver {
  return createReceiver({
    warehouse: o.warehouse,
    secret: o.secret,
    ...(o.secretHeader ? { secretHeader: o.secretHeader } : {}),
    ...(o.maxBodyBytes ? { maxBodyBytes: o.maxBodyBytes } : {}),
    metrics,
    log,
    onJournaled: (d) => {
      o.onJournaled?.(d);
      metrics.pending += d.status === 'pending' ? 1 : 0;
      applier.notify();
    },
  });
}

/** What the routes need: the pieces `startCapture` built. */
interface Parts {
  warehouse: Warehouse;
  applier: Applier;
  receiver: Receiver;
  metrics: CaptureMetrics;
}

/**
 * `GET /healthz`: 200 only while the journal answers a ping, its last write succeeded and the receiver is not
 * stopping, i.e. while a delivery sent here can be journaled (a proxy or monitor routes by this). The applier's
 * state is said beside it: `ok`, its last error, or `waiting for credits (...)` (deliveries are journaled meanwhile,
 * so the receiver stays healthy).
 */
function answerHealth(p: Parts, res: ServerResponse): void {
  p.warehouse.capture
    .ping()
    .then(() => {
      const ok = p.receiver.healthy;
      send(
        res,
        ok ? 200 : 503,
        'application/json',
        JSON.stringify({
          ok,
          journal: ok ? 'ok' : 'unavailable',
          applier: p.applier.lastError ?? describeWait(p.applier.waitState()),
        }),
      );
    })
    .catch(() => send(res, 503, 'application/json', JSON.stringify({ ok: false, journal: 'unavailable' })));
}

/**
 * The Prometheus text of a running capture: the pending count and the oldest pending delivery read again first (if
 * the journal cannot say, the last known ones are shown), what waits for credits from the applier. (The credit
 * window itself is the daemon's to say, from the same reading as its status page.)
 */
export async function captureMetricsText(r: RunningCapture, w: Warehouse): Promise<string> {
  const wait = r.applier.waitState();
  r.metrics.waitingForCredits = wait.pending;
  try {
    const [counts, [oldest]] = await Promise.all([w.capture.counts(), w.capture.pending(1)]);
    r.metrics.pending = counts.pending;
    const at = utcMs(oldest?.receivedAt);
    r.metrics.oldestPendingSeconds = at === null ? 0 : Math.max(0, Math.round((r.applier.now() - at) / 1000));
  } catch {
    // The last known figures stay.
  }
  return r.metrics.render();
}

function router(path: string, p: Parts): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const url = (req.url ?? '/').split('?')[0];
    if (url === path) p.receiver.handle(req, res);
    else if (req.method === 'GET' && url === '/healthz') answerHealth(p, res);
    else send(res, 404, 'application/json', JSON.stringify({ error: 'not found' }));
  };
}

/** Listens on `listen` (`host:port`) and resolves to the origin actually bound (port 0 picks a free one). */
export async function listenOn(server: Server, listen: string): Promise<string> {
  const { host, port } = parseListen(listen);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${shown}:${address.port}`;
}

export async function startCapture(options: CaptureOptions): Promise<RunningCapture> {
  const path = options.path ?? DEFAULT_PATH;
  if (!path.startsWith('/')) throw new Error(`delivery path ${path}: must start with /`);
  const metrics = new CaptureMetrics(options.client.now);
  const log = options.log ?? (() => undefined);
  const applier = createApplier(options, metrics, log);
  const receiver = createWiredReceiver(options, metrics, log, applier);
  // Only the digest is kept (`webhooks status` compares it with what the service holds).
  await options.warehouse.capture.setSecretHash(secretHashHex(options.secret));
  metrics.pending = (await options.warehouse.capture.counts()).pending;

  const server = createServer(router(path, { warehouse: options.warehouse, applier, receiver, metrics }));
  // A slow or stalled sender must not hold a connection forever.
  server.headersTimeout = 15_000;
  server.requestTimeout = 30_000;
  const origin = await listenOn(server, options.listen ?? DEFAULT_LISTEN);
  if (options.applyNow !== false) applier.start();
  return {
    origin,
    url: `${origin}${path}`,
    applier,
    receiver,
    metrics,
    server,
    async close() {
      receiver.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        // A delivery cut off here was either journaled (its retry is a duplicate) or not (its retry is new).
        server.closeAllConnections();
      });
      await applier.stop();
    },
  };
}
