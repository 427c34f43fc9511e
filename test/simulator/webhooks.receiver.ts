/**
 * A real HTTP server that receives webhook deliveries in tests. Each webhook gets its own path; a path's behaviour
 * decides the status of its nth request or leaves it unanswered. Waiting is by count (an event), never by time.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import type { Client } from './helpers.js';

export interface Receipt {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** Status to answer the nth (1-based) request to a path with, or 'hang' to never answer. */
export type Behaviour = (nth: number) => number | 'hang';

export class Receiver {
  readonly receipts: Receipt[] = [];
  private readonly behaviours = new Map<string, Behaviour>();
  private readonly counts = new Map<string, number>();
  private readonly hanging = new Set<ServerResponse>();
  private waiters: { done: () => boolean; resolve: () => void }[] = [];
  private readonly server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      this.receipts.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const nth = (this.counts.get(path) ?? 0) + 1;
      this.counts.set(path, nth);
      const outcome = (this.behaviours.get(path) ?? (() => 200))(nth);
      if (outcome === 'hang') this.hanging.add(res);
      else res.writeHead(outcome, { 'content-type': 'text/plain' }).end('ok');
      this.check();
    });
  });
  private base = '';

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  url(path: string): string {
    return `${this.base}${path}`;
  }

  behave(path: string, behaviour: Behaviour): void {
    this.behaviours.set(path, behaviour);
  }

  at(path: string): Receipt[] {
    return this.receipts.filter((r) => r.path === path);
  }

  private check(): void {
    this.waiters = this.waiters.filter((w) => {
      if (!w.done()) return true;
      w.resolve();
      return false;
    });
  }

  /** Resolves once `path` has received at least `count` requests. */
  waitFor(path: string, count: number): Promise<void> {
    return new Promise((resolve) => {
      this.waiters.push({ done: () => this.at(path).length >= count, resolve });
      this.check();
    });
  }

  async close(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

type Value = string | number | boolean | null | Value[] | { [key: string]: Value };

/** Decodes a PHP-style form body (`registrant[reg_type_id][id]=3`) into nested objects of text values. */
export function decodeForm(body: string): Record<string, Value> {
  const out: Record<string, Value> = {};
  for (const [name, value] of new URLSearchParams(body)) {
    const path = name.replace(/\]/g, '').split('[');
    let node = out;
    path.forEach((key, i) => {
      if (i === path.length - 1) node[key] = value;
      else {
        node[key] ??= {};
        node = node[key] as Record<string, Value>;
      }
    });
  }
  return out;
}

/** What a JSON value looks like after http_build_query and decodeForm: texts, 1/0, no nulls, arrays as objects. */
export function asForm(value: Value): Value | undefined {
  if (value === null) return undefined;
  if (typeof value === 'boolean') return value ? '1' : '0';
  if (typeof value !== 'object') return String(value);
  const out: Record<string, Value> = {};
  for (const [k, v] of Object.entries(value)) {
    const f = asForm(v);
    if (f !== undefined) out[k] = f;
  }
  // PHP leaves out empty arrays, and so any member with nothing but nulls inside.
  return Object.keys(out).length === 0 ? undefined : out;
}

/** The delivery's body as a value, whichever format it came in. */
export function payloadOf(r: Receipt): Record<string, Value> {
  return String(r.headers['content-type']).startsWith('application/json')
    ? (JSON.parse(r.body) as Record<string, Value>)
    : decodeForm(r.body);
}

/** A JSON-body call to the simulator with the account's token. */
export async function sendJson(c: Client, method: string, path: string, body: unknown, account = 0) {
  const token = await c.token(account);
  const res = await request(`${c.sim.baseUrl}${path}`, {
    method: method as 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.body.text();
  // biome-ignore lint/suspicious/noExplicitAny: tests read loosely typed JSON bodies
  return { status: res.statusCode, json: (text ? JSON.parse(text) : undefined) as any };
}
