/**
 * A real S3 API on 127.0.0.1 for the lake tests and the lake benchmark: s3rver (pure JS, Koa, objects on disk in a
 * temporary folder). It speaks the SDK v3's path-style requests, multipart uploads, ListObjectsV2 and DeleteObjects;
 * it accepts any SigV4 signature from its one access key id `S3RVER` (so a secret can be anything: the tests use a
 * recognisable one to prove it never reaches a log) and ignores conditional writes (the lease reads back).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';

export interface LoopbackS3 {
  endpoint: string;
  /** Where s3rver keeps the objects (bucket/key as files, metadata beside them). */
  directory: string;
  accessKeyId: string;
  close(): Promise<void>;
}

export async function startLoopbackS3(buckets: string[]): Promise<LoopbackS3> {
  const directory = mkdtempSync(join(tmpdir(), 'evsync-s3rver-'));
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    configureBuckets: buckets.map((name) => ({ name })),
  });
  const { port } = await server.run();
  return {
    endpoint: `http://127.0.0.1:${port}`,
    directory,
    accessKeyId: 'S3RVER',
    async close() {
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
