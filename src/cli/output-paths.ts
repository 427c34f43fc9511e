/**
 * A command's outputs read from its flags once (`readOutputFlags`: the output `--out`/`--parquet-out` names, chosen
 * by src/outputs, and the `--snapshot` file), and where they may go, judged at start, before a credit is spent or a
 * file written (exit 2):
 * - `--snapshot` is never the warehouse or a file of its layout (src/warehouse/copies/own-files.ts: its WAL, the daemon's
 *   socket and query copy, their temporaries, the staging folders), nor inside a local `--parquet-out`: a file
 *   evsync did not export there stops every export into the folder ("holds a file evsync did not write"), which is
 *   how a daemon given both once failed every publish;
 * - a local `--parquet-out` (and `export --out`) never holds the warehouse, nor is a file or folder of its layout:
 *   that folder is other tools' to read and evsync's to rewrite, and the warehouse has no business in it.
 * Paths are compared as the file system resolves them (every symbolic link followed), so a linked folder does not
 * hide a collision; a file that does not exist yet is judged by its folder's real path.
 */
import { basename, dirname, join, resolve, sep } from 'node:path';
import { socketPathFor } from '../daemon/socket.js';
import { chooseOutput, type Output, type OutputFlag } from '../outputs/output.js';
import { realPathOf } from '../outputs/real-path.js';
import { type OwnPath, warehouseLayout } from '../warehouse/copies/own-files.js';
import { snapshotTargetProblem } from '../warehouse/copies/snapshot-target.js';
import type { Ctx } from './context.js';
import { UsageError } from './errors.js';
import { outputSettings } from './output-settings.js';

/** Whether `path` is `dir` or lies below it (both real paths). */
function within(dir: string, path: string): boolean {
  return path === dir || path.startsWith(dir.endsWith(sep) ? dir : `${dir}${sep}`);
}

interface OutputPaths {
  /** The warehouse file (absolute). */
  db: string;
  /** The snapshot file (absolute), when given. */
  snapshot: string | null;
  /** A local Parquet folder (absolute) and the flag that named it, when given. */
  folder: { flag: OutputFlag; path: string } | null;
}

/** The warehouse's own paths as real paths, the daemon's socket wherever it falls back to included. */
function ownPaths(db: string) {
  const layout = warehouseLayout(db);
  const socket = socketPathFor(db);
  const files = [
    ...layout.files,
    ...(layout.files.some((f) => f.path === socket) ? [] : [{ path: socket, what: "the daemon's socket" }]),
  ];
  const real = (list: OwnPath[]) => list.map((p) => ({ ...p, real: realPathOf(p.path) }));
  return { files: real(files), temporaries: real(layout.temporaries), folders: real(layout.folders) };
}

/** "the write-ahead log of the warehouse /data/evsync.duckdb" (the warehouse's own path needs no more). */
function ofWarehouse(own: OwnPath, db: string): string {
  return own.path === db ? `the warehouse itself` : `${own.what} of the warehouse ${db}`;
}

/** Why the snapshot cannot be written where it is asked for (null: it can). */
function snapshotProblem(given: string, paths: OutputPaths, own: ReturnType<typeof ownPaths>): string | null {
  const real = realPathOf(given);
  const via = real === resolve(given) ? '' : ` (${real}, through a symbolic link)`;
  const file = own.files.find((f) => f.real === real) ?? own.temporaries.find((t) => real.startsWith(t.real));
  if (file) {
    return `--snapshot ${given}${via} is ${ofWarehouse(file, paths.db)}; a snapshot replaces the file it is written to: name a file of its own`;
  }
  const folder = own.folders.find((f) => within(f.real, real));
  if (folder) {
    return `--snapshot ${given}${via} lies inside ${ofWarehouse(folder, paths.db)} (${folder.path}), which evsync empties; name a file outside it`;
  }
  if (paths.folder) {
    const out = realPathOf(paths.folder.path);
    if (within(out, real)) {
      const beside = join(dirname(out), basename(real));
      return (
        `--snapshot ${given}${via} lies inside ${paths.folder.flag} ${paths.folder.path}: that folder holds only the ` +
        `Parquet evsync exports there, and a file it did not write stops every export into it. Name a file outside ` +
        `the folder, e.g. ${beside}`
      );
    }
  }
  return null;
}

/** Why the Parquet folder cannot be written where it is asked for (null: it can). */
function folderProblem(paths: OutputPaths, own: ReturnType<typeof ownPaths>): string | null {
  if (!paths.folder) return null;
  const { flag, path } = paths.folder;
  const real = realPathOf(path);
  const via = real === resolve(path) ? '' : ` (${real}, through a symbolic link)`;
  const db = realPathOf(paths.db);
  if (within(real, db)) {
    const inner = join(path, 'parquet');
    return (
      `${flag} ${path}${via} holds the warehouse ${paths.db}: the Parquet folder is for other tools to read and for ` +
      `evsync to rewrite, and the warehouse (with its write-ahead log, staging and socket) must not be in it. Choose ` +
      `a folder that does not contain the warehouse${within(realPathOf(inner), db) ? '' : `, e.g. ${inner}`}`
    );
  }
  const file = own.files.find((f) => f.real === real) ?? own.temporaries.find((t) => real.startsWith(t.real));
  if (file) return `${flag} ${path}${via} is ${ofWarehouse(file, paths.db)}; choose another folder`;
  const folder = own.folders.find((f) => within(f.real, real));
  if (folder) {
    return `${flag} ${path}${via} lies inside ${ofWarehouse(folder, paths.db)} (${folder.path}), which evsync empties; choose another folder`;
  }
  return null;
}

/** Refuses (UsageError, exit 2) outputs that would collide with the warehouse or with each other. */
function refuseCollidingOutputs(paths: OutputPaths): void {
  const own = ownPaths(paths.db);
  const problem =
    folderProblem(paths, own) ?? (paths.snapshot === null ? null : snapshotProblem(paths.snapshot, paths, own));
  if (problem) throw new UsageError(problem);
}

/** The command's outputs checked against its warehouse (`--db`), relative paths read from the working folder. */
function checkOutputs(ctx: Ctx, outputs: { snapshot: string | null; folder: OutputPaths['folder'] }): void {
  const { folder } = outputs;
  refuseCollidingOutputs({
    db: resolve(ctx.io.cwd, ctx.config.db),
    // An empty one is snapshotTarget's to refuse (resolved, it would be the working folder).
    snapshot:
      outputs.snapshot === null || outputs.snapshot.trim() === '' ? null : resolve(ctx.io.cwd, outputs.snapshot),
    folder: folder === null ? null : { flag: folder.flag, path: resolve(ctx.io.cwd, folder.path) },
  });
}

/**
 * `--snapshot <file>` checked before the run spends a credit: not the warehouse itself, not a folder, in a folder
 * that exists, not a file other than a DuckDB database. Returns the absolute path.
 */
function snapshotTarget(ctx: Ctx, file: string): string {
  if (file.trim() === '') throw new UsageError('--snapshot: no file given');
  const target = resolve(ctx.io.cwd, file);
  const problem = snapshotTargetProblem(target, resolve(ctx.io.cwd, ctx.config.db));
  if (problem) throw new UsageError(`--snapshot: ${problem.replace(target, file)}`);
  return target;
}

/** What the readers' outputs need from this command's context (src/outputs/settings.ts). */

/**
 * A command's outputs read from its flags, once, before anything opens or a credit is spent (exit 2): the output
 * `--out` or `--parquet-out` names (a local folder or the lake), and the `--snapshot` file, checked against the
 * warehouse and against each other.
 */
export function readOutputFlags(
  ctx: Ctx,
  flags: { flag: OutputFlag; target: string; snapshot?: string | undefined },
): { output: Output; snapshot: string | null };
export function readOutputFlags(
  ctx: Ctx,
  flags: { flag: OutputFlag; target?: string | undefined; snapshot?: string | undefined },
): { output: Output | null; snapshot: string | null };
export function readOutputFlags(
  ctx: Ctx,
  flags: { flag: OutputFlag; target?: string | undefined; snapshot?: string | undefined },
): { output: Output | null; snapshot: string | null } {
  const output = flags.target === undefined ? null : chooseOutput(flags.flag, flags.target, outputSettings(ctx));
  checkOutputs(ctx, {
    snapshot: flags.snapshot ?? null,
    folder: output?.kind === 'folder' ? { flag: output.flag, path: output.where } : null,
  });
  return { output, snapshot: flags.snapshot === undefined ? null : snapshotTarget(ctx, flags.snapshot) };
}
