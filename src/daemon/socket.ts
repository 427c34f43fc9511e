/**
 * The local socket of the process holding the warehouse. DuckDB lets one process hold the database file, so while
 * a daemon (`serve`, `schedule`) or a one-shot `sync`/`backfill` runs, `evsync status` and `evsync query` from
 * another shell ask it instead: a unix socket beside the database (or, when that path is too long for a socket, in
 * the temporary folder under a name derived from it), owner-only (0600). The database's path is resolved first
 * (symbolic links, relative parts), where the holder listens and where clients ask alike: one file has one socket
 * whatever path names it.
 *
 * One request per connection, one JSON line each way (the messages: socket-protocol.ts). A daemon answers status
 * and queries (under the same sandbox and statement check as `evsync query`); a one-shot run answers status with
 * its progress and refuses queries.
 */
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, realpathSync, unlinkSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { socketPathBeside } from '../warehouse/copies/own-files.js';
import { QUERY_RESULT_MAX_CHARS } from './query-settings.js';
import { type DaemonAnswer, type DaemonRequest, parseRequest } from './socket-protocol.js';

/** Longest unix socket path Linux and macOS take (sun_path, with its NUL). */
const MAX_SOCKET_PATH = 103;
const MAX_REQUEST_BYTES = 1024 * 1024;
/**
 * The longest answer a client reads, in characters: the largest query result the daemon returns, with room for
 * the answer's envelope and the result's column names and types (not counted in the result's bound).
 */
export const MAX_ANSWER_CHARS = QUERY_RESULT_MAX_CHARS + 4 * 1024 * 1024;

/**
 * The database file's real path: symbolic links resolved, so that `--db` through a link reaches the daemon that
 * opened the file by another name. The file exists while a daemon holds it; when it does not, its folder is
 * resolved instead (the file would be created there), and failing that the absolute path stands.
 */
function realDatabasePath(db: string): string {
  const full = resolve(db);
  try {
    return realpathSync(full);
  } catch {
    try {
      return join(realpathSync(dirname(full)), basename(full));
    } catch {
      return full;
    }
  }
}

export function socketPathFor(db: string): string {
  const real = realDatabasePath(db);
  const beside = socketPathBeside(real);
  if (Buffer.byteLength(beside) <= MAX_SOCKET_PATH) return beside;
  const tag = createHash('sha256').update(real).digest('hex').slice(0, 16);
  return join(tmpdir(), `evsync-${process.getuid?.() ?? 'u'}-${tag}.sock`);
}

/**
 * Reads one line (the request or the answer) from a socket, at most `max` characters. Chunks are kept apart and
 * joined once: appending each to one string and searching it for the line's end copied the whole answer again at
 * every chunk (a 64 MB answer arrives in about a thousand).
 */
function readLine(socket: Socket, max: number, what: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: string[] = [];
    let length = 0;
    let done = false;
    const finish = (last: string) => {
      done = true;
      if (length + last.length > max) reject(new Error(`${what} larger than ${Math.round(max / 1048576)} MB`));
      else resolve(chunks.join('') + last);
    };
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      if (done) return;
      const end = chunk.indexOf('\n');
      if (end >= 0) return finish(chunk.slice(0, end));
      chunks.push(chunk);
      length += chunk.length;
      if (length > max) finish('');
    });
    socket.on('end', () => {
      if (!done) finish('');
    });
    socket.on('error', reject);
  });
}

/** The answer as its line; one its client would refuse to read (past MAX_ANSWER_CHARS) is refused here instead. */
function answerLine(answer: DaemonAnswer): string {
  const line = JSON.stringify(answer);
  if (line.length <= MAX_ANSWER_CHARS) return line;
  const refused: DaemonAnswer = {
    ok: false,
    error: `the answer is larger than ${Math.round(MAX_ANSWER_CHARS / 1048576)} MB (its column names and types too): select fewer columns, or write it with \`evsync export\` (Parquet) instead`,
  };
  return JSON.stringify(refused);
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
    readLine(socket, MAX_REQUEST_BYTES, 'the request is')
      .then(async (line) => {
        const request = parseRequest(line);
        if (!request) return { ok: false, error: 'unreadable request' } satisfies DaemonAnswer;
        return { ok: true, result: await handle(request, gone.signal) } satisfies DaemonAnswer;
      })
      .catch((err: unknown): DaemonAnswer => ({ ok: false, error: err instanceof Error ? err.message : String(err) }))
      .then((answer) => {
        if (!gone.signal.aborted) socket.end(`${answerLine(answer)}\n`);
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
    const line = await readLine(socket, MAX_ANSWER_CHARS, "the daemon's answer is");
    const answer = JSON.parse(line) as DaemonAnswer;
    return answer && typeof answer === 'object' && 'ok' in answer ? answer : { ok: false, error: 'unreadable answer' };
  } finally {
    socket.destroy();
  }
}
