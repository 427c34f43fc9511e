/**
 * The webhook receiver: `POST <path>` deliveries, authenticated by a shared secret header, bounded in size, journaled
 * durably before any 2xx. A request handler for node's http server, so a user can mount it in a server of their own.
 *
 *   401  the secret header is missing or wrong (nothing journaled)
 *   413  the body is larger than `maxBodyBytes` (nothing journaled; the service may retry a smaller one)
 *   400  the body cannot be read as a delivery (journaled as rejected, for diagnosis)
 *   503  the journal cannot be written (the service retries later)
 *   200  journaled; applying it is the applier's business
 *
 * Logs name the delivery's sequence number, object, action and ids, never a value from its record.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { JournaledDelivery, NewDelivery, Warehouse } from '../../warehouse/index.js';
import { JournalWriter } from './journal-writer.js';
import type { CaptureMetrics } from './metrics.js';
import { parseDelivery } from './payload.js';
import { secretDigest, secretMatches } from './secret.js';

export interface ReceiverOptions {
  warehouse: Warehouse;
  /** The shared secret every delivery must carry (see secret.ts). Kept only as its digest. */
  secret: string;
  /** Header carrying the secret. Default `X-Evsync-Secret`. */
  secretHeader?: string;
  /** Largest body accepted, in bytes. Default 1 MiB. */
  maxBodyBytes?: number;
  metrics?: CaptureMetrics;
  log?: (level: 'debug' | 'warn', message: string) => void;
  /** Called once a delivery is committed to the journal, before it is answered (the applier listens here). */
  onJournaled?: (delivery: JournaledDelivery) => void;
}

export const DEFAULT_SECRET_HEADER = 'X-Evsync-Secret';
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

export interface Receiver {
  /** Handles one delivery request (any path: the caller routes). */
  handle(req: IncomingMessage, res: ServerResponse): void;
  /** Answers 503 from now on (a stopping daemon); deliveries already being journaled finish. */
  close(): void;
  /** Whether the journal answered the last write (or a ping) without error. */
  readonly healthy: boolean;
}

function answer(res: ServerResponse, status: number, body: Record<string, unknown>, close = false): void {
  if (res.headersSent) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...(close ? { connection: 'close' } : {}),
  });
  res.end(text);
}

/** Reads the body up to `max` bytes; null when it is larger (the rest is not read). */
function readBody(req: IncomingMessage, max: number): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    req.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > max) {
        done = true;
        req.pause();
        resolve(null);
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!done) {
        done = true;
        resolve(Buffer.concat(chunks));
      }
    });
    req.on('error', (err) => {
      if (!done) {
        done = true;
        reject(err);
      }
    });
  });
}

export function createReceiver(o: ReceiverOptions): Receiver {
  const expected = secretDigest(o.secret);
  const header = (o.secretHeader ?? DEFAULT_SECRET_HEADER).toLowerCase();
  const max = o.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const writer = new JournalWriter(o.warehouse);
  const log = o.log ?? (() => undefined);
  let closed = false;
  let healthy = true;
  const count = (outcome: string) => o.metrics?.deliveries.add({ outcome });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'POST') {
      res.setHeader('allow', 'POST');
      answer(res, 405, { error: 'deliveries are POSTed' }, true);
      return;
    }
    if (!secretMatches(expected, req.headers[header])) {
      count('unauthorized');
      log('warn', `delivery refused (401): the ${o.secretHeader ?? DEFAULT_SECRET_HEADER} header is missing or wrong`);
      answer(res, 401, { error: 'unauthorized' }, true);
      return;
    }
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > max) {
      count('too_large');
      log('warn', `delivery refused (413): ${declared} bytes is more than ${max}`);
      answer(res, 413, { error: `body larger than ${max} bytes` }, true);
      return;
    }
    if (closed) {
      count('unavailable');
      answer(res, 503, { error: 'stopping' }, true);
      return;
    }
    const raw = await readBody(req, max);
    if (raw === null) {
      count('too_large');
      log('warn', `delivery refused (413): body larger than ${max} bytes`);
      answer(res, 413, { error: `body larger than ${max} bytes` }, true);
      return;
    }
    const body = raw.toString('utf8');
    const parsed = parseDelivery(body, req.headers['content-type']);
    const entry: NewDelivery = {
      status: parsed.ok ? 'pending' : 'rejected',
      format: parsed.ok ? parsed.delivery.format : parsed.format,
      body,
      bodySha256: createHash('sha256').update(raw).digest('hex'),
      object: parsed.ok ? parsed.delivery.object : null,
      action: parsed.ok ? parsed.delivery.action : null,
      stream: parsed.ok ? parsed.delivery.stream : null,
      recordId: parsed.ok ? parsed.delivery.recordId : null,
      eventId: parsed.ok ? parsed.delivery.eventId : null,
      datetime: parsed.ok ? parsed.delivery.datetime : null,
      reason: parsed.ok ? null : parsed.reason,
    };
    let journaled: JournaledDelivery;
    try {
      journaled = await writer.append(entry);
      healthy = true;
    } catch (err) {
      healthy = false;
      count('unavailable');
      log('warn', `delivery refused (503): the journal is unavailable (${err instanceof Error ? err.name : 'error'})`);
      answer(res, 503, { error: 'journal unavailable' }, true);
      return;
    }
    o.onJournaled?.(journaled);
    if (!parsed.ok) {
      count('rejected');
      log('warn', `delivery #${journaled.seq} rejected (400): ${parsed.reason}`);
      answer(res, 400, { error: parsed.reason, seq: journaled.seq });
      return;
    }
    count('journaled');
    const d = parsed.delivery;
    log(
      'debug',
      `delivery #${journaled.seq}: ${d.object} ${d.recordId} ${d.action}${d.eventId ? ` (event ${d.eventId})` : ''}`,
    );
    answer(res, 200, { seq: journaled.seq });
  }

  return {
    handle(req, res) {
      handle(req, res).catch((err: unknown) => {
        count('unavailable');
        log('warn', `delivery failed: ${err instanceof Error ? err.name : 'error'}`);
        answer(res, 503, { error: 'unavailable' }, true);
      });
    },
    close() {
      closed = true;
      writer.close();
    },
    get healthy() {
      return healthy && !closed;
    },
  };
}
