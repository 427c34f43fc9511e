/**
 * The naive client, for contrast: what most public scripts for this API amount to. It takes a token, then reads
 * every stream with offset pages (`page=1, 2, ...`) at the default page size of 20, asking for the documented
 * fields explicitly (the default field sets are sparse, so scripts end up listing them), event by event, until
 * `_meta.pageCount`. It keeps no state, so every run re-reads everything. It uses global fetch, as such scripts do,
 * and only counts what it read.
 */
import { getStream } from '../connectors/index.js';

export interface NaiveOptions {
  baseUrl: string;
  /** The pre-encoded Basic string the account page hands out. */
  encoded: string;
  streams: readonly string[];
}

export interface NaiveResult {
  calls: number;
  rows: number;
}

interface Envelope {
  items: Record<string, unknown>[];
  _meta: { pageCount: number };
}

async function token(baseUrl: string, encoded: string): Promise<string> {
  const res = await fetch(`${baseUrl}/oauth2/token`, {
    method: 'POST',
    headers: { authorization: `Basic ${encoded}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: 'grant_type=client_credentials',
  });
  if (!res.ok) throw new Error(`naive client: token call answered ${res.status}`);
  const body = (await res.json()) as { access_token?: unknown };
  if (typeof body.access_token !== 'string') throw new Error('naive client: no access_token in the token answer');
  return body.access_token;
}

/** One list call; waits out a 429 the way such scripts do (sleep for the reset, try again). */
async function get(url: string, bearer: string): Promise<Envelope> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const res = await fetch(url, { headers: { authorization: `Bearer ${bearer}`, accept: 'application/json' } });
    if (res.status === 429 || res.status >= 500) {
      await res.arrayBuffer();
      const reset = Number(res.headers.get('x-rate-limit-reset') ?? '1');
      await new Promise((r) => setTimeout(r, Math.max(1, reset) * 1000));
      continue;
    }
    if (!res.ok) throw new Error(`naive client: ${url} answered ${res.status}`);
    return (await res.json()) as Envelope;
  }
  throw new Error(`naive client: ${url} kept failing`);
}

export async function naiveSync(options: NaiveOptions): Promise<NaiveResult> {
  const bearer = await token(options.baseUrl, options.encoded);
  let calls = 0;
  let rows = 0;
  const readAll = async (path: string, params: Record<string, string>): Promise<Record<string, unknown>[]> => {
    const out: Record<string, unknown>[] = [];
    for (let page = 1; ; page++) {
      const query = new URLSearchParams({ ...params, page: String(page) });
      const answer = await get(`${options.baseUrl}${path}?${query.toString()}`, bearer);
      calls += 1;
      rows += answer.items.length;
      out.push(...answer.items);
      if (answer.items.length === 0 || page >= answer._meta.pageCount) return out;
    }
  };

  const events = await readAll('/events', { fields: Object.keys(getStream('events').fields).join(',') });
  const eventIds = events.map((e) => String(e.id));
  for (const name of options.streams) {
    if (name === 'events') continue;
    const def = getStream(name);
    const fields = Object.keys(def.fields).join(',');
    if (def.scope === 'account') {
      await readAll(def.path, { fields });
    } else if (def.scope === 'event') {
      for (const eventId of eventIds) {
        const params: Record<string, string> = { event_id: eventId, fields };
        // The audit log needs a start time: scripts ask for everything since long ago.
        if (def.kind === 'audit') params.start_time = '2000-01-01 00:00:00';
        await readAll(def.path, params);
      }
    }
  }
  return { calls, rows };
}
