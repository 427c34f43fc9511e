/**
 * `evsync.config.json`: everything about a deployment that is not a secret. Strict: an unknown key is an error (a
 * typo must not silently fall back to a default), and every message says what was expected so the CLI can print
 * `evsync.config.json: streams.registrants.maxPerPage: expected a positive integer`.
 *
 * Secrets are never read from this file (it gets committed and copied): the client secret and the pre-encoded
 * credentials come from the environment only, and the CLI refuses a file that holds one.
 */
import { validateCronExpression } from 'cron';
import { z } from 'zod';
import { engineTuningFields } from './engine-options.js';
import { intBetween, isTimeZone, nonNegativeInt, nonNegativeNumber, positiveInt, timeZone } from './numbers.js';

export { isTimeZone };

/** `90s`, `15m`, `1h`, `1h30m`, `500ms`, or `0`. Returns milliseconds, or null when the text is not a duration. */
export function parseDuration(text: string): number | null {
  const t = text.trim().toLowerCase();
  if (t === '0') return 0;
  if (!/^(\d+(\.\d+)?(ms|h|m|s))+$/.test(t)) return null;
  let total = 0;
  for (const [, n, unit] of t.matchAll(/(\d+(?:\.\d+)?)(ms|h|m|s)/g)) {
    const factor = unit === 'ms' ? 1 : unit === 's' ? 1000 : unit === 'm' ? 60_000 : 3_600_000;
    total += Number(n) * factor;
  }
  return Math.round(total);
}

/** The service's base URL always ends in `/v1` (real: https://api.swoogo.com/api/v1). */
export function baseUrlProblem(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'expected an absolute http(s) URL ending in /v1';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'expected an http(s) URL ending in /v1';
  if (!/\/v1\/?$/.test(url.pathname)) return `must end in /v1 (e.g. https://api.swoogo.com/api/v1), got ${value}`;
  if (url.search || url.hash) return 'must not carry a query or fragment';
  return null;
}

const streamOverrideSchema = z.strictObject({
  /** The list path, for endpoints whose path is unverified (`/webhook-groups`). */
  path: z
    .string({ error: 'expected a path starting with /' })
    .regex(/^\/[^\s?#]*$/, { error: 'expected a path starting with / (no query, no spaces)' })
    .optional(),
  /** Page cap override: the public docs contradict themselves (1000 vs 200). */
  maxPerPage: positiveInt().optional(),
  /** Expansions to request (caps the page at 200). */
  expand: z
    .array(z.string({ error: 'expected a list of names' }).min(1), { error: 'expected a list of names' })
    .optional(),
  /**
   * Custom fields stored converted to another type, `{"c_<id>": "text" | "bigint" | ...}`. Names and types are
   * checked by `resolveStream` (one rule for the file and every caller), so here only the shape.
   */
  customFieldTypes: z
    .record(z.string(), z.string({ error: 'expected a type name such as "text" or "bigint"' }), {
      error: 'expected an object of custom field names (c_<id>) and type names',
    })
    .optional(),
  /** False: no history of the stream's records is kept (schema `history`); what was kept stays. Default true. */
  history: z.boolean({ error: 'expected true or false' }).optional(),
});

/** Account ids name a lake partition (`account=<id>`) and environment variables (`EVSYNC_<ID>_CLIENT_SECRET`). */
const accountId = /^[a-z0-9][a-z0-9_-]{0,62}$/;
const ACCOUNT_ID_ERROR = 'expected an account id: 1-63 of a-z, 0-9, _ and -, starting with a letter or digit';

/** The lake on S3-compatible storage (`export --out s3://...`, `--parquet-out s3://...`); see src/outputs/lake-output.ts. */
const lakeSchema = z.strictObject(
  {
    /** Another S3 API than AWS: `https://<id>.r2.cloudflarestorage.com`, `http://127.0.0.1:9000`, GCS interop. */
    endpoint: z
      .url({ protocol: /^https?$/, error: 'expected an http(s) URL such as https://<id>.r2.cloudflarestorage.com' })
      .optional(),
    region: z.string({ error: 'expected a region name' }).min(1, { error: 'expected a region name' }).optional(),
    /** `endpoint/bucket/key` addressing (MinIO, most self-hosted stores). */
    forcePathStyle: z.boolean({ error: 'expected true or false' }).optional(),
    /** A profile of ~/.aws/config (else AWS_PROFILE, then the SDK's default chain). */
    profile: z.string({ error: 'expected a profile name' }).min(1, { error: 'expected a profile name' }).optional(),
    /** This config's account in the lake when it names no `accounts` (default `default`). */
    account: z.string({ error: ACCOUNT_ID_ERROR }).regex(accountId, { error: ACCOUNT_ID_ERROR }).optional(),
    /** How long an account's lease keeps other writers out without renewal (default 900). */
    leaseSeconds: intBetween(60, 86_400).optional(),
    /** Files above this go up in parts of this size (S3: 5 to 5120 MiB; default 16). */
    partSizeMiB: intBetween(5, 5120).optional(),
    /** Files uploading at once (default 4). */
    uploadConcurrency: intBetween(1, 32).optional(),
  },
  { error: 'expected an object' },
);

/** One account of several (`--account <id>`): its database; its credentials come from `EVSYNC_<ID>_*` only. */
const accountSchema = z.strictObject(
  {
    /** Default `evsync-<id>.duckdb` beside the config file; relative paths are relative to the config file. */
    db: z.string({ error: 'expected a file path' }).min(1, { error: 'expected a file path' }).optional(),
    clientId: z.string({ error: 'expected a string' }).min(1, { error: 'expected a non-empty string' }).optional(),
    baseUrl: z
      .string({ error: 'expected a URL ending in /v1' })
      .refine((v) => baseUrlProblem(v) === null, { error: 'expected an http(s) URL ending in /v1' })
      .optional(),
  },
  { error: 'expected an object' },
);

const path = (what: string) =>
  z
    .string({ error: `expected ${what} starting with /` })
    .regex(/^\/[^\s?#]*$/, { error: `expected ${what} starting with / (no query, no spaces)` });

/** `webhooks` in the config file; every field's default is the daemon's (daemon-settings.ts). */
const webhooksSchema = z.strictObject(
  {
    /** Where `serve` listens, `host:port` (put TLS in a reverse proxy in front). */
    listen: z
      .string({ error: 'expected host:port' })
      .regex(/^(\[[^\]]+\]|[^:\s]*):\d{1,5}$/, { error: 'expected host:port, e.g. 127.0.0.1:8787' })
      .optional(),
    /** Path deliveries are POSTed to. */
    path: path('a path').optional(),
    /** Header carrying the shared secret. */
    secretHeader: z
      .string({ error: 'expected a header name' })
      .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, { error: 'expected a header name' })
      .optional(),
    /** Largest delivery body accepted, in bytes. */
    maxBodyBytes: positiveInt().optional(),
    /** Name of the webhook group `webhooks install` creates. */
    groupName: z.string({ error: 'expected a name' }).min(1, { error: 'expected a non-empty name' }).optional(),
    /** Journaled deliveries (they hold personal data) are removed this many days after they were settled. */
    journalRetentionDays: nonNegativeNumber().optional(),
    /** The management API's paths, which the spec does not show. */
    paths: z
      .strictObject(
        { webhooks: path('a path').optional(), groups: path('a path').optional() },
        { error: 'expected an object' },
      )
      .optional(),
  },
  { error: 'expected an object' },
);

/** Every field of `shape` optional (the config file sets what it wants; the engine has the defaults). */
function optional<T extends Record<string, z.ZodType>>(shape: T): { [K in keyof T]: z.ZodOptional<T[K]> } {
  return Object.fromEntries(Object.entries(shape).map(([k, v]) => [k, v.optional()])) as {
    [K in keyof T]: z.ZodOptional<T[K]>;
  };
}

export const configSchema = z.strictObject({
  /** Editors use it for completion; ignored by evsync. */
  $schema: z.string().optional(),
  baseUrl: z
    .string({ error: 'expected a URL ending in /v1' })
    .refine((v) => baseUrlProblem(v) === null, { error: 'expected an http(s) URL ending in /v1' })
    .optional(),
  /** The DuckDB file; relative paths are relative to the config file. */
  db: z.string({ error: 'expected a file path' }).min(1, { error: 'expected a file path' }).optional(),
  /** Not a secret (the secret comes from EVSYNC_CLIENT_SECRET). */
  clientId: z.string({ error: 'expected a string' }).min(1, { error: 'expected a non-empty string' }).optional(),
  /** The service's limit per credential; only change it for a simulator or a negotiated plan. */
  rateLimit: z
    .strictObject({ credits: positiveInt(), windowSeconds: positiveInt() }, { error: 'expected an object' })
    .optional(),
  /** Credits never spent, left for other tools sharing the credential. */
  reserveCredits: nonNegativeInt().optional(),
  /** Credits one run may spend at most (`--budget`). */
  budget: positiveInt().optional(),
  /** Longest wait for a rate-limit window before stopping with exit 3 (`--max-wait`), e.g. `15m`. */
  maxWait: z
    .string({ error: 'expected a duration such as 90s, 15m, 1h or 0' })
    .refine((v) => parseDuration(v) !== null, { error: 'expected a duration such as 90s, 15m, 1h or 0' })
    .optional(),
  // The engine's tuning options (engine-options.ts): one declaration for the file, SyncOptions and the defaults.
  ...optional(engineTuningFields),
  streams: z.record(z.string(), streamOverrideSchema, { error: 'expected an object of stream names' }).optional(),
  lake: lakeSchema.optional(),
  /**
   * The archive of every page and delivery (src/warehouse/archive/): beside the warehouse unless `to` names the
   * lake (`s3://bucket/prefix`), where its compressed segments go (the lake's endpoint and credentials).
   */
  archive: z
    .strictObject(
      { to: z.string().regex(/^s3:\/\//i, { error: 'expected an s3:// URL' }) },
      { error: 'expected an object' },
    )
    .optional(),
  /** Several accounts, one lake: each syncs on its own (`--account <id>` or EVSYNC_ACCOUNT). */
  accounts: z
    .record(z.string().regex(accountId, { error: ACCOUNT_ID_ERROR }), accountSchema, {
      error: `expected an object keyed by account ids (${ACCOUNT_ID_ERROR.replace('expected an account id: ', '')})`,
    })
    .optional(),
  /** `evsync serve`: streams fed by webhooks are polled (reconciled) at most this often while deliveries are healthy. */
  reconcileEveryHours: nonNegativeNumber().optional(),
  /** `evsync serve` and `evsync webhooks` (the secret itself comes from EVSYNC_WEBHOOK_SECRET only). */
  webhooks: webhooksSchema.optional(),
  schedule: z
    .strictObject(
      {
        // Validated here, for every command that reads the file, not only when `schedule` starts.
        cron: z
          .string({ error: 'expected a cron expression' })
          .min(1)
          .refine((v) => validateCronExpression(v).valid, { error: 'expected a valid cron expression' })
          .optional(),
        tz: timeZone.optional(),
      },
      { error: 'expected an object' },
    )
    .optional(),
});

export type EvsyncConfig = z.infer<typeof configSchema>;
export type LakeConfig = z.infer<typeof lakeSchema>;

/** Keys that would hold a secret: refused with a pointer to the environment variable instead. */
export const SECRET_KEYS: Readonly<Record<string, string>> = {
  clientSecret: 'EVSYNC_CLIENT_SECRET',
  secret: 'EVSYNC_CLIENT_SECRET',
  credentials: 'EVSYNC_CREDENTIALS',
  encoded: 'EVSYNC_CREDENTIALS',
  token: 'EVSYNC_CLIENT_ID and EVSYNC_CLIENT_SECRET',
  password: 'EVSYNC_CLIENT_SECRET',
  webhookSecret: 'EVSYNC_WEBHOOK_SECRET',
};
