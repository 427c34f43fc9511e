/**
 * Where an export goes: a local folder, or `s3://bucket/prefix` on any S3-compatible store. Anything else that looks
 * like a URL (`gs://`, `https://`, `s3:/one-slash`) is refused: before this, `--out s3://lake/evsync` wrote a local
 * folder named `s3:` and exited 0, which a scheduler reads as "the lake is up to date".
 */
import { URL_SCHEME_RE } from '../warehouse/copies/export-folder.js';

export type ExportTarget =
  | { kind: 'local'; path: string }
  | { kind: 's3'; bucket: string; prefix: string; url: string };

type TargetParse = { ok: true; target: ExportTarget } | { ok: false; problem: string };

/** S3's rules for bucket names (3-63 characters, lowercase letters, digits, dots and hyphens). */
const BUCKET_RE = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

function parseS3(text: string): TargetParse {
  const rest = text.slice('s3://'.length);
  const slash = rest.indexOf('/');
  const bucket = slash === -1 ? rest : rest.slice(0, slash);
  const rawPrefix = slash === -1 ? '' : rest.slice(slash + 1);
  if (!BUCKET_RE.test(bucket)) {
    return { ok: false, problem: `${text}: "${bucket}" is not an S3 bucket name (3-63 of a-z, 0-9, . and -)` };
  }
  const prefix = rawPrefix.replace(/\/+$/, '');
  const segments = prefix === '' ? [] : prefix.split('/');
  // Keys are compared literally: "a//b" or "a/./b" would name objects no reader globbing a/b/... ever finds.
  if (segments.some((s) => s === '' || s === '.' || s === '..')) {
    return { ok: false, problem: `${text}: the prefix has an empty, "." or ".." segment` };
  }
  if (/[\0-\x1f?#*]/.test(prefix)) {
    return { ok: false, problem: `${text}: the prefix holds a control character, "?", "#" or "*"` };
  }
  return { ok: true, target: { kind: 's3', bucket, prefix, url: `s3://${bucket}${prefix ? `/${prefix}` : ''}` } };
}

/** Reads `--out` / `--parquet-out`. A local path is returned as given (the caller resolves it). */
export function parseTarget(text: string): TargetParse {
  if (text.trim() === '') return { ok: false, problem: 'expected a folder or an s3:// URL, got an empty string' };
  const scheme = URL_SCHEME_RE.exec(text)?.[1]?.toLowerCase();
  if (scheme === undefined) return { ok: true, target: { kind: 'local', path: text } };
  if (scheme === 's3' && text.slice(0, 5).toLowerCase() === 's3://') return parseS3(`s3://${text.slice(5)}`);
  const hint =
    scheme === 's3'
      ? 'write s3://bucket/prefix'
      : scheme === 's3a' || scheme === 's3n'
        ? `write s3://${text.slice(scheme.length + 3)} (evsync speaks the S3 API for any endpoint)`
        : `evsync writes to a local folder or to s3://bucket/prefix (set lake.endpoint for R2, MinIO or GCS interop); for a local folder named like this, write ./${text}`;
  return { ok: false, problem: `${text} is not a destination evsync can write: ${hint}` };
}
