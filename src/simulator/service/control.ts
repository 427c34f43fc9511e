import type { IncomingMessage, ServerResponse } from 'node:http';
import { readBody } from '../http/body.js';
import type { ControlHandler } from '../http/server.js';
import type { FaultSpec, Simulator } from '../types.js';
import { INITIATORS, type Initiator } from '../webhooks/types.js';

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || LOOPBACK.has(host) || host.startsWith('127.');
}

function send(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=UTF-8',
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(body);
}

async function jsonBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const text = await readBody(req);
  if (text.trim() === '') return {};
  const value: unknown = JSON.parse(text);
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new Error('expected a JSON object');
  return value as Record<string, unknown>;
}

function intParam(url: URL, name: string, fallback: number): number {
  const text = url.searchParams.get(name);
  return text === null ? fallback : Number(text);
}

/**
 * `/_control/*`: the in-process API over HTTP, for benchmarks and CLI tests running in another process. Served only
 * when the simulator was started with `control: true` on a loopback address, and only to loopback peers.
 */
export function controlHandler(sim: () => Simulator): ControlHandler {
  return async (req, res, url) => {
    if (!LOOPBACK.has(req.socket.remoteAddress ?? '')) return send(res, 403, { error: 'control is loopback-only' });
    const route = `${req.method} ${url.pathname}`;
    try {
      switch (route) {
        case 'GET /_control/counters':
          return send(res, 200, sim().counters(intParam(url, 'account', 0)));
        case 'POST /_control/counters/reset':
          sim().resetCounters();
          return send(res, 200, { ok: true });
        case 'POST /_control/mutate': {
          const b = await jsonBody(req);
          const opts: { account?: number; streams?: string[]; initiatedBy?: Initiator } = {};
          if (typeof b.account === 'number') opts.account = b.account;
          if (Array.isArray(b.streams)) opts.streams = b.streams.map(String);
          if (b.initiatedBy !== undefined) {
            const by = INITIATORS.find((i) => i === b.initiatedBy);
            if (!by) return send(res, 400, { error: `initiatedBy must be one of ${INITIATORS.join(', ')}` });
            opts.initiatedBy = by;
          }
          return send(res, 200, sim().mutate(Number(b.n ?? 1), opts));
        }
        case 'GET /_control/truth': {
          const stream = url.searchParams.get('stream');
          if (!stream) return send(res, 400, { error: 'stream is required' });
          return send(res, 200, sim().truth(stream, intParam(url, 'account', 0)));
        }
        case 'POST /_control/clock': {
          const b = await jsonBody(req);
          sim().advanceClock(Number(b.advance ?? 0));
          return send(res, 200, { now: sim().now().toISOString() });
        }
        case 'GET /_control/clock':
          return send(res, 200, { now: sim().now().toISOString() });
        case 'POST /_control/faults':
          sim().setFaults((await jsonBody(req)) as FaultSpec);
          return send(res, 200, { ok: true });
        case 'GET /_control/streams':
          return send(res, 200, sim().streams());
        case 'GET /_control/webhooks/changes':
          return send(res, 200, sim().webhooks.changes(intParam(url, 'since', 0)));
        case 'GET /_control/webhooks/deliveries':
          return send(res, 200, sim().webhooks.deliveries(intParam(url, 'since', 0)));
        case 'GET /_control/webhooks/notifications':
          return send(res, 200, sim().webhooks.notifications(intParam(url, 'since', 0)));
        case 'GET /_control/webhooks/stats':
          return send(res, 200, sim().webhooks.stats());
        case 'GET /_control/webhooks/idle': {
          // Long poll: answers once the delivery queue is empty, or after `timeout` ms with idle false.
          const idle = await sim().webhooks.idle(intParam(url, 'timeout', 30_000));
          return send(res, 200, { idle, stats: sim().webhooks.stats() });
        }
        default:
          return send(res, 404, { error: `no control route ${route}` });
      }
    } catch (e) {
      return send(res, 400, { error: e instanceof Error ? e.message : String(e) });
    }
  };
}
