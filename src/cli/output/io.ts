/**
 * Where the CLI reads its environment and writes its output. Everything goes through one `CliIo` so tests run
 * `main()` in-process with captured streams and their own environment, and so secrets can be scrubbed in one place.
 */
import type { Now } from '../../../schemas/clock.js';
import { OwnWords } from './own-words.js';

/** The part of a writable stream the CLI uses; `process.stdout` fits, and so does a test's string buffer. */
export interface OutStream {
  write(chunk: string): unknown;
  /** True only for a terminal: progress and colour are shown only there. */
  isTTY?: boolean;
  columns?: number;
}

export interface CliIo {
  stdout: OutStream;
  stderr: OutStream;
  env: Readonly<Record<string, string | undefined>>;
  cwd: string;
  /**
   * A clean-stop request from outside, as SIGINT/SIGTERM are: long commands (sync, schedule) finish the page in
   * flight, save state and return. Tests abort it instead of sending signals to their own process.
   */
  stop?: AbortSignal;
  /** Whether to listen for SIGINT/SIGTERM (the real process: yes; tests: no). */
  handleSignals?: boolean;
  /** The clock every component of the command reads (default the machine's): tests fix it. */
  now?: Now;
}

let pipeGuarded = false;

/**
 * `evsync query ... | head` closes the pipe early: the writes that follow fail with EPIPE. Ignore those instead of
 * crashing with a stack trace; the command still finishes (a sync still saves its state).
 */
function guardPipes(): void {
  if (pipeGuarded) return;
  pipeGuarded = true;
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE') throw err;
    });
  }
}

export function processIo(): CliIo {
  guardPipes();
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    cwd: process.cwd(),
    handleSignals: true,
  };
}

/**
 * Wraps a stream so that no registered secret can reach it, whatever code path produced the text. The API client
 * redacts its own errors; this is the last line, for the strings the CLI itself handles (environment values).
 * Text written as evsync's own words (`writeParts`, see own-words.ts) is left as it is where a secret lies wholly
 * inside it; a secret anywhere else, or running from own words into other text, is scrubbed.
 */
export class ScrubbedStream implements OutStream {
  private readonly secrets: string[] = [];

  constructor(private readonly inner: OutStream) {}

  get isTTY(): boolean {
    return this.inner.isTTY === true;
  }

  get columns(): number | undefined {
    return this.inner.columns;
  }

  addSecrets(values: readonly string[]): void {
    for (const v of values) {
      // Very short values would blank out ordinary words; the client's own redaction covers those patterns.
      if (v.length >= 4 && !this.secrets.includes(v)) this.secrets.push(v);
    }
    this.secrets.sort((a, b) => b.length - a.length);
  }

  write(chunk: string): unknown {
    return this.inner.write(this.scrub(chunk, []));
  }

  /** Writes the parts as one chunk: strings scrubbed, evsync's own words kept (see the class comment). */
  writeParts(parts: readonly (string | OwnWords)[]): unknown {
    let text = '';
    const own: [number, number][] = [];
    for (const part of parts) {
      if (part instanceof OwnWords) {
        own.push([text.length, text.length + part.text.length]);
        text += part.text;
      } else text += part;
    }
    return this.inner.write(this.scrub(text, own));
  }

  /** `text` with every occurrence of a secret replaced, but those wholly inside one of the `own` spans. */
  private scrub(text: string, own: readonly [number, number][]): string {
    const hits: [number, number][] = [];
    for (const secret of this.secrets) {
      for (let at = text.indexOf(secret); at >= 0; at = text.indexOf(secret, at + 1)) {
        const end = at + secret.length;
        if (!own.some(([from, to]) => from <= at && end <= to)) hits.push([at, end]);
      }
    }
    if (hits.length === 0) return text;
    // Overlapping occurrences (of one secret, or of two) become one [REDACTED].
    hits.sort((a, b) => a[0] - b[0]);
    let out = '';
    let done = 0;
    let runEnd = -1;
    for (const [at, end] of hits) {
      if (at >= runEnd) {
        out += text.slice(done, at) + '[REDACTED]';
      }
      runEnd = Math.max(runEnd, end);
      done = runEnd;
    }
    return out + text.slice(done);
  }
}

/** A stream that remembers what was written: for tests and for commands that buffer output. */
export class BufferStream implements OutStream {
  text = '';
  constructor(
    readonly isTTY = false,
    readonly columns = 100,
  ) {}
  write(chunk: string): boolean {
    this.text += chunk;
    return true;
  }
}
