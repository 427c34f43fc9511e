/**
 * The local socket of `evsync serve`. DuckDB lets one process hold the database file, so while `serve` runs,
 * `evsync status` and `evsync query` from another shell ask it instead: a unix socket beside the database (or, when
 * that path is too long for a socket, in the temporary folder under a name derived from it), owner-only (0600).
 *
 * One request per connection, one JSON line each way: `{"op":"status","runs":10}` or
 * `{"op":"query","sql":"...","form":"json","allowRead":["/abs/dir"]}`; the answer is `{"ok":true,"result":...}` or
 * `{"ok":false,"error":"..."}`. Queries run under the same sandbox and statement check as `evsync query`.
 */
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, unlinkSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { socketPathBeside } from '../warehouse/own-files.js';

/** Longest unix socket path Linux and macOS take (sun_path, with its NUL). */
const MAX_SOCKET_PATH = 103;
const MAX_REQUEST_BYTES = 1024 * 1024;

export function socketPathFor(db: string): string {
  const beside = socketPathBeside(db);
  if (Buffer.byteLength(beside) <= MAX_SOCKET_PATH) return beside;
  const tag = createHash('sha256').update(db).digest('hex').slice(0, 16);
  return join(tmpdir(), `evsync-${process.getuid?.() ?? 'u'}-${tag}.sock`);
}

export type DaemonRequest =
  | { op: 'status'; runs: number }
  | {
      op: 'query';
      sql: string;
      form: 'json' | 'text';
      allowRead: string[];
      /** The client's own bounds (the daemon's apply when smaller). */
      maxRows?: number;
      timeoutMs?: number;
    };

export type DaemonAnswer = { ok: true; result: unknown } | { ok: false; error: string };

function parseRequest(line: string): DaemonRequest | null {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return null;
  }
  if (!v || typeof v !== 'object') return null;
  const r = v as Record<string, unknown>;
  if (r.op === 'status') return { op: 'status', runs: typeof r.runs === 'number' && r.runs > 0 ? r.runs : 10 };
  if (r.op === 'query' && typeof r.sql === 'string') {
    const allowRead = Array.isArray(r.allowRead) ? r.allowRead.filter((d): d is string => typeof d === 'string') : [];
    const positive = (v: unknown) => (typeof v === 'number' && Number.isSafeInteger(v) && v > 0 ? v : undefined);
    const maxRows = positive(r.maxRows);
    const timeoutMs = positive(r.timeoutMs);
    return {
      op: 'query',
      sql: r.sql,
      form: r.form === 'text' ? 'text' : 'json',
      allowRead,
      ...(maxRows ? { maxRows } : {}),
      ...(timeoutMs ? { timeoutMs } : {}),
    };
  }
  return null;
}

/** Reads one line (the request or the answer) from a socket, bounded. */
function readLine(socket: Socket, max: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      const end = buffer.indexOf('\n');
      if (end >= 0) resolve(buffer.slice(0, end));
      else if (buffer.length > max) reject(new Error('message too large'));
    });
    socket.on('end', () => resolve(buffer));
    socket.on('error', reject);
  });
}

export interface DaemonSocket {
  path: string;
  close(): Promise<void>;
}

/**
 * Listens on the database's socket; `handle` answers each request. Its signal aborts when the client goes away
 * before the answer (a killed `evsync query`): the daemon stops the work instead of finishing it for nobody.
 */
export async function startDaemonSocket(
  db: string,
  handle: (request: DaemonRequest, clientGone: AbortSignal) => Promise<unknown>,
): Promise<DaemonSocket> {
  const path = socketPathFor(db);
  // A socket file left by a killed serve: nobody holds the database (this process does now), so it is stale.
  if (existsSync(path)) unlinkSync(path);
  // Open connections, so that closing never waits for a client that stopped reading (a stalled client must not
  // keep the daemon from stopping).
  const open = new Set<Socket>();
  const server: Server = createServer((socket) => {
    open.add(socket);
    socket.on('close', () => open.delete(socket));
    const gone = new AbortController();
    socket.on('close', () => gone.abort(new Error('the client went away')));
    socket.on('error', () => undefined);
    readLine(socket, MAX_REQUEST_BYTES)
      .then(async (line) => {
        const request = parseRequest(line);
        if (!request) return { ok: false, error: 'unreadable request' } satisfies DaemonAnswer;
        return { ok: true, result: await handle(request, gone.signal) } satisfies DaemonAnswer;
      })
      .catch((err: unknown): DaemonAnswer => ({ ok: false, error: err instanceof Error ? err.message : String(err) }))
      .then((answer) => {
        if (!gone.signal.aborted) socket.end(`${JSON.stringify(answer)}\n`);
      })
      .catch(() => socket.destroy());
  });
  // Owner-only from the moment it exists: the umask covers the window before the chmod.
  const previous = process.umask(0o177);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(path, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } finally {
    process.umask(previous);
  }
  chmodSync(path, 0o600);
  return {
    path,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of open) socket.destroy();
        if (existsSync(path)) unlinkSync(path);
      }),
  };
}

/**
 * Asks the serve process holding `db`, if one listens on its socket. Returns null when none does (no socket, or a
 * stale one), so the caller opens the file itself.
 */
export async function askDaemon(db: string, request: DaemonRequest): Promise<DaemonAnswer | null> {
  const path = socketPathFor(db);
  if (!existsSync(path)) return null;
  let socket: Socket;
  try {
    socket = await new Promise<Socket>((resolve, reject) => {
      const s = connect(path, () => resolve(s));
      s.once('error', reject);
    });
  } catch {
    return null;
  }
  try {
    socket.write(`${JSON.stringify(request)}\n`);
    const line = await readLine(socket, 256 * 1024 * 1024);
    const answer = JSON.parse(line) as DaemonAnswer;
    return answer && typeof answer === 'object' && 'ok' in answer ? answer : { ok: false, error: 'unreadable answer' };
  } finally {
    socket.destroy();
  }
}
