/**
 * `evsync status` while a one-shot backfill holds the warehouse and waits for the credit window (issue 33): it is
 * answered by the run itself (no "database in use"), with its progress, the credits it spent, the window as the
 * service last reported it (equal to what the simulator charged), what it waits for and until when, and when it
 * should end; a query is refused with what to do instead; `status --html` writes that as the page, which a phone
 * (375 px, headless Chromium) reads without sideways scrolling. The window (50 credits) runs on the simulator's own
 * clock and never resets during the test: the run waits until the test stops it, however fast the machine.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StatusReport } from '../../src/cli/status/document.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { HAS_CHROMIUM, launchBrowser, screenshot, watchProblems } from '../status-page/browser.js';
import { readPage } from '../status-page/read-page.js';
import { run, simulatorEnv, tempDir, waitForText } from './helpers.js';

const LIMIT = 50;
let sim: Simulator;
let dir: string;
let cleanup: () => void;
let env: Record<string, string>;

beforeAll(async () => {
  sim = await startSimulator({
    size: 'tiny',
    seed: 12,
    rateLimit: { credits: LIMIT, windowSeconds: 600, clock: 'simulated' },
  });
  ({ dir, cleanup } = tempDir('evsync-status-run-'));
  env = simulatorEnv(sim, { db: join(dir, 'run.duckdb') });
});
afterAll(async () => {
  await sim.close();
  cleanup();
});

const cli = (argv: string[]) => run(argv, { cwd: dir, env });

/** The page `status --html` writes from the run's answer, as a phone shows it: the wait first, the progress, no sideways scroll. */
async function phonePage(charged: number): Promise<void> {
  const file = join(dir, 'during.html');
  const written = await cli(['status', '--html', file]);
  expect(written.code, written.stderr).toBe(0);
  if (!HAS_CHROMIUM) return;
  const browser = await launchBrowser();
  try {
    const page = await browser.browser.newPage();
    const problems = watchProblems(page);
    await page.setViewport({ width: 375, height: 800 });
    await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
    const shown = await page.evaluate(() => ({
      state: document.querySelector('#state')?.getAttribute('data-level'),
      first: document.querySelector('main > *')?.id,
      waiting: document.querySelector('#state [data-k="waiting"]')?.textContent ?? '',
      remaining: document.querySelector('[data-card="credits"]')?.getAttribute('data-remaining'),
      progress: document.querySelector('#progress [data-k="items"]')?.textContent ?? '',
      scroll: document.scrollingElement!.scrollWidth - innerWidth,
    }));
    expect(shown).toMatchObject({ state: 'waiting', first: 'state', remaining: String(LIMIT - charged) });
    expect(shown.waiting).toMatch(/^Waiting for the credit window until \d\d:\d\d UTC \(in \d+ min\)/);
    expect(shown.progress).toMatch(/^Items done \d+ of \d+ planned so far/);
    expect(shown.scroll).toBeLessThanOrEqual(0);
    expect((await readPage(page)).beyond).toEqual([]);
    await screenshot(page, 'status-run-waiting', 375);
    expect(problems).toEqual([]);
  } finally {
    await browser.close();
  }
}

describe('status while a backfill holds the warehouse', () => {
  it('is answered by the run: progress, credits as the service reported them, the wait and an end time', async () => {
    const stop = new AbortController();
    let stderr = { text: '' };
    // One call at a time: when the wait is said, no answer is still on its way (the count is exact).
    const backfill = run(['backfill', '--streams', 'core', '--concurrency', '1'], {
      cwd: dir,
      env,
      stop: stop.signal,
      onStart: (o) => {
        stderr = o.stderr;
      },
    });
    await waitForText(() => stderr.text, /waiting \S+ for the rate-limit window \(credits used up for this window\)/);

    const r = await cli(['status', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout) as StatusReport;
    const charged = sim.counters().credits;
    // The service's own count: the token call and four lists leave 9, short of a fifth.
    expect(charged).toBe(41);
    expect(doc.servedBy).toMatch(/^evsync backfill \(PID \d+\)$/);
    expect(doc.credits?.current).toMatchObject({ remaining: LIMIT - charged, limit: LIMIT, live: true });
    const p = doc.progress!;
    expect(p.mode).toBe('backfill');
    expect(p.runId).toMatch(/^\d{8}T\d{6}Z-[0-9a-f]{6}$/);
    expect(p.credits.spent).toBe(charged);
    expect(p.items.done).toBe(sim.counters().listCalls);
    expect(p.items.queued).toBeGreaterThan(p.items.done);
    expect(p.streams.find((s) => s.stream === 'events')).toMatchObject({
      done: 1,
      pages: 1,
      rows: sim.truth('events').records.length,
    });
    expect(p.credits.needed).toBeGreaterThan(0);
    // Waiting for the window, until its reset as the service announced it; the end is after that reset.
    expect(doc.state?.level).toBe('waiting');
    const until = Date.parse(doc.state!.waiting!.until!);
    expect(Math.abs(until - Date.parse(`${doc.credits!.current!.resetAt!.replace(' ', 'T')}Z`))).toBeLessThan(1000);
    expect(doc.state?.summary).toMatch(/^waiting for the window until \d\d:\d\d UTC \(in \d+ min\): evsync backfill/);
    expect(p.waiting?.reason).toBe('window');
    expect(p.eta.windows).toBeGreaterThanOrEqual(1);
    expect(Date.parse(p.eta.at)).toBeGreaterThanOrEqual(until);
    expect(p.eta.basis).toContain(`${LIMIT - charged} left in this window`);

    const text = await cli(['status']);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^State: WAITING: waiting for the window until \d\d:\d\d UTC/m);
    expect(text.stdout).toMatch(/^Progress: \d+ of \d+ items done/m);
    expect(text.stdout).toContain(`${LIMIT - charged} of ${LIMIT} left in the window as the service reported`);

    await phonePage(charged);

    const query = await cli(['query', 'select 1']);
    expect(query.code).toBe(1);
    expect(query.stderr).toMatch(/evsync backfill \(PID \d+\) holds the warehouse until it ends/);
    expect(query.stderr).toContain('--snapshot <file>');
    // Asking cost nothing.
    expect(sim.counters().credits).toBe(charged);

    stop.abort();
    const ended = await backfill;
    expect(ended.code, ended.stderr).toBe(3);

    // Once it let go, the file answers: the reading the run recorded, and the window's credits on the chart.
    const after = JSON.parse((await cli(['status', '--json'])).stdout) as StatusReport;
    expect(after.servedBy).toBeUndefined();
    expect(after.credits?.current).toMatchObject({ remaining: LIMIT - charged, heardBy: p.runId, live: false });
    expect(after.credits?.windows.map((w) => ({ used: w.used, spent: w.spentByRuns }))).toEqual([
      { used: charged, spent: charged },
    ]);
  });
});
