/**
 * Exit codes are a contract (DESIGN.md): scripts branch on them, so every path out of the CLI maps to exactly one.
 */
export const ExitCode = {
  /** The work is done. */
  Done: 0,
  /** Something failed: credentials rejected, the database in use, a sync with failed items. */
  Failure: 1,
  /** Bad flags, a bad configuration file, or missing environment: nothing was attempted. */
  Usage: 2,
  /** Budget or time limit reached; state is saved and the same command resumes. */
  Partial: 3,
} as const;

export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** A mistake in what the user asked for (flags, configuration, environment). Exits 2; the message says what to fix. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  readonly exitCode = ExitCode.Usage;
}

/** A failure worth a clear one-line message and no stack trace (exit 1 unless told otherwise). */
export class CliError extends Error {
  override readonly name = 'CliError';
  constructor(
    message: string,
    readonly exitCode: ExitCode = ExitCode.Failure,
  ) {
    super(message);
  }
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
