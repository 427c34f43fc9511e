import { Agent, request } from 'undici';
import type { AttemptOutcome } from './types.js';

/**
 * One HTTP try of one delivery, on an agent of its own (kept-alive connections, never shared with anything else in
 * the process). A try ends with the receiver's complete answer, a timeout (no connection, no answer headers, or a
 * body that stalls, each within the timeout; the connection is dropped), or a connection error. The receiver's body
 * is read and discarded.
 */

export interface SendResult {
  outcome: AttemptOutcome;
  status: number | null;
  error: string | null;
}

export interface OutgoingRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT']);

export class Sender {
  private readonly agent: Agent;

  constructor(
    private readonly timeoutMs: number,
    connections: number,
  ) {
    // undici's own timeouts rather than an AbortController per try: on the delivery hot path the controller, its
    // signal and its listeners cost a tenth of the CPU time.
    this.agent = new Agent({ connections, keepAliveTimeout: 4000, pipelining: 1, connectTimeout: timeoutMs });
  }

  async send(req: OutgoingRequest): Promise<SendResult> {
    try {
      const res = await request(req.url, {
        method: 'POST',
        headers: req.headers,
        body: req.body,
        dispatcher: this.agent,
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
      });
      await res.body.dump({ limit: 1 << 20 });
      const ok = res.statusCode >= 200 && res.statusCode < 300;
      return { outcome: ok ? 'ok' : 'http', status: res.statusCode, error: null };
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      const code = err.code ?? err.message;
      return { outcome: TIMEOUT_CODES.has(code) ? 'timeout' : 'error', status: null, error: code };
    }
  }

  /** Aborts every try in flight and closes the connections. */
  async close(): Promise<void> {
    await this.agent.destroy().catch(() => undefined);
  }
}
