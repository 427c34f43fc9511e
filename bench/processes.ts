/**
 * Processes as Linux's /proc shows them: the children of a process (the daemon's query workers) and what one uses.
 * Shared by the benches and the tests that watch the daemon's workers.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** The processes whose parent is `pid`. */
export function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // Fields after the command name (in parentheses, which may hold spaces): state, then the parent's pid.
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) out.push(Number(name));
    } catch {
      // Gone between the listing and the read.
    }
  }
  return out;
}
