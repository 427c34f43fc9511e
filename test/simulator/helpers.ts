import { request } from 'undici';
import type { Simulator, SimulatorOptions } from '../../src/simulator/index.js';
import { startSimulator } from '../../src/simulator/index.js';

export interface Answer {
  status: number;
  headers: Record<string, string>;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read loosely typed JSON bodies
  json: any;
}

export interface Client {
  sim: Simulator;
  /** A fresh token for an account (default 0). */
  token(account?: number): Promise<string>;
  /** GET a path under /v1 with the account's token (cached per account). */
  get(path: string, opts?: { account?: number; token?: string | null }): Promise<Answer>;
  call(
    method: string,
    path: string,
    opts?: { account?: number; form?: Record<string, string>; token?: string | null },
  ): Promise<Answer>;
  close(): Promise<void>;
}

async function answer(res: Awaited<ReturnType<typeof request>>): Promise<Answer> {
  const text = await res.body.text();
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) headers[k] = Array.isArray(v) ? v.join(', ') : String(v);
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.statusCode, headers, text, json };
}

export async function tokenRequest(sim: Simulator, authorization: string, body = 'grant_type=client_credentials') {
  return answer(
    await request(`${sim.baseUrl}/oauth2/token`, {
      method: 'POST',
      headers: { authorization, 'content-type': 'application/x-www-form-urlencoded;charset=UTF-8' },
      body,
    }),
  );
}

export async function startClient(options: SimulatorOptions = {}): Promise<Client> {
  const sim = await startSimulator({ size: 'tiny', rateLimit: { credits: 1_000_000, windowSeconds: 600 }, ...options });
  const tokens = new Map<number, string>();
  const token = async (account = 0) => {
    const res = await tokenRequest(sim, `Basic ${sim.accounts[account]!.encoded}`);
    if (res.status !== 200) throw new Error(`token: ${res.status} ${res.text}`);
    return res.json.access_token as string;
  };
  const call: Client['call'] = async (method, path, opts = {}) => {
    const account = opts.account ?? 0;
    const cached = opts.token === undefined;
    const send = async (bearer: string | null) => {
      const headers: Record<string, string> = {};
      if (bearer !== null) headers.authorization = `Bearer ${bearer}`;
      let body: string | undefined;
      if (opts.form) {
        headers['content-type'] = 'application/x-www-form-urlencoded';
        body = new URLSearchParams(opts.form).toString();
      }
      return answer(await request(`${sim.baseUrl}${path}`, { method: method as 'GET', headers, body }));
    };
    if (!cached) return send(opts.token ?? null);
    let bearer = tokens.get(account) ?? (await token(account));
    tokens.set(account, bearer);
    const res = await send(bearer);
    if (res.status !== 401) return res;
    // The cached token expired (tests move the clock): fetch a new one, once.
    bearer = await token(account);
    tokens.set(account, bearer);
    return send(bearer);
  };
  return {
    sim,
    token,
    call,
    get: (path, opts) => call('GET', path, opts),
    close: () => sim.close(),
  };
}

/** `search` parameter value, URL-encoded as a client must send it (`&` inside the value becomes %26). */
export function search(...conditions: string[]): string {
  return `search=${encodeURIComponent(conditions.join('&'))}`;
}

export const ERROR_401 = {
  name: 'Unauthorized',
  message: 'Your request was made with invalid credentials.',
  code: 0,
  status: 401,
};
export const ERROR_403 = {
  name: 'Forbidden',
  message: 'You do not have access to that resource.',
  code: 0,
  status: 403,
};
export const ERROR_404 = { name: 'Not Found', message: 'The requested resource does not exist.', code: 0, status: 404 };
