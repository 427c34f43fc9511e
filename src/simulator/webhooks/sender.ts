import { Agent, request } from 'undici';
import type { AttemptOutcome } from './types.js';

/**
 * One HTTP try of one delivery, on an agent of its own (kept-alive connections, never shared with anything else in
 * the process). A try ends with the receiver's complete answer, a timeout (no complete answer in time; the
 * connection is dropped), or a connection error. The receiver's body is read and discarded.
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

export class Sender {
  private readonly agent: Agent;
  private readonly open = new Set<AbortController>();

  constructor(
    private readonly timeoutMs: number,
    connections: number,
  ) {
    this.agent = new Agent({ connections, keepAliveTimeout: 4000, pipelining: 1 });
  }

  async send(req: OutgoingRequest): Promise<SendResult> {
    const abort = new AbortController();
    this.open.add(abort);
    const timer = setTimeout(() => abort.abort(new Error('timeout')), this.timeoutMs);
    try {
      const res = await request(req.url, {
        method: 'POST',
        headers: req.headers,
        body: req.body,
        dispatcher: this.agent,
        signal: abort.signal,
      });
      await res.body.dump({ limit: 1 << 20, signal: abort.signal });
      const ok = res.statusCode >= 200 && res.statusCode < 300;
      return { outcome: ok ? 'ok' : 'http', status: res.statusCode, error: null };
    } catch (e) {
      if (abort.signal.aborted) {
        const reason = abort.signal.reason instanceof Error ? abort.signal.reason.message : 'aborted';
        return { outcome: reason === 'timeout' ? 'timeout' : 'error', status: null, error: reason };
      }
      const err = e as NodeJS.ErrnoException;
      return { outcome: 'error', status: null, error: err.code ?? err.message };
    } finally {
      clearTimeout(timer);
      this.open.delete(abort);
    }
  }

  /** Aborts every try in flight and closes the connections. */
  async close(): Promise<void> {
    for (const abort of this.open) abort.abort(new Error('closed'));
    await this.agent.destroy().catch(() => undefined);
  }
}
