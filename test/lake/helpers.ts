/**
 * What the lake tests share: a warehouse with events and registrants spread over event partitions, a config file
 * pointing the lake at the loopback S3 server, and an independent reader: its own S3 client downloads every object
 * under a prefix to a temp folder, where DuckDB's read_parquet reads them back (never evsync's code).
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll } from 'vitest';
import { type LoopbackS3, startLoopbackS3 } from '../../bench/s3-loopback.js';
import { openS3Store } from '../../src/outputs/lake/s3-store.js';
import type { ObjectStore } from '../../src/outputs/lake/store.js';
import type { Manifest } from '../../src/warehouse/copies/export-manifest.js';
import { Warehouse } from '../../src/warehouse/index.js';
import { tempDir } from '../cli/helpers.js';
import { accountScope, eventScope, events, page, registrants } from '../warehouse/helpers.js';

export const BUCKET = 'lake';
/** Recognisable, so a test can prove it never reaches output, objects or files. */
export const SECRET = 'evsync-test-aws-secret-9f3b2c71d0';

export function s3Env(): Record<string, string> {
  return { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: SECRET };
}

export function lakeConfig(endpoint: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { lake: { endpoint, region: 'us-east-1', forcePathStyle: true, ...extra } };
}

/** What a lake test file works against: the loopback S3 server, a reader's client of it, a temporary folder. */
export interface TestLake {
  /** The loopback S3 server, with the bucket `BUCKET`. */
  s3: LoopbackS3;
  /** An independent reader's client of it (`testClient`). */
  client: S3Client;
  /** A folder of the file's own, removed after its tests. */
  dir: string;
}

/**
 * Starts a `TestLake` before the file's tests (its fields are set from then on) and closes the client and the
 * server and removes the folder after them.
 */
export function useTestLake(tempPrefix: string): TestLake {
  const lake = {} as TestLake;
  let cleanup: (() => void) | undefined;
  beforeAll(async () => {
    lake.s3 = await startLoopbackS3([BUCKET]);
    lake.client = testClient(lake.s3.endpoint);
    ({ dir: lake.dir, cleanup } = tempDir(tempPrefix));
  });
  afterAll(async () => {
    lake.client?.destroy();
    await lake.s3?.close();
    cleanup?.();
  });
  return lake;
}

/** evsync's own S3 store on the loopback server's bucket, as the CLI opens it with `s3Env()` (16 MiB parts). */
export function openTestStore(endpoint: string, partConcurrency: number): Promise<ObjectStore> {
  return openS3Store({
    bucket: BUCKET,
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    partSizeBytes: 16 << 20,
    partConcurrency,
    env: s3Env(),
  });
}

/** Events `firstEvent..` with `perEvent` registrants each; ids start at `firstId`. */
export async function buildWarehouse(
  path: string,
  opts: { events: number; perEvent: number; firstEvent?: number; firstId?: number },
): Promise<void> {
  mkdirSync(dirname(path), { recursive: true });
  const w = await Warehouse.open(path);
  const first = opts.firstEvent ?? 10;
  let id = opts.firstId ?? 1;
  await page(
    w,
    events,
    accountScope,
    Array.from({ length: opts.events }, (_, i) => ({
      id: first + i,
      name: `Conf ${first + i}`,
      start_date: '2024-05-01',
    })),
  );
  for (let e = 0; e < opts.events; e++) {
    const rows = Array.from({ length: opts.perEvent }, () => {
      id += 1;
      // Each registrant answers its event's question c_<event> (custom fields: one JSON column).
      const custom_fields = JSON.stringify({ [`c_${first + e}`]: `answer ${id}` });
      return { id, email: `r${id}@example.com`, individual_gross: '12.50', session_ids: [1, 2], custom_fields };
    });
    await page(w, registrants, eventScope(first + e), rows);
  }
  await w.close();
}

export function testClient(endpoint: string): S3Client {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  return new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'reader-side' },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

export async function listKeys(client: S3Client, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const r = await client.send(
      new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix, ...(token ? { ContinuationToken: token } : {}) }),
    );
    for (const o of r.Contents ?? []) if (o.Key) keys.push(o.Key);
    token = r.IsTruncated ? r.NextContinuationToken : undefined;
  } while (token);
  return keys.sort();
}

export async function getObject(client: S3Client, key: string): Promise<Buffer | null> {
  try {
    const r = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
    return Buffer.from(await r.Body!.transformToByteArray());
  } catch (err) {
    if ((err as { name?: string }).name === 'NoSuchKey') return null;
    throw err;
  }
}

export async function putObject(client: S3Client, key: string, body: string): Promise<void> {
  await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body }));
}

export async function manifestAt(client: S3Client, key: string): Promise<Manifest> {
  const body = await getObject(client, key);
  if (!body) throw new Error(`no manifest at ${key}`);
  return JSON.parse(body.toString('utf8')) as Manifest;
}

/** Every object under `prefix`, downloaded to a fresh folder with the same relative paths. */
export async function download(client: S3Client, prefix: string): Promise<{ dir: string; keys: string[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'evsync-lake-read-'));
  const keys = await listKeys(client, prefix);
  for (const key of keys) {
    const path = join(dir, key);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, (await getObject(client, key))!);
  }
  return { dir, keys };
}

/** The rows of `sql` on a DuckDB instance of its own, closed again after. */
async function rowsOf<T>(path: string, options: Record<string, string> | undefined, sql: string): Promise<T[]> {
  const db = await DuckDBInstance.create(path, options);
  const con = await db.connect();
  try {
    return (await con.runAndReadAll(sql)).getRowObjectsJson() as T[];
  } finally {
    con.closeSync();
    db.closeSync();
  }
}

export function duck<T>(sql: string): Promise<T[]> {
  return rowsOf<T>(':memory:', undefined, sql);
}

/** `SELECT ... FROM` a warehouse file opened read-only (the CLI has closed it). */
export function warehouseRows<T>(path: string, sql: string): Promise<T[]> {
  return rowsOf<T>(path, { access_mode: 'READ_ONLY' }, sql);
}
