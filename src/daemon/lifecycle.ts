/**
 * What a running daemon holds, and the order it lets go of it: deliveries first (503: the service retries them),
 * the admin address, queries (cancelled), the run in flight (it saves its state), the receiver, the publisher once
 * nothing writes any more, the heartbeat, the credit readings, the socket, the client, then the database. The
 * command line opens the parts (src/cli/daemon-run.ts) into one `DaemonParts` and hands it here to close.
 */
import type { ApiClient } from '../api/index.js';
import type { RunningCapture } from '../sync/capture/index.js';
import type { CreditRecorder } from '../sync/credit-recorder.js';
import type { SyncOptions } from '../sync/types.js';
import type { Partition, Warehouse } from '../warehouse/index.js';
import type { AdminServer } from './admin-server.js';
import type { Heartbeat } from './heartbeat.js';
import type { QueryService } from './queries.js';
import type { Scheduler } from './scheduler.js';
import type { DaemonSocket } from './socket.js';

/** The daemon's publisher as its lifecycle sees it: told the applier's writes, stopped once nothing writes. */
interface HeldPublisher {
  /** The applier committed a write to this partition. */
  touched(partition: Partition): void;
  stop(): Promise<void>;
}

/** Everything the daemon holds open, each null until opened: `shutdown` closes what was. */
export interface DaemonParts<P extends HeldPublisher = HeldPublisher> {
  warehouse: Warehouse | null;
  client: ApiClient | null;
  /** Stops saying the client's waits for the window. */
  stopWaitLog: (() => void) | null;
  capture: RunningCapture | null;
  publisher: P | null;
  queries: QueryService | null;
  socket: DaemonSocket | null;
  admin: AdminServer | null;
  heartbeat: Heartbeat | null;
  scheduler: Scheduler | null;
  /** Records the credit window as answers come, for every run and between them (the applier's re-reads). */
  credits: CreditRecorder | null;
}

export function noParts<P extends HeldPublisher>(): DaemonParts<P> {
  return {
    warehouse: null,
    client: null,
    stopWaitLog: null,
    capture: null,
    publisher: null,
    queries: null,
    socket: null,
    admin: null,
    heartbeat: null,
    scheduler: null,
    credits: null,
  };
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Closes what the daemon opened, in the order that loses nothing (see the file comment). Returns the scheduler's
 * summary (undefined when it never started).
 */
export async function shutdown(
  held: DaemonParts,
  log: { warn(message: string): void },
): Promise<{ runs: number; skipped: number } | null | undefined> {
  held.capture?.receiver.close();
  await held.admin?.close().catch(() => undefined);
  await held.queries?.close().catch(() => undefined);
  const summary = await held.scheduler?.stop().catch(() => null);
  await held.capture?.close().catch((err: unknown) => log.warn(`closing the receiver: ${messageOf(err)}`));
  // Publishing stops once nothing writes any more: what it still owes is recorded and published at the next start.
  await held.publisher?.stop().catch((err: unknown) => log.warn(`stopping the publisher: ${messageOf(err)}`));
  await held.heartbeat?.stop();
  // What the last answers said, written before the database closes.
  await held.credits?.close();
  await held.socket?.close().catch(() => undefined);
  held.stopWaitLog?.();
  await held.client?.close().catch(() => undefined);
  await held.warehouse?.close().catch(() => undefined);
  return summary;
}

/** Resolves when `signal` aborts (at once if it has). */
export function untilAborted(signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

/** What the receiver is started with (`serve`'s flags over the config file over the daemon's defaults). */
interface ReceiverStart {
  warehouse: Warehouse;
  client: ApiClient;
  /** The daemon's run options: their event filters, stream overrides and record zone apply to deliveries too. */
  options: SyncOptions;
  /** The webhook-fed streams (the reconcile policy's `captured`). */
  captured: readonly string[];
  settings: { listen: string; path: string; secretHeader: string; maxBodyBytes: number };
  secret: string;
  /** Told every write the applier commits (the readers are owed it). */
  publisher: HeldPublisher | null;
  log: (level: 'debug' | 'info' | 'warn', message: string) => void;
}

/** The webhook receiver and applier for the webhook-fed streams. */
export async function startReceiver(o: ReceiverStart): Promise<RunningCapture> {
  const { startCapture } = await import('../sync/capture/index.js');
  const { options, settings, publisher } = o;
  return startCapture({
    warehouse: o.warehouse,
    client: o.client,
    secret: o.secret,
    streams: o.captured,
    filters: options,
    ...(options.overrides ? { overrides: options.overrides } : {}),
    ...(options.recordTimezone ? { recordTimezone: options.recordTimezone } : {}),
    listen: settings.listen,
    path: settings.path,
    secretHeader: settings.secretHeader,
    maxBodyBytes: settings.maxBodyBytes,
    log: o.log,
    ...(publisher ? { onTouched: publisher.touched } : {}),
  });
}
