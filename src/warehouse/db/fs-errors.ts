/**
 * File-system errors said plainly: the one table of what an errno means to a user, shared by `export` (folders it
 * creates) and `check` (the database's folder), which word a few codes for their own situation.
 */

/** The errno code of a Node fs error (`''` when there is none). */
export function errnoCode(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : '';
}

const PLAIN: Readonly<Record<string, string>> = {
  EROFS: 'the file system is read-only (EROFS)',
  EACCES: 'permission denied (EACCES)',
  EPERM: 'permission denied (EPERM)',
  ENOTDIR: 'a part of the path is a file, not a folder (ENOTDIR)',
  ENOENT: 'no such file or folder (ENOENT)',
  ENOSPC: 'no space left on the device (ENOSPC)',
};

/** What `code` means, with `wording` taking precedence for the codes a caller says differently; null if unknown. */
export function errnoReason(code: string, wording: Readonly<Record<string, string>> = {}): string | null {
  return wording[code] ?? PLAIN[code] ?? null;
}
