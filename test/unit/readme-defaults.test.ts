/**
 * The README says the daemon's defaults the way schemas/daemon-settings.ts declares them (issue 34: declared once, the
 * help texts read them, the README says the same): each place the README states a default is read here and held
 * against the settings, so changing a default without the README fails.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DAEMON_DEFAULTS } from '../../schemas/daemon-settings.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8').replace(/\s+/g, ' ');

/** Where the README states a default (white space folded), and what the settings declare. */
const STATED: { what: string; pattern: RegExp; declared: string }[] = [
  { what: "serve's cron", pattern: /`--cron`, default `([^`]+)`/, declared: DAEMON_DEFAULTS.serveCron },
  {
    what: 'the reconcile cadence',
    pattern: /every `reconcileEveryHours` \((\d+)\)/,
    declared: String(DAEMON_DEFAULTS.reconcileEveryHours),
  },
  {
    what: 'the admin address',
    pattern: /`--admin-listen <host:port>` moves it \(default `([^`]+)`\)/,
    declared: DAEMON_DEFAULTS.adminListen,
  },
  {
    what: 'the publish cadence',
    pattern: /every `--publish-every` seconds \((\d+)\)/,
    declared: String(DAEMON_DEFAULTS.publisher.everySeconds),
  },
  {
    what: 'the query workers',
    pattern: /at most `--query-workers` processes \((\d+)\)/,
    declared: String(DAEMON_DEFAULTS.queries.workers),
  },
  { what: 'the query line', pattern: /`--query-queue` \((\d+)\)/, declared: String(DAEMON_DEFAULTS.queries.queue) },
  {
    what: 'the query time limit',
    pattern: /`--query-timeout` seconds \((\d+)/,
    declared: String(DAEMON_DEFAULTS.queries.timeoutMs / 1000),
  },
];

describe("the README's daemon defaults", () => {
  it.each(STATED)('states $what as declared', ({ pattern, declared }) => {
    const found = pattern.exec(README);
    expect(found, `the README no longer says it as ${pattern}`).not.toBeNull();
    expect(found![1]).toBe(declared);
  });
});
