/**
 * A second process holding a DuckDB file open read-only (test/warehouse/fixtures/snapshot-reader.mjs), driven line
 * by line: what an analyst's duckdb CLI, Python or BI tool does while evsync runs. Each question waits for its
 * answer, never for a time.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { createInterface, type Interface } from 'node:readline';

const ROOT = resolve(import.meta.dirname, '../..');
const SCRIPT = resolve(ROOT, 'test/warehouse/fixtures/snapshot-reader.mjs');

export type ReaderRow = Record<string, unknown>;

export class DuckDbReader {
  private readonly answers: string[] = [];
  private readonly waiting: ((line: string) => void)[] = [];
  private readonly lines: Interface;

  private constructor(private readonly child: ChildProcessWithoutNullStreams) {
    this.lines = createInterface({ input: child.stdout });
    this.lines.on('line', (line) => {
      const next = this.waiting.shift();
      if (next) next(line);
      else this.answers.push(line);
    });
  }

  /** Starts the reader on `file`; resolves once it holds the file open, rejects when it could not open it. */
  static async open(file: string): Promise<DuckDbReader> {
    const child = spawn(process.execPath, [SCRIPT, file], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    const reader = new DuckDbReader(child);
    const first = JSON.parse(await reader.next()) as { ready?: boolean; error?: string };
    if (!first.ready) {
      await reader.close();
      throw new Error(first.error ?? 'the reader could not open the file');
    }
    return reader;
  }

  /** One count (`count`) read from `file` by a reader of its own, closed again after. */
  static async countIn(file: string, sql: string): Promise<number> {
    const reader = await DuckDbReader.open(file);
    try {
      return await reader.count(sql);
    } finally {
      await reader.close();
    }
  }

  /** What happens when a process tries to open `file`: null when it opened, else DuckDB's error. */
  static async openError(file: string): Promise<string | null> {
    try {
      await (await DuckDbReader.open(file)).close();
      return null;
    } catch (err) {
      return err instanceof Error ? err.message : String(err);
    }
  }

  private next(): Promise<string> {
    const ready = this.answers.shift();
    if (ready !== undefined) return Promise.resolve(ready);
    return new Promise((done, fail) => {
      this.waiting.push(done);
      this.child.once('exit', (code) => fail(new Error(`reader exited (${code})`)));
    });
  }

  async query(sql: string): Promise<ReaderRow[]> {
    this.child.stdin.write(`${sql.replace(/\s+/g, ' ')}\n`);
    const answer = JSON.parse(await this.next()) as { rows?: ReaderRow[]; error?: string };
    if (answer.error !== undefined) throw new Error(answer.error);
    return answer.rows ?? [];
  }

  /** The first column of the first row as a number. */
  async count(sql: string): Promise<number> {
    const [row] = await this.query(sql);
    return Number(Object.values(row ?? {})[0]);
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((done) => this.child.once('exit', done));
    this.child.stdin.end();
    await exited;
    this.lines.close();
  }
}
