import type { Dispatcher } from 'undici';
import type { Now } from '../../schemas/clock.js';
import { EvsyncApiError } from './errors.js';

interface ExchangeRequest {
  origin: string;
  /** Absolute path on the origin, query included. */
  path: string;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  headers: Record<string, string>;
  body?: string | undefined;
  headersMs: number;
  bodyMs: number;
  /** Answers larger than this are refused while they stream in, before they are held in memory whole. */
  maxBytes: number;
  signal?: AbortSignal | undefined;
  /** The clock `sentAt`/`receivedAt` are read from (the client's: the server clock is measured against it). */
  now: Now;
}

export interface Exchange {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** The body's bytes as they came, which `text` was decoded from (the archive can keep them without encoding again). */
  bytes?: Buffer;
  sentAt: number;
  receivedAt: number;
}

/** Our own timeout fired (distinct from the caller's abort, which is never retried). */
export class ExchangeTimeout extends Error {
  constructor(readonly phase: 'headers' | 'body') {
    super(`no ${phase === 'headers' ? 'response headers' : 'complete body'} in time`);
    this.name = 'ExchangeTimeout';
  }
}

/** The answer was larger than the caller's limit (by its Content-Length, or while it streamed in). */
export class BodyTooLarge extends Error {
  constructor(
    readonly limit: number,
    readonly status: number,
  ) {
    super(`the answer is larger than ${limit} bytes`);
    this.name = 'BodyTooLarge';
  }
}

/** The body as text, refused as soon as it passes `limit` bytes (a 400 MB page was once buffered whole). */
async function readLimited(response: Dispatcher.ResponseData, limit: number): Promise<{ text: string; bytes: Buffer }> {
  const declared = Number(response.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) throw new BodyTooLarge(limit, response.statusCode);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response.body) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size > limit) throw new BodyTooLarge(limit, response.statusCode);
    chunks.push(buf);
  }
  const bytes = Buffer.concat(chunks, size);
  return { text: bytes.toString('utf8'), bytes };
}

/**
 * One HTTP exchange, body read in full (`JSON.parse(await body.text())` later is the fast path). Headers and body
 * each get their own timer, run here rather than by undici's options so they behave the same on any Dispatcher
 * (MockAgent included) and fire on time. On every error path the body is consumed or destroyed, so no keep-alive
 * socket is left holding a half-read response.
 */
export async function exchange(dispatcher: Dispatcher, req: ExchangeRequest): Promise<Exchange> {
  const controller = new AbortController();
  let timedOut: ExchangeTimeout | null = null;
  const onCallerAbort = () => controller.abort(req.signal?.reason);
  if (req.signal?.aborted) throw req.signal.reason;
  req.signal?.addEventListener('abort', onCallerAbort, { once: true });
  const arm = (phase: 'headers' | 'body', ms: number) =>
    setTimeout(() => {
      timedOut = new ExchangeTimeout(phase);
      controller.abort(timedOut);
    }, ms);

  const sentAt = req.now();
  let timer = arm('headers', req.headersMs);
  let response: Dispatcher.ResponseData | undefined;
  try {
    response = await dispatcher.request({
      origin: req.origin,
      path: req.path,
      method: req.method,
      headers: req.headers,
      body: req.body ?? null,
      signal: controller.signal,
      // Ours fire first; these stay as a safety net for a Dispatcher that ignores the signal.
      headersTimeout: req.headersMs + 1000,
      bodyTimeout: req.bodyMs + 1000,
    });
    clearTimeout(timer);
    timer = arm('body', req.bodyMs);
    const { text, bytes } = await readLimited(response, req.maxBytes);
    return { status: response.statusCode, headers: response.headers, text, bytes, sentAt, receivedAt: req.now() };
  } catch (err) {
    if (response && !response.body.destroyed) response.body.destroy();
    throw timedOut ?? (req.signal?.aborted ? req.signal.reason : err);
  } finally {
    clearTimeout(timer);
    req.signal?.removeEventListener('abort', onCallerAbort);
  }
}

/** Codes of failures that happen before the request leaves this machine: safe to retry even for a POST. */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

export function errorCode(err: unknown): string | undefined {
  let e: unknown = err;
  // undici nests the system error (`cause`) under its own.
  for (let depth = 0; depth < 3 && e && typeof e === 'object'; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && code !== 'UND_ERR_SOCKET') return code;
    e = (e as { cause?: unknown }).cause;
  }
  const top = (err as { code?: unknown } | null)?.code;
  return typeof top === 'string' ? top : undefined;
}

export function failedBeforeSending(err: unknown): boolean {
  const code = errorCode(err);
  return code !== undefined && NOT_SENT_CODES.has(code);
}

/** One header as a string (undici gives arrays for repeated headers). */
export function header(headers: Exchange['headers'], name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** An integer header, or undefined when absent or not an integer. */
export function intHeader(headers: Exchange['headers'], name: string): number | undefined {
  const v = header(headers, name);
  if (v === undefined || !/^\s*-?\d+(\.\d+)?\s*$/.test(v)) return undefined;
  return Number(v);
}

/**
 * A fault of the exchange itself (our timeout, undici, sockets, DNS), as opposed to a bug, a usage error or a typed
 * error thrown on our side: the only failures another attempt could change.
 */
export function isTransportFault(err: unknown): boolean {
  if (err instanceof EvsyncApiError) return false;
  if (err instanceof ExchangeTimeout) return true;
  if (!(err instanceof Error)) return false;
  if (errorCode(err) !== undefined) return true;
  // undici's own error classes all carry a UND_ERR_* code; a body cut short surfaces as a plain socket error.
  return (
    err.name === 'SocketError' || err.name === 'AbortError' || /socket|terminated|other side closed/i.test(err.message)
  );
}
