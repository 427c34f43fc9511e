/// <reference lib="dom" />
/** What a status page shows, read from the DOM the browser rendered (the same for the live page and the file). */
import type { Page } from 'puppeteer-core';

export interface ShownStream {
  stream: string;
  health: string;
  /** The status pill's words (symbol and word). */
  healthText: string;
  rows: string;
  reason: string | null;
  /** The newest change applied (UTC) and its age as shown. */
  newestAt: string | null;
  age: string | null;
  fed: string;
}

export interface ShownPage {
  generated: string;
  streams: ShownStream[];
  /** The credits chart's bars. */
  bars: { reset: string; used: number; limit: number | null }[];
  limitLabel: string | null;
  /** The runs timeline's bars. */
  runs: { run: string; status: string }[];
  scripts: number;
  /** Widest element vs the viewport: > 0 means the page scrolls sideways. */
  overflowX: number;
  /** Elements reaching past the viewport's right edge, or out of their section's box (content spilling sideways). */
  beyond: string[];
}

export function readPage(page: Page): Promise<ShownPage> {
  return page.evaluate(() => {
    const text = (el: Element | null) => (el?.textContent ?? '').replace(/\s+/g, ' ').trim();
    const streams = [...document.querySelectorAll('tr[data-stream]')].map((tr) => {
      const age = tr.querySelector('[data-k="age"]');
      return {
        stream: tr.getAttribute('data-stream') ?? '',
        health: tr.getAttribute('data-health') ?? '',
        healthText: text(tr.querySelector('[data-k="health"]')),
        rows: text(tr.querySelector('[data-k="rows"]')),
        reason: tr.querySelector('[data-k="reason"]') ? text(tr.querySelector('[data-k="reason"]')) : null,
        newestAt: age?.getAttribute('data-at') ?? null,
        age: age ? text(age) : null,
        fed: text(tr.querySelector('[data-k="fed"]')),
      };
    });
    const bars = [...document.querySelectorAll('#credits .wide rect.bar')].map((r) => ({
      reset: r.getAttribute('data-reset') ?? '',
      used: Number(r.getAttribute('data-used')),
      limit: r.getAttribute('data-limit') ? Number(r.getAttribute('data-limit')) : null,
    }));
    const runs = [...document.querySelectorAll('#runs .wide rect.run')].map((r) => ({
      run: r.getAttribute('data-run') ?? '',
      status: r.getAttribute('data-status') ?? '',
    }));
    return {
      generated: document.getElementById('generated')?.getAttribute('datetime') ?? '',
      streams,
      bars,
      limitLabel: document.querySelector('#credits .wide .limit-label')?.textContent ?? null,
      runs,
      scripts: document.scripts.length,
      overflowX: document.documentElement.scrollWidth - document.documentElement.clientWidth,
      beyond: [...document.querySelectorAll('body *')]
        .filter((el) => {
          const box = el.getBoundingClientRect();
          const section = el.closest('section')?.getBoundingClientRect();
          return (
            box.width > 0 &&
            (box.right > innerWidth + 0.5 || (section !== undefined && box.right > section.right + 0.5))
          );
        })
        .map((el) => `${el.tagName.toLowerCase()} in #${el.closest('section')?.id ?? 'page'}`),
    };
  });
}
