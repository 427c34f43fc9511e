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
 * Logs name the delivery's sequence number, object, action and ids, never a value from its record. A body is
 * journaled with the credentials live clients hold scrubbed out (a record that echoes a token), as stored rows are.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { makeSecretScrubber, type SecretScrubber } from '../../../normalizer/secrets.js';
import { DAEMON_DEFAULTS } from '../../../schemas/daemon-settings.js';
import { registeredSecrets } from '../../api/index.js';
import type { JournaledDelivery, NewDelivery, Warehouse } from '../../warehouse/index.js';
import { JournalWriter } from './journal-writer.js';
import type { CaptureMetrics } from './metrics.js';
import { type ParseResult, parseDelivery } from './payload.js';
import { secretDigest, secretMatches } from './secret.js';

export interface ReceiverOptions {
  warehouse: Warehouse;
  /** The shared secret every delivery must carry (see secret.ts). Kept only as its digest. */
  secret: string;
  /** Header carrying the secret. Default `X-Evsync-Secret`. */
  secretHeader?: string;
  /** Largest body accepted, in bytes (default DEFAULT_MAX_BODY_BYTES). */
  maxBodyBytes?: number;
  metrics?: CaptureMetrics;
  log?: (level: 'debug' | 'warn', message: string) => void;
  /** Called once a delivery is committed to the journal, before it is answered (the applier listens here). */
  onJournaled?: (delivery: JournaledDelivery) => void;
}

export const DEFAULT_SECRET_HEADER = DAEMON_DEFAULTS.webhooks.secretHeader;
export const DEFAULT_MAX_BODY_BYTES = DAEMON_DEFAULTS.webhooks.maxBodyBytes;

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

/**
 * One receiver's settings and state. The steps of handling a delivery are separate functions (each short enough to
 * read at a glance), so what they share is passed as this one object rather than closed over.
 */
interface ReceiverState {
  readonly o: ReceiverOptions;
  readonly expected: Buffer;
  /** The secret header's name, lower-cased as node gives request headers. */
  readonly header: string;
  readonly max: number;
  readonly writer: JournalWriter;
  readonly scrub: SecretScrubber;
  readonly log: (level: 'debug' | 'warn', message: string) => void;
  readonly count: (outcome: string) => void;
  closed: boolean;
  healthy: boolean;
}

function receiverState(o: ReceiverOptions): ReceiverState {
  return {
    o,
    expected: secretDigest(o.secret),
    header: (o.secretHeader ?? DEFAULT_SECRET_HEADER).toLowerCase(),
    max: o.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    writer: new JournalWriter(o.warehouse),
    scrub: makeSecretScrubber(registeredSecrets),
    log: o.log ?? (() => undefined),
    count: (outcome) => o.metrics?.deliveries.add({ outcome }),
    closed: false,
    healthy: true,
  };
}

/**
 * Answers what is refused before the body is read: the wrong method, the wrong secret, a declared size over the
 * limit, a stopping receiver. These come first so that an unauthenticated or oversized request costs no read and
 * leaves nothing in the journal. True when the request was answered.
 */
function refusedBeforeReading(s: ReceiverState, req: IncomingMessage, res: ServerResponse): boolean {
  if (req.method !== 'POST') {
    res.setHeader('allow', 'POST');
    answer(res, 405, { error: 'deliveries are POSTed' }, true);
    return true;
  }
  if (!secretMatches(s.expected, req.headers[s.header])) {
    s.count('unauthorized');
    s.log(
      'warn',
      `delivery refused (401): the ${s.o.secretHeader ?? DEFAULT_SECRET_HEADER} header is missing or wrong`,
    );
    answer(res, 401, { error: 'unauthorized' }, true);
    return true;
  }
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > s.max) {
    s.count('too_large');
    s.log('warn', `delivery refused (413): ${declared} bytes is more than ${s.max}`);
    answer(res, 413, { error: `body larger than ${s.max} bytes` }, true);
    return true;
  }
  if (s.closed) {
    s.count('unavailable');
    answer(res, 503, { error: 'stopping' }, true);
    return true;
  }
  return false;
}

/** The journal row of a body: what it says when it reads as a delivery, else why not (journaled as rejected). */
function journalEntry(raw: Buffer, body: string, parsed: ParseResult): NewDelivery {
  return {
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
}

/**
 * Commits the entry durably. When the journal cannot be written the delivery is answered 503 (nothing may be
 * acknowledged that is not on disk: the service retries it) and the receiver reports itself unhealthy; null then.
 */
async function journal(s: ReceiverState, entry: NewDelivery, res: ServerResponse): Promise<JournaledDelivery | null> {
  try {
    const journaled = await s.writer.append(entry);
    s.healthy = true;
    return journaled;
  } catch (err) {
    s.healthy = false;
    s.count('unavailable');
    s.log('warn', `delivery refused (503): the journal is unavailable (${err instanceof Error ? err.name : 'error'})`);
    answer(res, 503, { error: 'journal unavailable' }, true);
    return null;
  }
}

/** Answers a journaled delivery: 400 when its body was no delivery (with the seq to look it up by), else 200. */
function answerJournaled(
  s: ReceiverState,
  res: ServerResponse,
  journaled: JournaledDelivery,
  parsed: ParseResult,
): void {
  if (!parsed.ok) {
    s.count('rejected');
    s.log('warn', `delivery #${journaled.seq} rejected (400): ${parsed.reason}`);
    answer(res, 400, { error: parsed.reason, seq: journaled.seq });
    return;
  }
  s.count('journaled');
  const d = parsed.delivery;
  // Names and ids only: a value from the record would put personal data in the log.
  s.log(
    'debug',
    `delivery #${journaled.seq}: ${d.object} ${d.recordId} ${d.action}${d.eventId ? ` (event ${d.eventId})` : ''}`,
  );
  answer(res, 200, { seq: journaled.seq });
}

/** One delivery, from the checks that need no body to its answer; the journal write is what a 2xx waits for. */
async function handleDelivery(s: ReceiverState, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (refusedBeforeReading(s, req, res)) return;
  const raw = await readBody(req, s.max);
  if (raw === null) {
    s.count('too_large');
    s.log('warn', `delivery refused (413): body larger than ${s.max} bytes`);
    answer(res, 413, { error: `body larger than ${s.max} bytes` }, true);
    return;
  }
  // Hashed as sent (a retry of it is a duplicate), journaled and applied without the secrets it may echo.
  s.scrub.refresh();
  const body = s.scrub.text(raw.toString('utf8'));
  const parsed = parseDelivery(body, req.headers['content-type']);
  const journaled = await journal(s, journalEntry(raw, body, parsed), res);
  if (journaled === null) return;
  s.o.onJournaled?.(journaled);
  answerJournaled(s, res, journaled, parsed);
}

export function createReceiver(o: ReceiverOptions): Receiver {
  const s = receiverState(o);
  return {
    handle(req, res) {
      handleDelivery(s, req, res).catch((err: unknown) => {
        s.count('unavailable');
        s.log('warn', `delivery failed: ${err instanceof Error ? err.name : 'error'}`);
        answer(res, 503, { error: 'unavailable' }, true);
      });
    },
    close() {
      s.closed = true;
      s.writer.close();
    },
    get healthy() {
      return s.healthy && !s.closed;
    },
  };
}
