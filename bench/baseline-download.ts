/**
 * The baseline for the local pipeline: merely downloading the pages a sync read, with the same concurrency, and
 * discarding the bodies. It replays the list requests the sync made (recorded from the client's `request` events):
 * keyset pages carry the previous page's last id in the query, so the replay asks for exactly the same pages
 * without parsing anything. Requests of one walk (one stream and scope) go one after the other, as keyset paging
 * must; walks run `concurrency` at a time, like the engine's work items (each of which has one request in flight).
 */
import { Agent } from 'undici';

/** One stream and scope: its requests in order (paths relative to the base URL, query included). */
export type Walk = string[];

/**
 * Groups recorded request paths by walk: the path without its keyset condition (`id>N` inside `search`) and page
 * number names the walk; the order inside a walk is the recorded order.
 */
export function walksFromRequests(paths: readonly string[]): Walk[] {
  const walks = new Map<string, string[]>();
  for (const path of paths) {
    const [route = '', query = ''] = path.split('?', 2);
    const params = new URLSearchParams(query);
    const search = params.get('search');
    if (search !== null) {
      const rest = search
        .split('&')
        .filter((c) => !/^id>\d+$/.test(c))
        .join('&');
      if (rest) params.set('search', rest);
      else params.delete('search');
    }
    params.delete('page');
    const key = `${route}?${params.toString()}`;
    const list = walks.get(key) ?? [];
    list.push(path);
    walks.set(key, list);
  }
  return [...walks.values()];
}

export interface DownloadResult {
  wallMs: number;
  pages: number;
  bytes: number;
}

export async function downloadWalks(
  baseUrl: string,
  encoded: string,
  walks: readonly Walk[],
  concurrency: number,
): Promise<DownloadResult> {
  const url = new URL(baseUrl);
  const basePath = url.pathname.replace(/\/+$/, '');
  // The engine's client keeps one keep-alive pool with a connection per request in flight, plus one.
  const agent = new Agent({ connections: concurrency + 1, keepAliveTimeout: 30_000 });
  const started = Date.now();
  let pages = 0;
  let bytes = 0;
  try {
    const tokenAnswer = await agent.request({
      origin: url.origin,
      path: `${basePath}/oauth2/token`,
      method: 'POST',
      headers: { authorization: `Basic ${encoded}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials',
    });
    const token = (JSON.parse(await tokenAnswer.body.text()) as { access_token: string }).access_token;
    const headers = { authorization: `Bearer ${token}`, accept: 'application/json' };
    let next = 0;
    const worker = async () => {
      while (next < walks.length) {
        const walk = walks[next++]!;
        for (const path of walk) {
          const res = await agent.request({ origin: url.origin, path: basePath + path, method: 'GET', headers });
          for await (const chunk of res.body) bytes += (chunk as Buffer).length;
          if (res.statusCode !== 200) throw new Error(`baseline: ${path} answered ${res.statusCode}`);
          pages += 1;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, concurrency) }, worker));
    return { wallMs: Date.now() - started, pages, bytes };
  } finally {
    await agent.close();
  }
}
