/**
 * A real browser for the status page tests: Debian's Chromium (`apt-get install -y chromium`, which `.ci/run`
 * installs when missing) driven by puppeteer-core, which downloads nothing. Headless, no sandbox (CI runs as root),
 * nothing phoning home (no QUIC, no background networking, updates or sync), a fresh profile each launch.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';

export const CHROMIUM = '/usr/bin/chromium';
export const HAS_CHROMIUM = existsSync(CHROMIUM);

/** Where screenshots go (git-ignored): `test-artifacts/` at the repository's root. */
export const ARTIFACTS = resolve(import.meta.dirname, '../../test-artifacts');

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface TestBrowser {
  browser: Browser;
  close(): Promise<void>;
}

export async function launchBrowser(): Promise<TestBrowser> {
  const profile = mkdtempSync(join(tmpdir(), 'evsync-chromium-'));
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    userDataDir: profile,
    args: [...FLAGS, `--user-data-dir=${profile}`],
  });
  return {
    browser,
    async close() {
      await browser.close().catch(() => undefined);
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** What went wrong in a page: console errors, uncaught exceptions, failed requests. */
export function watchProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e instanceof Error ? e.message : String(e)}`));
  page.on('requestfailed', (r) => problems.push(`requestfailed: ${r.url()} ${r.failure()?.errorText ?? ''}`));
  return problems;
}

/** Saves a full-page screenshot at a width (1280 desktop, 390 phone) under test-artifacts/. */
export async function screenshot(page: Page, name: string, width: number): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.setViewport({ width, height: 900, deviceScaleFactor: 1 });
  const path = join(ARTIFACTS, `${name}-${width}.png`) as `${string}.png`;
  await page.screenshot({ path, fullPage: true });
  return path;
}
