/// <reference lib="dom" />
/**
 * The status page in a real browser (headless Chromium through puppeteer-core): `evsync serve` on the simulator
 * with the service's real limit (2000 credits per 10 minutes), webhooks installed, changes made at the service, one
 * stream whose configured path answers 404 (failing). The page must show what `status --json` says and what the
 * simulator holds: one row per stream with its rows and freshness, the credits chart's bars, the failing stream
 * failing, no console error; it follows a change without a reload; `status --html` shows the same content from a
 * file with the network cut off. The page, `/status.json` and `/metrics` say the same credits left, the service's
 * own count. At a phone's width (375 px) nothing scrolls sideways. Screenshots (1280 and 375 wide) land in
 * test-artifacts/.
 */
import { copyFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StatusReport } from '../../src/cli/status/document.js';
import { span } from '../../src/cli/status-page/html.js';
import { pageOrder } from '../../src/cli/status-page/streams-table.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { run, simulatorEnv, tempDir, waitForText, writeConfig } from '../cli/helpers.js';
import { ARTIFACTS, HAS_CHROMIUM, launchBrowser, screenshot, type TestBrowser, watchProblems } from './browser.js';
import { readPage, type ShownPage } from './read-page.js';

const SECRET = 'status-page-test-secret-9c1e77a2';
/** Fed by webhooks (their objects are pushed), polled, and one whose path the config points at nothing. */
const WEBHOOK_FED = ['contacts', 'registrants'];
const POLLED = ['packages'];
const FAILING = 'tracks';
const STREAMS = [...WEBHOOK_FED, ...POLLED, FAILING, 'events'].join(',');

/** The document's fields that move with the clock alone. */
const CLOCK_FIELDS = new Set(['generatedAt', 'freshnessSeconds', 'ageSeconds', 'sinceLastDeliverySeconds']);

function withoutClock(doc: StatusReport): unknown {
  return JSON.parse(JSON.stringify(doc, (k, v) => (CLOCK_FIELDS.has(k) ? undefined : v)));
}

const describeBrowser = HAS_CHROMIUM ? describe : describe.skip;
if (!HAS_CHROMIUM) {
  console.warn('status page browser tests skipped: /usr/bin/chromium is absent (apt-get install -y chromium)');
}

describeBrowser('the status page in a browser (skipped without /usr/bin/chromium)', () => {
  let sim: Simulator;
  let dir: string;
  let cleanup: () => void;
  let env: Record<string, string>;
  let browser: TestBrowser;
  const stop = new AbortController();
  let serving: ReturnType<typeof run> | undefined;
  let admin = '';
  /** Credits the service had charged when the daemon's catch-up ended (its last answer then). */
  let chargedAtCatchUp = 0;
  /** Per webhook-fed stream, the simulated time of its last change (the ground truth of its freshness). */
  const lastChange = new Map<string, string>();

  const cli = (argv: string[]) => run(argv, { cwd: dir, env });
  const statusJson = async (): Promise<StatusReport> => {
    const r = await cli(['status', '--json']);
    expect(r.code, r.stderr).toBe(0);
    return JSON.parse(r.stdout) as StatusReport;
  };

  /** One change to each webhook-fed stream (an update or insert: its time is its record's), the clock 1 s on. */
  function change(): void {
    for (const stream of WEBHOOK_FED) {
      const summary = sim.mutate(1, { streams: [stream] });
      // The simulator's own record of it: the newest updated_at it holds (the clock only moves on).
      const newest = sim
        .truth(stream)
        .records.map((r) => String(r.updated_at ?? ''))
        .sort()
        .at(-1);
      if ((summary.deleted[stream] ?? 0) === 0 && newest) lastChange.set(stream, newest.slice(0, 19).replace('T', ' '));
      else lastChange.delete(stream);
      sim.advanceClock(1);
    }
  }

  /** Until every delivery the simulator made is journaled and applied (read from the page's own JSON). */
  async function settled(): Promise<void> {
    expect(await sim.webhooks.idle()).toBe(true);
    const delivered = sim.webhooks.deliveries().filter((d) => d.status === 'delivered').length;
    for (;;) {
      const doc = (await (await fetch(`${admin}/status.json`)).json()) as StatusReport;
      const applied = (doc.capture ?? []).reduce((n, c) => n + c.applied + c.ignored, 0);
      if (doc.deliveries?.pending === 0 && applied >= delivered) return;
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  beforeAll(async () => {
    sim = await startSimulator({
      size: 'tiny',
      seed: 27,
      rateLimit: { credits: 2000, windowSeconds: 600 },
      webhookDelivery: { retryBaseMs: 20 },
    });
    ({ dir, cleanup } = tempDir('evsync-page-'));
    env = { ...simulatorEnv(sim, { db: join(dir, 'page.duckdb') }), EVSYNC_WEBHOOK_SECRET: SECRET };
    writeConfig(dir, { streams: { [FAILING]: { path: '/no-such-tracks' } } });
    // The named stream that is not served fails the run (exit 1); the others load.
    const backfill = await cli(['backfill', '--streams', STREAMS]);
    expect(backfill.code, backfill.stderr).toBe(1);
    expect(backfill.stderr).toContain('/no-such-tracks answered 404');

    let stderr = { text: '' };
    const argv = ['serve', '--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0', '--streams', STREAMS];
    // The catch-up reconciliation runs at start; the cron (weekly; a rarer one trips schedule's 200-date look-ahead) adds none during the test.
    serving = run([...argv, '--cron', '0 0 * * 0'], {
      cwd: dir,
      env,
      stop: stop.signal,
      onStart: (o) => {
        stderr = o.stderr;
      },
    });
    await waitForText(() => stderr.text, /reconcile #1: /);
    chargedAtCatchUp = sim.counters().credits;
    const url = /listening on (http:\/\/\S+\/webhooks)/.exec(stderr.text)![1]!;
    admin = /status page on (http:\/\/\S+)\//.exec(stderr.text)![1]!;
    const install = await cli(['webhooks', 'install', '--url', url, '--streams', WEBHOOK_FED.join(',')]);
    expect(install.code, install.stderr).toBe(0);
    for (let i = 0; i < 3; i++) change();
    await settled();
    browser = await launchBrowser();
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    stop.abort();
    const served = await serving;
    expect(served?.code, served?.stderr).toBe(0);
    await sim?.close();
    cleanup?.();
  });

  it('serves the same document at /status.json as status --json', async () => {
    const page = (await (await fetch(`${admin}/status.json`)).json()) as StatusReport;
    const command = await statusJson();
    // The two may straddle the start of a 10-minute bucket: the buckets both hold must agree.
    const buckets = (d: StatusReport) => d.deliveries!.buckets.splice(0);
    const [a, b] = [buckets(page), buckets(command)];
    const common = a.filter((x) => b.some((y) => y.at === x.at)).map((x) => x.at);
    expect(common.length).toBeGreaterThanOrEqual(143);
    expect(a.filter((x) => common.includes(x.at))).toEqual(b.filter((y) => common.includes(y.at)));
    expect(withoutClock(page)).toEqual(withoutClock(command));
    expect(page.servedBy).toMatch(/^evsync serve \(PID \d+\)$/);
  });

  let shown: ShownPage;

  it('shows every stream with its rows, freshness and health, the credits per window, and no console error', async () => {
    const page = await browser.browser.newPage();
    const problems = watchProblems(page);
    await page.setViewport({ width: 1280, height: 900 });
    await page.goto(`${admin}/`, { waitUntil: 'load' });
    const doc = await statusJson();
    shown = await readPage(page);

    // One row per stream of the document, the ones that need a look first (the failing one); each selected stream
    // has one.
    const order = pageOrder(doc.streams!, doc.state!.stale).map((s) => s.stream);
    expect(shown.streams.map((s) => s.stream)).toEqual(order);
    expect(order[0]).toBe(FAILING);
    for (const name of STREAMS.split(',')) expect(shown.streams.map((s) => s.stream)).toContain(name);
    for (const s of doc.streams!) {
      const row = shown.streams.find((r) => r.stream === s.stream)!;
      expect({ stream: s.stream, rows: row.rows, at: row.newestAt, health: row.health }).toEqual({
        stream: s.stream,
        rows: s.rows === null ? '–' : s.rows.toLocaleString('en-US'),
        at: s.newestChangeAt,
        health: s.health,
      });
      // Its age as shown is the document's: from the newest change to the page's time.
      if (row.newestAt) {
        const age = (Date.parse(shown.generated) - Date.parse(`${row.newestAt.replace(' ', 'T')}Z`)) / 1000;
        expect(row.age, s.stream).toBe(span(Math.max(0, age)));
      }
    }
    // Ground truth: rows as the simulator holds them; the webhook-fed streams as fresh as their last change.
    for (const name of [...WEBHOOK_FED, ...POLLED]) {
      const row = shown.streams.find((r) => r.stream === name)!;
      expect(row.rows, name).toBe(sim.truth(name).records.length.toLocaleString('en-US'));
    }
    for (const name of WEBHOOK_FED) {
      const row = shown.streams.find((r) => r.stream === name)!;
      expect(row.fed, name).toBe('webhook');
      if (lastChange.has(name)) expect(row.newestAt, name).toBe(lastChange.get(name));
    }
    expect(shown.streams.find((r) => r.stream === 'packages')!.fed).toBe('polling');

    // The failing stream says so in words, with the reason.
    const failing = shown.streams.find((r) => r.stream === FAILING)!;
    expect(failing.health).toBe('failing');
    expect(failing.healthText).toContain('failing');
    expect(failing.reason).toMatch(/\/no-such-tracks answered 404/);
    for (const s of shown.streams.filter((r) => r.stream !== FAILING)) expect(s.health, s.stream).toBe('ok');

    // The credits chart: one bar per window of the document, its height the credits used, the limit drawn.
    const windows = doc.credits!.windows;
    expect(windows.length).toBeGreaterThan(0);
    expect(shown.bars).toEqual(windows.map((w) => ({ reset: w.resetAt, used: w.used, limit: w.limit })));
    expect(shown.bars.every((b) => b.limit === 2000)).toBe(true);
    expect(shown.limitLabel).toBe('limit 2,000 per window');
    // Every run is on the timeline (the backfill and the reconciliation failed on the 404; none other ran).
    expect(shown.runs).toEqual(doc.timeline!.map((r) => ({ run: r.runId, status: r.status })));
    expect(shown.runs.length).toBeGreaterThanOrEqual(2);

    // The page, /status.json and /metrics say the same credits left: what the service counted.
    const metrics = await (await fetch(`${admin}/metrics`)).text();
    const left = {
      page: Number(await page.$eval('[data-card="credits"]', (el) => el.getAttribute('data-remaining'))),
      json: doc.credits!.current!.remaining,
      metrics: Number(/^evsync_credits_remaining (\d+)$/m.exec(metrics)?.[1]),
    };
    expect(new Set(Object.values(left)).size, JSON.stringify(left)).toBe(1);
    // What the service said to the daemon at its last answer: no more than after its catch-up (the webhooks install
    // was another client's, after it), no less than what the service counts now.
    expect(left.page).toBeLessThanOrEqual(2000 - chargedAtCatchUp);
    expect(left.page).toBeGreaterThanOrEqual(2000 - sim.counters().credits);
    // The state comes first: the failing stream, said in words.
    expect(doc.state).toMatchObject({ level: 'failing', failing: [FAILING] });
    expect(await page.$eval('#state', (el) => el.textContent)).toContain(`1 failing: ${FAILING}`);

    await screenshot(page, 'status-page', 1280);
    await screenshot(page, 'status-page', 375);
    // At a phone's width nothing scrolls sideways: not the page, not a chart.
    expect(await page.evaluate(() => document.scrollingElement!.scrollWidth - innerWidth)).toBeLessThanOrEqual(0);
    const phone = await readPage(page);
    expect(phone.overflowX).toBe(0);
    expect(phone.beyond).toEqual([]);
    expect(problems).toEqual([]);
    if (process.env.EVSYNC_UPDATE_SCREENSHOT === '1') {
      // Refreshes the README's picture: EVSYNC_UPDATE_SCREENSHOT=1 npx vitest run test/status-page/page.test.ts
      copyFileSync(join(ARTIFACTS, 'status-page-1280.png'), resolve(ARTIFACTS, '../docs/status-page.png'));
    }
    await page.close();
  });

  it('follows a change without a reload (its script reads /status.json)', async () => {
    const page = await browser.browser.newPage();
    const problems = watchProblems(page);
    await page.goto(`${admin}/?refresh=1`, { waitUntil: 'load' });
    const before = await readPage(page);
    change();
    await settled();
    const doc = await statusJson();
    const registrants = doc.streams!.find((s) => s.stream === 'registrants')!;
    expect(registrants.newestChangeAt).not.toBe(before.streams.find((s) => s.stream === 'registrants')!.newestAt);
    // The page's own timer: waited for by what it shows, not for a time.
    await page.waitForFunction(
      (at) => document.querySelector('tr[data-stream="registrants"] [data-k="age"]')?.getAttribute('data-at') === at,
      { timeout: 60_000 },
      registrants.newestChangeAt,
    );
    const after = await readPage(page);
    expect(after.streams.find((s) => s.stream === 'registrants')!.rows).toBe(
      sim.truth('registrants').records.length.toLocaleString('en-US'),
    );
    expect(problems).toEqual([]);
    await page.close();
  });

  it('status --html writes the same page as a file that opens with the network cut off', async () => {
    const file = join(dir, 'report.html');
    const r = await cli(['status', '--html', file]);
    expect(r.code, r.stderr).toBe(0);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const live = await browser.browser.newPage();
    await live.goto(`${admin}/`, { waitUntil: 'load' });
    const served = await readPage(live);
    await live.close();

    const page = await browser.browser.newPage();
    const problems = watchProblems(page);
    const refused: string[] = [];
    await page.setRequestInterception(true);
    page.on('request', (req) => {
      if (req.url().startsWith('file:')) void req.continue();
      else {
        refused.push(req.url());
        void req.abort('internetdisconnected');
      }
    });
    await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
    const offline = await readPage(page);
    expect(refused).toEqual([]);
    expect(offline.scripts).toBe(0);
    const content = (p: ShownPage) => ({
      streams: p.streams.map(({ age: _age, ...rest }) => rest),
      bars: p.bars,
      runs: p.runs,
      limit: p.limitLabel,
    });
    expect(content(offline)).toEqual(content(served));
    expect(problems).toEqual([]);
    await screenshot(page, 'status-file', 1280);
    await page.close();
  });
});
