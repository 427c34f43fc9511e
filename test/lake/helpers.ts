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
import type { Manifest } from '../../src/warehouse/export-manifest.js';
import { Warehouse } from '../../src/warehouse/index.js';
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
      return { id, email: `r${id}@example.com`, individual_gross: '12.50', session_ids: [1, 2] };
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

export async function duck<T>(sql: string): Promise<T[]> {
  const db = await DuckDBInstance.create(':memory:');
  const con = await db.connect();
  try {
    return (await con.runAndReadAll(sql)).getRowObjectsJson() as T[];
  } finally {
    con.closeSync();
    db.closeSync();
  }
}

/** `SELECT ... FROM` a warehouse file opened read-only (the CLI has closed it). */
export async function warehouseRows<T>(path: string, sql: string): Promise<T[]> {
  const db = await DuckDBInstance.create(path, { access_mode: 'READ_ONLY' });
  const con = await db.connect();
  try {
    return (await con.runAndReadAll(sql)).getRowObjectsJson() as T[];
  } finally {
    con.closeSync();
    db.closeSync();
  }
}
