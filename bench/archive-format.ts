/**
 * Which format the archive of issue 36 (every list page's raw JSON body, append-only, compressed) should take,
 * measured: registrant pages recorded from the `large` simulator as the service sent them (the whole body, envelope
 * included, at the engine's page size), then, per candidate, in a process of its own, appended one page at a time
 * as the live path would (each page durable before the next: its own commit or fsync) and read back in order
 * (decompress + JSON.parse).
 *
 * Figures per candidate: archive bytes against the raw JSON bytes; CPU microseconds per row appended (the whole
 * process: DuckDB's threads included, DuckDB on one thread as the loader runs it); wall time per page's commit or
 * fsync; CPU per row read back; peak RSS above the process's baseline (the recorded texts it holds).
 *
 * Run: `npx tsx bench/archive-format.ts [--pages N] [--per-page N] [--only a,b] [--recording FILE] [--json FILE]`:
 * N pages (default 200) at the engine's page size for registrants (1000) unless `--per-page`; `--recording` keeps the
 * recorded pages in FILE (or reuses them); writes bench/results/archive-format.json unless `--json`.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import {
  closeSync,
  copyFileSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, brotliDecompressSync, constants, gunzipSync, gzipSync } from 'node:zlib';
import { type DuckDBBlobValue, type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { customFieldsFromDefinitions, getStream, resolveStream } from '../connectors/index.js';
import { requestFields } from '../schemas/columns.js';
import { startSimulator } from '../src/simulator/index.js';
import { round, tempDir } from './lib.js';
import { machineInfo } from './machine.js';
import { simulatorClient } from './sim-client.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const SELF = fileURLToPath(import.meta.url);
const RESULT = join(HERE, 'results', 'archive-format.json');

/** One archived page: what the issue asks the archive to keep beside the body. */
interface PageMeta {
  seq: number;
  stream: string;
  path: string;
  fetchedAt: string;
  run: string;
  account: string;
  rows: number;
}

interface Recorded {
  meta: PageMeta[];
  texts: string[];
}

// ---------------------------------------------------------------------------------------------------------------
// Recording: raw bodies, as the service answered them.

async function recordPages(pages: number, perPage: number | undefined): Promise<Recorded> {
  const sim = await startSimulator({ size: 'large', rateLimit: { credits: 10_000_000, windowSeconds: 600 } });
  const account = sim.accounts[0]!;
  const client = simulatorClient(sim, {
    rateLimit: { limit: 10_000_000, windowMs: 600_000 },
  });
  try {
    // A token of our own, for fetching each page's body again as text (the client hands out parsed items).
    const basic = Buffer.from(
      `${encodeURIComponent(account.clientId)}:${encodeURIComponent(account.clientSecret)}`,
    ).toString('base64');
    const tokenAnswer = await fetch(`${sim.baseUrl}/oauth2/token`, {
      method: 'POST',
      headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials',
    });
    const { access_token: token } = (await tokenAnswer.json()) as { access_token: string };
    const questions = sim.truth('event_questions').records;
    const stream = resolveStream(getStream('registrants'), { customFields: customFieldsFromDefinitions(questions) });
    const meta: PageMeta[] = [];
    const texts: string[] = [];
    for (const event of sim.truth('events').records) {
      const eventId = Number(event.id);
      const own = customFieldsFromDefinitions(questions.filter((q) => Number(q.event_id) === eventId));
      for await (const page of client.keyset<{ id: number }>('/registrants', {
        params: { event_id: eventId },
        fields: requestFields(
          stream,
          own.map((f) => f.name),
        ),
        perPage: perPage ?? stream.maxPerPage,
      })) {
        if (page.items.length === 0) break;
        const answer = await fetch(`${sim.baseUrl}${page.path}`, { headers: { authorization: `Bearer ${token}` } });
        const text = await answer.text();
        meta.push({
          seq: meta.length,
          stream: 'registrants',
          path: page.path,
          fetchedAt: new Date().toISOString(),
          run: 'run-0001',
          account: account.clientId,
          rows: page.items.length,
        });
        texts.push(text);
        if (texts.length >= pages) return { meta, texts };
      }
    }
    return { meta, texts };
  } finally {
    await client.close();
    await sim.close();
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Candidates.

type Codec = 'none' | 'gzip1' | 'gzip6' | 'brotli4';

function compress(codec: Codec, text: string): Buffer {
  const bytes = Buffer.from(text, 'utf8');
  switch (codec) {
    case 'none':
      return bytes;
    case 'gzip1':
      return gzipSync(bytes, { level: 1 });
    case 'gzip6':
      return gzipSync(bytes, { level: 6 });
    case 'brotli4':
      return brotliCompressSync(bytes, {
        params: { [constants.BROTLI_PARAM_QUALITY]: 4, [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length },
      });
  }
}

function decompress(codec: Codec, bytes: Uint8Array): string {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  switch (codec) {
    case 'none':
      return buf.toString('utf8');
    case 'gzip1':
    case 'gzip6':
      return gunzipSync(buf).toString('utf8');
    case 'brotli4':
      return brotliDecompressSync(buf).toString('utf8');
  }
}

interface Candidate {
  name: string;
  describe: string;
  /** Creates the archive in `dir`. */
  open(dir: string): Promise<Archive>;
  /** False when it gives back the records but not the body's exact text. */
  exact?: boolean;
}

interface Archive {
  /**
   * Appends one page; durable when it resolves. `text` is the body as the client decoded it, `bytes` the body as it
   * came off the socket (a client that keeps the received bytes hands them over without encoding the text again).
   */
  append(meta: PageMeta, text: string, bytes: Buffer): Promise<void>;
  /** End of the appending phase (a final checkpoint or roll-up), counted in the append cost. */
  finish(): Promise<void>;
  /** Every page's text, in order. */
  read(each: (text: string) => void): Promise<void>;
  bytes(): number;
  close(): Promise<void>;
  /** Extra figures of the candidate (roll-up cost, ...). */
  extra: Record<string, unknown>;
}

function dirBytes(dir: string): number {
  let sum = 0;
  for (const f of readdirSync(dir)) sum += statSync(join(dir, f)).size;
  return sum;
}

/**
 * DuckDB on one thread. `storageVersion`: the file is attached with that storage version; a file created without one
 * (as the warehouse's is) is written in the oldest format 1.5 can still read, where strings are never compressed.
 */
async function duck(file: string, storageVersion?: string): Promise<{ instance: DuckDBInstance; c: DuckDBConnection }> {
  if (!storageVersion) {
    const instance = await DuckDBInstance.create(file, { threads: '1' });
    return { instance, c: await instance.connect() };
  }
  const instance = await DuckDBInstance.create(':memory:', { threads: '1' });
  const c = await instance.connect();
  await c.run(`ATTACH '${file}' AS archive (STORAGE_VERSION '${storageVersion}')`);
  await c.run('USE archive');
  return { instance, c };
}

/** DuckDB file of one row per page; `bodyType` the body column's declaration; `codec` applied in Node before. */
function duckTable(name: string, describe: string, bodyType: string, codec: Codec, storageVersion?: string): Candidate {
  const blob = bodyType.startsWith('BLOB');
  return {
    name,
    describe,
    async open(dir) {
      const file = join(dir, 'archive.duckdb');
      const { instance, c } = await duck(file, storageVersion);
      await c.run(
        `CREATE TABLE pages (seq BIGINT, stream VARCHAR, path VARCHAR, fetched_at TIMESTAMPTZ, run VARCHAR, account VARCHAR, rows INTEGER, body ${bodyType})`,
      );
      const insert = await c.prepare('INSERT INTO pages VALUES ($1, $2, $3, $4::TIMESTAMPTZ, $5, $6, $7, $8)');
      const extra: Record<string, unknown> = {};
      return {
        extra,
        async append(m, text) {
          const body = compress(codec, text);
          insert.bindBigInt(1, BigInt(m.seq));
          insert.bindVarchar(2, m.stream);
          insert.bindVarchar(3, m.path);
          insert.bindVarchar(4, m.fetchedAt);
          insert.bindVarchar(5, m.run);
          insert.bindVarchar(6, m.account);
          insert.bindInteger(7, m.rows);
          if (blob) insert.bindBlob(8, body);
          else insert.bindVarchar(8, text);
          await insert.run(); // autocommit: the page's own transaction, WAL fsynced at its commit
        },
        async finish() {
          await c.run('CHECKPOINT');
          const info = await c.runAndReadAll(
            "SELECT string_agg(DISTINCT compression, ',') AS how FROM pragma_storage_info('pages') WHERE column_name = 'body'",
          );
          extra.bodyCompressionAtCheckpoint = info.getRowObjectsJS()[0]?.how ?? null;
        },
        async read(each) {
          const result = await c.stream('SELECT body FROM pages ORDER BY seq');
          for (;;) {
            const chunk = await result.fetchChunk();
            if (!chunk || chunk.rowCount === 0) break;
            const col = chunk.getColumnVector(0);
            for (let i = 0; i < chunk.rowCount; i++) {
              const v = col.getItem(i);
              each(blob ? decompress(codec, (v as DuckDBBlobValue).bytes) : (v as string));
            }
          }
        },
        bytes: () => dirBytes(dir),
        async close() {
          insert.destroySync();
          c.closeSync();
          instance.closeSync();
        },
      };
    },
  };
}

/**
 * Append-only segment files: per page a length-prefixed record (meta JSON, body compressed in Node), fsynced. No
 * roll-up: the segments are the archive.
 */
function segments(name: string, describe: string, codec: Codec): Candidate {
  return {
    name,
    describe,
    async open(dir) {
      const file = join(dir, 'seg-000000.evsa');
      let fd = -1;
      return {
        extra: {},
        async append(m, text) {
          if (fd < 0) fd = openSync(file, 'a');
          const metaBytes = Buffer.from(JSON.stringify(m), 'utf8');
          const body = compress(codec, text);
          const head = Buffer.alloc(8);
          head.writeUInt32LE(metaBytes.length, 0);
          head.writeUInt32LE(body.length, 4);
          writeSync(fd, Buffer.concat([head, metaBytes, body]));
          fsyncSync(fd);
        },
        async finish() {
          if (fd >= 0) closeSync(fd);
          fd = -1;
        },
        async read(each) {
          const buf = readFileSync(file);
          for (let at = 0; at < buf.length; ) {
            const metaLen = buf.readUInt32LE(at);
            const bodyLen = buf.readUInt32LE(at + 4);
            JSON.parse(buf.toString('utf8', at + 8, at + 8 + metaLen));
            each(decompress(codec, buf.subarray(at + 8 + metaLen, at + 8 + metaLen + bodyLen)));
            at += 8 + metaLen + bodyLen;
          }
        },
        bytes: () => dirBytes(dir),
        async close() {},
      };
    },
  };
}

/** Pages per Parquet row group: DuckDB holds a row group's bodies while it writes them (~1.4 MB a page). */
const ROW_GROUP_PAGES = 8;

const META_COLUMNS =
  "{seq: 'BIGINT', stream: 'VARCHAR', path: 'VARCHAR', fetchedAt: 'TIMESTAMPTZ', run: 'VARCHAR', account: 'VARCHAR', rows: 'INTEGER'}";

/**
 * The proposal: a spool of raw bodies, each page's bytes in a file of its own (written, fsynced, the directory
 * fsynced) and its metadata a line of `meta.jsonl` (fsynced): no compression on the live path. Every `k` pages (and
 * at the end) DuckDB reads the spool itself (read_blob: the bodies never cross into JavaScript again) and writes one
 * Parquet file of (seq, body) with zstd at `level` and no dictionary (a dictionary of 1 MB strings is all cost, no
 * gain), and a small Parquet file of the pages' metadata beside it; then the spool is emptied. `k` 0: no roll-up (the floor of the live path: the raw bytes made durable).
 */
function spool(name: string, describe: string, k: number, level: number): Candidate {
  return {
    name,
    describe,
    async open(dir) {
      const extra = { rollups: 0, rollupCpuUs: 0, rollupWallMs: 0, liveCpuUs: 0 };
      const spoolDir = join(dir, 'spool');
      mkdirSync(spoolDir, { recursive: true });
      const { instance, c } = await duck(':memory:');
      // DuckDB keeps the Parquet bytes it read in a cache of its own; a rebuild reads each once.
      await c.run('SET enable_external_file_cache = false');
      let metaFd = openSync(join(spoolDir, 'meta.jsonl'), 'a');
      let dirFd = openSync(spoolDir, 'r');
      let first = 0;
      let inSpool = 0;
      const bodyPath = (seq: number) => join(spoolDir, `${String(seq).padStart(9, '0')}.json`);
      const rollUp = async () => {
        const cpu = process.cpuUsage();
        const t0 = performance.now();
        closeSync(metaFd);
        const target = join(dir, `pages-${String(first).padStart(9, '0')}.parquet`);
        const tmp = `${target}.tmp`;
        const metaTarget = target.replace(/\.parquet$/, '.meta.parquet');
        const metaTmp = `${metaTarget}.tmp`;
        // The bodies alone (seq from the file name): joining the metadata in the same COPY made DuckDB hold every body of
        // the roll-up in a hash table (+100 MB RSS, +2.5 us a row); the metadata goes to a small file beside it.
        await c.run(
          `COPY (
             SELECT CAST(regexp_extract(filename, '(\\d+)\\.json$', 1) AS BIGINT) AS seq, content AS body
             FROM read_blob('${join(spoolDir, '*.json')}')
           ) TO '${tmp}' (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL ${level}, DICTIONARY_SIZE_LIMIT 0, ROW_GROUP_SIZE ${ROW_GROUP_PAGES})`,
        );
        await c.run(
          `COPY (
             SELECT seq, stream, path, fetchedAt AS fetched_at, run, account, rows
             FROM read_json('${join(spoolDir, 'meta.jsonl')}', format = 'newline_delimited', columns = ${META_COLUMNS})
           ) TO '${metaTmp}' (FORMAT parquet, COMPRESSION zstd)`,
        );
        for (const f of [metaTmp, tmp]) {
          const fd = openSync(f, 'r');
          fsyncSync(fd);
          closeSync(fd);
        }
        // Parquet in place (renamed, the directory fsynced; the bodies last: they make the roll-up whole), then the
        // spool emptied: a kill between the two leaves pages in both, which the next roll-up or a reader drops by seq.
        renameSync(metaTmp, metaTarget);
        renameSync(tmp, target);
        const top = openSync(dir, 'r');
        fsyncSync(top);
        closeSync(top);
        for (const f of readdirSync(spoolDir)) rmSync(join(spoolDir, f));
        metaFd = openSync(join(spoolDir, 'meta.jsonl'), 'a');
        const used = process.cpuUsage(cpu);
        extra.rollups += 1;
        extra.rollupCpuUs += used.user + used.system;
        extra.rollupWallMs += performance.now() - t0;
        inSpool = 0;
      };
      return {
        extra,
        async append(m, _text, bytes) {
          const cpu = cpuNow();
          if (inSpool === 0) first = m.seq;
          const fd = openSync(bodyPath(m.seq), 'wx');
          writeSync(fd, bytes);
          fsyncSync(fd);
          closeSync(fd);
          writeSync(metaFd, `${JSON.stringify(m)}\n`);
          fsyncSync(metaFd);
          fsyncSync(dirFd);
          inSpool++;
          extra.liveCpuUs += cpuNow() - cpu;
          if (k > 0 && inSpool >= k) await rollUp();
        },
        async finish() {
          if (k > 0 && inSpool > 0) await rollUp();
        },
        async read(each) {
          for (const f of readdirSync(dir).sort()) {
            if (!f.endsWith('.parquet') || f.endsWith('.meta.parquet')) continue;
            // A row group at a time (its seq range, pruned by the row groups' statistics): a chunk of DuckDB's holds up
            // to 2048 rows, so one query over the file handed over every body of it at once (+270 MB RSS at 50 pages).
            const file = join(dir, f);
            const seqs = (
              await c.runAndReadAll(`SELECT seq FROM read_parquet('${file}') ORDER BY seq`)
            ).getColumnsJS()[0] as bigint[];
            for (let g = 0; g < seqs.length; g += ROW_GROUP_PAGES) {
              const from = seqs[g]!;
              const to = seqs[Math.min(g + ROW_GROUP_PAGES, seqs.length) - 1]!;
              // As BLOB: DuckDB's BLOB-to-VARCHAR cast escapes byte by byte; Node decodes the bytes faster.
              const result = await c.stream(
                `SELECT body FROM read_parquet('${file}') WHERE seq BETWEEN ${from} AND ${to} ORDER BY seq`,
              );
              for (;;) {
                const chunk = await result.fetchChunk();
                if (!chunk || chunk.rowCount === 0) break;
                const col = chunk.getColumnVector(0);
                for (let i = 0; i < chunk.rowCount; i++) {
                  each(decompress('none', (col.getItem(i) as DuckDBBlobValue).bytes));
                }
              }
            }
          }
          if (k === 0) {
            for (const f of readdirSync(spoolDir).sort()) {
              if (f.endsWith('.json')) each(readFileSync(join(spoolDir, f), 'utf8'));
            }
          }
        },
        bytes: () => dirBytes(dir) + dirBytes(spoolDir),
        async close() {
          closeSync(metaFd);
          closeSync(dirFd);
          dirFd = -1;
          metaFd = -1;
          c.closeSync();
          instance.closeSync();
        },
      };
    },
  };
}

/**
 * The page's records as rows (one VARCHAR of each record's JSON) in a DuckDB table whose column asks for zstd:
 * whether DuckDB's storage compresses strings of a record's size. Its append cost includes a JSON.parse of the body
 * and a JSON.stringify per record (the live path parses the body anyway, so that part is overstated).
 */
function duckRecords(name: string, describe: string): Candidate {
  return {
    name,
    describe,
    exact: false,
    async open(dir) {
      const { instance, c } = await duck(join(dir, 'archive.duckdb'));
      await c.run('CREATE TABLE records (seq BIGINT, ord INTEGER, record VARCHAR USING COMPRESSION zstd)');
      const extra: Record<string, unknown> = {};
      return {
        extra,
        async append(m, text) {
          const records = (JSON.parse(text) as { items: unknown[] }).items.map((r) => JSON.stringify(r));
          const appender = await c.createAppender('records');
          records.forEach((r, i) => {
            appender.appendBigInt(BigInt(m.seq));
            appender.appendInteger(i);
            appender.appendVarchar(r);
            appender.endRow();
          });
          appender.closeSync(); // flushes: the page's own commit
        },
        async finish() {
          await c.run('CHECKPOINT');
          const info = await c.runAndReadAll(
            "SELECT string_agg(DISTINCT compression, ',') AS how FROM pragma_storage_info('records') WHERE column_name = 'record'",
          );
          extra.recordCompressionAtCheckpoint = info.getRowObjectsJS()[0]?.how ?? null;
        },
        async read(each) {
          const result = await c.stream('SELECT seq, record FROM records ORDER BY seq, ord');
          let seq = -1n;
          let page: string[] = [];
          const flush = () => {
            if (page.length > 0) each(`{"items":[${page.join(',')}]}`);
            page = [];
          };
          for (;;) {
            const chunk = await result.fetchChunk();
            if (!chunk || chunk.rowCount === 0) break;
            const seqs = chunk.getColumnVector(0);
            const recs = chunk.getColumnVector(1);
            for (let i = 0; i < chunk.rowCount; i++) {
              const s = seqs.getItem(i) as bigint;
              if (s !== seq) flush();
              seq = s;
              page.push(recs.getItem(i) as string);
            }
          }
          flush();
        },
        bytes: () => dirBytes(dir),
        async close() {
          c.closeSync();
          instance.closeSync();
        },
      };
    },
  };
}

const CANDIDATES: Candidate[] = [
  duckTable('duck-varchar', 'DuckDB table, body VARCHAR, default compression', 'VARCHAR', 'none'),
  duckTable(
    'duck-varchar-zstd',
    'DuckDB table, body VARCHAR USING COMPRESSION zstd',
    'VARCHAR USING COMPRESSION zstd',
    'none',
  ),
  duckTable(
    'duck-varchar-zstd-v1.5',
    'DuckDB table, body VARCHAR USING COMPRESSION zstd, file in storage version v1.5.0',
    'VARCHAR USING COMPRESSION zstd',
    'none',
    'v1.5.0',
  ),
  duckTable('duck-blob-gzip1', 'DuckDB table, body BLOB gzip -1 in Node', 'BLOB', 'gzip1'),
  duckTable('duck-blob-gzip6', 'DuckDB table, body BLOB gzip -6 in Node', 'BLOB', 'gzip6'),
  duckTable('duck-blob-brotli4', 'DuckDB table, body BLOB brotli q4 in Node', 'BLOB', 'brotli4'),
  segments('seg-gzip1', 'segment file, gzip -1 per page, fsync per page', 'gzip1'),
  segments('seg-brotli4', 'segment file, brotli q4 per page, fsync per page', 'brotli4'),
  spool('spool-raw', 'spool of raw bodies, fsync per page, no roll-up (the floor)', 0, 1),
  spool('spool-parquet-z1', 'spool of raw bodies, rolled into Parquet zstd(1) every 50 pages', 50, 1),
  spool('spool-parquet-z3', 'spool of raw bodies, rolled into Parquet zstd(3) every 50 pages', 50, 3),
  spool('spool-parquet-z1-k10', 'spool of raw bodies, rolled into Parquet zstd(1) every 10 pages', 10, 1),
  duckRecords('duck-records-zstd', 'DuckDB table, one row per record, VARCHAR USING COMPRESSION zstd'),
];

// ---------------------------------------------------------------------------------------------------------------
// The measured child: one candidate.

interface CandidateReport {
  name: string;
  describe: string;
  pages: number;
  rows: number;
  rawBytes: number;
  archiveBytes: number;
  percentOfRaw: number;
  appendCpuUsPerRow: number;
  appendCpuUsPerPage: number;
  /** Wall ms per page append (the commit or fsync included), median and p95. */
  appendWallMsMedian: number;
  appendWallMsP95: number;
  finishCpuMs: number;
  readCpuUsPerRow: number;
  readDecompressUsPerRow: number;
  readParseUsPerRow: number;
  readWallMs: number;
  baselineRssMb: number;
  /** Highest RSS sampled while appending (finish included), and while reading back. */
  peakAppendRssMb: number;
  peakReadRssMb: number;
  extra: Record<string, unknown>;
}

/** The recording on disk: the pages' metadata on the first line, then each page's body as a line of its own. */
function writeRecorded(file: string, rec: Recorded): void {
  if (rec.texts.some((t) => t.includes('\n'))) throw new Error('a body holds a newline: the recording cannot be lines');
  writeFileSync(file, [JSON.stringify(rec.meta), ...rec.texts].join('\n'));
}

/** The metadata and each body's bytes (the texts are decoded a page at a time, so the measured process holds the bytes only). */
function readRecorded(file: string): { meta: PageMeta[]; bodies: Buffer[] } {
  const all = readFileSync(file);
  const lines: Buffer[] = [];
  for (let at = 0; at < all.length; ) {
    const end = all.indexOf(10, at);
    const stop = end < 0 ? all.length : end;
    lines.push(all.subarray(at, stop));
    at = stop + 1;
  }
  const [head, ...bodies] = lines;
  return { meta: JSON.parse(head?.toString('utf8') ?? '[]') as PageMeta[], bodies };
}

const cpuNow = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
const mbOf = (b: number) => round(b / 1e6, 1);

async function runChild(name: string, recordingFile: string, dir: string): Promise<CandidateReport> {
  const candidate = CANDIDATES.find((c) => c.name === name);
  if (!candidate) throw new Error(`no candidate ${name}`);
  const { meta, bodies } = readRecorded(recordingFile);
  const rows = meta.reduce((s, m) => s + m.rows, 0);
  const rawBytes = bodies.reduce((s, b) => s + b.length, 0);
  global.gc?.();
  const baseline = process.memoryUsage.rss();
  let peak = baseline;
  const sample = () => {
    const r = process.memoryUsage.rss();
    if (r > peak) peak = r;
  };
  // Each page's text decoded before its append is timed (the live path has it already); what encoding a text to
  // bytes would cost, for a client that keeps only the text, is said apart.
  let utf8EncodeUs = 0;
  mkdirSync(dir, { recursive: true });
  const archive = await candidate.open(dir);
  const walls: number[] = [];
  let appendCpu = 0;
  for (let i = 0; i < bodies.length; i++) {
    const text = bodies[i]!.toString('utf8');
    const e0 = cpuNow();
    Buffer.from(text, 'utf8');
    utf8EncodeUs += cpuNow() - e0;
    const c0 = cpuNow();
    const t = performance.now();
    await archive.append(meta[i]!, text, bodies[i]!);
    walls.push(performance.now() - t);
    appendCpu += cpuNow() - c0;
    sample();
  }
  const utf8EncodeUsPerRow = round(utf8EncodeUs / rows, 2);
  const cpuFinish = cpuNow();
  await archive.finish();
  const finishCpu = cpuNow() - cpuFinish;
  appendCpu += finishCpu;
  sample();
  const archiveBytes = archive.bytes();
  const appendPeak = peak;
  global.gc?.();
  peak = process.memoryUsage.rss();
  // Read back: decompress (and DuckDB's scan) then JSON.parse, timed apart.
  let parseUs = 0;
  let checkUs = 0;
  let readRows = 0;
  const r0 = cpuNow();
  const w0 = performance.now();
  let readPages = 0;
  let mismatch = -1;
  await archive.read((text) => {
    const p = cpuNow();
    const body = JSON.parse(text) as { items: unknown[] };
    const q = cpuNow();
    parseUs += q - p;
    readRows += body.items.length;
    // In order and byte for byte; the check's CPU is taken out of the reading's.
    if (candidate.exact !== false && mismatch < 0 && text !== bodies[readPages]?.toString('utf8')) mismatch = readPages;
    readPages++;
    sample();
    checkUs += cpuNow() - q;
  });
  const readCpu = cpuNow() - r0 - checkUs;
  const readWallMs = performance.now() - w0;
  sample();
  if (readRows !== rows) throw new Error(`${name}: read back ${readRows} rows, appended ${rows}`);
  if (mismatch >= 0) throw new Error(`${name}: page ${mismatch} read back is not the page appended`);
  await archive.close();
  walls.sort((a, b) => a - b);
  const extra: Record<string, unknown> = { ...archive.extra, utf8EncodeUsPerRow };
  if (typeof extra.rollupCpuUs === 'number') extra.rollupCpuUsPerRow = round(extra.rollupCpuUs / rows, 2);
  if (typeof extra.liveCpuUs === 'number') extra.liveCpuUsPerRow = round(extra.liveCpuUs / rows, 2);
  return {
    name,
    describe: candidate.describe,
    pages: bodies.length,
    rows,
    rawBytes,
    archiveBytes,
    percentOfRaw: round((100 * archiveBytes) / rawBytes, 2),
    appendCpuUsPerRow: round(appendCpu / rows, 2),
    appendCpuUsPerPage: round(appendCpu / bodies.length, 0),
    appendWallMsMedian: round(walls[Math.floor(walls.length / 2)] ?? 0, 2),
    appendWallMsP95: round(walls[Math.floor(walls.length * 0.95)] ?? 0, 2),
    finishCpuMs: round(finishCpu / 1000, 1),
    readCpuUsPerRow: round(readCpu / rows, 2),
    readDecompressUsPerRow: round((readCpu - parseUs) / rows, 2),
    readParseUsPerRow: round(parseUs / rows, 2),
    readWallMs: round(readWallMs, 0),
    baselineRssMb: mbOf(baseline),
    peakAppendRssMb: mbOf(appendPeak),
    peakReadRssMb: mbOf(peak),
    extra,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The parent: record, run each candidate in a child, measure the copy cost of a bigger warehouse, print, write.

async function child(args: string[]): Promise<CandidateReport> {
  const p = spawn(process.execPath, ['--import', 'tsx', '--expose-gc', SELF, ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  p.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const [code] = await once(p, 'exit');
  const line = out.trim().split('\n').pop() ?? '';
  if (code !== 0 || !line.startsWith('{')) throw new Error(`child ${args.join(' ')} exited with ${String(code)}`);
  return JSON.parse(line) as CandidateReport;
}

/** Wall and CPU of copying a file of `bytes` (the daemon's query copy of the warehouse copies the whole file). */
function copyCost(dir: string, bytes: number): { msPer100Mb: number } {
  const from = join(dir, 'copy-from');
  const to = join(dir, 'copy-to');
  const chunk = Buffer.alloc(1 << 20, 7);
  const fd = openSync(from, 'w');
  for (let n = 0; n < bytes; n += chunk.length) writeSync(fd, chunk);
  fsyncSync(fd);
  closeSync(fd);
  const t = performance.now();
  copyFileSync(from, to);
  const ms = performance.now() - t;
  rmSync(from);
  rmSync(to);
  return { msPer100Mb: round((ms * 100e6) / bytes, 1) };
}

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

async function main(): Promise<void> {
  const childOf = arg('--child');
  if (childOf) {
    const report = await runChild(childOf, arg('--recording')!, arg('--dir')!);
    process.stdout.write(`${JSON.stringify(report)}\n`);
    return;
  }
  const pages = Number(arg('--pages') ?? 200);
  const tmp = tempDir('evsync-archive-');
  try {
    const started = Date.now();
    // `--recording FILE`: reuse the pages recorded in FILE (or record them there), to compare runs on the same pages.
    const kept = arg('--recording');
    const recordingFile = kept ?? tmp.path('recording.json');
    if (!kept || !existsSync(kept)) {
      process.stderr.write(`archive-format: recording ${pages} registrant pages from the large simulator\n`);
      const perPage = arg('--per-page');
      writeRecorded(recordingFile, await recordPages(pages, perPage ? Number(perPage) : undefined));
    }
    const perPage = Math.max(...readRecorded(recordingFile).meta.map((m) => m.rows));
    const reports: CandidateReport[] = [];
    // `--only a,b`: just these candidates (the result file then holds only them).
    const only = arg('--only')?.split(',');
    for (const c of CANDIDATES.filter((x) => !only || only.includes(x.name))) {
      process.stderr.write(`archive-format: ${c.name}\n`);
      const dir = tmp.path(c.name);
      reports.push(await child(['--child', c.name, '--recording', recordingFile, '--dir', dir]));
      rmSync(dir, { recursive: true, force: true });
    }
    const copy = copyCost(tmp.dir, 200e6);
    const first = reports[0]!;
    const result = {
      machine: machineInfo(),
      durationMs: Date.now() - started,
      pages: first.pages,
      rows: first.rows,
      rowsPerPage: perPage,
      rawBytes: first.rawBytes,
      rawBytesPerRow: round(first.rawBytes / first.rows, 0),
      liveLoadCpuUsPerRow: 31.6,
      targets: { percentOfRaw: 20, appendCpuUsPerRow: round(31.6 * 0.1, 2) },
      fileCopy: copy,
      candidates: reports,
    };
    const out = arg('--json') ?? RESULT;
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
    const head = [
      'candidate',
      '% raw',
      'append us/row',
      '(live+roll-up)',
      'append ms p50/p95',
      'read us/row (dec+parse)',
      'RSS MB: base, +append, +read',
    ];
    const split = (r: CandidateReport) =>
      typeof r.extra.liveCpuUsPerRow === 'number'
        ? `${String(r.extra.liveCpuUsPerRow)}+${String(r.extra.rollupCpuUsPerRow)}`
        : typeof r.extra.rollupCpuUsPerRow === 'number' && r.extra.rollupCpuUsPerRow > 0
          ? `roll-up ${String(r.extra.rollupCpuUsPerRow)}`
          : '';
    const lines = reports.map((r) => [
      r.name,
      String(r.percentOfRaw),
      String(r.appendCpuUsPerRow),
      split(r),
      `${r.appendWallMsMedian}/${r.appendWallMsP95}`,
      `${r.readCpuUsPerRow} (${r.readDecompressUsPerRow}+${r.readParseUsPerRow})`,
      `${r.baselineRssMb}, +${round(r.peakAppendRssMb - r.baselineRssMb, 1)}, +${round(r.peakReadRssMb - r.baselineRssMb, 1)}`,
    ]);
    const widths = head.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] ?? '').length)));
    const fmt = (l: string[]) => l.map((x, i) => x.padEnd(widths[i] ?? 0)).join('  ');
    console.log(
      `${first.pages} pages, ${first.rows} rows (${perPage} a page), raw ${mbOf(first.rawBytes)} MB; targets: <= 20% of raw, <= ${result.targets.appendCpuUsPerRow} us/row appended`,
    );
    console.log(fmt(head));
    for (const l of lines) console.log(fmt(l));
    console.log(`file copy: ${copy.msPer100Mb} ms per 100 MB`);
    console.log(`written ${out}`);
  } finally {
    tmp.remove();
  }
}

await main();
