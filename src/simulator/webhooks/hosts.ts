/**
 * Where deliveries may go. The simulator runs on developer machines and CI with made-up data (the seeded webhooks
 * point at hooks.example.com), so by default it only ever calls loopback addresses; `--webhook-hosts` names any other
 * host a user really wants called (`*` for any). Names are not resolved: `localhost` and literal loopback addresses
 * count as loopback, any other name must be listed.
 */

function isLoopback(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/^\[|\]$/g, '');
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (h === '::1' || h === '0:0:0:0:0:0:0:1') return true;
  if (h.startsWith('::ffff:')) return isLoopback(h.slice(7));
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

export class HostPolicy {
  private readonly any: boolean;
  private readonly hosts: Set<string>;
  /** Verdicts per URL: a change may fan out to fifty webhooks, and URL parsing is the costly part. */
  private readonly verdicts = new Map<string, boolean>();

  constructor(extra: readonly string[] = []) {
    const names = extra
      .map((h) =>
        h
          .trim()
          .toLowerCase()
          .replace(/^\[|\]$/g, ''),
      )
      .filter(Boolean);
    this.any = names.includes('*');
    this.hosts = new Set(names);
  }

  /** Whether a delivery to this URL may be sent (http or https to an allowed host). */
  allows(url: string): boolean {
    let verdict = this.verdicts.get(url);
    if (verdict === undefined) {
      verdict = this.judge(url);
      if (this.verdicts.size >= 10_000) this.verdicts.clear();
      this.verdicts.set(url, verdict);
    }
    return verdict;
  }

  private judge(url: string): boolean {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return false;
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return false;
    if (this.any || isLoopback(parsed.hostname)) return true;
    return this.hosts.has(parsed.hostname.toLowerCase().replace(/^\[|\]$/g, ''));
  }
}
