import type { OutStream } from './io.js';
import type { Style } from './style.js';

export type Verbosity = 'quiet' | 'normal' | 'verbose';

/**
 * Logs go to stderr so stdout stays the result (pipeable, parseable). `--quiet` keeps warnings and errors only;
 * `--verbose` adds debug lines. Nothing secret is ever passed here; the stream scrubs known secrets anyway.
 */
export interface Logger {
  readonly verbosity: Verbosity;
  info(message: string): void;
  /** Printed even with --quiet: something the user should act on. */
  warn(message: string): void;
  error(message: string): void;
  debug(message: string): void;
  /** A success line (info level). */
  ok(message: string): void;
}

export function createLogger(stream: OutStream, style: Style, verbosity: Verbosity): Logger {
  const line = (text: string) => stream.write(`${text}\n`);
  return {
    verbosity,
    info: (m) => {
      if (verbosity !== 'quiet') line(m);
    },
    ok: (m) => {
      if (verbosity !== 'quiet') line(`${style.green('✓')} ${m}`);
    },
    warn: (m) => line(`${style.yellow('warning:')} ${m}`),
    error: (m) => line(`${style.red('error:')} ${m}`),
    debug: (m) => {
      if (verbosity === 'verbose') line(style.dim(`debug: ${m}`));
    },
  };
}
