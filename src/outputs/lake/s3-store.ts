/**
 * ObjectStore on the S3 API through the AWS SDK for JavaScript v3: AWS, Cloudflare R2, MinIO, GCS interop, any
 * endpoint that speaks S3. The SDK is imported here only, lazily (about 40 packages): `evsync --help`, `sync` to a
 * local folder and the library entry never load it.
 *
 * Credentials: AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN) from the command's environment
 * when both are set, else the SDK's own chain (shared profile `lake.profile` or AWS_PROFILE, SSO, web identity,
 * ECS / EC2 instance role). They are handed to the SDK and never put in a message: every error is rebuilt here from
 * the operation, the object and the service's error code.
 */

import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { S3Client } from '@aws-sdk/client-s3';
import { LakeError } from './errors.js';
import type { ListedObject, ObjectStore, PutCondition, StoredObject } from './store.js';

export type Env = Readonly<Record<string, string | undefined>>;

export interface S3Settings {
  bucket: string;
  /** `https://<account>.r2.cloudflarestorage.com`, `http://127.0.0.1:9000`, `https://storage.googleapis.com`... */
  endpoint?: string | undefined;
  region?: string | undefined;
  /** `bucket` in the path (`endpoint/bucket/key`) instead of the host name: MinIO and most self-hosted stores. */
  forcePathStyle?: boolean | undefined;
  /** A shared-config profile (~/.aws/config) when not AWS_PROFILE. */
  profile?: string | undefined;
  /** Files larger than this go up in parts of this size (S3's minimum is 5 MiB). */
  partSizeBytes: number;
  /** Parts of one file in flight at once. */
  partConcurrency: number;
  env: Env;
}

/**
 * The SDK warns once per process on Node < 22 ("versions published after January 2027 will require node >=22"),
 * read from AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED when the first client is built (@aws-sdk/core,
 * emitWarningIfUnsupportedVersion). evsync supports Node 20 with this pinned SDK and says so in its README; the
 * warning would land in every cron log. The switch is set only around the construction and only when the user has
 * not set it, so every other warning still prints.
 */
function withoutNodeVersionWarning<T>(build: () => T): T {
  const name = 'AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED';
  if (process.env[name] !== undefined) return build();
  process.env[name] = 'true';
  try {
    return build();
  } finally {
    delete process.env[name];
  }
}

interface SdkError {
  name?: unknown;
  code?: unknown;
  message?: unknown;
  $metadata?: { httpStatusCode?: unknown };
}

function statusOf(err: unknown): number | undefined {
  const s = (err as SdkError | null)?.$metadata?.httpStatusCode;
  return typeof s === 'number' ? s : undefined;
}

function codeOf(err: unknown): string {
  const e = err as SdkError | null;
  if (typeof e?.code === 'string') return e.code;
  return typeof e?.name === 'string' ? e.name : 'Error';
}

/** Codes that mean "this destination is not usable as configured": the user's to fix (exit 2). */
const REFUSING = new Set([
  'NoSuchBucket',
  'AccessDenied',
  'InvalidAccessKeyId',
  'SignatureDoesNotMatch',
  'InvalidBucketName',
  'PermanentRedirect',
  'AuthorizationHeaderMalformed',
  'CredentialsProviderError',
]);

/** A message built from what the service said, never from the request (which carries the signature). */
function storeError(op: string, where: string, err: unknown): LakeError {
  const code = codeOf(err);
  const status = statusOf(err);
  const said = (err as SdkError | null)?.message;
  // SDK messages are the service's <Message> or a client-side sentence; cap them, they end up in cron logs.
  const detail = typeof said === 'string' && said !== code ? `: ${said.split('\n')[0]?.slice(0, 300)}` : '';
  const refusing = REFUSING.has(code) || /Region is missing|Could not load credentials/i.test(String(said));
  const hint =
    code === 'NoSuchBucket'
      ? ' (evsync does not create buckets: create it, or check the name and lake.endpoint)'
      : /Region is missing/i.test(String(said))
        ? ' (set lake.region in the config, or AWS_REGION)'
        : /Could not load credentials/i.test(String(said)) || code === 'CredentialsProviderError'
          ? ' (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or run where an instance role is available)'
          : '';
  return new LakeError(
    `${op} ${where}: ${code}${status ? ` (HTTP ${status})` : ''}${detail}${hint}`,
    refusing ? 'refused' : 'failed',
  );
}

function isMissing(err: unknown): boolean {
  const code = codeOf(err);
  return code === 'NoSuchKey' || code === 'NotFound' || (statusOf(err) === 404 && code !== 'NoSuchBucket');
}

function isConflict(err: unknown): boolean {
  const code = codeOf(err);
  // 409 ConditionalRequestConflict: two conditional writes raced; the other one won.
  return code === 'PreconditionFailed' || statusOf(err) === 412 || statusOf(err) === 409;
}

type S3Sdk = typeof import('@aws-sdk/client-s3');

/** What every operation needs: the SDK (loaded lazily), the client, and where the objects live. */
interface S3Handle {
  sdk: S3Sdk;
  Upload: typeof import('@aws-sdk/lib-storage').Upload;
  client: S3Client;
  bucket: string;
  settings: S3Settings;
  describe: (key: string) => string;
}

/** The client, with the command's credentials when both keys are set, else the SDK's own chain (see the file comment). */
function createS3Client(sdk: S3Sdk, settings: S3Settings): S3Client {
  const env = settings.env;
  const accessKeyId = env.AWS_ACCESS_KEY_ID?.trim();
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
  const region = settings.region ?? (env.AWS_REGION?.trim() || env.AWS_DEFAULT_REGION?.trim() || undefined);
  return withoutNodeVersionWarning(
    () =>
      new sdk.S3Client({
        ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
        ...(region ? { region } : {}),
        forcePathStyle: settings.forcePathStyle === true,
        ...(accessKeyId && secretAccessKey
          ? {
              credentials: {
                accessKeyId,
                secretAccessKey,
                ...(env.AWS_SESSION_TOKEN ? { sessionToken: env.AWS_SESSION_TOKEN } : {}),
              },
            }
          : settings.profile
            ? { profile: settings.profile }
            : {}),
        // Checksums only where the API requires them: R2, GCS interop and older MinIO or s3rver reject or
        // mis-store the aws-chunked trailers the SDK adds by default. Each file's sha256 is in the manifest.
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
      }),
  );
}

async function getObject(s3: S3Handle, key: string): Promise<StoredObject | null> {
  try {
    const answer = await s3.client.send(new s3.sdk.GetObjectCommand({ Bucket: s3.bucket, Key: key }));
    const body = answer.Body ? Buffer.from(await answer.Body.transformToByteArray()) : Buffer.alloc(0);
    return { body, etag: answer.ETag ?? null };
  } catch (err) {
    if (isMissing(err)) return null;
    throw storeError('cannot read', s3.describe(key), err);
  }
}

async function putObject(
  s3: S3Handle,
  key: string,
  body: Buffer,
  contentType: string,
  condition: PutCondition = {},
): Promise<string | 'conflict'> {
  try {
    const answer = await s3.client.send(
      new s3.sdk.PutObjectCommand({
        Bucket: s3.bucket,
        Key: key,
        Body: body,
        ContentType: contentType,
        ...(condition.ifAbsent ? { IfNoneMatch: '*' } : {}),
        ...(condition.ifMatch ? { IfMatch: condition.ifMatch } : {}),
      }),
    );
    return answer.ETag ?? '';
  } catch (err) {
    if ((condition.ifAbsent || condition.ifMatch) && isConflict(err)) return 'conflict';
    throw storeError('cannot write', s3.describe(key), err);
  }
}

async function uploadFile(s3: S3Handle, key: string, file: string, size: number): Promise<number> {
  const partSize = s3.settings.partSizeBytes;
  try {
    if (size <= partSize) {
      // One PUT; the file is at most one part, so holding it is bounded.
      await s3.client.send(
        new s3.sdk.PutObjectCommand({
          Bucket: s3.bucket,
          Key: key,
          Body: await readFile(file),
          ContentType: 'application/vnd.apache.parquet',
        }),
      );
      return 1;
    }
    const upload = new s3.Upload({
      client: s3.client,
      params: {
        Bucket: s3.bucket,
        Key: key,
        Body: createReadStream(file),
        ContentType: 'application/vnd.apache.parquet',
      },
      partSize,
      queueSize: s3.settings.partConcurrency,
      // A failed multipart upload is aborted, not left as invisible billed parts.
      leavePartsOnError: false,
    });
    await upload.done();
    return Math.ceil(size / partSize);
  } catch (err) {
    throw storeError('cannot upload', s3.describe(key), err);
  }
}

async function listObjects(s3: S3Handle, prefix: string): Promise<ListedObject[]> {
  const listed: ListedObject[] = [];
  let token: string | undefined;
  try {
    do {
      const answer = await s3.client.send(
        new s3.sdk.ListObjectsV2Command({
          Bucket: s3.bucket,
          Prefix: prefix,
          ...(token ? { ContinuationToken: token } : {}),
        }),
      );
      for (const object of answer.Contents ?? []) {
        if (object.Key) listed.push({ key: object.Key, size: Number(object.Size ?? 0) });
      }
      token = answer.IsTruncated ? answer.NextContinuationToken : undefined;
    } while (token);
  } catch (err) {
    throw storeError('cannot list', s3.describe(prefix), err);
  }
  return listed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** DeleteObjects takes at most 1000 keys a call. */
async function removeObjects(s3: S3Handle, keys: readonly string[]): Promise<void> {
  for (let i = 0; i < keys.length; i += 1000) {
    const batch = keys.slice(i, i + 1000);
    try {
      const answer = await s3.client.send(
        new s3.sdk.DeleteObjectsCommand({
          Bucket: s3.bucket,
          Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true },
        }),
      );
      const failed = (answer.Errors ?? []).filter((error) => error.Code !== 'NoSuchKey');
      if (failed.length > 0) {
        const first = failed[0];
        throw new LakeError(
          `cannot remove ${failed.length} object(s), first ${s3.describe(first?.Key ?? '?')}: ${first?.Code ?? 'Error'}`,
          'failed',
        );
      }
    } catch (err) {
      if (err instanceof LakeError) throw err;
      throw storeError('cannot remove objects under', s3.describe(batch[0] ?? ''), err);
    }
  }
}

export async function openS3Store(settings: S3Settings): Promise<ObjectStore> {
  const sdk = await import('@aws-sdk/client-s3');
  const { Upload } = await import('@aws-sdk/lib-storage');
  const client = createS3Client(sdk, settings);
  const bucket = settings.bucket;
  const describe = (key: string) => `s3://${bucket}/${key}`;
  const s3: S3Handle = { sdk, Upload, client, bucket, settings, describe };
  return {
    describe,
    get: (key) => getObject(s3, key),
    put: (key, body, contentType, condition) => putObject(s3, key, body, contentType, condition),
    upload: (key, file, size) => uploadFile(s3, key, file, size),
    list: (prefix) => listObjects(s3, prefix),
    remove: (keys) => removeObjects(s3, keys),
    close() {
      client.destroy();
    },
  };
}
