/**
 * Runs the CLI as a child on a real read-only file system: a read-only bind mount of `folder` onto itself in a
 * private mount namespace (`unshare -m`), so nothing outside the child sees it. Tests run as root, who ignores
 * permission bits (a chmod 0500 folder is still writable); a read-only mount refuses root too (EROFS).
 * Needs CAP_SYS_ADMIN: `canMountReadOnly` says whether this machine allows it.
 */
import { execFileSync, spawn } from 'node:child_process';
import { join } from 'node:path';

export const canMountReadOnly: boolean = (() => {
  if (process.platform !== 'linux') return false;
  try {
    execFileSync('unshare', ['-m', 'sh', '-c', 'mount --bind / /mnt && mount -o remount,bind,ro /mnt'], {
      stdio: 'ignore',
    });
    return true;
  } catch {
    return false;
  }
})();

export async function runOnReadOnlyMount(
  folder: string,
  argv: string[],
  env: Record<string, string>,
  cwd: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const tsx = join(process.cwd(), 'node_modules', '.bin', 'tsx');
  const main = join(process.cwd(), 'src', 'cli', 'main.ts');
  const script = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"';
  const child = spawn('unshare', ['-m', 'sh', '-c', script, 'sh', folder, tsx, main, ...argv, '--no-color'], {
    env: { PATH: process.env.PATH ?? '', ...env },
    cwd,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { code, stdout, stderr };
}
