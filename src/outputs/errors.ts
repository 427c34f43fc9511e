/**
 * An output refused or failed, said with what named it (`--parquet-out: ...`, `lake: ...`). Its verdict is the
 * lake's (lake/errors.ts): `refused` is the user's to fix (the CLI exits 2), `held` and `failed` fail the command (1).
 */
import type { LakeVerdict } from './lake/errors.js';

export class OutputError extends Error {
  override name = 'OutputError';
  constructor(
    message: string,
    readonly verdict: LakeVerdict,
  ) {
    super(message);
  }
}

/** A lake error (the lake's, a folder's lease or owner record) said with `prefix`; any other error as it is. */
export function outputError(prefix: string, err: unknown): Error {
  if (err instanceof Error && err.name === 'LakeError') {
    const verdict = (err as Error & { verdict?: LakeVerdict }).verdict ?? 'failed';
    return new OutputError(`${prefix}: ${err.message}`, verdict);
  }
  return err instanceof Error ? err : new Error(String(err));
}
